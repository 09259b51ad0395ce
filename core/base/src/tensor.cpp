#include "attnlab/base/tensor.h"

#include <cstdint>
#include <sstream>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attnlab {

namespace detail {

void adviseHugePages(void* p, std::size_t bytes) noexcept {
    if (bytes < kHugePageBytes) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // The whole pages inside the buffer (madvise wants a page-aligned start); the kernel backs
    // each 2 MB-aligned range of them with a huge page when it can.
    constexpr std::uintptr_t kPage = 4096;
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kPage - 1);
    if (end > begin)
        (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

} // namespace detail

std::string shapeText(const std::vector<Index>& shape) {
    std::ostringstream out;
    out << '[';
    for (std::size_t i = 0; i < shape.size(); ++i)
        out << (i ? ", " : "") << shape[i];
    out << ']';
    return out.str();
}

} // namespace attnlab

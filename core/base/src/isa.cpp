// Which kernel target runs (isa.h), and the table of each (simd_kernels.h).

#include "attnlab/base/isa.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "attnlab/base/check.h"
#include "attnlab/base/simd_kernels.h"
#include "simd_targets.h"

namespace attnlab {
namespace {

constexpr std::string_view kIsaNames[] = {"generic", "avx2", "avx512"};

bool cpuRuns(Isa isa) {
    switch (isa) {
    case Isa::Generic:
        return true;
#if defined(__x86_64__) && defined(__GNUC__)
    // libgcc's feature bits count a feature only when the OS saves its registers (XCR0).
    case Isa::Avx2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               cpuRuns(Isa::Avx2);
#endif
    default:
        return false;
    }
}

/// ATTNLAB_ISA's choice, or why it was not taken, decided once.
struct Override {
    std::optional<Isa> isa;
    std::string problem;
};

const Override& environmentOverride() {
    static const Override decided = [] {
        Override o;
        const char* value = std::getenv("ATTNLAB_ISA");
        if (!value || !*value) return o;
        const std::optional<Isa> named = isaFromName(value);
        if (!named)
            o.problem = "ATTNLAB_ISA=" + std::string(value) +
                        " is not a kernel target (generic, avx2, avx512); using " +
                        std::string(isaName(bestIsa()));
        else if (!isaSupported(*named))
            o.problem = "ATTNLAB_ISA=" + std::string(value) + ": this CPU cannot run it; using " +
                        std::string(isaName(bestIsa()));
        else
            o.isa = named;
        return o;
    }();
    return decided;
}

std::atomic<int>& chosen() {
    static std::atomic<int> isa{static_cast<int>(environmentOverride().isa.value_or(bestIsa()))};
    return isa;
}

} // namespace

std::string_view isaName(Isa isa) {
    return kIsaNames[static_cast<int>(isa)];
}

std::optional<Isa> isaFromName(std::string_view name) {
    for (Isa isa : kAllIsas)
        if (isaName(isa) == name) return isa;
    return std::nullopt;
}

bool isaSupported(Isa isa) {
    static const bool supported[] = {cpuRuns(Isa::Generic), cpuRuns(Isa::Avx2),
                                     cpuRuns(Isa::Avx512)};
    return supported[static_cast<int>(isa)];
}

Isa bestIsa() {
    Isa best = Isa::Generic;
    for (Isa isa : kAllIsas)
        if (isaSupported(isa)) best = isa;
    return best;
}

Isa activeIsa() {
    return static_cast<Isa>(chosen().load(std::memory_order_relaxed));
}

void setActiveIsa(Isa isa) {
    ATTN_CHECK(isaSupported(isa), "setActiveIsa: this CPU (or this build) cannot run the "
                                      << isaName(isa) << " kernels");
    chosen().store(static_cast<int>(isa), std::memory_order_relaxed);
}

std::optional<std::string_view> isaOverrideProblem() {
    const Override& o = environmentOverride();
    if (o.problem.empty()) return std::nullopt;
    return std::string_view(o.problem);
}

namespace simd {

const Kernels& kernelsFor(Isa isa) {
    ATTN_CHECK(isaSupported(isa), "simd::kernelsFor: this CPU (or this build) cannot run the "
                                      << isaName(isa) << " kernels");
    switch (isa) {
#if defined(__x86_64__)
    case Isa::Avx512:
        return avx512::table();
    case Isa::Avx2:
        return avx2::table();
#endif
    default:
        return generic::table();
    }
}

const Kernels& kernels() {
    return kernelsFor(activeIsa());
}

void packRowPanels(const float* in, Index ld, Index rows, Index depth, float* out) {
    const Kernels& k = kernels();
    for (Index first = 0; first < rows; first += kPanelWidth) {
        const Index count = std::min(kPanelWidth, rows - first);
        float* panel = out + first * depth;
        k.transpose(in + first * ld, ld, count, depth, panel, kPanelWidth);
        for (Index d = 0; d < depth && count < kPanelWidth; ++d)
            std::fill(panel + d * kPanelWidth + count, panel + (d + 1) * kPanelWidth, 0.0f);
    }
}

} // namespace simd
} // namespace attnlab

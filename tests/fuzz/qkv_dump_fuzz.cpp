// libFuzzer harness: loadQkvDump on an arbitrary .npz, then a re-run of its first layer under
// causal softmax when the dump is small.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "attnlab/io/dump.h"
#include "attnlab/lab/dump_experiment.h"
#include "fuzz_support.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = fuzz::writeInput(data, size, "npz");
    auto dump = loadQkvDump(path);
    if (!dump) return 0;
    const auto& d = *dump;
    if (static_cast<Index>(d.q.size()) != d.layers * d.heads * d.sq * d.dim ||
        static_cast<Index>(d.k.size()) != d.layers * d.kvHeads * d.sk * d.dim ||
        static_cast<Index>(d.v.size()) != d.layers * d.kvHeads * d.sk * d.dimV)
        std::abort();
    if (static_cast<Index>(d.keyTokens().size()) != d.sk) std::abort();
    if (d.layers < 1 || d.q.size() + d.k.size() + d.v.size() > 8192) return 0;
    QkvApply apply;
    apply.spec.mask.causal = true;
    (void)applyToQkvLayer(d, 0, apply);
    return 0;
}

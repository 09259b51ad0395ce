// libFuzzer harness: loadAttentionDump on an arbitrary .npy or .npz (told apart by content, as
// the reader does), then what the window and `render --dump` compute from a dump that loaded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "attnlab/io/dump.h"
#include "attnlab/lab/dump_experiment.h"
#include "fuzz_support.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const bool zip = size >= 2 && data[0] == 'P' && data[1] == 'K';
    const std::string path = fuzz::writeInput(data, size, zip ? "npz" : "npy");
    auto dump = loadAttentionDump(path);
    if (!dump) return 0;
    const auto& d = *dump;
    if (d.batch * d.layers * d.heads * d.sq * d.sk != static_cast<Index>(d.weights.size()))
        std::abort();
    (void)checkDistributions(d);
    if (d.batch < 1 || d.layers < 1 || d.heads < 1) return 0;
    if (static_cast<Index>(d.keyTokens(0).size()) != d.sk) std::abort();
    if (static_cast<Index>(d.queryTokens(0).size()) != d.sq) std::abort();
    // Bound the work per input; the reader's checks are what is fuzzed.
    if (d.weights.size() > 4096 || d.layers * d.heads > 256) return 0;
    (void)headStatisticsTable(d, 0);
    (void)meanOverHeads(d, 0, 0);
    (void)meanOverLayers(d, 0);
    if (d.sq == d.sk) (void)attentionRollout(d, 0);
    (void)dumpExperiment(d, 0, 0);
    return 0;
}

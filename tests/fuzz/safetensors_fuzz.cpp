// libFuzzer harness: a .safetensors file from arbitrary bytes: the header parsed in memory and
// the file opened (mapped) and every tensor read as floats. Every entry must lie inside the
// file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "attnlab/model/safetensors.h"
#include "fuzz_support.h"
#include "read_weights.h"

using namespace attnlab;
using namespace attnlab::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto header = parseSafetensorsHeader(data, size, "fuzz.safetensors");
    if (header)
        for (const TensorEntry& entry : *header)
            if (entry.offset > size || entry.bytes > size - entry.offset) std::abort();
    fuzz::readEveryTensor(fuzz::writeInput(data, size, "safetensors"));
    return 0;
}

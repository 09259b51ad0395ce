// libFuzzer harness: SafeTensors::open on a folder of sharded weights written from arbitrary
// bytes. The first byte picks the layout (odd: PyTorch's pytorch_model.bin.index.json and its
// .bin shards; even: model.safetensors.index.json and .safetensors shards); the rest is the
// index and the two shards it may name, separated by "\n--8<--\n" lines (fuzz::splitSections).
// Every tensor of a folder that opens is read as floats.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnlab/model/safetensors.h"
#include "fuzz_support.h"
#include "read_weights.h"

using namespace attnlab;
using namespace attnlab::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const bool torch = data[0] & 1;
    const auto parts = fuzz::splitSections(data + 1, size - 1, 3);
    const auto folder = fuzz::emptyFolder("weights_index");
    const std::string names[] = {
        torch ? "pytorch_model.bin.index.json" : "model.safetensors.index.json",
        torch ? "pytorch_model-00001-of-00002.bin" : "model-00001-of-00002.safetensors",
        torch ? "pytorch_model-00002-of-00002.bin" : "model-00002-of-00002.safetensors"};
    for (std::size_t i = 0; i < parts.size(); ++i)
        fuzz::writeFile(folder, names[i], parts[i]);
    fuzz::readEveryTensor(folder.string());
    return 0;
}

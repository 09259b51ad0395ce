// libFuzzer harness: readNpzMembers and readNpz on an arbitrary file. Every array read must
// describe exactly the values it holds; readNpz keeps a subset of readNpzMembers' names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "attnlab/io/npy.h"
#include "fuzz_support.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = fuzz::writeInput(data, size, "npz");
    auto members = readNpzMembers(path);
    NpyReadOptions options;
    options.allowHalf = true;
    auto arrays = readNpz(path, options);
    if (arrays) {
        if (!members) std::abort();
        for (const auto& [name, array] : *arrays) {
            if (!members->count(name)) std::abort();
            if (array.elementCount() != static_cast<Index>(array.data.size())) std::abort();
        }
    }
    return 0;
}

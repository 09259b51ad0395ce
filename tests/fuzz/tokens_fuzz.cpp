// libFuzzer harness: loadTokens on an arbitrary .json or .txt file (the first byte picks the
// extension, the rest is the file).
#include <cstddef>
#include <cstdint>

#include "attnlab/io/dump.h"
#include "fuzz_support.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const char* extension = (data[0] & 1) ? "json" : "txt";
    const std::string path = fuzz::writeInput(data + 1, size - 1, extension);
    (void)loadTokens(path);
    return 0;
}

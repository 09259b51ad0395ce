// libFuzzer harness: parseConfig (a Hugging Face config.json) on arbitrary text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "attnlab/model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)attnlab::model::parseConfig(text, "config.json");
    return 0;
}

// libFuzzer harness: Tokenizer::fromJson (tokenizer.json) on arbitrary text; a tokenizer that
// loads encodes and decodes a short mixed text (ASCII, digits, accents, CJK, invalid UTF-8).
#include <cstddef>
#include <cstdint>
#include <string>

#include "attnlab/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto tokenizer = attnlab::model::Tokenizer::fromJson(text, "tokenizer.json");
    if (!tokenizer) return 0;
    const auto encoding = tokenizer->encode(" Hello  wörld 123 \xe7\x8c\xab\xff\n<s>", true);
    (void)tokenizer->decode(encoding.ids, false);
    (void)tokenizer->decode(encoding.ids, true);
    return 0;
}

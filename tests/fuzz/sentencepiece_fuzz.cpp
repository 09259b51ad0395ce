// libFuzzer harness: Tokenizer::fromSentencePiece (a SentencePiece `.model` file, the wire-format
// scan before libsentencepiece reads it) on arbitrary bytes. A model that loads encodes and
// decodes a short mixed text; every id it gives is one of its pieces.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "attnlab/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto tokenizer = attnlab::model::Tokenizer::fromSentencePiece(bytes, "tokenizer.model");
    if (!tokenizer) return 0;
    const auto encoding =
        tokenizer->encode(" Hello  wörld 123 \xe7\x8c\xab\xff\n<s>\xef\xac\x81", true);
    if (encoding.tokens.size() != encoding.ids.size() ||
        encoding.display.size() != encoding.ids.size())
        std::abort();
    for (const int64_t id : encoding.ids)
        if (id < 0 || id >= tokenizer->vocabSize() || !tokenizer->idToToken(id)) std::abort();
    (void)tokenizer->decode(encoding.ids, false);
    (void)tokenizer->decode(encoding.ids, true);
    for (const auto special : {tokenizer->bosId(), tokenizer->eosId()})
        if (special) (void)tokenizer->displayToken(*special);
    return 0;
}

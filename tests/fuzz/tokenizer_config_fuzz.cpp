// libFuzzer harness: tokenizer_config.json on arbitrary text, read by Tokenizer::fromFile beside
// a small fixed tokenizer.json (a BPE with <s>, </s> and <|endoftext|> added; the tokenizer
// harness fuzzes that file). The bos and eos it names, when it names known tokens, are those
// tokens; the tokenizer still encodes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "attnlab/tokenizer/tokenizer.h"
#include "fuzz_support.h"

using namespace attnlab;
using namespace attnlab::model;

namespace {

constexpr std::string_view kTokenizerJson = R"({
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false,
     "normalized": false, "special": true},
    {"id": 1, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false,
     "normalized": false, "special": true},
    {"id": 9, "content": "<|endoftext|>", "single_word": false, "lstrip": false,
     "rstrip": false, "normalized": false, "special": true}],
  "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
               {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "</s>", "type_id": 0}}],
    "pair": [], "special_tokens": {
      "<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
      "</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
  "decoder": null,
  "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>",
            "vocab": {"<s>": 0, "</s>": 1, "<unk>": 2, "a": 3, "b": 4, "c": 5, "ab": 6,
                      "abc": 7, "<pad>": 8},
            "merges": ["a b", "ab c"]}
})";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto folder = fuzz::emptyFolder("tokenizer_config");
    fuzz::writeFile(folder, "tokenizer.json", kTokenizerJson);
    fuzz::writeFile(folder, "tokenizer_config.json",
                    std::string_view(reinterpret_cast<const char*>(data), size));
    auto tokenizer = Tokenizer::fromFile((folder / "tokenizer.json").string());
    if (!tokenizer) return 0;
    for (const auto special : {tokenizer->bosId(), tokenizer->eosId()})
        if (special && !tokenizer->idToToken(*special)) std::abort();
    const auto encoding = tokenizer->encode("abc ab <pad></s> c");
    if (encoding.ids.empty()) std::abort();
    (void)tokenizer->decode(encoding.ids, true);
    return 0;
}

// libFuzzer harness: Tokenizer::fromFolder on a Marian folder written from arbitrary bytes: the
// input is tokenizer_config.json, vocab.json, target_vocab.json and source.spm (also written as
// target.spm), separated by "\n--8<--\n" lines (fuzz::splitSections); a file whose part is
// missing is left out. Both sides are loaded; a side that loads encodes and decodes a short
// text with a language code and special tokens in it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "attnlab/tokenizer/tokenizer.h"
#include "fuzz_support.h"

using namespace attnlab;
using namespace attnlab::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto parts = fuzz::splitSections(data, size, 4);
    const auto folder = fuzz::emptyFolder("marian");
    const char* names[] = {"tokenizer_config.json", "vocab.json", "target_vocab.json",
                           "source.spm"};
    for (std::size_t i = 0; i < parts.size(); ++i)
        fuzz::writeFile(folder, names[i], parts[i]);
    if (parts.size() == 4) fuzz::writeFile(folder, "target.spm", parts[3]);
    for (const TokenizerSide side : {TokenizerSide::Source, TokenizerSide::Target}) {
        auto tokenizer = Tokenizer::fromFolder(folder.string(), side);
        if (!tokenizer) continue;
        const auto encoding = tokenizer->encode(">>fra<< Hello </s>w\xc3\xb6rld<pad>\xff <unk>");
        if (encoding.tokens.size() != encoding.ids.size()) std::abort();
        for (const int64_t id : encoding.ids)
            if (id < 0 || id >= tokenizer->vocabSize()) std::abort();
        (void)tokenizer->decode(encoding.ids, false);
        (void)tokenizer->decode(encoding.ids, true);
    }
    return 0;
}

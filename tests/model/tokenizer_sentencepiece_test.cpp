// SentencePiece model files against the reference library itself: the ids that Google's
// sentencepiece 0.2 gave for 120 texts through a unigram and a BPE (byte fallback) model
// (fixtures/sentencepiece/, from the project's shared hf-fixtures; README there), the pieces
// the trainer listed in its .vocab files, and files that are not models at all. Then Marian's
// folder layout, built here from those models, against ids the test derives itself from
// libsentencepiece's pieces and its own vocab.json.

#include <gtest/gtest.h>

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/tokenizer/tokenizer.h"
#include "npm_tokenizers.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fixtureDir() {
    return fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "model" / "fixtures" / "sentencepiece";
}

std::string modelPath(const std::string& kind) {
    return (fixtureDir() / (kind + ".model")).string();
}

const json& referenceIds() {
    static const json ids = json::parse(npm::slurp(fixtureDir() / "ids.json"));
    return ids;
}

/// The trainer's .vocab listing: piece i of the model on line i, "piece<TAB>score".
std::vector<std::string> trainerPieces(const std::string& kind) {
    std::vector<std::string> pieces;
    std::istringstream lines(npm::slurp(fixtureDir() / (kind + ".vocab")));
    for (std::string line; std::getline(lines, line);)
        pieces.push_back(line.substr(0, line.find('\t')));
    return pieces;
}

Tokenizer load(const std::string& path) {
    Result<Tokenizer> loaded = Tokenizer::fromFile(path);
    if (!loaded) throw std::runtime_error(loaded.error());
    return std::move(loaded).value();
}

class SentencePieceReferenceTest : public ::testing::TestWithParam<std::string> {};

// Every text gives exactly the library's ids; the library adds no BOS/EOS, so neither do we,
// whatever addSpecialTokens says.
TEST_P(SentencePieceReferenceTest, IdsEqualTheLibrary) {
    const std::string kind = GetParam();
    const Tokenizer tokenizer = load(modelPath(kind));
    const json& expected = referenceIds().at(kind);
    const std::vector<std::string>& texts = npm::referenceTexts();
    ASSERT_EQ(texts.size(), 120u);
    ASSERT_EQ(expected.size(), texts.size());
    int mismatches = 0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const auto want = expected.at(std::to_string(i)).get<std::vector<int64_t>>();
        for (const bool addSpecial : {true, false}) {
            const Encoding encoding = tokenizer.encode(texts[i], addSpecial);
            if (encoding.ids != want && ++mismatches <= 5)
                ADD_FAILURE() << kind << " text " << i << " (addSpecial " << addSpecial
                              << "): " << json(texts[i]).dump() << "\n  expected "
                              << json(want).dump() << "\n  got      " << json(encoding.ids).dump();
        }
    }
    EXPECT_EQ(mismatches, 0);
}

// The pieces, their ids and the vocabulary are the trainer's own listing; <s> and </s> are
// the control pieces, never added.
TEST_P(SentencePieceReferenceTest, VocabularyIsTheTrainersListing) {
    const std::string kind = GetParam();
    const Tokenizer tokenizer = load(modelPath(kind));
    const std::vector<std::string> pieces = trainerPieces(kind);
    ASSERT_EQ(pieces.size(), 1000u);
    EXPECT_EQ(tokenizer.vocabSize(), 1000);
    for (std::size_t id = 0; id < pieces.size(); ++id) {
        EXPECT_EQ(tokenizer.idToToken(static_cast<int64_t>(id)), pieces[id]) << id;
        EXPECT_EQ(tokenizer.tokenToId(pieces[id]), static_cast<int64_t>(id)) << pieces[id];
    }
    EXPECT_EQ(tokenizer.idToToken(1000), std::nullopt);
    EXPECT_EQ(tokenizer.tokenToId("not a piece"), std::nullopt);
    EXPECT_EQ(tokenizer.bosId(), 1); // <s>
    EXPECT_EQ(tokenizer.eosId(), 2); // </s>
    EXPECT_TRUE(tokenizer.isSpecial(0));
    EXPECT_TRUE(tokenizer.isSpecial(1));
    EXPECT_TRUE(tokenizer.isSpecial(2));
    EXPECT_FALSE(tokenizer.isSpecial(3));
    EXPECT_EQ(tokenizer.source(), modelPath(kind));
}

// tokens are the raw pieces; display shows "▁" as a space and a byte piece as its byte when
// it is a whole character ("<0x0A>" -> "\n"), else as "<0xE6>" (the tokenizer.json rule).
TEST_P(SentencePieceReferenceTest, TokensAndDisplay) {
    const std::string kind = GetParam();
    const Tokenizer tokenizer = load(modelPath(kind));
    int bytePieces = 0;
    for (const std::string& text : npm::referenceTexts()) {
        const Encoding encoding = tokenizer.encode(text);
        ASSERT_EQ(encoding.tokens.size(), encoding.size());
        ASSERT_EQ(encoding.display.size(), encoding.size());
        ASSERT_EQ(encoding.special.size(), encoding.size());
        for (std::size_t i = 0; i < encoding.size(); ++i) {
            const std::string& piece = encoding.tokens[i];
            EXPECT_EQ(tokenizer.idToToken(encoding.ids[i]), piece);
            EXPECT_EQ(encoding.display[i], tokenizer.displayToken(encoding.ids[i]));
            if (piece.size() == 6 && piece.rfind("<0x", 0) == 0) {
                ++bytePieces;
                const int byte = std::stoi(piece.substr(3, 2), nullptr, 16);
                EXPECT_EQ(encoding.display[i], byte < 0x80 ? std::string(1, char(byte)) : piece);
            } else if (!tokenizer.isSpecial(encoding.ids[i])) {
                std::string spaced = piece;
                for (std::size_t at; (at = spaced.find("\u2581")) != std::string::npos;)
                    spaced.replace(at, 3, " ");
                EXPECT_EQ(encoding.display[i], spaced);
            }
        }
    }
    if (kind == "bpe") {
        EXPECT_GT(bytePieces, 20); // the byte fallback is exercised
    }
}

// SentencePiece is lossless on normalized text: plain ASCII sentences come back as they were.
TEST_P(SentencePieceReferenceTest, DecodeGivesBackPlainText) {
    const Tokenizer tokenizer = load(modelPath(GetParam()));
    int checked = 0;
    for (const std::string& text : npm::referenceTexts()) {
        const bool plain =
            !text.empty() && text.find("  ") == std::string::npos && text.front() != ' ' &&
            text.back() != ' ' &&
            std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
        if (!plain) continue;
        ++checked;
        const Encoding encoding = tokenizer.encode(text);
        if (std::count(encoding.ids.begin(), encoding.ids.end(), 0) != 0) continue; // <unk>
        EXPECT_EQ(tokenizer.decode(encoding.ids), text);
    }
    EXPECT_GE(checked, 10);
    // Control pieces vanish in decode, as in SentencePieceProcessor.decode; skipping special
    // tokens removes them and <unk> before decoding.
    const std::vector<int64_t> hello = tokenizer.encode("Hello world").ids;
    std::vector<int64_t> wrapped = {1};
    wrapped.insert(wrapped.end(), hello.begin(), hello.end());
    wrapped.push_back(2);
    EXPECT_EQ(tokenizer.decode(wrapped), "Hello world");
    EXPECT_EQ(tokenizer.decode(wrapped, true), "Hello world");
}

// encode() is const and the processor keeps no state between calls: threads agree.
TEST_P(SentencePieceReferenceTest, EncodesFromSeveralThreadsAtOnce) {
    const Tokenizer tokenizer = load(modelPath(GetParam()));
    const std::vector<std::string>& texts = npm::referenceTexts();
    std::vector<std::vector<int64_t>> alone;
    for (const std::string& text : texts)
        alone.push_back(tokenizer.encode(text).ids);
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int round = 0; round < 5; ++round)
                for (std::size_t i = 0; i < texts.size(); ++i)
                    if (tokenizer
                            .encode(texts[(i + static_cast<std::size_t>(t) * 31) % texts.size()])
                            .ids != alone[(i + static_cast<std::size_t>(t) * 31) % texts.size()])
                        ++mismatches[static_cast<std::size_t>(t)];
        });
    for (std::thread& thread : threads)
        thread.join();
    EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

INSTANTIATE_TEST_SUITE_P(Models, SentencePieceReferenceTest, ::testing::Values("unigram", "bpe"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                             return param.param;
                         });

// ---- files that are not SentencePiece models -------------------------------------------------

/// A protobuf length-delimited field (tag, varint length, bytes): enough to append a field to a
/// model file, which protobuf reads as if it had been written in place.
std::string lengthDelimited(int field, const std::string& bytes) {
    std::string out(1, static_cast<char>(field << 3 | 2));
    for (std::size_t length = bytes.size();; length >>= 7) {
        out += static_cast<char>((length & 0x7F) | (length >= 0x80 ? 0x80 : 0));
        if (length < 0x80) break;
    }
    return out + bytes;
}

/// Loads `bytes` as a .model file and expects one line naming it that contains `culprit`,
/// nothing printed by the library.
void expectRefused(const std::string& bytes, const std::string& culprit) {
    test::TempDir dir("attnlab_spm_bad");
    const std::string path = dir.file("bad.model");
    std::ofstream(path, std::ios::binary) << bytes;
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    const Result<Tokenizer> loaded = Tokenizer::fromFile(path);
    const Result<Tokenizer> inMemory = Tokenizer::fromSentencePiece(bytes, path);
    const std::string printed =
        ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(printed.empty()) << printed;
    for (const Result<Tokenizer>* result : {&loaded, &inMemory}) {
        ASSERT_FALSE(*result) << culprit;
        const std::string& message = result->error();
        EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        EXPECT_NE(message.find(culprit), std::string::npos)
            << "expected '" << culprit << "' in: " << message;
    }
}

TEST(SentencePieceFiles, RefusesWhatIsNotAModel) {
    const std::string model = npm::slurp(modelPath("unigram"));
    expectRefused("", "is empty");
    expectRefused(npm::slurp(fixtureDir().parent_path() / "hf_tokenizers" / "unigram_t5.json"),
                  "holds JSON");
    expectRefused("hello world\n", "not a SentencePiece model");
    std::mt19937 random(7);
    for (int round = 0; round < 20; ++round) {
        std::string noise(static_cast<std::size_t>(random() % 4000 + 1), '\0');
        for (char& c : noise)
            c = static_cast<char>(random());
        expectRefused(noise, "not a SentencePiece model");
    }
    for (const std::size_t cut : {std::size_t{1}, std::size_t{7}, std::size_t{100},
                                  model.size() / 3, model.size() / 2, model.size() - 1})
        expectRefused(model.substr(0, cut), "not a SentencePiece model");
}

// A file cut where a field ends still parses as protobuf; without its trainer_spec and
// normalizer_spec it would load as a different model, so it is refused.
TEST(SentencePieceFiles, RefusesAFileCutBetweenFields) {
    const std::string model = npm::slurp(modelPath("unigram"));
    // The pieces come first, each a field 1 (tag 0x0A, a varint length); the trainer_spec
    // (field 2, tag 0x12) starts where they end.
    std::size_t trainerSpec = 0;
    while (model[trainerSpec] == '\x0A') {
        ++trainerSpec;
        std::size_t length = 0;
        for (unsigned shift = 0;; shift += 7) {
            const auto byte = static_cast<unsigned char>(model[trainerSpec++]);
            length |= static_cast<std::size_t>(byte & 0x7F) << shift;
            if ((byte & 0x80) == 0) break;
        }
        trainerSpec += length;
    }
    ASSERT_EQ(model[trainerSpec], '\x12');
    ASSERT_TRUE(Tokenizer::fromSentencePiece(model, "whole.model"));
    expectRefused(model.substr(0, trainerSpec), "no trainer_spec");
}

/// The unigram model with its precompiled_charsmap (nmt_nfkc, the same bytes as
/// hf_tokenizers/nmt_nfkc.charsmap) changed by `edit`, length kept.
std::string withCharsmap(const std::function<void(std::string&)>& edit) {
    std::string model = npm::slurp(modelPath("unigram"));
    const std::string charsmap =
        npm::slurp(fixtureDir().parent_path() / "hf_tokenizers" / "nmt_nfkc.charsmap");
    const std::size_t at = model.find(charsmap);
    EXPECT_NE(at, std::string::npos);
    std::string changed = charsmap;
    edit(changed);
    EXPECT_EQ(changed.size(), charsmap.size());
    return model.replace(at, charsmap.size(), changed);
}

void putLittleEndian(std::string& bytes, std::size_t at, uint32_t value) {
    for (std::size_t k = 0; k < 4; ++k)
        bytes[at + k] = static_cast<char>((value >> (8 * k)) & 0xFF);
}

// libsentencepiece walks the charsmap's trie with no bounds checks; a corrupt one is refused
// before the library sees it (and the real one passes).
TEST(SentencePieceFiles, RefusesACorruptCharsmap) {
    ASSERT_TRUE(Tokenizer::fromSentencePiece(withCharsmap([](std::string&) {}), "real.model"));
    // The root unit's offset sends the walk far past the trie.
    expectRefused(withCharsmap([](std::string& blob) { putLittleEndian(blob, 4, 0xFFFFFC00u); }),
                  "normalizer_spec.precompiled_charsmap: its trie is corrupt: the root");
    // The trie's size says more bytes than the blob holds.
    expectRefused(withCharsmap([](std::string& blob) {
                      putLittleEndian(blob, 0, static_cast<uint32_t>(blob.size() - 2));
                  }),
                  "precompiled_charsmap: says its trie is");
    // Every unit a self-loop through a match: one character would match for ever.
    expectRefused(withCharsmap([](std::string& blob) {
                      // The root's children at cells 0..255, all empty but 'a' (0x61), which
                      // has a match and leads back to the root (offset 0x61).
                      for (std::size_t cell = 0; cell < 256; ++cell)
                          putLittleEndian(blob, 4 + 4 * cell, 0);
                      putLittleEndian(blob, 4 + 4 * 0x61, 0x61u | (1u << 8) | (0x61u << 10));
                  }),
                  "closes a cycle");
}

// The model's own self-test failing is refused without the library's LOG(INFO) lines; a
// piece with a NUL byte, or more nested pieces than the library's fixed result array, too.
TEST(SentencePieceFiles, RefusesWhatTheLibraryWouldPrintOrOverrun) {
    const std::string model = npm::slurp(modelPath("unigram"));
    // self_test_data (field 4) { samples (1) { input (1) "abc", expected (2) "wrong" } }
    const std::string sample = lengthDelimited(1, "abc") + lengthDelimited(2, "wrong");
    expectRefused(model + lengthDelimited(4, lengthDelimited(1, sample)), "self-test");
    // A passing self-test is fine (the pieces are the library's own).
    const Tokenizer tokenizer = load(modelPath("unigram"));
    std::string expected;
    for (const std::string& piece : tokenizer.encode("Hello").tokens)
        expected += (expected.empty() ? "" : " ") + piece;
    const std::string passing = lengthDelimited(1, "Hello") + lengthDelimited(2, expected);
    EXPECT_TRUE(Tokenizer::fromSentencePiece(
        model + lengthDelimited(4, lengthDelimited(1, passing)), "passing.model"));

    // Pieces appended (field 1 { piece (1), score (2, float), type (3, varint) }).
    const auto pieceField = [](const std::string& piece) {
        return lengthDelimited(1, lengthDelimited(1, piece) + std::string("\x15\0\0\x80\xBF", 5) +
                                      std::string("\x18\x01", 2));
    };
    expectRefused(model + pieceField(std::string("a\0b", 3)), "holds a NUL byte");
    std::string nested = model;
    for (int length = 1; length <= 70; ++length)
        nested += pieceField(std::string(static_cast<std::size_t>(length), '\x01'));
    expectRefused(nested, "each the start of the next");
    std::string fewNested = model;
    for (int length = 1; length <= 20; ++length)
        fewNested += pieceField(std::string(static_cast<std::size_t>(length), '\x01'));
    const Result<Tokenizer> loaded = Tokenizer::fromSentencePiece(fewNested, "nested.model");
    ASSERT_TRUE(loaded) << loaded.error();
    EXPECT_EQ(loaded->vocabSize(), 1020);
}

// libsentencepiece loads a model where "<s>" is a control piece and a normal one too (it keeps
// the two kinds in separate tables), but one of the two ids would then have no piece: the
// fuzzer's model encoded "a<s>b" to a token shown as "" and dropped by decode.
TEST(SentencePieceFiles, RefusesAPieceGivenTwice) {
    const std::string model = npm::slurp(modelPath("unigram"));
    const Tokenizer tokenizer = load(modelPath("unigram"));
    ASSERT_EQ(tokenizer.tokenToId("<s>"), 1);
    // field 1 { piece (1) "<s>", score (2, float -1), type (3) NORMAL }
    const std::string normal = lengthDelimited(
        1, lengthDelimited(1, "<s>") + std::string("\x15\0\0\x80\xBF", 5) + "\x18\x01");
    expectRefused(model + normal, "pieces 1 and " + std::to_string(tokenizer.vocabSize()) +
                                      " are the same string");
    // A piece field given twice in one piece: protobuf keeps the last, which is new.
    const std::string renamed = lengthDelimited(
        1, lengthDelimited(1, "<s>") + lengthDelimited(1, "\xE2\x96\x81zzqx") +
               std::string("\x15\0\0\x80\xBF", 5) + "\x18\x01");
    const Result<Tokenizer> loaded = Tokenizer::fromSentencePiece(model + renamed, "x.model");
    ASSERT_TRUE(loaded) << loaded.error();
    EXPECT_EQ(loaded->tokenToId("\xE2\x96\x81zzqx"), tokenizer.vocabSize());
}

// ---- Marian's folder layout ------------------------------------------------------------------

/// A Marian-layout folder: source.spm = the unigram model, target.spm = the BPE model (so the
/// two sides differ), vocab.json = the pieces of both, shuffled to ids of their own, with
/// every 7th source piece left out (so unknown pieces map to <unk>), and a language code.
class MarianFolderTest : public ::testing::Test {
protected:
    void SetUp() override {
        fs::copy_file(modelPath("unigram"), m_dir.file("source.spm"));
        fs::copy_file(modelPath("bpe"), m_dir.file("target.spm"));
        // "Hello world"'s pieces stay, so that the decode tests read it back.
        sentencepiece::SentencePieceProcessor processor;
        ASSERT_TRUE(processor.Load(modelPath("unigram")).ok());
        std::vector<std::string> kept;
        ASSERT_TRUE(processor.Encode("Hello world", &kept).ok());
        std::vector<std::string> pieces = {"</s>", "<unk>"};
        const std::vector<std::string> source = trainerPieces("unigram");
        for (std::size_t i = 3; i < source.size(); ++i)
            if (i % 7 != 0 || std::find(kept.begin(), kept.end(), source[i]) != kept.end())
                pieces.push_back(source[i]);
        for (const std::string& piece : trainerPieces("bpe"))
            if (std::find(pieces.begin(), pieces.end(), piece) == pieces.end() && piece != "<s>")
                pieces.push_back(piece);
        std::shuffle(pieces.begin() + 2, pieces.end(), std::mt19937(11));
        pieces.push_back(">>fra<<");
        pieces.push_back("<pad>");
        for (std::size_t id = 0; id < pieces.size(); ++id)
            m_vocab[pieces[id]] = static_cast<int64_t>(id);
        std::ofstream(m_dir.file("vocab.json")) << json(m_vocab).dump();
        std::ofstream(m_dir.file("tokenizer_config.json"))
            << R"({"source_lang": "en", "target_lang": "fr", "unk_token": "<unk>",
                   "eos_token": "</s>", "pad_token": "<pad>", "model_max_length": 512,
                   "separate_vocabs": false, "tokenizer_class": "MarianTokenizer"})";
    }

    /// MarianTokenizer's ids worked out here: libsentencepiece's pieces of `text` under
    /// `model`, each looked up in the vocab.json written above (unknown -> <unk>), then </s>.
    std::vector<int64_t> expectedIds(const std::string& model, const std::string& text,
                                     bool addEos = true) const {
        sentencepiece::SentencePieceProcessor processor;
        EXPECT_TRUE(processor.Load(model).ok());
        std::vector<std::string> pieces;
        EXPECT_TRUE(processor.Encode(text, &pieces).ok());
        std::vector<int64_t> ids;
        for (const std::string& piece : pieces) {
            const auto it = m_vocab.find(piece);
            ids.push_back(it == m_vocab.end() ? m_vocab.at("<unk>") : it->second);
        }
        if (addEos) ids.push_back(m_vocab.at("</s>"));
        return ids;
    }

    test::TempDir m_dir{"attnlab_marian"};
    std::map<std::string, int64_t> m_vocab;
};

TEST_F(MarianFolderTest, EachSideMapsItsPiecesThroughVocabJson) {
    const Result<Tokenizer> source = Tokenizer::fromFolder(m_dir.path().string());
    const Result<Tokenizer> target =
        Tokenizer::fromFolder(m_dir.path().string(), TokenizerSide::Target);
    ASSERT_TRUE(source) << source.error();
    ASSERT_TRUE(target) << target.error();
    int unknowns = 0;
    for (const std::string& text : npm::referenceTexts()) {
        const std::vector<int64_t> want = expectedIds(modelPath("unigram"), text);
        unknowns += static_cast<int>(std::count(want.begin(), want.end(), m_vocab.at("<unk>")));
        EXPECT_EQ(source->encode(text).ids, want) << json(text).dump();
        EXPECT_EQ(source->encode(text, false).ids,
                  std::vector<int64_t>(want.begin(), want.end() - 1));
        EXPECT_EQ(target->encode(text).ids, expectedIds(modelPath("bpe"), text))
            << json(text).dump();
    }
    EXPECT_GT(unknowns, 50); // the pieces left out of vocab.json are met
    EXPECT_EQ(source->vocabSize(), static_cast<int64_t>(m_vocab.size()));
    EXPECT_EQ(source->eosId(), m_vocab.at("</s>"));
    EXPECT_EQ(source->bosId(), std::nullopt);
    for (const char* token : {"</s>", "<unk>", "<pad>"})
        EXPECT_TRUE(source->isSpecial(m_vocab.at(token))) << token;
    EXPECT_FALSE(source->isSpecial(m_vocab.at("\u2581")));
    EXPECT_EQ(source->tokenToId(">>fra<<"), m_vocab.at(">>fra<<"));

    // fromFile on the folder is its source side.
    const Tokenizer viaFile = load(m_dir.path().string());
    EXPECT_EQ(viaFile.encode("Hello world").ids, expectedIds(modelPath("unigram"), "Hello world"));
}

// A leading language code is one token; special tokens written in the text are split out
// before SentencePiece sees the rest.
TEST_F(MarianFolderTest, LanguageCodeAndSpecialTokensInTheText) {
    const Tokenizer source = load(m_dir.path().string());
    std::vector<int64_t> want = {m_vocab.at(">>fra<<")};
    for (const int64_t id : expectedIds(modelPath("unigram"), " Hello world"))
        want.push_back(id);
    EXPECT_EQ(source.encode(">>fra<< Hello world").ids, want);

    want = expectedIds(modelPath("unigram"), "Hello", false);
    want.push_back(m_vocab.at("</s>"));
    for (const int64_t id : expectedIds(modelPath("unigram"), "world"))
        want.push_back(id);
    const Encoding encoding = source.encode("Hello</s>world");
    EXPECT_EQ(encoding.ids, want);
    EXPECT_EQ(encoding.tokens[want.size() - 1], "</s>");
    EXPECT_EQ(encoding.display[want.size() - 1], "</s>");
}

// Decoding joins the pieces through SentencePiece (▁ as a space); special tokens are written
// out (each followed by a space, the whole stripped) or skipped.
TEST_F(MarianFolderTest, DecodeAsMarianTokenizer) {
    const Tokenizer source = load(m_dir.path().string());
    const std::vector<int64_t> ids = source.encode("Hello world").ids;
    EXPECT_EQ(source.decode(ids, true), "Hello world");
    EXPECT_EQ(source.decode(ids, false), "Hello world</s>");
    std::vector<int64_t> padded = {m_vocab.at("<pad>")};
    padded.insert(padded.end(), ids.begin(), ids.end());
    EXPECT_EQ(source.decode(padded, false), "<pad> Hello world</s>");
    EXPECT_EQ(source.decode(padded, true), "Hello world");
    const Encoding encoding = source.encode("Hello world");
    EXPECT_EQ(encoding.display.front().front(), ' '); // "▁Hello" reads " Hello"
}

TEST_F(MarianFolderTest, RefusesAnIncompleteFolder) {
    const auto expectError = [&](const std::string& culprit, TokenizerSide side) {
        const Result<Tokenizer> loaded = Tokenizer::fromFolder(m_dir.path().string(), side);
        ASSERT_FALSE(loaded) << culprit;
        EXPECT_EQ(loaded.error().find('\n'), std::string::npos) << loaded.error();
        EXPECT_NE(loaded.error().find(culprit), std::string::npos)
            << "expected '" << culprit << "' in: " << loaded.error();
    };
    std::ofstream(m_dir.file("target.spm"), std::ios::trunc) << "not a model";
    expectError(m_dir.file("target.spm") + ": not a SentencePiece model", TokenizerSide::Target);
    EXPECT_TRUE(Tokenizer::fromFolder(m_dir.path().string(), TokenizerSide::Source));

    std::ofstream(m_dir.file("vocab.json"), std::ios::trunc) << R"({"</s>": 0, "a": 1})";
    expectError(m_dir.file("vocab.json") + ": has no '<unk>'", TokenizerSide::Source);
    std::ofstream(m_dir.file("vocab.json"), std::ios::trunc) << R"(["</s>"])";
    expectError(m_dir.file("vocab.json") + ": must hold a JSON object", TokenizerSide::Source);
    fs::remove(m_dir.file("vocab.json"));
    expectError(m_dir.file("vocab.json") + ": missing", TokenizerSide::Source);
    const Result<Tokenizer> viaFile = Tokenizer::fromFile(m_dir.path().string());
    ASSERT_FALSE(viaFile);
    EXPECT_NE(viaFile.error().find("vocab.json"), std::string::npos) << viaFile.error();
    fs::remove(m_dir.file("target.spm"));
    fs::remove(m_dir.file("source.spm"));
    expectError("no tokenizer.json", TokenizerSide::Source);
}

} // namespace
} // namespace attnlab::model

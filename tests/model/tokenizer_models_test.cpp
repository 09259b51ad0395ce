// The models beside BPE — WordPiece, Unigram, WordLevel — and the stages that come with them
// (BertNormalizer, BertPreTokenizer, the WordPiece decoder, Metaspace, Precompiled) on tiny
// hand-made tokenizer.json files. The answers are worked out by hand from Hugging Face
// tokenizers' rules, or are its own documented examples (Unigram's "abcdacdxx"); the real
// SentencePiece charsmap is checked against Unicode's NFKC and spm_precompiled's examples.
// tokenizer_reference_test.cpp compares whole files with the library's ids.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/tokenizer/tokenizer.h"
#include "npm_tokenizers.h"

namespace attnlab::model {
namespace {

using nlohmann::json;
using Ids = std::vector<int64_t>;
using Strings = std::vector<std::string>;

json pipeline(json model) {
    return {{"version", "1.0"},          {"truncation", nullptr},
            {"padding", nullptr},        {"added_tokens", json::array()},
            {"normalizer", nullptr},     {"pre_tokenizer", nullptr},
            {"post_processor", nullptr}, {"decoder", nullptr},
            {"model", std::move(model)}};
}

/// {"token": id} with ids in the order given.
json vocabObject(const Strings& pieces) {
    json vocab = json::object();
    for (std::size_t i = 0; i < pieces.size(); ++i)
        vocab[pieces[i]] = i;
    return vocab;
}

json added(int id, const std::string& content) {
    return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", false}, {"special", true}};
}

Tokenizer make(const json& config) {
    Result<Tokenizer> loaded = Tokenizer::fromJson(config.dump(), "tiny.json");
    if (!loaded) throw std::runtime_error(loaded.error());
    return std::move(loaded).value();
}

std::string loadError(const json& config) {
    Result<Tokenizer> loaded = Tokenizer::fromJson(config.dump(), "tiny.json");
    return loaded ? std::string("(loaded)") : loaded.error();
}

std::string base64(std::string_view bytes) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t bits = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
        if (i + 1 < bytes.size())
            bits |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
        if (i + 2 < bytes.size()) bits |= static_cast<unsigned char>(bytes[i + 2]);
        out += kAlphabet[(bits >> 18) & 63];
        out += kAlphabet[(bits >> 12) & 63];
        out += i + 1 < bytes.size() ? kAlphabet[(bits >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? kAlphabet[bits & 63] : '=';
    }
    return out;
}

// ---- WordPiece ------------------------------------------------------------------------------

const Strings kBertPieces = {"[UNK]",
                             "[CLS]",
                             "[SEP]",
                             "un",
                             "##aff",
                             "##able",
                             "##a",
                             "aff",
                             ",",
                             "$",
                             "!",
                             "eclair",
                             "\u00e9clair",
                             "\u4e2d",
                             "\u6587",
                             "\u03bf\u03b4\u03bf\u03c3",
                             "\u03bf\u03b4\u03bf\u03c2",
                             "a\u2e43b",
                             "a",
                             "\u2e3b",
                             "b",
                             "\u00e9\u00e9\u00e9\u00e9"};

json bertTokenizer(json normalizer = {{"type", "BertNormalizer"},
                                      {"clean_text", true},
                                      {"handle_chinese_chars", true},
                                      {"strip_accents", nullptr},
                                      {"lowercase", true}}) {
    json config = pipeline({{"type", "WordPiece"},
                            {"unk_token", "[UNK]"},
                            {"continuing_subword_prefix", "##"},
                            {"max_input_chars_per_word", 100},
                            {"vocab", vocabObject(kBertPieces)}});
    config["added_tokens"] = json::array({added(0, "[UNK]"), added(1, "[CLS]"), added(2, "[SEP]")});
    config["normalizer"] = std::move(normalizer);
    config["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
    config["post_processor"] =
        json::parse(R"({"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]})");
    config["decoder"] = {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
    return config;
}

// Longest piece first from the left, "##" after the first; punctuation (ASCII symbols such as
// "$" included) is its own word; BertProcessing wraps the ids in [CLS] ... [SEP].
TEST(TokenizerWordPiece, GreedyLongestPiecesAndBertPreTokenizer) {
    const Tokenizer tokenizer = make(bertTokenizer());
    // "unaffable": un, ##aff (not the shorter ##a), ##able.
    EXPECT_EQ(tokenizer.encode("UnAffable, un$aff!", false).ids, (Ids{3, 4, 5, 8, 3, 9, 7, 10}));
    EXPECT_EQ(tokenizer.encode("unaffable").ids, (Ids{1, 3, 4, 5, 2}));
    EXPECT_EQ(tokenizer.encode("", true).ids, (Ids{1, 2}));
    // A word with a part no piece covers is one [UNK], whatever pieces it started with.
    EXPECT_EQ(tokenizer.encode("unaffxyz", false).ids, (Ids{0}));
    // U+2E43 came in Unicode 9, after the tables BERT's punctuation test uses: not a split;
    // U+2E3B (Unicode 6.3) is punctuation.
    EXPECT_EQ(tokenizer.encode("a\u2e43b", false).ids, (Ids{17}));
    EXPECT_EQ(tokenizer.encode("a\u2e3bb", false).ids, (Ids{18, 19, 20}));
}

// max_input_chars_per_word counts characters, not bytes; a longer word is [UNK] at once.
TEST(TokenizerWordPiece, OverlongWordsAreUnknown) {
    json config = bertTokenizer({{"type", "BertNormalizer"}, {"strip_accents", false}});
    config["model"]["max_input_chars_per_word"] = 4;
    const Tokenizer tokenizer = make(config);
    EXPECT_EQ(tokenizer.encode("\u00e9\u00e9\u00e9\u00e9", false).ids, (Ids{21})); // 8 bytes
    EXPECT_EQ(tokenizer.encode("\u00e9\u00e9\u00e9\u00e9\u00e9", false).ids, (Ids{0}));
    EXPECT_EQ(tokenizer.encode("unaffable", false).ids, (Ids{0})); // 9 characters
    EXPECT_EQ(tokenizer.encode("un", false).ids, (Ids{3}));
}

// clean_text drops control and format characters and makes whitespace spaces;
// handle_chinese_chars splits CJK ideographs; strip_accents null follows lowercase; the
// lowercasing is character by character, so a final capital sigma gives σ, not ς.
TEST(TokenizerWordPiece, BertNormalizerOptions) {
    const Tokenizer tokenizer = make(bertTokenizer());
    EXPECT_EQ(tokenizer.encode("un\u200baff\x01\tun", false).ids, (Ids{3, 4, 3}));
    EXPECT_EQ(tokenizer.encode("\u4e2d\u6587", false).ids, (Ids{13, 14}));
    EXPECT_EQ(tokenizer.encode("\u00c9CLAIR", false).ids, (Ids{11}));
    EXPECT_EQ(tokenizer.encode("\u039f\u0394\u039f\u03a3", false).ids, (Ids{15}));
    // strip_accents false keeps the accent although lowercase is on.
    const Tokenizer keepAccents =
        make(bertTokenizer({{"type", "BertNormalizer"}, {"strip_accents", false}}));
    EXPECT_EQ(keepAccents.encode("\u00c9CLAIR", false).ids, (Ids{12}));
    // handle_chinese_chars off: the two ideographs stay one word, which has no pieces.
    const Tokenizer noChinese =
        make(bertTokenizer({{"type", "BertNormalizer"}, {"handle_chinese_chars", false}}));
    EXPECT_EQ(noChinese.encode("\u4e2d\u6587", false).ids, (Ids{0}));
}

// decode joins "##" pieces to the piece before and removes the space before punctuation;
// display shows a continuation without its prefix and a word start after a space.
TEST(TokenizerWordPiece, DecodeAndDisplayJoinContinuations) {
    const Tokenizer tokenizer = make(bertTokenizer());
    const Encoding encoding = tokenizer.encode("unaffable, un$aff!");
    EXPECT_EQ(tokenizer.decode(encoding.ids), "[CLS] unaffable, un $ aff! [SEP]");
    EXPECT_EQ(tokenizer.decode(encoding.ids, true), "unaffable, un $ aff!");
    EXPECT_EQ(encoding.display,
              (Strings{"[CLS]", " un", "aff", "able", " ,", " un", " $", " aff", " !", "[SEP]"}));
    EXPECT_EQ(encoding.tokens[2], "##aff");
    EXPECT_EQ(tokenizer.bosId(), 1);
    EXPECT_EQ(tokenizer.eosId(), 2);
}

// The same template written as TemplateProcessing.
TEST(TokenizerWordPiece, TemplateProcessingClsSep) {
    json config = bertTokenizer();
    config["post_processor"] = json::parse(R"({"type": "TemplateProcessing",
        "single": "[CLS]:0 $A:0 [SEP]:0", "pair": "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]},
                           "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}})");
    const Tokenizer tokenizer = make(config);
    EXPECT_EQ(tokenizer.encode("un aff").ids, (Ids{1, 3, 7, 2}));
    EXPECT_EQ(tokenizer.encode("un aff", false).ids, (Ids{3, 7}));
}

// ---- Unigram --------------------------------------------------------------------------------

json unigramModel(const std::vector<std::pair<std::string, double>>& pieces, int unkId = 0,
                  bool byteFallback = false) {
    json vocab = json::array();
    for (const auto& [piece, score] : pieces)
        vocab.push_back(json::array({piece, score}));
    return {
        {"type", "Unigram"}, {"unk_id", unkId}, {"vocab", vocab}, {"byte_fallback", byteFallback}};
}

// Hugging Face's own example (models/unigram/model.rs, Unigram::encode): the best total score,
// with the two unknown x fused into one unk.
TEST(TokenizerUnigram, ViterbiBestScoreAndFusedUnknowns) {
    const Tokenizer tokenizer = make(pipeline(unigramModel({{"<unk>", 0.0},
                                                            {"a", 0.0},
                                                            {"b", 0.0},
                                                            {"c", 0.0},
                                                            {"d", 0.0},
                                                            {"cd", 1.0},
                                                            {"ab", 2.0},
                                                            {"abc", 5.0},
                                                            {"abcd", 10.0}})));
    const Encoding encoding = tokenizer.encode("abcdacdxx");
    EXPECT_EQ(encoding.ids, (Ids{8, 1, 5, 0}));
    EXPECT_EQ(encoding.tokens, (Strings{"abcd", "a", "cd", "<unk>"}));
    // Unknown characters apart are separate unks.
    EXPECT_EQ(tokenizer.encode("xaxx").ids, (Ids{0, 1, 0}));
}

// An unknown character scores the lowest score minus 10: here -5 - 10 = -15, so a (20) + unk
// makes 5, and "ax" wins only with more than 5.
TEST(TokenizerUnigram, UnknownScoresTenBelowTheLowest) {
    const auto tokenizerWith = [](double axScore) {
        return make(
            pipeline(unigramModel({{"<unk>", 0.0}, {"a", 20.0}, {"q", -5.0}, {"ax", axScore}})));
    };
    EXPECT_EQ(tokenizerWith(4.9).encode("ax").ids, (Ids{1, 0}));
    EXPECT_EQ(tokenizerWith(5.1).encode("ax").ids, (Ids{3}));
    // The unk may sit anywhere in the vocabulary.
    const Tokenizer unkLast = make(pipeline(unigramModel({{"a", 0.0}, {"<unk>", 0.0}}, 1)));
    EXPECT_EQ(unkLast.encode("aza").ids, (Ids{0, 1, 0}));
}

// byte_fallback: a run of unknown characters becomes the <0x..> pieces of its bytes when every
// byte has one, else one unk.
TEST(TokenizerUnigram, ByteFallbackForUnknownRuns) {
    const Tokenizer tokenizer = make(pipeline(
        unigramModel({{"<unk>", 0.0}, {"a", -1.0}, {"<0x78>", -3.0}, {"<0x79>", -3.0}}, 0, true)));
    EXPECT_EQ(tokenizer.encode("axy").ids, (Ids{1, 2, 3}));
    EXPECT_EQ(tokenizer.encode("axz").ids, (Ids{1, 0}));
    const Tokenizer without =
        make(pipeline(unigramModel({{"<unk>", 0.0}, {"a", -1.0}, {"<0x78>", -3.0}}, 0, false)));
    EXPECT_EQ(without.encode("ax").ids, (Ids{1, 0}));
}

// ---- Metaspace with a Unigram model -----------------------------------------------------------

json metaspaceUnigram(const std::string& scheme, bool split = true) {
    json config = pipeline(unigramModel({{"<unk>", 0.0},
                                         {"<s>", 0.0},
                                         {"\u2581hi", -1.0},
                                         {"hi", -1.0},
                                         {"\u2581", -2.0},
                                         {"\u2581hi\u2581hi", -1.0}}));
    config["added_tokens"] = json::array({added(1, "<s>")});
    json metaspace = {{"type", "Metaspace"},
                      {"replacement", "\u2581"},
                      {"prepend_scheme", scheme},
                      {"split", split}};
    config["pre_tokenizer"] = metaspace;
    config["decoder"] = metaspace;
    return config;
}

// always: every part gets "▁"; first: only the text's start (not text after an added
// token); never: none. split false keeps "▁hi▁hi" whole, so its own piece can match.
TEST(TokenizerMetaspace, PrependSchemesAndSplit) {
    EXPECT_EQ(make(metaspaceUnigram("always")).encode("hi<s>hi").ids, (Ids{2, 1, 2}));
    EXPECT_EQ(make(metaspaceUnigram("first")).encode("hi<s>hi").ids, (Ids{2, 1, 3}));
    EXPECT_EQ(make(metaspaceUnigram("never")).encode("hi<s>hi").ids, (Ids{3, 1, 3}));
    EXPECT_EQ(make(metaspaceUnigram("always")).encode("hi hi").ids, (Ids{2, 2}));
    EXPECT_EQ(make(metaspaceUnigram("always", false)).encode("hi hi").ids, (Ids{5}));
    EXPECT_EQ(make(metaspaceUnigram("never")).encode(" hi").ids, (Ids{2}));
    // Files from before prepend_scheme say add_prefix_space.
    json legacy = metaspaceUnigram("never");
    for (const char* stage : {"pre_tokenizer", "decoder"}) {
        legacy[stage].erase("prepend_scheme");
        legacy[stage]["add_prefix_space"] = true;
    }
    EXPECT_EQ(make(legacy).encode("hi").ids, (Ids{2}));
}

// The decoder turns "▁" into spaces and drops the first token's (unless the scheme is never);
// a token shown alone keeps its space.
TEST(TokenizerMetaspace, DecodeAndDisplay) {
    const Tokenizer always = make(metaspaceUnigram("always"));
    EXPECT_EQ(always.decode(Ids{2, 2}), "hi hi");
    // Every "▁" of the first token goes, not only its first (decoders/metaspace.rs).
    EXPECT_EQ(always.decode(Ids{5, 3}), "hihihi");
    EXPECT_EQ(make(metaspaceUnigram("never")).decode(Ids{2, 2}), " hi hi");
    EXPECT_EQ(always.encode("hi hi").display, (Strings{" hi", " hi"}));
}

// ---- WordLevel ------------------------------------------------------------------------------

TEST(TokenizerWordLevel, WholeWordsOrUnk) {
    json config = pipeline({{"type", "WordLevel"},
                            {"vocab", vocabObject({"<unk>", "hello", "world"})},
                            {"unk_token", "<unk>"}});
    config["pre_tokenizer"] = {{"type", "WhitespaceSplit"}};
    EXPECT_EQ(make(config).encode("hello big world").ids, (Ids{1, 0, 2}));
    // No decoder: decode joins the tokens with spaces, as Hugging Face does.
    EXPECT_EQ(make(config).decode(Ids{1, 2}), "hello world");
    config["model"]["unk_token"] = "[UNK]";
    EXPECT_NE(loadError(config).find("model.unk_token: '[UNK]' is not in the vocabulary"),
              std::string::npos)
        << loadError(config);
}

// Whitespace and WhitespaceSplit use Rust's classes: a combining mark is a word character, a
// superscript two is not; U+180E (a format character since Unicode 6.3) is not whitespace.
TEST(TokenizerWordLevel, WhitespacePreTokenizersUseRustsClasses) {
    json config = pipeline({{"type", "WordLevel"},
                            {"vocab", vocabObject({"<unk>", "a\u0301b", "x", "\u00b2",
                                                   "a\u180eb", "x\u00b2"})},
                            {"unk_token", "<unk>"}});
    config["pre_tokenizer"] = {{"type", "Whitespace"}};
    EXPECT_EQ(make(config).encode("a\u0301b x\u00b2").ids, (Ids{1, 2, 3}));
    config["pre_tokenizer"] = {{"type", "WhitespaceSplit"}};
    EXPECT_EQ(make(config).encode("a\u180eb\u3000x\u00b2").ids, (Ids{4, 5}));
}

// ---- Precompiled ----------------------------------------------------------------------------

/// A precompiled_charsmap as SentencePiece lays it out (u32 trie size, Darts-clone double-array
/// units, NUL-ended replacements), built here in the simplest layout: each trie node's
/// children and leaf value in a 256-unit block of their own.
std::string charsmapBlob(const std::vector<std::pair<std::string, std::string>>& entries) {
    struct Node {
        std::map<unsigned char, std::size_t> children;
        int64_t value = -1;
        unsigned char label = 0;
    };
    std::vector<Node> nodes(1);
    std::string strings;
    for (const auto& [key, replacement] : entries) {
        std::size_t node = 0;
        for (const char c : key) {
            const auto byte = static_cast<unsigned char>(c);
            if (!nodes[node].children.count(byte)) {
                nodes.push_back(Node{});
                nodes.back().label = byte;
                nodes[node].children[byte] = nodes.size() - 1;
            }
            node = nodes[node].children[byte];
        }
        nodes[node].value = static_cast<int64_t>(strings.size());
        strings += replacement;
        strings += '\0';
    }
    const auto block = [](std::size_t node) { return static_cast<uint32_t>(256 * (node + 1)); };
    std::vector<uint32_t> position(nodes.size(), 0); // the root's unit is unit 0
    for (std::size_t node = 0; node < nodes.size(); ++node)
        for (const auto& [byte, child] : nodes[node].children)
            position[child] = block(node) ^ byte;
    std::vector<uint32_t> units(256 * (nodes.size() + 1), 0);
    for (std::size_t node = 0; node < nodes.size(); ++node) {
        const uint32_t offset = position[node] ^ block(node); // XOR leads to the node's block
        const bool leaf = nodes[node].value >= 0;
        units[position[node]] = (offset << 10) | (leaf ? 1u << 8 : 0u) | nodes[node].label;
        if (leaf) units[block(node)] = (1u << 31) | static_cast<uint32_t>(nodes[node].value);
    }
    std::string blob;
    const auto put = [&](uint32_t value) {
        for (int k = 0; k < 4; ++k)
            blob += static_cast<char>((value >> (8 * k)) & 0xFF);
    };
    put(static_cast<uint32_t>(units.size() * 4));
    for (const uint32_t unit : units)
        put(unit);
    return blob + strings;
}

/// A tokenizer whose normalizer is the charsmap and whose WordLevel vocabulary is `outputs`:
/// a whole text is one word, so its id says what the normalizer made of it.
json precompiledTokenizer(const std::string& blob, const Strings& outputs) {
    json config = pipeline(
        {{"type", "WordLevel"}, {"vocab", vocabObject(outputs)}, {"unk_token", outputs[0]}});
    config["normalizer"] = {
        {"type", "Sequence"},
        {"normalizers",
         json::array({{{"type", "Precompiled"}, {"precompiled_charsmap", base64(blob)}}})}};
    return config;
}

// spm_precompiled's rules: a grapheme cluster under 6 bytes is looked up whole, and the
// shortest key that is a prefix of it replaces all of it; longer clusters go character by
// character; an empty replacement deletes.
TEST(TokenizerPrecompiled, HandMadeCharsmapFollowsTheGraphemeRules) {
    const std::string blob = charsmapBlob(
        {{"\ufb01", "fi"}, {"a\u0301", "\u00e1"}, {"a\u0301\u0302", "Z"}, {"\r", " "}, {"x", ""}});
    const Strings outputs = {"<unk>", "fine", "fi", "fi\u0301\u0301", "\u00e1", "a b",
                             "a",     "ab",   "Z"};
    const Tokenizer tokenizer = make(precompiledTokenizer(blob, outputs));
    const auto normalized = [&](const std::string& text) {
        const Ids ids = tokenizer.encode(text).ids;
        return ids.size() == 1 ? outputs[static_cast<std::size_t>(ids[0])] : "(several words)";
    };
    EXPECT_EQ(normalized("\ufb01ne"), "fine");
    EXPECT_EQ(normalized("\ufb01\u0301"), "fi");                   // 5 bytes: whole
    EXPECT_EQ(normalized("\ufb01\u0301\u0301"), "fi\u0301\u0301"); // 7 bytes: by character
    EXPECT_EQ(normalized("a\u0301\u0302"), "\u00e1");              // shortest key wins
    EXPECT_EQ(normalized("a\r\nb"), "a b");                        // CR LF is one cluster
    EXPECT_EQ(normalized("xax"), "a");
    EXPECT_EQ(normalized("ab"), "ab");
}

std::string realCharsmap() {
    return npm::slurp(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "model" / "fixtures" /
                      "hf_tokenizers" / "nmt_nfkc.charsmap");
}

// SentencePiece's nmt_nfkc charsmap (from a real .model file): NFKC's compatibility
// mappings, and spm_precompiled's own examples (Thai and Hindi marks, the Arabic cluster whose
// first character's mapping replaces both).
TEST(TokenizerPrecompiled, RealNmtNfkcCharsmap) {
    const std::string blob = realCharsmap();
    ASSERT_GT(blob.size(), 100000u);
    const Strings outputs = {
        "<unk>",
        "fi",
        "A",
        "1",
        "G",
        "\u0e40\u0e02\u0e32\u0e44\u0e21\u0e48\u0e44\u0e14\u0e49\u0e1e\u0e39\u0e14\u0e2a\u0e31"
        "\u0e01\u0e04\u0e4d\u0e32",
        "\u0921\u093c\u0940 \u0926\u0941\u0916",
        "\u0622",
        "plain text"};
    const Tokenizer tokenizer = make(precompiledTokenizer(blob, outputs));
    const auto normalized = [&](const std::string& text) {
        const Ids ids = tokenizer.encode(text).ids;
        return ids.size() == 1 ? outputs[static_cast<std::size_t>(ids[0])] : "(several words)";
    };
    EXPECT_EQ(normalized("\ufb01"), "fi");
    EXPECT_EQ(normalized("\uff21"), "A");
    EXPECT_EQ(normalized("\u2460"), "1");
    EXPECT_EQ(normalized("\U0001d53e"), "G");
    EXPECT_EQ(normalized("\u0e40\u0e02\u0e32\u0e44\u0e21\u0e48\u0e44\u0e14\u0e49\u0e1e\u0e39"
                         "\u0e14\u0e2a\u0e31\u0e01\u0e04\u0e33"),
              outputs[5]);
    EXPECT_EQ(normalized("\u095c\u0940 \u0926\u0941\u0916"), outputs[6]);
    EXPECT_EQ(normalized("\u0627\u0653"), "\u0622");
    EXPECT_EQ(normalized("plain text"), "plain text");
}

// A charsmap that is cut short, not base64, or garbage is refused with one message naming the
// key and what is wrong.
TEST(TokenizerPrecompiled, BrokenCharsmapsAreRefused) {
    const std::string blob = realCharsmap();
    const auto refusal = [](const std::string& charsmapBase64) {
        json config = pipeline(
            {{"type", "WordLevel"}, {"vocab", vocabObject({"<unk>"})}, {"unk_token", "<unk>"}});
        config["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", charsmapBase64}};
        return loadError(config);
    };
    const std::string key = "tiny.json: normalizer.precompiled_charsmap: ";
    for (const std::size_t cut :
         {std::size_t{0}, std::size_t{3}, std::size_t{1000}, blob.size() / 2}) {
        const std::string message = refusal(base64(blob.substr(0, cut)));
        EXPECT_EQ(message.rfind(key, 0), 0u) << message;
    }
    EXPECT_NE(refusal(base64(blob.substr(0, 1000))).find("(truncated?)"), std::string::npos);
    EXPECT_NE(refusal("AAAA!!!!").find(key + "not base64"), std::string::npos)
        << refusal("AAAA!!!!");
    EXPECT_NE(refusal("AAB=").find("not base64: trailing bits"), std::string::npos);
    std::string garbage;
    uint32_t state = 12345;
    for (int i = 0; i < 4000; ++i) {
        state = state * 1103515245u + 12345u;
        garbage += static_cast<char>(state >> 16);
    }
    garbage.replace(0, 4, std::string("\x00\x01\x00\x00", 4)); // a 256-byte trie
    EXPECT_EQ(refusal(base64(garbage)).rfind(key, 0), 0u) << refusal(base64(garbage));
    // A trie whose root points past its end.
    std::string outside = charsmapBlob({{"a", "b"}});
    outside[5] = '\x7f';
    EXPECT_NE(refusal(base64(outside)).find("trie is corrupt"), std::string::npos)
        << refusal(base64(outside));
}

// ---- what is not understood is refused --------------------------------------------------------

TEST(TokenizerModels, UnknownTypesAndKeysAreRefused) {
    const auto refused = [](const json& config, const std::string& expected) {
        const std::string message = loadError(config);
        EXPECT_EQ(message.rfind("tiny.json: ", 0), 0u) << message;
        EXPECT_NE(message.find(expected), std::string::npos)
            << "expected '" << expected << "' in: " << message;
    };
    refused(pipeline({{"type", "Dictionary"}, {"vocab", vocabObject({"a"})}}),
            "model.type: the model 'Dictionary' is not supported (supported: BPE, WordPiece, "
            "Unigram, WordLevel)");
    json config = bertTokenizer();
    config["normalizer"]["lowercase_all"] = true;
    refused(config, "normalizer.lowercase_all: is not a key");
    config = bertTokenizer();
    config["model"]["dropout"] = 0.1;
    refused(config, "model.dropout: is not a key");
    config = bertTokenizer();
    config["pre_tokenizer"] = {{"type", "Sequence"},
                               {"pretokenizers", json::array({{{"type", "UnicodeScripts"}}})}};
    refused(config,
            "pre_tokenizer.pretokenizers[0].type: the pre-tokenizer 'UnicodeScripts' is not "
            "supported");
    config = bertTokenizer();
    config["decoder"]["strip"] = 1;
    refused(config, "decoder.strip: is not a key");
    config = bertTokenizer();
    config["added_tokens"][0]["stripped"] = true;
    refused(config, "added_tokens[0].stripped: is not a key");
    config = bertTokenizer();
    config["sampling"] = 0.5;
    refused(config, "tiny.json: sampling: is not a key");
    // Unigram needs its unk (Hugging Face fails on an unknown character without one).
    config = pipeline(unigramModel({{"a", 0.0}}));
    config["model"]["unk_id"] = nullptr;
    refused(config, "model.unk_id: is missing");
    config["model"]["unk_id"] = 5;
    refused(config, "model.unk_id: must be at most 0");
}

// A tokenizer names its algorithm (the window says which one splits a model's text): a
// tokenizer.json's model "type", and SentencePiece for a Marian folder.
TEST(TokenizerKind, NamesTheFilesModelType) {
    const std::filesystem::path models =
        std::filesystem::path(ATTNLAB_SOURCE_DIR) / "resources" / "models";
    for (const char* name : {"tiny-llama-induction", "tiny-bert-en"}) {
        SCOPED_TRACE(name);
        std::ifstream in(models / name / "tokenizer.json");
        const json file = json::parse(in);
        auto tokenizer = Tokenizer::fromFile((models / name).string());
        ASSERT_TRUE(tokenizer) << tokenizer.error();
        EXPECT_EQ(tokenizer->kind(), file["model"]["type"].get<std::string>());
    }
    auto marian = Tokenizer::fromFolder((models / "tiny-marian-en-zh").string());
    ASSERT_TRUE(marian) << marian.error();
    EXPECT_EQ(marian->kind(), "SentencePiece");
    auto wordLevel = Tokenizer::fromJson(
        pipeline(
            {{"type", "WordLevel"}, {"vocab", vocabObject({"[UNK]", "a"})}, {"unk_token", "[UNK]"}})
            .dump());
    ASSERT_TRUE(wordLevel) << wordLevel.error();
    EXPECT_EQ(wordLevel->kind(), "WordLevel");
}

// folderHasTokenizer says of a folder what fromFolder does: the bundled folders (a
// tokenizer.json, Marian's .spm files) have one, and every folder transformers' save_pretrained
// wrote for the test fixtures has none, which fromFolder refuses.
TEST(Tokenizer, AFolderHasATokenizerExactlyWhenFromFolderFindsOne) {
    const std::filesystem::path source(ATTNLAB_SOURCE_DIR);
    for (const char* name : {"tiny-llama-induction", "tiny-bert-en", "tiny-marian-en-zh"}) {
        const std::string dir = (source / "resources" / "models" / name).string();
        EXPECT_TRUE(Tokenizer::folderHasTokenizer(dir)) << name;
        EXPECT_TRUE(Tokenizer::fromFolder(dir)) << name;
    }
    for (const char* name : {"hf/gpt2", "hf/marian", "hf/t5", "qwen2_bias_tied"}) {
        const std::string dir = (source / "tests" / "model" / "fixtures" / name).string();
        EXPECT_FALSE(Tokenizer::folderHasTokenizer(dir)) << name;
        const Result<Tokenizer> loaded = Tokenizer::fromFolder(dir);
        ASSERT_FALSE(loaded) << name;
        EXPECT_NE(loaded.error().find("no tokenizer.json"), std::string::npos) << loaded.error();
    }
    EXPECT_FALSE(Tokenizer::folderHasTokenizer((source / "no such folder").string()));
}

} // namespace
} // namespace attnlab::model

// The tokenizer pipeline on tiny hand-made tokenizer.json files whose answers are worked out
// by hand from Hugging Face tokenizers' rules (BPE merge order, split behaviours, Metaspace's
// prepend schemes, added-token stripping, templates), plus every kind of malformed file.
// tokenizer_real_test.cpp checks the real Llama 3, Qwen3, GPT-2 and sentencepiece-style files.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/tokenizer/tokenizer.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

using nlohmann::json;
using Ids = std::vector<int64_t>;

/// A BPE tokenizer.json over `pieces` (id = position), with `merges`, and the stages given.
json tinyTokenizer(const std::vector<std::string>& pieces, json merges = json::array()) {
    json vocab = json::object();
    for (std::size_t i = 0; i < pieces.size(); ++i)
        vocab[pieces[i]] = i;
    return {
        {"version", "1.0"},
        {"added_tokens", json::array()},
        {"normalizer", nullptr},
        {"pre_tokenizer", nullptr},
        {"post_processor", nullptr},
        {"decoder", nullptr},
        {"model",
         {{"type", "BPE"}, {"vocab", vocab}, {"merges", std::move(merges)}, {"dropout", nullptr}}}};
}

Tokenizer make(const json& config) {
    Result<Tokenizer> loaded = Tokenizer::fromJson(config.dump(), "tiny.json");
    if (!loaded) throw std::runtime_error(loaded.error());
    return std::move(loaded).value();
}

Ids encode(const json& config, const std::string& text, bool special = true) {
    return make(config).encode(text, special).ids;
}

std::string loadError(const json& config) {
    Result<Tokenizer> loaded = Tokenizer::fromJson(config.dump(), "tiny.json");
    return loaded ? std::string("(loaded)") : loaded.error();
}

json addedToken(int id, const std::string& content, bool special = true) {
    return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", false}, {"special", special}};
}

// ---- BPE ------------------------------------------------------------------------------------

TEST(TokenizerBpe, MergesByRankNotByPosition) {
    // a b c -> "a b" (rank 0) twice, then "ab c" (rank 1): abc ab.
    const json config = tinyTokenizer({"a", "b", "c", "ab", "abc", "bc"}, {"a b", "ab c"});
    EXPECT_EQ(encode(config, "abcab"), (Ids{4, 3}));
    // With "b c" ranked first, "abc" becomes a + bc and nothing merges a with bc.
    const json other = tinyTokenizer({"a", "b", "c", "ab", "abc", "bc"}, {"b c", "a b"});
    EXPECT_EQ(encode(other, "abc"), (Ids{0, 5}));
    // Equal ranks go left to right: "aaa" with "a a" -> aa a.
    const json repeat = tinyTokenizer({"a", "aa"}, {"a a"});
    EXPECT_EQ(encode(repeat, "aaa"), (Ids{1, 0}));
    EXPECT_EQ(encode(repeat, "aaaa"), (Ids{1, 1}));
}

TEST(TokenizerBpe, MergesAsPairs) {
    const json config =
        tinyTokenizer({"a", "b", "c", "ab", "abc"}, json::parse(R"([["a","b"],["ab","c"]])"));
    EXPECT_EQ(encode(config, "abc"), (Ids{4}));
}

TEST(TokenizerBpe, UnknownCharactersUnkFuseAndByteFallback) {
    json config = tinyTokenizer({"a", "b", "<unk>", "<0x78>"});
    config["model"]["unk_token"] = "<unk>";
    EXPECT_EQ(encode(config, "ayzb"), (Ids{0, 2, 2, 1}));
    config["model"]["fuse_unk"] = true;
    EXPECT_EQ(encode(config, "ayzb"), (Ids{0, 2, 1}));
    // Byte fallback: "x" is byte 0x78, which the vocabulary has; "y" is not, so it is unknown.
    config["model"]["byte_fallback"] = true;
    EXPECT_EQ(encode(config, "axyb"), (Ids{0, 3, 2, 1}));
    // No unk token: an unknown character is dropped, as Hugging Face does.
    json noUnk = tinyTokenizer({"a", "b"});
    EXPECT_EQ(encode(noUnk, "ayb"), (Ids{0, 1}));
}

TEST(TokenizerBpe, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
    // "abc" is in the vocabulary but no merge builds it.
    json config = tinyTokenizer({"a", "b", "c", "abc"});
    EXPECT_EQ(encode(config, "abc"), (Ids{0, 1, 2}));
    config["model"]["ignore_merges"] = true;
    EXPECT_EQ(encode(config, "abc"), (Ids{3}));
}

TEST(TokenizerBpe, ContinuingSubwordPrefixAndEndOfWordSuffix) {
    json config = tinyTokenizer({"a", "##b", "a##b", "ab", "b</w>", "a</w>"}, {"a ##b"});
    config["model"]["continuing_subword_prefix"] = "##";
    // a + ##b merge to "ab" (the prefix of the right piece is dropped).
    EXPECT_EQ(encode(config, "ab"), (Ids{3}));
    json suffix = tinyTokenizer({"a", "b</w>", "ab</w>"}, {"a b</w>"});
    suffix["model"]["end_of_word_suffix"] = "</w>";
    EXPECT_EQ(encode(suffix, "ab"), (Ids{2}));
}

// ---- pre-tokenizers -------------------------------------------------------------------------

/// Pieces show as whole-word ids: ignore_merges looks each piece up before splitting it.
json splitTokenizer(const std::string& behavior, bool invert = false) {
    json config = tinyTokenizer({"a", "b", "-", "a-", "b-", "-b", "--", "c"});
    config["model"]["ignore_merges"] = true;
    config["pre_tokenizer"] = {{"type", "Split"},
                               {"pattern", {{"String", "-"}}},
                               {"behavior", behavior},
                               {"invert", invert}};
    return config;
}

TEST(TokenizerPreTokenizer, SplitBehaviours) {
    EXPECT_EQ(encode(splitTokenizer("Isolated"), "a-b"), (Ids{0, 2, 1}));
    EXPECT_EQ(encode(splitTokenizer("Removed"), "a-b"), (Ids{0, 1}));
    EXPECT_EQ(encode(splitTokenizer("MergedWithPrevious"), "a-b-"), (Ids{3, 4}));
    EXPECT_EQ(encode(splitTokenizer("MergedWithNext"), "a-b"), (Ids{0, 5}));
    EXPECT_EQ(encode(splitTokenizer("Contiguous"), "a--b"), (Ids{0, 6, 1}));
    // Inverted: the matches are what is kept, the rest is the delimiter.
    EXPECT_EQ(encode(splitTokenizer("Removed", true), "a-b"), (Ids{2}));
}

TEST(TokenizerPreTokenizer, SplitRegexWithOnigurumaWhitespace) {
    // Oniguruma's \s (which Hugging Face uses) includes U+0085 NEL; PCRE2's must agree.
    json config = tinyTokenizer({"a", "b", "\u00e9"});
    config["pre_tokenizer"] = {{"type", "Split"},
                               {"pattern", {{"Regex", R"(\s+)"}}},
                               {"behavior", "Removed"},
                               {"invert", false}};
    EXPECT_EQ(encode(config, "a \u0085\t b"), (Ids{0, 1}));
    // \p{L} is Unicode-aware: é is one letter, not two bytes.
    config["pre_tokenizer"]["pattern"] = {{"Regex", R"(\p{L})"}};
    config["pre_tokenizer"]["invert"] = true;
    EXPECT_EQ(encode(config, "a\u00e9b"), (Ids{0, 2, 1}));
}

TEST(TokenizerPreTokenizer, DigitsAloneOrInRuns) {
    json config = tinyTokenizer({"a", "b", "1", "2", "3", "ab", "123"});
    config["model"]["ignore_merges"] = true;
    config["pre_tokenizer"] = {{"type", "Digits"}, {"individual_digits", false}};
    EXPECT_EQ(encode(config, "ab123"), (Ids{5, 6}));
    config["pre_tokenizer"]["individual_digits"] = true;
    EXPECT_EQ(encode(config, "ab123"), (Ids{5, 2, 3, 4}));
}

TEST(TokenizerPreTokenizer, ByteLevelMapsBytesAndAddsAPrefixSpace) {
    // GPT-2's byte table: space is Ġ (U+0120), newline Ċ (U+010A).
    json config = tinyTokenizer({"h", "i", "\u0120", "\u010a", "\u0120hi"}, {"h i", "\u0120 hi"});
    config["model"]["vocab"]["hi"] = 5;
    config["pre_tokenizer"] = {
        {"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}};
    config["decoder"] = {{"type", "ByteLevel"}};
    const Tokenizer tokenizer = make(config);
    const Encoding encoding = tokenizer.encode("hi\n");
    // " hi" and "\n" are the regex's pieces.
    EXPECT_EQ(encoding.ids, (Ids{4, 3}));
    EXPECT_EQ(encoding.tokens, (std::vector<std::string>{"\u0120hi", "\u010a"}));
    EXPECT_EQ(encoding.display, (std::vector<std::string>{" hi", "\n"}));
    EXPECT_EQ(tokenizer.decode(encoding.ids), " hi\n");
}

json metaspaceTokenizer(const std::string& scheme) {
    json config = tinyTokenizer({"<s>", "\u2581hi", "hi", "\u2581there", "\u2581"});
    config["model"]["ignore_merges"] = true;
    config["added_tokens"] = json::array({addedToken(0, "<s>")});
    config["pre_tokenizer"] = {{"type", "Metaspace"},
                               {"replacement", "\u2581"},
                               {"prepend_scheme", scheme},
                               {"split", true}};
    config["decoder"] = {
        {"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", scheme}};
    return config;
}

TEST(TokenizerPreTokenizer, MetaspacePrependSchemes) {
    EXPECT_EQ(encode(metaspaceTokenizer("always"), "hi there"), (Ids{1, 3}));
    EXPECT_EQ(encode(metaspaceTokenizer("never"), "hi there"), (Ids{2, 3}));
    EXPECT_EQ(encode(metaspaceTokenizer("first"), "hi there"), (Ids{1, 3}));
    // "first": only text at the very start gets the prefix, not text after an added token.
    EXPECT_EQ(encode(metaspaceTokenizer("first"), "<s>hi there"), (Ids{0, 2, 3}));
    EXPECT_EQ(encode(metaspaceTokenizer("always"), "<s>hi there"), (Ids{0, 1, 3}));
    // The decoder drops the first token's prefix (for whole texts, not for display).
    const Tokenizer tokenizer = make(metaspaceTokenizer("always"));
    EXPECT_EQ(tokenizer.decode(Ids{1, 3}), "hi there");
    EXPECT_EQ(tokenizer.displayToken(1), " hi");
}

// ---- normalizers ----------------------------------------------------------------------------

TEST(TokenizerNormalizer, SentencepieceStylePrependReplaceAndByteFallback) {
    // Llama 2 / Mistral: Prepend "▁", Replace " " -> "▁", no pre-tokenizer, byte fallback.
    json config = tinyTokenizer({"<unk>", "<s>", "\u2581", "a", "\u2581a", "<0x0A>"}, {"\u2581 a"});
    config["model"]["unk_token"] = "<unk>";
    config["model"]["byte_fallback"] = true;
    config["model"]["fuse_unk"] = true;
    config["added_tokens"] = json::array({addedToken(0, "<unk>"), addedToken(1, "<s>")});
    config["normalizer"] = json::parse(R"({"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]})");
    config["post_processor"] = json::parse(R"({"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}})");
    config["decoder"] = json::parse(R"({"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})");
    const Tokenizer tokenizer = make(config);
    // "a a\n" -> "▁a▁a\n": ▁a ▁a <0x0A>, after <s>.
    const Encoding encoding = tokenizer.encode("a a\n");
    EXPECT_EQ(encoding.ids, (Ids{1, 4, 4, 5}));
    EXPECT_EQ(encoding.display, (std::vector<std::string>{"<s>", " a", " a", "\n"}));
    EXPECT_EQ(encoding.special, (std::vector<uint8_t>{1, 0, 0, 0}));
    EXPECT_EQ(tokenizer.encode("a a\n", false).ids, (Ids{4, 4, 5}));
    EXPECT_EQ(tokenizer.decode(Ids{4, 4, 5}), "a a\n");
    // The prefix is prepended to each part between added tokens.
    EXPECT_EQ(tokenizer.encode("a<s>a", false).ids, (Ids{4, 1, 4}));
    // "b" has no token and no byte token: one fused unk for "bb".
    EXPECT_EQ(tokenizer.encode("abb", false).ids, (Ids{4, 0}));
    EXPECT_EQ(tokenizer.bosId(), 1);
}

TEST(TokenizerNormalizer, UnicodeFormsLowercaseAndStrip) {
    json config = tinyTokenizer({"\u00e9", "e", "\u0301", "ab", "a", "b", "\ufb01", "fi", "f", "i"},
                                {"a b", "f i"});
    config["normalizer"] = {{"type", "NFC"}};
    EXPECT_EQ(encode(config, "e\u0301"), (Ids{0}));
    config["normalizer"] = {{"type", "NFD"}};
    EXPECT_EQ(encode(config, "\u00e9"), (Ids{1, 2}));
    config["normalizer"] = {{"type", "NFKC"}};
    EXPECT_EQ(encode(config, "\ufb01"), (Ids{7})); // the ligature fi becomes f + i
    config["normalizer"] = {{"type", "NFC"}};
    EXPECT_EQ(encode(config, "\ufb01"), (Ids{6}));
    config["normalizer"] = json::parse(
        R"({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"},
            {"type": "Strip", "strip_left": true, "strip_right": true}]})");
    EXPECT_EQ(encode(config, "  \uff21\uff22 \n"), (Ids{3})); // full-width AB -> ab
}

TEST(TokenizerNormalizer, ReplaceWithARegex) {
    json config = tinyTokenizer({"a", "b", "-"});
    config["normalizer"] =
        json::parse(R"({"type": "Replace", "pattern": {"Regex": "[0-9]+"}, "content": "-"})");
    EXPECT_EQ(encode(config, "a123b4"), (Ids{0, 2, 1, 2}));
}

// ---- added tokens ---------------------------------------------------------------------------

json addedTokenTokenizer(const std::string& flag) {
    json config = tinyTokenizer({"a", "b", " ", "<", "m", ">", "<m>"});
    json token = addedToken(6, "<m>", false);
    if (!flag.empty()) token[flag] = true;
    config["added_tokens"] = json::array({token});
    return config;
}

TEST(TokenizerAddedTokens, LstripRstripAndSingleWord) {
    EXPECT_EQ(encode(addedTokenTokenizer(""), "a <m> b"), (Ids{0, 2, 6, 2, 1}));
    EXPECT_EQ(encode(addedTokenTokenizer("lstrip"), "a <m> b"), (Ids{0, 6, 2, 1}));
    EXPECT_EQ(encode(addedTokenTokenizer("rstrip"), "a <m> b"), (Ids{0, 2, 6, 1}));
    EXPECT_EQ(encode(addedTokenTokenizer("single_word"), "a <m> b"), (Ids{0, 2, 6, 2, 1}));
    // Inside a word a single_word token is not matched: the text is tokenized as it is.
    EXPECT_EQ(encode(addedTokenTokenizer("single_word"), "a<m>b"), (Ids{0, 3, 4, 5, 1}));
    EXPECT_EQ(encode(addedTokenTokenizer(""), "a<m>b"), (Ids{0, 6, 1}));
}

TEST(TokenizerAddedTokens, LongestMatchWinsAndSpecialTokensStayWithoutTemplate) {
    json config = tinyTokenizer({"a", "<", ">", "x"});
    config["added_tokens"] = json::array({addedToken(4, "<x"), addedToken(5, "<x>")});
    config["model"]["vocab"]["<x"] = 4;
    const Tokenizer tokenizer = make(config);
    EXPECT_EQ(tokenizer.encode("a<x>a<xa", false).ids, (Ids{0, 5, 0, 4, 0}));
    EXPECT_EQ(tokenizer.encode("a<x>a", false).special, (std::vector<uint8_t>{0, 1, 0}));
    EXPECT_TRUE(tokenizer.isSpecial(5));
    EXPECT_FALSE(tokenizer.isSpecial(0));
    EXPECT_EQ(tokenizer.vocabSize(), 6);
    EXPECT_EQ(tokenizer.tokenToId("<x>"), 5);
    EXPECT_EQ(tokenizer.idToToken(5), "<x>");
    EXPECT_EQ(tokenizer.idToToken(6), std::nullopt);
    EXPECT_EQ(tokenizer.idToToken(-1), std::nullopt);
}

// ---- post-processors ------------------------------------------------------------------------

TEST(TokenizerPostProcessor, TemplatesAddTheirTokensOnlyWhenAsked) {
    json config = tinyTokenizer({"<s>", "</s>", "a"});
    config["added_tokens"] = json::array({addedToken(0, "<s>"), addedToken(1, "</s>")});
    const json specials = json::parse(R"({"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                                          "</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}})");
    config["post_processor"] = {{"type", "TemplateProcessing"},
                                {"single", "<s>:0 $A:0 </s>:0"},
                                {"special_tokens", specials}};
    EXPECT_EQ(encode(config, "aa"), (Ids{0, 2, 2, 1}));
    EXPECT_EQ(encode(config, "aa", false), (Ids{2, 2}));
    EXPECT_EQ(encode(config, ""), (Ids{0, 1}));
    EXPECT_EQ(make(config).bosId(), 0);
    EXPECT_EQ(make(config).eosId(), 1);
    // Llama 3.1's form: a Sequence of ByteLevel and TemplateProcessing.
    config["post_processor"] = json::parse(R"({"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        {"type": "TemplateProcessing",
         "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}}}]})");
    EXPECT_EQ(encode(config, "a"), (Ids{0, 2}));
    EXPECT_EQ(make(config).eosId(), std::nullopt);
    config["post_processor"] =
        json::parse(R"({"type": "RobertaProcessing", "sep": ["</s>", 1], "cls": ["<s>", 0]})");
    EXPECT_EQ(encode(config, "a"), (Ids{0, 2, 1}));
}

// ---- display and invalid input --------------------------------------------------------------

TEST(TokenizerDisplay, PartialCharactersShowTheirBytes) {
    // 教 is E6 95 99; with byte fallback over separate byte tokens each shows as <0x..>.
    json config = tinyTokenizer({"<0xE6>", "<0x95>", "<0x99>", "<unk>"});
    config["model"]["byte_fallback"] = true;
    config["model"]["unk_token"] = "<unk>";
    config["decoder"] = json::parse(
        R"({"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]})");
    const Tokenizer tokenizer = make(config);
    const Encoding encoding = tokenizer.encode("\u6559");
    EXPECT_EQ(encoding.ids, (Ids{0, 1, 2}));
    EXPECT_EQ(encoding.display, (std::vector<std::string>{"<0xE6>", "<0x95>", "<0x99>"}));
    EXPECT_EQ(tokenizer.decode(encoding.ids), "\u6559");
    // Incomplete bytes decode to U+FFFD per byte, as Hugging Face's ByteFallback does.
    EXPECT_EQ(tokenizer.decode(Ids{0, 1}), "\ufffd\ufffd");
}

TEST(TokenizerInput, InvalidUtf8IsReadAsReplacementCharacters) {
    json config = tinyTokenizer({"a", "\ufffd"});
    EXPECT_EQ(encode(config, "a\xff"
                             "a"),
              (Ids{0, 1, 0}));
    // A truncated 3-byte sequence is one maximal ill-formed part: one U+FFFD.
    EXPECT_EQ(encode(config, "a\xe6\x95"), (Ids{0, 1}));
}

// ---- files ----------------------------------------------------------------------------------

TEST(TokenizerFile, FolderAndTokenizerConfig) {
    test::TempDir dir("attnlab_tokenizer");
    json config = tinyTokenizer({"<|begin|>", "<|end|>", "a"});
    config["added_tokens"] = json::array({addedToken(0, "<|begin|>"), addedToken(1, "<|end|>")});
    std::ofstream(dir.file("tokenizer.json")) << config.dump();
    std::ofstream(dir.file("tokenizer_config.json"))
        << R"({"bos_token": {"content": "<|begin|>", "__type": "AddedToken"}, "eos_token": "<|end|>"})";
    const Result<Tokenizer> fromFolder = Tokenizer::fromFile(dir.path().string());
    ASSERT_TRUE(fromFolder) << fromFolder.error();
    EXPECT_EQ(fromFolder->bosId(), 0);
    EXPECT_EQ(fromFolder->eosId(), 1);
    EXPECT_EQ(fromFolder->source(), dir.file("tokenizer.json"));
    const Result<Tokenizer> fromFile = Tokenizer::fromFile(dir.file("tokenizer.json"));
    ASSERT_TRUE(fromFile) << fromFile.error();
    EXPECT_EQ(fromFile->encode("a<|end|>").ids, (Ids{2, 1}));

    test::TempDir empty("attnlab_tokenizer_empty");
    const Result<Tokenizer> missing = Tokenizer::fromFile(empty.path().string());
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().find("no tokenizer.json"), std::string::npos) << missing.error();
    EXPECT_FALSE(Tokenizer::fromFile(dir.file("absent.json")));

    std::ofstream(dir.file("tokenizer_config.json")) << "{\"bos_token\": 3}";
    const Result<Tokenizer> badConfig = Tokenizer::fromFile(dir.path().string());
    ASSERT_FALSE(badConfig);
    EXPECT_NE(badConfig.error().find("tokenizer_config.json: bos_token"), std::string::npos)
        << badConfig.error();
}

/// Each malformed file is refused with the file's name and the key at fault.
TEST(TokenizerFile, MalformedFilesNameTheKey) {
    const json good = tinyTokenizer({"a", "b", "ab"}, {"a b"});
    ASSERT_EQ(loadError(good), "(loaded)");
    const auto refused = [&](json config, const std::string& expected) {
        const std::string message = loadError(config);
        EXPECT_EQ(message.rfind("tiny.json: ", 0), 0u) << message;
        EXPECT_NE(message.find(expected), std::string::npos)
            << "expected '" << expected << "' in: " << message;
    };
    json config = good;
    config.erase("model");
    refused(config, "model: is missing");
    config = good;
    config["model"]["type"] = "Dictionary";
    refused(config, "model.type: the model 'Dictionary' is not supported");
    config = good;
    config["model"]["vocab"]["b"] = -1;
    refused(config, "model.vocab[\"b\"]");
    config = good;
    config["model"]["vocab"]["b"] = "one";
    refused(config, "model.vocab[\"b\"]: must be an integer");
    config = good;
    config["model"]["vocab"]["b"] = 2000000000;
    refused(config, "model.vocab: the largest id 2000000000 is far beyond");
    config = good;
    config["model"]["merges"] = json::array({"a b c"});
    refused(config, "model.merges[0]");
    config = good;
    config["model"]["merges"] = json::array({"a z"});
    refused(config, "merges[0]: 'z' is not in the vocabulary");
    config = good;
    config["model"]["merges"] = json::array({json::array({"a", 3})});
    refused(config, "model.merges[0]");
    config = good;
    config["model"]["merges"] = "a b";
    refused(config, "model.merges: must be an array");
    config = good;
    config["model"]["unk_token"] = "<unk>";
    refused(config, "unk_token '<unk>' is not in the vocabulary");
    config = good;
    config["model"]["dropout"] = 0.1;
    refused(config, "model.dropout");
    config = good;
    config["normalizer"] = {{"type", "Casefold"}};
    refused(config, "normalizer.type: the normalizer 'Casefold' is not supported");
    config = good;
    config["normalizer"] = {{"type", "Sequence"},
                            {"normalizers", json::array({{{"type", "Casefold"}}})}};
    refused(config, "normalizer.normalizers[0].type");
    config = good;
    config["pre_tokenizer"] = {
        {"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
    refused(config, "pre_tokenizer.pattern.Regex: regular expression does not compile");
    config = good;
    config["pre_tokenizer"] = {
        {"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", "Sideways"}};
    refused(config, "pre_tokenizer.behavior: unknown split behavior 'Sideways'");
    config = good;
    config["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "ab"}};
    refused(config, "pre_tokenizer.replacement: must be one character");
    config = good;
    config["pre_tokenizer"] = {{"type", "UnicodeScripts"}};
    refused(config, "pre_tokenizer.type");
    config = good;
    config["post_processor"] = {
        {"type", "TemplateProcessing"}, {"single", "<s> $A"}, {"special_tokens", json::object()}};
    refused(config, "special token '<s>' is not in post_processor.special_tokens");
    config = good;
    config["post_processor"] = json::parse(R"({"type": "TemplateProcessing", "single": "<s> $A",
        "special_tokens": {"<s>": {"id": "<s>", "ids": [99], "tokens": ["<s>"]}}})");
    refused(config, "post_processor: the template's id 99 is not a token");
    config = good;
    config["decoder"] = {{"type", "Glue"}};
    refused(config, "decoder.type: the decoder 'Glue' is not supported");
    config = good;
    config["added_tokens"] = json::array({{{"id", 1}, {"content", ""}}});
    refused(config, "added_tokens[0].content: is empty");
    config = good;
    config["added_tokens"] = json::array({{{"content", "x"}}});
    refused(config, "added_tokens[0].id: is missing");

    const Result<Tokenizer> notJson = Tokenizer::fromJson("{\"model\": [1, 2", "tiny.json");
    ASSERT_FALSE(notJson);
    EXPECT_EQ(notJson.error().rfind("tiny.json: not valid JSON", 0), 0u) << notJson.error();
    const Result<Tokenizer> array = Tokenizer::fromJson("[]", "tiny.json");
    ASSERT_FALSE(array);
    EXPECT_NE(array.error().find("tiny.json"), std::string::npos);
}

TEST(TokenizerFile, TruncatedFileIsRefused) {
    test::TempDir dir("attnlab_tokenizer_cut");
    const std::string full = tinyTokenizer({"a", "b", "ab"}, {"a b"}).dump();
    std::ofstream(dir.file("tokenizer.json")) << full.substr(0, full.size() / 2);
    const Result<Tokenizer> loaded = Tokenizer::fromFile(dir.file("tokenizer.json"));
    ASSERT_FALSE(loaded);
    EXPECT_EQ(loaded.error().rfind(dir.file("tokenizer.json") + ": not valid JSON", 0), 0u)
        << loaded.error();
}

} // namespace
} // namespace attnlab::model

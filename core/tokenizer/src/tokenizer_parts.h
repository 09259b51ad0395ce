#pragma once
// What a Tokenizer is made of, whatever file it was read from (internal): tokenizer.json's
// stages, a SentencePiece .model (tokenizer_sentencepiece.cpp) or a Marian folder
// (tokenizer_marian.cpp) each fill a TokenizerParts, and tokenizer.cpp indexes it into the
// tables that encode(), decode() and the id lookups share.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer_model.h"
#include "tokenizer_pipeline.h"

namespace attnlab::model::detail {

/// A token matched in the text before anything else (tokenizer.json's added_tokens).
struct AddedToken {
    std::string content;
    int32_t id = 0;
    bool singleWord = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

struct TokenizerParts {
    std::unique_ptr<Normalizer> normalizer;     ///< may be null
    std::unique_ptr<PreTokenizer> preTokenizer; ///< may be null
    std::unique_ptr<Model> model;               ///< never null
    std::unique_ptr<Decoder> decoder;           ///< null: tokens joined with spaces
    std::vector<AddedToken> added;
    std::vector<TemplateItem> singleTemplate; ///< empty: nothing added around the text
    /// Vocabulary ids that are special without being added tokens (SentencePiece's control
    /// and unknown pieces): skipped by decode(ids, true), shown as they are.
    std::vector<int32_t> specialIds;
    /// Named by the file; otherwise taken from the template.
    std::optional<int64_t> bos, eos;
    /// The file's key that holds the vocabulary, for messages ("model.vocab", "vocab.json").
    std::string vocabularyKey = "model.vocab";
};

/// The bytes of a file of at most 1 GiB; throws FormatError naming it as `name`.
std::string readWholeFile(const std::filesystem::path& path, const std::string& name);
/// The JSON of `text` through the core's one reader; throws FormatError naming `name`.
Json parseJsonFile(std::string_view text, const std::string& name);
/// tokenizer_config.json's bos_token / eos_token / ...: a string, {"content": ...}, or null
/// (nullopt). Throws FormatError naming `key` for anything else.
std::optional<std::string> configToken(const Json& config, const char* key);

} // namespace attnlab::model::detail

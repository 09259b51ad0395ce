#pragma once
// The model stage of tokenizer.json (internal), after Hugging Face tokenizers' `Model` trait:
// one pre-tokenized word in, vocabulary ids out. BPE (tokenizer_bpe.cpp), WordPiece
// (tokenizer_wordpiece.cpp), Unigram (tokenizer_unigram.cpp) and WordLevel (here), each read
// from the "model" object by makeModel.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer_pipeline.h"

namespace attnlab::model::detail {

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept {
        return std::hash<std::string_view>{}(text);
    }
};
/// Token -> id.
using Vocabulary = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

/// The ids of words already seen, for one encode() call (the models are deterministic, so
/// a word always gives the same ids).
using WordCache =
    std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>>;

/// Longer words are rarely repeated; caching them costs memory for nothing.
constexpr std::size_t kMaxCachedWordBytes = 256;

/// The largest id a tokenizer.json may use (ids are int32 inside, one spare for "none").
constexpr int64_t kMaxTokenId = 2147483646;

class Model {
public:
    virtual ~Model() = default;
    /// Appends the ids of one pre-tokenized word (valid UTF-8; empty gives nothing), from
    /// `cache` when the word was seen before in this encode() call.
    void tokenize(std::string_view word, std::vector<int32_t>& ids, WordCache& cache) const;
    /// Every token of the model's vocabulary with its id (Hugging Face `get_vocab`).
    virtual const Vocabulary& vocabulary() const = 0;
    /// The algorithm's name as tokenizer.json's "type" spells it ("BPE", "WordPiece",
    /// "Unigram", "WordLevel"), or "SentencePiece" for a .model file.
    virtual std::string_view kind() const = 0;

protected:
    /// The model's own work: appends the ids of one word (not empty).
    virtual void tokenizeWord(std::string_view word, std::vector<int32_t>& ids) const = 0;
};

/// The model of tokenizer.json's "model" object at `path`: "type" BPE, WordPiece, WordLevel
/// or Unigram (a file without "type" is recognized by its keys, as Hugging Face does). An
/// unknown type or key, or a vocabulary that does not hold together, throws FormatError.
std::unique_ptr<Model> makeModel(const Json& config, const std::string& path);

/// Each model's reader (called by makeModel).
std::unique_ptr<Model> makeBpeModel(const Json& config, const std::string& path);
std::unique_ptr<Model> makeWordPieceModel(const Json& config, const std::string& path);
std::unique_ptr<Model> makeUnigramModel(const Json& config, const std::string& path);

/// A vocabulary object {"token": id, ...} at `path`.
Vocabulary readVocabularyObject(const Json& config, const std::string& path);
/// The vocabulary object itself ({"token": id, ...}, as Marian's vocab.json), named `path`.
Vocabulary readVocabulary(const Json& vocabJson, const std::string& path);

/// The id of the unk token `unk` (config key `path`), which must be in `vocab`: WordPiece and
/// WordLevel fail on the first unknown word without it in Hugging Face.
int32_t requireUnkToken(const Vocabulary& vocab, const std::string& unk, const std::string& path);

/// Hugging Face's `<0x41>` byte tokens: the id of each byte's token, or -1 where absent.
std::vector<int32_t> byteTokenIds(const Vocabulary& vocab);

} // namespace attnlab::model::detail

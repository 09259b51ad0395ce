#pragma once
/// A Hugging Face `tokenizers` tokenizer read from tokenizer.json: the pipeline is data
/// (added tokens -> normalizer -> pre-tokenizer -> model -> post-processor), each stage a small
/// type chosen from the file, so `encode(text)` gives the ids of Hugging Face
/// `tokenizer.encode(text)`. The model is one of the library's four:
/// - BPE: byte-level (GPT-2, Llama 3, Qwen, DeepSeek, GPT-4o) and sentencepiece-style (Llama 2,
///   Mistral, Gemma: Prepend/Replace or Metaspace, byte fallback);
/// - WordPiece (BERT: BertNormalizer, BertPreTokenizer, "##" pieces, [CLS] $A [SEP]);
/// - Unigram (T5, XLM-R, ALBERT: SentencePiece's Precompiled charsmap or Nmt/NFKC, Metaspace,
///   Viterbi over the pieces' scores, byte fallback);
/// - WordLevel (a vocabulary of whole words and an unk token).
/// A key of the file that could change the ids and is not understood is refused by name.
///
/// A Tokenizer is immutable after loading; copies share the loaded tables and encode() may be
/// called from several threads at once.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/result.h"

namespace attnlab::model {

/// What encode() returns: one entry per token in each vector.
struct Encoding {
    /// The ids of Hugging Face `tokenizer.encode(text)`.
    std::vector<int64_t> ids;
    /// The raw vocabulary pieces, as `convert_ids_to_tokens` gives them: "Ġcat", "▁the",
    /// "<0x0A>", "<|begin_of_text|>".
    std::vector<std::string> tokens;
    /// The same tokens as people read them (always valid UTF-8): byte-level markers undone
    /// ("Ġcat" -> " cat", "Ċ" -> "\n"), sentencepiece's "▁" -> " ", byte fallback "<0x0A>" ->
    /// "\n", WordPiece's continuation "##ing" -> "ing" and a word's first piece "play" ->
    /// " play". Bytes that are only part of a UTF-8 character (a Chinese character or an emoji
    /// split over several tokens) show as "<0xE6>" per byte. Special tokens show as they are.
    std::vector<std::string> display;
    /// 1 where the token is an added special token (<s>, <|im_start|>, ...), else 0.
    std::vector<uint8_t> special;

    std::size_t size() const { return ids.size(); }
};

class Tokenizer {
public:
    /// Loads tokenizer.json, or the tokenizer.json inside a folder. tokenizer_config.json next
    /// to it, when present, names the bos/eos tokens. A malformed file is an Error whose message
    /// names the file and the key ("tokenizer.json: model.merges[12]: ...").
    static Result<Tokenizer> fromFile(const std::string& path);
    /// The same from text already in memory; `name` is used in messages.
    static Result<Tokenizer> fromJson(std::string_view json,
                                      const std::string& name = "tokenizer.json");

    /// The tokens of `text` (any bytes; invalid UTF-8 is read as U+FFFD). With
    /// `addSpecialTokens` the post-processor's template adds its tokens (e.g. Llama 2's <s>),
    /// as Hugging Face encode() does by default. An empty text gives only the template's tokens.
    Encoding encode(std::string_view text, bool addSpecialTokens = true) const;

    /// Largest id in the vocabulary or the added tokens, plus one (Hugging Face `len(tok)`).
    int64_t vocabSize() const;
    /// The raw piece of an id, or nullopt when no token has that id.
    std::optional<std::string> idToToken(int64_t id) const;
    /// The id of a raw piece (vocabulary or added token), or nullopt.
    std::optional<int64_t> tokenToId(std::string_view token) const;
    /// An id's piece as people read it (see Encoding::display); "" for an unknown id.
    std::string displayToken(int64_t id) const;
    /// The text of a sequence of ids through the file's decoder (byte-level bytes joined, so a
    /// character split across tokens comes back whole; "##" pieces joined to the one before;
    /// "▁" as spaces). Without a decoder the tokens are joined with spaces, as Hugging Face
    /// does. Unknown ids are skipped.
    std::string decode(std::span<const int64_t> ids, bool skipSpecialTokens = false) const;

    /// The beginning/end-of-sequence tokens: from tokenizer_config.json when it names them,
    /// else the first/last special token of the post-processor's template; nullopt if neither.
    std::optional<int64_t> bosId() const;
    std::optional<int64_t> eosId() const;
    /// Whether `id` is an added token marked special.
    bool isSpecial(int64_t id) const;

    /// The file this tokenizer was read from (or the name given to fromJson).
    const std::string& source() const;

    struct Impl;

private:
    explicit Tokenizer(std::shared_ptr<const Impl> impl);
    std::shared_ptr<const Impl> m_impl;
};

} // namespace attnlab::model

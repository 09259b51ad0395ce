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
/// SentencePiece model files (`tokenizer.model`, `spiece.model`, Marian's `source.spm`) are read
/// and run by the reference implementation, libsentencepiece, so `encode(text)` gives the ids of
/// `SentencePieceProcessor.encode(text)`; a Marian folder (source.spm, target.spm, vocab.json)
/// gives the ids of transformers' MarianTokenizer.
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

/// Which side of an encoder-decoder's tokenizer folder to load: Marian ships one SentencePiece
/// model for the source language (encoder input) and one for the target (decoder input).
enum class TokenizerSide { Source, Target };

class Tokenizer {
public:
    /// Loads tokenizer.json, a SentencePiece model file (`.model` or `.spm`), or a folder as
    /// fromFolder(path) does (its source side). tokenizer_config.json next to a tokenizer.json,
    /// when present, names the bos/eos tokens. A malformed file is an Error whose message
    /// names the file and the key ("tokenizer.json: model.merges[12]: ..."), or for a
    /// .model file that is not a SentencePiece model, the file and what is wrong.
    static Result<Tokenizer> fromFile(const std::string& path);
    /// A model folder's tokenizer: DIR/tokenizer.json when present (the same for both sides),
    /// else Marian's layout: `source.spm` (or `target.spm` for TokenizerSide::Target) and
    /// `vocab.json` (piece -> id; `target_vocab.json` for the target side when
    /// tokenizer_config.json says `separate_vocabs`), with tokenizer_config.json's `unk_token`,
    /// `eos_token` and `pad_token` (default `<unk>`, `</s>`, `<pad>`). As transformers'
    /// MarianTokenizer: each piece of the side's SentencePiece model maps through vocab.json
    /// (a piece it lacks gives the unk id), a leading language code `>>fra<<` is one token, the
    /// special tokens are recognized in the text, and `</s>` ends the ids when
    /// `addSpecialTokens`. A folder without vocab.json, or whose .spm is not a SentencePiece
    /// model, is an Error naming that file.
    static Result<Tokenizer> fromFolder(const std::string& dir,
                                        TokenizerSide side = TokenizerSide::Source);
    /// Whether `dir` holds a tokenizer fromFolder reads: tokenizer.json, or Marian's source.spm
    /// or target.spm. A folder as transformers' save_pretrained writes a model holds none.
    static bool folderHasTokenizer(const std::string& dir);
    /// The same from text already in memory; `name` is used in messages.
    static Result<Tokenizer> fromJson(std::string_view json,
                                      const std::string& name = "tokenizer.json");
    /// A SentencePiece model from the bytes of its file (a serialized ModelProto). Every byte
    /// is checked before libsentencepiece walks it: random bytes, a truncated file, JSON or an
    /// empty file give an Error naming `name`, and nothing is printed.
    static Result<Tokenizer> fromSentencePiece(std::string_view bytes,
                                               const std::string& name = "tokenizer.model");

    /// The tokens of `text` (any bytes; invalid UTF-8 is read as U+FFFD). With
    /// `addSpecialTokens` the post-processor's template adds its tokens (e.g. Llama 2's <s>),
    /// as Hugging Face encode() does by default. An empty text gives only the template's tokens.
    /// A SentencePiece model file adds nothing either way, as SentencePieceProcessor.encode
    /// does; a Marian folder adds `</s>`.
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
    /// does. Unknown ids are skipped. A SentencePiece model file decodes as
    /// SentencePieceProcessor.decode (control pieces vanish, <unk> reads " ⁇ "); a Marian
    /// folder as MarianTokenizer.decode (special tokens written out, each followed by a space,
    /// the rest through the side's SentencePiece model, the whole stripped).
    std::string decode(std::span<const int64_t> ids, bool skipSpecialTokens = false) const;

    /// The beginning/end-of-sequence tokens: from tokenizer_config.json when it names them,
    /// else the first/last special token of the post-processor's template; nullopt if neither.
    /// A SentencePiece model file's are its `<s>` / `</s>` control pieces (never added by
    /// encode()); a Marian folder has no bos and its eos_token.
    std::optional<int64_t> bosId() const;
    std::optional<int64_t> eosId() const;
    /// Whether `id` is an added token marked special (for a SentencePiece model file, a control
    /// or unknown piece; for a Marian folder, the unk, eos and pad tokens).
    bool isSpecial(int64_t id) const;

    /// The file this tokenizer was read from (or the name given to fromJson).
    const std::string& source() const;
    /// Its model's algorithm as tokenizer.json's "type" names it: "BPE", "WordPiece",
    /// "Unigram" or "WordLevel"; "SentencePiece" for a .model file or a Marian folder.
    std::string kind() const;

    struct Impl;

private:
    explicit Tokenizer(std::shared_ptr<const Impl> impl);
    std::shared_ptr<const Impl> m_impl;
};

} // namespace attnlab::model

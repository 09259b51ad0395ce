#pragma once
// SentencePiece model files (internal): a `.model` file, or Marian's `source.spm` /
// `target.spm` with its `vocab.json`, run by the reference implementation, libsentencepiece
// (Debian's libsentencepiece-dev). Only tokenizer_sentencepiece.cpp includes its header; the
// rest of the library sees the Model and Decoder built here.
//
// Every byte of the file is untrusted. libsentencepiece checks the model's structure (pieces,
// unk, byte pieces) and returns a status, but walks two things unchecked: the normalizer's
// precompiled_charsmap (darts-clone's commonPrefixSearch reads its array without bounds checks
// and writes at most 32 results to a fixed array) and the trie of user-defined pieces (64
// results). Both are checked here before the library sees the bytes; its logging is turned
// off so that a model whose self-test fails prints nothing.

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "tokenizer_parts.h"

namespace attnlab::model::detail {

/// The parts of a tokenizer that runs the SentencePiece model in `bytes` (a serialized
/// ModelProto): encode() gives SentencePieceProcessor.encode's ids and adds nothing,
/// decode() is SentencePieceProcessor.decode, control and unknown pieces are special and
/// bos/eos are the `<s>` / `</s>` control pieces. Throws FormatError ("not a SentencePiece
/// model: ...") for anything else, without the file's name.
TokenizerParts sentencePieceParts(std::string_view bytes);

/// Whether `dir` is laid out as a Marian checkpoint's tokenizer (source.spm or target.spm).
bool isMarianFolder(const std::filesystem::path& dir);

/// The parts of transformers' MarianTokenizer for one side of the Marian folder `dir`
/// (tokenizer.h, Tokenizer::fromFolder). Throws FormatError naming the file at fault.
TokenizerParts marianParts(const std::filesystem::path& dir, bool targetSide);

} // namespace attnlab::model::detail

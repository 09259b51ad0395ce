#pragma once
// The Precompiled normalizer of tokenizer.json (internal): SentencePiece's
// `precompiled_charsmap`, as T5, XLM-R, ALBERT and mBART files carry it, read and applied
// exactly as Hugging Face tokenizers does (its normalizers/precompiled.rs over the
// spm_precompiled crate), which is not quite how SentencePiece itself applies it.
//
// The blob: a little-endian u32 byte size of the trie, the trie (Darts-clone's double array of
// u32 units), then the replacement strings, each ended by a NUL. A leaf of the trie holds the
// byte offset of its replacement. Every size and offset in the blob is checked before use.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer_pipeline.h"

namespace attnlab::model::detail {

class PrecompiledCharsmap {
public:
    /// Reads the decoded blob; throws std::invalid_argument saying what is wrong (too short
    /// for its trie, replacement strings not UTF-8, a trie that points outside itself or a
    /// leaf outside the strings).
    explicit PrecompiledCharsmap(std::string_view blob);

    /// The replacement of the shortest prefix of `chunk` that the trie holds (the search
    /// stops at a NUL byte), or nullopt when no prefix is in the trie: spm_precompiled's
    /// `transform`. The replacement may be empty.
    std::optional<std::string_view> transform(std::string_view chunk) const;

    /// Normalizes valid UTF-8 as tokenizers' Precompiled normalizer: each extended grapheme
    /// cluster shorter than 6 bytes is replaced whole when transform() knows it (so a cluster
    /// whose first character is in the map loses the rest); otherwise each character is
    /// replaced alone or kept.
    std::string normalize(std::string_view text) const;

private:
    std::vector<uint32_t> m_units;
    std::string m_strings;
};

/// Checks a charsmap blob for SentencePiece's own normalizer (libsentencepiece's normalizer.cc),
/// which splits it as <u32 trie bytes><trie><strings> and walks the trie with darts-clone's
/// commonPrefixSearch over every byte of the text (NUL included) with no bounds checks,
/// writing its matches to a fixed array of `maxMatches`. Passes when, for every text, each unit
/// such a walk reads lies inside the trie, each replacement offset inside the strings, and no
/// walk meets more than `maxMatches` prefixes (so the trie has no cycle through a match).
/// Real charsmaps pass (darts-clone lays its units out in whole blocks of 256). Throws
/// std::invalid_argument saying what is wrong.
void checkCharsmapForDarts(std::string_view blob, std::size_t maxMatches);

/// The extended grapheme clusters of valid UTF-8 `text` (Unicode's UAX #29 rules GB3-GB13,
/// with ICU's character properties), as the end offset of each cluster, in order.
void graphemeClusterEnds(std::string_view text, std::vector<std::size_t>& ends);

/// Standard base64 with canonical padding (Rust base64's STANDARD engine); throws
/// std::invalid_argument naming the offending position.
std::string decodeBase64(std::string_view text);

/// {"type": "Precompiled", "precompiled_charsmap": "<base64>"}.
std::unique_ptr<Normalizer> makePrecompiledNormalizer(const Json& config, const std::string& path);

} // namespace attnlab::model::detail

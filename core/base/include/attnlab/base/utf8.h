#pragma once
/// UTF-8 encoding and lossy decoding, shared by the .npy string arrays and the tokenizer.

#include <string>
#include <string_view>

namespace attnlab {

/// Appends the UTF-8 encoding of `codePoint` (at most U+10FFFF) to `out`.
void appendUtf8(std::string& out, char32_t codePoint);

/// `text` as code points; each byte that does not start a valid, complete, shortest-form
/// sequence (surrogates and values above U+10FFFF included) becomes one U+FFFD.
std::u32string decodeUtf8Lossy(std::string_view text);

} // namespace attnlab

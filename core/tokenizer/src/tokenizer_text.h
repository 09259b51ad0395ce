#pragma once
// Text helpers for the tokenizer pipeline (internal): UTF-8 walking and repair, GPT-2's
// byte <-> character table, Unicode normalization and character classes (through ICU).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "attnlab/base/utf8.h"

namespace attnlab::model::detail {

/// The code point starting at `text[pos]` of valid UTF-8; advances `pos` past it.
char32_t nextCodePoint(std::string_view text, std::size_t& pos);
/// The byte length of the UTF-8 character whose first byte is `lead` (1 for a stray byte).
std::size_t utf8CharLength(unsigned char lead);

/// `bytes` as valid UTF-8: each maximal ill-formed subsequence becomes one U+FFFD (as
/// Python's and Rust's lossy decoding do). Returns the input unchanged when it is valid.
std::string repairUtf8(std::string_view bytes);
/// `bytes` for display: valid characters as they are, every byte of an ill-formed or
/// incomplete sequence as "<0xE6>".
std::string displayUtf8(std::string_view bytes);

/// GPT-2's bytes_to_unicode: the printable character standing for each byte.
const std::array<char32_t, 256>& byteToChar();
/// The inverse: the byte a character stands for, or -1 when it stands for none.
int charToByte(char32_t codePoint);

enum class UnicodeForm { Nfc, Nfd, Nfkc, Nfkd };
/// Normalizes valid UTF-8 in place.
void normalizeUnicode(std::string& text, UnicodeForm form);
/// Lower-cases valid UTF-8 in place, character by character as Rust's char::to_lowercase
/// (Unicode full case mapping, root locale, no context: a final capital sigma gives "σ").
void lowercaseUnicode(std::string& text);

/// Rust's char::is_whitespace (the White_Space property).
bool isWhiteSpace(char32_t codePoint);
/// Rust's char::is_numeric (general category N*).
bool isNumeric(char32_t codePoint);
/// Rust's char::is_alphanumeric (Alphabetic or a number).
bool isAlphanumeric(char32_t codePoint);

// Hugging Face's BertNormalizer, BertPreTokenizer and Punctuation classify characters with
// the unicode_categories crate (0.1.1), whose tables are Unicode 8.0: a character added since
// is in none of its categories. These follow those tables exactly (ICU's categories, limited
// to characters of Unicode 8.0, and the seven whose category changed since).

/// unicode_categories' is_other: Cc, Cf or Co.
bool isUnicode8Other(char32_t codePoint);
/// unicode_categories' is_mark_nonspacing (Mn).
bool isUnicode8NonspacingMark(char32_t codePoint);
/// BERT's punctuation: Rust's is_ascii_punctuation (ASCII symbols such as $ + < included)
/// or unicode_categories' is_punctuation (P*).
bool isBertPunctuation(char32_t codePoint);
/// A combining mark (Mn, Mc or Me), as StripAccents removes them.
bool isCombiningMark(char32_t codePoint);

/// Rust regex's Unicode \w (Alphabetic, marks, decimal digits, connector punctuation,
/// Join_Control).
bool isWordChar(char32_t codePoint);

} // namespace attnlab::model::detail

#include "tokenizer_text.h"

#include <unicode/bytestream.h>
#include <unicode/casemap.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>
#include <unicode/uchar.h>

#include <climits>
#include <cstdio>
#include <stdexcept>

namespace attnlab::model::detail {

namespace {

struct Utf8Step {
    std::size_t length; ///< bytes consumed: the whole character, or the maximal ill-formed part
    bool valid;
};

/// One step of a UTF-8 walk at `pos` (Unicode 15, Table 3-7 "well-formed byte sequences").
Utf8Step utf8Step(std::string_view bytes, std::size_t pos) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
    const unsigned char lead = byte(pos);
    if (lead < 0x80) return {1, true};
    std::size_t need = 0;
    unsigned char low = 0x80, high = 0xBF; // range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
        need = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 2;
        if (lead == 0xE0) low = 0xA0;
        if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 3;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;
    } else {
        return {1, false};
    }
    std::size_t length = 1;
    for (std::size_t k = 0; k < need; ++k) {
        if (pos + length >= bytes.size()) return {length, false};
        const unsigned char next = byte(pos + length);
        const unsigned char lo = k == 0 ? low : 0x80;
        const unsigned char hi = k == 0 ? high : 0xBF;
        if (next < lo || next > hi) return {length, false};
        ++length;
    }
    return {length, true};
}

void throwIfFailed(UErrorCode status, const char* what) {
    if (U_FAILURE(status))
        throw std::runtime_error(std::string(what) + " failed: " + u_errorName(status));
}

int32_t icuLength(const std::string& text) {
    if (text.size() > static_cast<std::size_t>(INT32_MAX))
        throw std::length_error("text too long for Unicode normalization (over 2 GiB)");
    return static_cast<int32_t>(text.size());
}

} // namespace

std::size_t utf8CharLength(unsigned char lead) {
    if (lead < 0xC0) return 1;
    if (lead < 0xE0) return 2;
    if (lead < 0xF0) return 3;
    return lead < 0xF8 ? 4 : 1;
}

char32_t nextCodePoint(std::string_view text, std::size_t& pos) {
    const auto byte = [&](std::size_t i) -> char32_t {
        return i < text.size() ? static_cast<unsigned char>(text[i]) : 0;
    };
    const char32_t lead = byte(pos);
    const std::size_t length = utf8CharLength(static_cast<unsigned char>(lead));
    char32_t cp = 0;
    switch (length) {
    case 2:
        cp = ((lead & 0x1F) << 6) | (byte(pos + 1) & 0x3F);
        break;
    case 3:
        cp = ((lead & 0x0F) << 12) | ((byte(pos + 1) & 0x3F) << 6) | (byte(pos + 2) & 0x3F);
        break;
    case 4:
        cp = ((lead & 0x07) << 18) | ((byte(pos + 1) & 0x3F) << 12) |
             ((byte(pos + 2) & 0x3F) << 6) | (byte(pos + 3) & 0x3F);
        break;
    default:
        cp = lead;
    }
    pos += length;
    return cp;
}

std::string repairUtf8(std::string_view bytes) {
    std::size_t pos = 0;
    while (pos < bytes.size()) {
        const Utf8Step step = utf8Step(bytes, pos);
        if (!step.valid) break;
        pos += step.length;
    }
    if (pos == bytes.size()) return std::string(bytes);
    std::string out(bytes.substr(0, pos));
    while (pos < bytes.size()) {
        const Utf8Step step = utf8Step(bytes, pos);
        if (step.valid)
            out.append(bytes.substr(pos, step.length));
        else
            out += "\xEF\xBF\xBD";
        pos += step.length;
    }
    return out;
}

std::string displayUtf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    std::size_t pos = 0;
    while (pos < bytes.size()) {
        const Utf8Step step = utf8Step(bytes, pos);
        if (step.valid) {
            out.append(bytes.substr(pos, step.length));
        } else {
            for (std::size_t k = 0; k < step.length; ++k) {
                char hex[8];
                std::snprintf(hex, sizeof hex, "<0x%02X>",
                              static_cast<unsigned>(static_cast<unsigned char>(bytes[pos + k])));
                out += hex;
            }
        }
        pos += step.length;
    }
    return out;
}

const std::array<char32_t, 256>& byteToChar() {
    static const std::array<char32_t, 256> table = [] {
        std::array<char32_t, 256> result{};
        char32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
            result[static_cast<std::size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
        }
        return result;
    }();
    return table;
}

int charToByte(char32_t cp) {
    static const std::array<int16_t, 512> inverse = [] {
        std::array<int16_t, 512> result;
        result.fill(-1);
        const auto& forward = byteToChar();
        for (int b = 0; b < 256; ++b)
            result[forward[static_cast<std::size_t>(b)]] = static_cast<int16_t>(b);
        return result;
    }();
    return cp < inverse.size() ? inverse[cp] : -1;
}

void normalizeUnicode(std::string& text, UnicodeForm form) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* normalizer = nullptr;
    switch (form) {
    case UnicodeForm::Nfc:
        normalizer = icu::Normalizer2::getNFCInstance(status);
        break;
    case UnicodeForm::Nfd:
        normalizer = icu::Normalizer2::getNFDInstance(status);
        break;
    case UnicodeForm::Nfkc:
        normalizer = icu::Normalizer2::getNFKCInstance(status);
        break;
    case UnicodeForm::Nfkd:
        normalizer = icu::Normalizer2::getNFKDInstance(status);
        break;
    }
    throwIfFailed(status, "loading ICU's normalization data");
    const icu::StringPiece input(text.data(), icuLength(text));
    if (normalizer->isNormalizedUTF8(input, status) && U_SUCCESS(status)) return;
    status = U_ZERO_ERROR;
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    icu::StringByteSink<std::string> sink(&out);
    normalizer->normalizeUTF8(0, input, sink, nullptr, status);
    throwIfFailed(status, "Unicode normalization");
    text.swap(out);
}

void lowercaseUnicode(std::string& text) {
    // ICU maps a capital sigma at the end of a word to the final form "ς"; Rust maps each
    // character alone, so every capital sigma becomes "σ" first (σ lowercases to itself).
    static constexpr std::string_view kCapitalSigma = "\u03A3", kSmallSigma = "\u03C3";
    for (std::size_t at = text.find(kCapitalSigma); at != std::string::npos;
         at = text.find(kCapitalSigma, at + kSmallSigma.size()))
        text.replace(at, kCapitalSigma.size(), kSmallSigma);
    UErrorCode status = U_ZERO_ERROR;
    std::string out;
    out.reserve(text.size());
    icu::StringByteSink<std::string> sink(&out);
    icu::CaseMap::utf8ToLower("", 0, icu::StringPiece(text.data(), icuLength(text)), sink, nullptr,
                              status);
    throwIfFailed(status, "lower-casing");
    text.swap(out);
}

bool isWhiteSpace(char32_t cp) {
    return u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_WHITE_SPACE);
}

bool isNumeric(char32_t cp) {
    const int8_t type = u_charType(static_cast<UChar32>(cp));
    return type == U_DECIMAL_DIGIT_NUMBER || type == U_LETTER_NUMBER || type == U_OTHER_NUMBER;
}

bool isAlphanumeric(char32_t cp) {
    const auto c = static_cast<UChar32>(cp);
    return u_hasBinaryProperty(c, UCHAR_ALPHABETIC) || isNumeric(cp);
}

namespace {

/// Assigned by Unicode 8.0 (u_charAge gives 0.0 for unassigned characters).
bool inUnicode8(UChar32 c) {
    UVersionInfo age;
    u_charAge(c, age);
    return age[0] < 8 || (age[0] == 8 && age[1] == 0 && age[2] == 0);
}

} // namespace

bool isUnicode8Other(char32_t cp) {
    const auto c = static_cast<UChar32>(cp);
    const int8_t type = u_charType(c);
    return (type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_PRIVATE_USE_CHAR) &&
           inUnicode8(c);
}

bool isUnicode8NonspacingMark(char32_t cp) {
    // Mn in Unicode 8.0, another category now: U+1734 (Mc). Mn now but not in 8.0: U+1885,
    // U+1886 (Mongolian, were Lo), U+A9BD (Javanese, was Mc), U+111C9 (Sharada, was Po).
    if (cp == 0x1734) return true;
    if (cp == 0x1885 || cp == 0x1886 || cp == 0xA9BD || cp == 0x111C9) return false;
    const auto c = static_cast<UChar32>(cp);
    return u_charType(c) == U_NON_SPACING_MARK && inUnicode8(c);
}

bool isBertPunctuation(char32_t cp) {
    if (cp < 0x80)
        return (cp >= '!' && cp <= '/') || (cp >= ':' && cp <= '@') || (cp >= '[' && cp <= '`') ||
               (cp >= '{' && cp <= '~');
    // Punctuation in Unicode 8.0, another category now: U+166D (So), U+111C9 (Mn).
    if (cp == 0x166D || cp == 0x111C9) return true;
    const auto c = static_cast<UChar32>(cp);
    const int8_t type = u_charType(c);
    const bool punctuation = type == U_CONNECTOR_PUNCTUATION || type == U_DASH_PUNCTUATION ||
                             type == U_START_PUNCTUATION || type == U_END_PUNCTUATION ||
                             type == U_INITIAL_PUNCTUATION || type == U_FINAL_PUNCTUATION ||
                             type == U_OTHER_PUNCTUATION;
    return punctuation && inUnicode8(c);
}

bool isCombiningMark(char32_t cp) {
    const int8_t type = u_charType(static_cast<UChar32>(cp));
    return type == U_NON_SPACING_MARK || type == U_COMBINING_SPACING_MARK ||
           type == U_ENCLOSING_MARK;
}

bool isWordChar(char32_t cp) {
    const auto c = static_cast<UChar32>(cp);
    if (u_hasBinaryProperty(c, UCHAR_ALPHABETIC) || u_hasBinaryProperty(c, UCHAR_JOIN_CONTROL))
        return true;
    const int8_t type = u_charType(c);
    return type == U_DECIMAL_DIGIT_NUMBER || type == U_NON_SPACING_MARK ||
           type == U_ENCLOSING_MARK || type == U_COMBINING_SPACING_MARK ||
           type == U_CONNECTOR_PUNCTUATION;
}

} // namespace attnlab::model::detail

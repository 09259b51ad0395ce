#include "attnlab/base/utf8.h"

#include <cstddef>

namespace attnlab {

void appendUtf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
        out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
}

std::u32string decodeUtf8Lossy(std::string_view text) {
    std::u32string out;
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    for (std::size_t i = 0; i < n;) {
        const unsigned char lead = bytes[i];
        const std::size_t length = lead < 0x80           ? 1
                                   : (lead >> 5) == 0x6  ? 2
                                   : (lead >> 4) == 0xe  ? 3
                                   : (lead >> 3) == 0x1e ? 4
                                                         : 0;
        char32_t code = length == 1   ? lead
                        : length == 2 ? lead & 0x1f
                        : length == 3 ? lead & 0x0f
                                      : lead & 0x07;
        bool valid = length > 0 && i + length <= n;
        for (std::size_t k = 1; valid && k < length; ++k) {
            if ((bytes[i + k] & 0xc0) != 0x80) valid = false;
            code = (code << 6) | (bytes[i + k] & 0x3f);
        }
        if (valid && (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ||
                      (length == 2 && code < 0x80) || (length == 3 && code < 0x800) ||
                      (length == 4 && code < 0x10000)))
            valid = false;
        if (!valid) {
            out.push_back(0xfffd);
            ++i;
        } else {
            out.push_back(code);
            i += length;
        }
    }
    return out;
}

} // namespace attnlab

#include "tokenizer_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

namespace attnlab::model::detail {

std::string onigurumaToPcre2(std::string_view pattern) {
    std::string out;
    out.reserve(pattern.size() + 16);
    bool inClass = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char escaped = pattern[i + 1];
            ++i;
            if (escaped == 's') {
                out += inClass ? "\\s\\x{85}" : "[\\s\\x{85}]";
            } else if (escaped == 'S' && !inClass) {
                out += "[^\\s\\x{85}]";
            } else {
                out += '\\';
                out += escaped;
            }
            continue;
        }
        if (!inClass && c == '[') {
            inClass = true;
            out += c;
            // A ']' right after '[' or '[^' is a literal member, not the end of the class.
            if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
            if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
            continue;
        }
        if (inClass && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
            // A POSIX class such as [:alpha:] inside a class: copy it whole.
            const std::size_t close = pattern.find(":]", i + 2);
            if (close != std::string_view::npos) {
                out.append(pattern.substr(i, close + 2 - i));
                i = close + 1;
                continue;
            }
        }
        if (inClass && c == ']') inClass = false;
        out += c;
    }
    return out;
}

Regex::Regex(const std::string& pattern) {
    const std::string translated = onigurumaToPcre2(pattern);
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                      PCRE2_UTF | PCRE2_UCP, &errorCode, &errorOffset, nullptr);
    if (!code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(errorCode, message, sizeof message);
        throw std::invalid_argument("regular expression does not compile at offset " +
                                    std::to_string(errorOffset) + ": " +
                                    reinterpret_cast<const char*>(message));
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); // the interpreter remains if JIT is absent
    m_code =
        std::shared_ptr<void>(code, [](void* p) { pcre2_code_free(static_cast<pcre2_code*>(p)); });
}

void Regex::findAll(std::string_view text,
                    std::vector<std::pair<std::size_t, std::size_t>>& out) const {
    out.clear();
    auto* code = static_cast<pcre2_code*>(m_code.get());
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
        pcre2_match_data_create_from_pattern(code, nullptr), &pcre2_match_data_free);
    if (!match) throw std::bad_alloc();
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    std::size_t start = 0;
    std::size_t lastEnd = std::string_view::npos;
    while (start <= text.size()) {
        const int rc = pcre2_match(code, subject, text.size(), start, PCRE2_NO_UTF_CHECK,
                                   match.get(), nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof message);
            throw std::runtime_error(std::string("regular expression matching failed: ") +
                                     reinterpret_cast<const char*>(message));
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
        const std::size_t begin = ovector[0], end = ovector[1];
        if (begin == end) {
            if (begin != lastEnd) out.emplace_back(begin, end);
            if (end >= text.size()) break;
            // Step over one character so the search moves on.
            const auto lead = static_cast<unsigned char>(text[end]);
            start = end + (lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4);
        } else {
            out.emplace_back(begin, end);
            start = end;
        }
        lastEnd = end;
    }
}

} // namespace attnlab::model::detail

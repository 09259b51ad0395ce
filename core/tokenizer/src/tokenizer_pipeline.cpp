#include "tokenizer_pipeline.h"

#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>

#include "tokenizer_precompiled.h"
#include "tokenizer_regex.h"
#include "tokenizer_text.h"

namespace attnlab::model::detail {

// ---- JSON access ----------------------------------------------------------------------------

void formatError(const std::string& path, const std::string& problem) {
    throw FormatError(path + ": " + problem);
}

namespace {

std::string typeName(const Json& value) {
    return std::string(value.type_name());
}

std::string member(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
}

std::string element(const std::string& path, std::size_t index) {
    return path + "[" + std::to_string(index) + "]";
}

const Json& requireArray(const Json& object, const std::string& path, const char* key) {
    const Json& value = requireMember(object, path, key);
    if (!value.is_array())
        formatError(member(path, key), "must be an array, not " + typeName(value));
    return value;
}

} // namespace

const Json& requireMember(const Json& object, const std::string& path, const char* key) {
    if (!object.is_object())
        formatError(path.empty() ? "(top level)" : path,
                    "must be an object, not " + typeName(object));
    const auto it = object.find(key);
    if (it == object.end()) formatError(member(path, key), "is missing");
    return *it;
}

std::string requireString(const Json& object, const std::string& path, const char* key) {
    const Json& value = requireMember(object, path, key);
    if (!value.is_string())
        formatError(member(path, key), "must be a string, not " + typeName(value));
    return value.get<std::string>();
}

std::optional<std::string> optionalString(const Json& object, const std::string& path,
                                          const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) formatError(member(path, key), "must be a string, not " + typeName(*it));
    return it->get<std::string>();
}

bool optionalBool(const Json& object, const std::string& path, const char* key, bool fallback) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return fallback;
    if (!it->is_boolean())
        formatError(member(path, key), "must be true or false, not " + typeName(*it));
    return it->get<bool>();
}

int64_t requireInteger(const Json& value, const std::string& path, int64_t minimum,
                       int64_t maximum) {
    if (value.is_number_unsigned()) {
        const auto v = value.get<uint64_t>();
        if (v > static_cast<uint64_t>(maximum))
            formatError(path, "must be at most " + std::to_string(maximum) + ", got " +
                                  std::to_string(v));
        if (static_cast<int64_t>(v) < minimum)
            formatError(path, "must be at least " + std::to_string(minimum));
        return static_cast<int64_t>(v);
    }
    if (value.is_number_integer()) {
        const auto v = value.get<int64_t>();
        if (v < minimum || v > maximum)
            formatError(path, "must be between " + std::to_string(minimum) + " and " +
                                  std::to_string(maximum) + ", got " + std::to_string(v));
        return v;
    }
    formatError(path, "must be an integer, not " + typeName(value));
}

std::string stageType(const Json& object, const std::string& path) {
    return requireString(object, path, "type");
}

namespace {

void refuseKeysOutside(const Json& object, const std::string& path, const char* const* known,
                       std::size_t knownCount) {
    if (!object.is_object()) return;
    for (const auto& [key, value] : object.items()) {
        if (key == "type") continue;
        bool understood = false;
        for (std::size_t i = 0; i < knownCount && !understood; ++i)
            understood = key == known[i];
        if (understood) continue;
        std::string list;
        for (std::size_t i = 0; i < knownCount; ++i)
            list += (i ? ", " : "") + std::string(known[i]);
        formatError(path.empty() ? key : path + "." + key,
                    "is not a key this reader understands, and it might change the ids (known "
                    "here: " +
                        (list.empty() ? std::string("type only") : list) + ")");
    }
}

} // namespace

void refuseUnknownKeys(const Json& object, const std::string& path,
                       std::initializer_list<const char*> known) {
    refuseKeysOutside(object, path, known.begin(), known.size());
}

namespace {

// ---- shared pieces ---------------------------------------------------------------------------

/// A tokenizer.json pattern: {"String": "..."} (literal) or {"Regex": "..."}.
class Pattern {
public:
    explicit Pattern(std::string literal) : m_literal(std::move(literal)) {}
    Pattern(const Json& object, const std::string& path) {
        if (!object.is_object()) formatError(path, "must be an object with String or Regex");
        if (const auto it = object.find("String"); it != object.end()) {
            if (!it->is_string()) formatError(path + ".String", "must be a string");
            m_literal = it->get<std::string>();
        } else if (const auto regex = object.find("Regex"); regex != object.end()) {
            if (!regex->is_string()) formatError(path + ".Regex", "must be a string");
            try {
                m_regex.emplace(regex->get<std::string>());
            } catch (const std::invalid_argument& error) {
                formatError(path + ".Regex", error.what());
            }
        } else {
            formatError(path, "needs String or Regex");
        }
    }
    /// The matches in `text`, as byte ranges, left to right, not overlapping.
    void findAll(std::string_view text,
                 std::vector<std::pair<std::size_t, std::size_t>>& out) const {
        if (m_regex) {
            m_regex->findAll(text, out);
            return;
        }
        out.clear();
        if (m_literal.empty()) return;
        for (std::size_t at = text.find(m_literal); at != std::string_view::npos;
             at = text.find(m_literal, at + m_literal.size()))
            out.emplace_back(at, at + m_literal.size());
    }

private:
    std::string m_literal;
    std::optional<Regex> m_regex;
};

void replaceAll(std::string& text, const Pattern& pattern, const std::string& content) {
    std::vector<std::pair<std::size_t, std::size_t>> matches;
    pattern.findAll(text, matches);
    if (matches.empty()) return;
    std::string out;
    out.reserve(text.size());
    std::size_t last = 0;
    for (const auto& [begin, end] : matches) {
        out.append(text, last, begin - last);
        out += content;
        last = end;
    }
    out.append(text, last, std::string::npos);
    text.swap(out);
}

/// Hugging Face's SplitDelimiterBehavior.
enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior parseBehavior(const Json& object, const std::string& path) {
    const std::string name = requireString(object, path, "behavior");
    if (name == "Removed") return Behavior::Removed;
    if (name == "Isolated") return Behavior::Isolated;
    if (name == "MergedWithPrevious") return Behavior::MergedWithPrevious;
    if (name == "MergedWithNext") return Behavior::MergedWithNext;
    if (name == "Contiguous") return Behavior::Contiguous;
    formatError(path + ".behavior", "unknown split behavior '" + name + "'");
}

struct Span {
    std::size_t begin, end;
    bool isMatch; ///< after grouping: true means "remove"
};

/// Splits `piece` at `matches` (NormalizedString::split): the text is covered by the matches
/// and the gaps between them, then grouped by `behavior`; empty pieces are dropped.
void splitPiece(const Piece& piece, const std::vector<std::pair<std::size_t, std::size_t>>& matches,
                Behavior behavior, bool invert, std::vector<Piece>& out) {
    const std::string& text = piece.text;
    std::vector<Span> spans;
    spans.reserve(matches.size() * 2 + 1);
    std::size_t previous = 0;
    for (const auto& [begin, end] : matches) {
        if (previous != begin) spans.push_back({previous, begin, false});
        spans.push_back({begin, end, true});
        previous = end;
    }
    if (previous != text.size() || spans.empty()) spans.push_back({previous, text.size(), false});
    if (invert)
        for (Span& span : spans)
            span.isMatch = !span.isMatch;

    std::vector<Span> grouped;
    grouped.reserve(spans.size());
    switch (behavior) {
    case Behavior::Removed:
        grouped = spans;
        break;
    case Behavior::Isolated:
        for (const Span& span : spans)
            grouped.push_back({span.begin, span.end, false});
        break;
    case Behavior::Contiguous: {
        bool previousMatch = false;
        for (const Span& span : spans) {
            if (span.isMatch == previousMatch && !grouped.empty())
                grouped.back().end = span.end;
            else
                grouped.push_back({span.begin, span.end, false});
            previousMatch = span.isMatch;
        }
        break;
    }
    case Behavior::MergedWithPrevious: {
        bool previousMatch = false;
        for (const Span& span : spans) {
            if (span.isMatch && !previousMatch && !grouped.empty())
                grouped.back().end = span.end;
            else
                grouped.push_back({span.begin, span.end, false});
            previousMatch = span.isMatch;
        }
        break;
    }
    case Behavior::MergedWithNext: {
        bool previousMatch = false;
        for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
            if (it->isMatch && !previousMatch && !grouped.empty())
                grouped.back().begin = it->begin;
            else
                grouped.push_back({it->begin, it->end, false});
            previousMatch = it->isMatch;
        }
        std::reverse(grouped.begin(), grouped.end());
        break;
    }
    }
    for (const Span& span : grouped) {
        if (span.isMatch || span.begin == span.end) continue;
        out.push_back(
            {text.substr(span.begin, span.end - span.begin), piece.atTextStart && span.begin == 0});
    }
}

// ---- normalizers -----------------------------------------------------------------------------

class UnicodeNormalizer final : public Normalizer {
public:
    explicit UnicodeNormalizer(UnicodeForm form) : m_form(form) {}
    void normalize(std::string& text) const override { normalizeUnicode(text, m_form); }

private:
    UnicodeForm m_form;
};

class LowercaseNormalizer final : public Normalizer {
public:
    void normalize(std::string& text) const override { lowercaseUnicode(text); }
};

class PrependNormalizer final : public Normalizer {
public:
    explicit PrependNormalizer(std::string prefix) : m_prefix(std::move(prefix)) {}
    void normalize(std::string& text) const override {
        if (!text.empty()) text.insert(0, m_prefix);
    }

private:
    std::string m_prefix;
};

class ReplaceNormalizer final : public Normalizer {
public:
    ReplaceNormalizer(const Json& config, const std::string& path)
        : m_pattern(requireMember(config, path, "pattern"), path + ".pattern"),
          m_content(requireString(config, path, "content")) {}
    void normalize(std::string& text) const override { replaceAll(text, m_pattern, m_content); }

private:
    Pattern m_pattern;
    std::string m_content;
};

class StripNormalizer final : public Normalizer {
public:
    StripNormalizer(bool left, bool right) : m_left(left), m_right(right) {}
    void normalize(std::string& text) const override {
        std::size_t begin = 0, end = text.size();
        if (m_left) {
            while (begin < end) {
                std::size_t next = begin;
                if (!isWhiteSpace(nextCodePoint(text, next))) break;
                begin = next;
            }
        }
        if (m_right) {
            while (end > begin) {
                std::size_t start = end - 1;
                while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
                    --start;
                std::size_t next = start;
                if (!isWhiteSpace(nextCodePoint(text, next))) break;
                end = start;
            }
        }
        text = text.substr(begin, end - begin);
    }

private:
    bool m_left, m_right;
};

class SequenceNormalizer final : public Normalizer {
public:
    explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> stages)
        : m_stages(std::move(stages)) {}
    void normalize(std::string& text) const override {
        for (const auto& stage : m_stages)
            stage->normalize(text);
    }

private:
    std::vector<std::unique_ptr<Normalizer>> m_stages;
};

/// Rewrites each character of valid UTF-8: `rewrite(codePoint, out)` appends what replaces it
/// (NormalizedString's filter and map).
template <typename Rewrite> void rewriteCharacters(std::string& text, Rewrite rewrite) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t pos = 0; pos < text.size();)
        rewrite(nextCodePoint(text, pos), out);
    text.swap(out);
}

/// The CJK ideograph blocks BERT puts spaces around (normalizers/bert.rs is_chinese_char).
bool isChineseCharacter(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/// BertNormalizer: clean_text drops NUL, U+FFFD and control characters and turns whitespace
/// into spaces; handle_chinese_chars puts spaces around CJK ideographs; strip_accents (null:
/// as lowercase) decomposes (NFD) and drops nonspacing marks; lowercase.
class BertNormalizer final : public Normalizer {
public:
    BertNormalizer(const Json& config, const std::string& path)
        : m_cleanText(optionalBool(config, path, "clean_text", true)),
          m_chineseChars(optionalBool(config, path, "handle_chinese_chars", true)),
          m_lowercase(optionalBool(config, path, "lowercase", true)),
          m_stripAccents(optionalBool(config, path, "strip_accents", m_lowercase)) {}
    void normalize(std::string& text) const override {
        if (m_cleanText)
            rewriteCharacters(text, [](char32_t c, std::string& out) {
                const bool tabOrNewline = c == '\t' || c == '\n' || c == '\r';
                if (c == 0 || c == 0xFFFD || (!tabOrNewline && isUnicode8Other(c))) return;
                if (tabOrNewline || isWhiteSpace(c))
                    out += ' ';
                else
                    appendUtf8(out, c);
            });
        if (m_chineseChars)
            rewriteCharacters(text, [](char32_t c, std::string& out) {
                const bool spaced = isChineseCharacter(c);
                if (spaced) out += ' ';
                appendUtf8(out, c);
                if (spaced) out += ' ';
            });
        if (m_stripAccents) {
            normalizeUnicode(text, UnicodeForm::Nfd);
            rewriteCharacters(text, [](char32_t c, std::string& out) {
                if (!isUnicode8NonspacingMark(c)) appendUtf8(out, c);
            });
        }
        if (m_lowercase) lowercaseUnicode(text);
    }

private:
    bool m_cleanText, m_chineseChars, m_lowercase, m_stripAccents;
};

/// Nmt: drops ASCII control characters, turns other whitespace-like ones into spaces
/// (normalizers/unicode.rs do_nmt).
class NmtNormalizer final : public Normalizer {
public:
    void normalize(std::string& text) const override {
        rewriteCharacters(text, [](char32_t c, std::string& out) {
            if ((c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F ||
                c == 0x8F || c == 0x9F)
                return;
            const bool space = c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x1680 ||
                               (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 ||
                               c == 0x2581 || c == 0xFEFF || c == 0xFFFD;
            appendUtf8(out, space ? U' ' : c);
        });
    }
};

/// StripAccents: drops combining marks.
class StripAccentsNormalizer final : public Normalizer {
public:
    void normalize(std::string& text) const override {
        rewriteCharacters(text, [](char32_t c, std::string& out) {
            if (!isCombiningMark(c)) appendUtf8(out, c);
        });
    }
};

/// ByteLevel (as a normalizer): every byte as GPT-2's character for it.
class ByteLevelNormalizer final : public Normalizer {
public:
    void normalize(std::string& text) const override {
        std::string mapped;
        mapped.reserve(text.size() * 2);
        for (const char c : text)
            appendUtf8(mapped, byteToChar()[static_cast<unsigned char>(c)]);
        text.swap(mapped);
    }
};

// ---- pre-tokenizers --------------------------------------------------------------------------

/// GPT-2's pattern, which ByteLevel uses when use_regex is on.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevelPreTokenizer final : public PreTokenizer {
public:
    ByteLevelPreTokenizer(const Json& config, const std::string& path)
        : m_addPrefixSpace(optionalBool(config, path, "add_prefix_space", true)),
          m_useRegex(optionalBool(config, path, "use_regex", true)) {
        if (m_useRegex) m_regex.emplace(kGpt2Pattern);
    }
    void split(std::vector<Piece>& pieces) const override {
        std::vector<Piece> out;
        out.reserve(pieces.size());
        std::vector<std::pair<std::size_t, std::size_t>> matches;
        for (Piece& piece : pieces) {
            if (m_addPrefixSpace && (piece.text.empty() || piece.text[0] != ' '))
                piece.text.insert(0, 1, ' ');
            if (m_useRegex) {
                m_regex->findAll(piece.text, matches);
                splitPiece(piece, matches, Behavior::Isolated, false, out);
            } else if (!piece.text.empty()) {
                out.push_back(std::move(piece));
            }
        }
        const auto& table = byteToChar();
        for (Piece& piece : out) {
            std::string mapped;
            mapped.reserve(piece.text.size() * 2);
            for (const char c : piece.text)
                appendUtf8(mapped, table[static_cast<unsigned char>(c)]);
            piece.text.swap(mapped);
        }
        pieces.swap(out);
    }

private:
    bool m_addPrefixSpace;
    bool m_useRegex;
    std::optional<Regex> m_regex;
};

class SplitPreTokenizer final : public PreTokenizer {
public:
    SplitPreTokenizer(const Json& config, const std::string& path)
        : m_pattern(requireMember(config, path, "pattern"), path + ".pattern"),
          m_behavior(parseBehavior(config, path)),
          m_invert(optionalBool(config, path, "invert", false)) {}
    void split(std::vector<Piece>& pieces) const override {
        std::vector<Piece> out;
        out.reserve(pieces.size());
        std::vector<std::pair<std::size_t, std::size_t>> matches;
        for (const Piece& piece : pieces) {
            m_pattern.findAll(piece.text, matches);
            splitPiece(piece, matches, m_behavior, m_invert, out);
        }
        pieces.swap(out);
    }

private:
    Pattern m_pattern;
    Behavior m_behavior;
    bool m_invert;
};

enum class PrependScheme { Always, First, Never };

PrependScheme parsePrependScheme(const Json& config, const std::string& path) {
    if (const auto scheme = optionalString(config, path, "prepend_scheme")) {
        if (*scheme == "always") return PrependScheme::Always;
        if (*scheme == "first") return PrependScheme::First;
        if (*scheme == "never") return PrependScheme::Never;
        formatError(path + ".prepend_scheme", "unknown scheme '" + *scheme + "'");
    }
    // Files from before prepend_scheme: add_prefix_space.
    return optionalBool(config, path, "add_prefix_space", true) ? PrependScheme::Always
                                                                : PrependScheme::Never;
}

std::string requireCharacter(const Json& config, const std::string& path, const char* key) {
    const std::string value = requireString(config, path, key);
    std::size_t pos = 0;
    if (value.empty() || (nextCodePoint(value, pos), pos != value.size()))
        formatError(path + "." + key, "must be one character, got '" + value + "'");
    return value;
}

class MetaspacePreTokenizer final : public PreTokenizer {
public:
    MetaspacePreTokenizer(const Json& config, const std::string& path)
        : m_replacement(requireCharacter(config, path, "replacement")),
          m_scheme(parsePrependScheme(config, path)),
          m_split(optionalBool(config, path, "split", true)) {}
    void split(std::vector<Piece>& pieces) const override {
        std::vector<Piece> out;
        out.reserve(pieces.size());
        std::vector<std::pair<std::size_t, std::size_t>> matches;
        for (Piece& piece : pieces) {
            std::string replaced;
            replaced.reserve(piece.text.size() + m_replacement.size());
            for (const char c : piece.text) {
                if (c == ' ')
                    replaced += m_replacement;
                else
                    replaced += c;
            }
            const bool startsWithReplacement =
                replaced.compare(0, m_replacement.size(), m_replacement) == 0;
            if (!startsWithReplacement && (m_scheme == PrependScheme::Always ||
                                           (m_scheme == PrependScheme::First && piece.atTextStart)))
                replaced.insert(0, m_replacement);
            piece.text.swap(replaced);
            if (!m_split) {
                if (!piece.text.empty()) out.push_back(std::move(piece));
                continue;
            }
            matches.clear();
            for (std::size_t at = piece.text.find(m_replacement); at != std::string::npos;
                 at = piece.text.find(m_replacement, at + m_replacement.size()))
                matches.emplace_back(at, at + m_replacement.size());
            splitPiece(piece, matches, Behavior::MergedWithNext, false, out);
        }
        pieces.swap(out);
    }

private:
    std::string m_replacement;
    PrependScheme m_scheme;
    bool m_split;
};

/// Digits: numeric characters split off one by one, or in runs.
class DigitsPreTokenizer final : public PreTokenizer {
public:
    explicit DigitsPreTokenizer(bool individual) : m_individual(individual) {}
    void split(std::vector<Piece>& pieces) const override {
        std::vector<Piece> out;
        out.reserve(pieces.size());
        std::vector<std::pair<std::size_t, std::size_t>> matches;
        for (const Piece& piece : pieces) {
            matches.clear();
            for (std::size_t pos = 0; pos < piece.text.size();) {
                const std::size_t begin = pos;
                if (isNumeric(nextCodePoint(piece.text, pos))) matches.emplace_back(begin, pos);
            }
            splitPiece(piece, matches, m_individual ? Behavior::Isolated : Behavior::Contiguous,
                       false, out);
        }
        pieces.swap(out);
    }

private:
    bool m_individual;
};

/// Whitespace: runs of word characters and runs of other characters but whitespace (the
/// Rust regex \w+|[^\w\s]+ Hugging Face uses, with Rust's Unicode \w and \s); the rest goes.
class WordRunsPreTokenizer final : public PreTokenizer {
public:
    void split(std::vector<Piece>& pieces) const override {
        std::vector<Piece> out;
        std::vector<std::pair<std::size_t, std::size_t>> runs;
        for (const Piece& piece : pieces) {
            runs.clear();
            int previousKind = -1; // 0: word character, 1: other, -1: whitespace
            for (std::size_t pos = 0; pos < piece.text.size();) {
                const std::size_t begin = pos;
                const char32_t c = nextCodePoint(piece.text, pos);
                const int kind = isWordChar(c) ? 0 : isWhiteSpace(c) ? -1 : 1;
                if (kind >= 0 && kind == previousKind)
                    runs.back().second = pos;
                else if (kind >= 0)
                    runs.emplace_back(begin, pos);
                previousKind = kind;
            }
            splitPiece(piece, runs, Behavior::Removed, true, out);
        }
        pieces.swap(out);
    }
};

/// Splits at single characters that `isDelimiter` picks, with a split behaviour:
/// BertPreTokenizer (whitespace removed, then punctuation isolated), Punctuation and
/// CharDelimiterSplit (the delimiter removed).
class CharacterSplitPreTokenizer final : public PreTokenizer {
public:
    using Predicate = bool (*)(char32_t codePoint, char32_t delimiter);
    struct Step {
        Predicate isDelimiter;
        Behavior behavior;
    };
    CharacterSplitPreTokenizer(std::vector<Step> steps, char32_t delimiter = 0)
        : m_steps(std::move(steps)), m_delimiter(delimiter) {}
    void split(std::vector<Piece>& pieces) const override {
        std::vector<Piece> out;
        std::vector<std::pair<std::size_t, std::size_t>> matches;
        for (const Step& step : m_steps) {
            out.clear();
            out.reserve(pieces.size());
            for (const Piece& piece : pieces) {
                matches.clear();
                for (std::size_t pos = 0; pos < piece.text.size();) {
                    const std::size_t begin = pos;
                    if (step.isDelimiter(nextCodePoint(piece.text, pos), m_delimiter))
                        matches.emplace_back(begin, pos);
                }
                splitPiece(piece, matches, step.behavior, false, out);
            }
            pieces.swap(out);
        }
    }

    static bool whitespace(char32_t c, char32_t) { return isWhiteSpace(c); }
    static bool punctuation(char32_t c, char32_t) { return isBertPunctuation(c); }
    static bool delimiter(char32_t c, char32_t delimiter) { return c == delimiter; }

private:
    std::vector<Step> m_steps;
    char32_t m_delimiter;
};

class SequencePreTokenizer final : public PreTokenizer {
public:
    explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> stages)
        : m_stages(std::move(stages)) {}
    void split(std::vector<Piece>& pieces) const override {
        for (const auto& stage : m_stages)
            stage->split(pieces);
    }

private:
    std::vector<std::unique_ptr<PreTokenizer>> m_stages;
};

// ---- post-processors -------------------------------------------------------------------------

class TemplatePostProcessor final : public PostProcessor {
public:
    explicit TemplatePostProcessor(std::vector<TemplateItem> items) : m_items(std::move(items)) {}
    std::vector<TemplateItem> singleTemplate() const override { return m_items; }

private:
    std::vector<TemplateItem> m_items;
};

class SequencePostProcessor final : public PostProcessor {
public:
    explicit SequencePostProcessor(std::vector<std::unique_ptr<PostProcessor>> stages)
        : m_stages(std::move(stages)) {}
    /// Each stage wraps what the stages before it produced.
    std::vector<TemplateItem> singleTemplate() const override {
        std::vector<TemplateItem> current{TemplateItem{true, {}}};
        for (const auto& stage : m_stages) {
            const std::vector<TemplateItem> outer = stage->singleTemplate();
            if (outer.empty()) continue;
            std::vector<TemplateItem> next;
            for (const TemplateItem& item : outer) {
                if (item.isSequence)
                    next.insert(next.end(), current.begin(), current.end());
                else
                    next.push_back(item);
            }
            current.swap(next);
        }
        if (current.size() == 1 && current[0].isSequence) current.clear();
        return current;
    }

private:
    std::vector<std::unique_ptr<PostProcessor>> m_stages;
};

/// TemplateProcessing's "single": a list of {"SpecialToken": {"id"}} / {"Sequence": {"id"}},
/// or the string form "<s> $A".
std::vector<TemplateItem> parseTemplate(const Json& config, const std::string& path) {
    const Json& specials = requireMember(config, path, "special_tokens");
    const std::string specialsPath = path + ".special_tokens";
    if (!specials.is_object()) formatError(specialsPath, "must be an object");
    const auto special = [&](const std::string& name, const std::string& where) {
        const auto it = specials.find(name);
        if (it == specials.end())
            formatError(where, "special token '" + name + "' is not in " + specialsPath);
        const std::string entryPath = specialsPath + "." + name;
        const Json& ids = requireArray(*it, entryPath, "ids");
        TemplateItem item;
        for (std::size_t i = 0; i < ids.size(); ++i)
            item.ids.push_back(static_cast<int32_t>(requireInteger(
                ids[i], element(entryPath + ".ids", i), 0, std::numeric_limits<int32_t>::max())));
        return item;
    };
    const Json& single = requireMember(config, path, "single");
    const std::string singlePath = path + ".single";
    std::vector<TemplateItem> items;
    bool sawSequence = false;
    if (single.is_string()) {
        const std::string text = single.get<std::string>();
        std::size_t pos = 0;
        while (pos < text.size()) {
            const std::size_t end = std::min(text.find(' ', pos), text.size());
            std::string word = text.substr(pos, end - pos);
            pos = end + 1;
            if (word.empty()) continue;
            if (const auto colon = word.rfind(':'); colon != std::string::npos && colon > 0)
                word.resize(colon); // the type id
            if (word == "$" || word == "$A" || word == "$0") {
                items.push_back(TemplateItem{true, {}});
                sawSequence = true;
            } else if (word[0] == '$') {
                formatError(singlePath, "a single-sequence template cannot use " + word);
            } else {
                items.push_back(special(word, singlePath));
            }
        }
    } else if (single.is_array()) {
        for (std::size_t i = 0; i < single.size(); ++i) {
            const std::string itemPath = element(singlePath, i);
            const Json& entry = single[i];
            if (!entry.is_object() || entry.size() != 1)
                formatError(itemPath, "must be {\"SpecialToken\": ...} or {\"Sequence\": ...}");
            if (entry.contains("Sequence")) {
                const std::string id =
                    requireString(entry["Sequence"], itemPath + ".Sequence", "id");
                if (id != "A")
                    formatError(itemPath + ".Sequence.id", "must be A in a single template");
                items.push_back(TemplateItem{true, {}});
                sawSequence = true;
            } else if (entry.contains("SpecialToken")) {
                const std::string id =
                    requireString(entry["SpecialToken"], itemPath + ".SpecialToken", "id");
                items.push_back(special(id, itemPath + ".SpecialToken.id"));
            } else {
                formatError(itemPath, "must be {\"SpecialToken\": ...} or {\"Sequence\": ...}");
            }
        }
    } else {
        formatError(singlePath, "must be an array or a string");
    }
    if (!sawSequence) formatError(singlePath, "has no place for the sequence ($A)");
    return items;
}

/// RobertaProcessing / BertProcessing: cls $A sep, with "cls"/"sep" as [token, id].
std::vector<TemplateItem> parseClsSep(const Json& config, const std::string& path) {
    const auto tokenId = [&](const char* key) {
        const Json& pair = requireArray(config, path, key);
        const std::string where = path + "." + key;
        if (pair.size() != 2 || !pair[0].is_string()) formatError(where, "must be [token, id]");
        return TemplateItem{false,
                            {static_cast<int32_t>(requireInteger(
                                pair[1], where + "[1]", 0, std::numeric_limits<int32_t>::max()))}};
    };
    return {tokenId("cls"), TemplateItem{true, {}}, tokenId("sep")};
}

// ---- decoders --------------------------------------------------------------------------------

class ByteLevelDecoder final : public Decoder {
public:
    void decode(std::vector<std::string>& tokens, bool display) const override {
        std::string bytes;
        for (const std::string& token : tokens) {
            const std::size_t mark = bytes.size();
            bool mapped = true;
            for (std::size_t pos = 0; pos < token.size();) {
                const int byte = charToByte(nextCodePoint(token, pos));
                if (byte < 0) {
                    mapped = false;
                    break;
                }
                bytes += static_cast<char>(byte);
            }
            if (!mapped) {
                bytes.resize(mark); // a token with an unmapped character is kept as it is
                bytes += token;
            }
        }
        tokens.assign(1, display ? std::move(bytes) : repairUtf8(bytes));
    }
};

class ReplaceDecoder final : public Decoder {
public:
    ReplaceDecoder(const Json& config, const std::string& path)
        : m_pattern(requireMember(config, path, "pattern"), path + ".pattern"),
          m_content(requireString(config, path, "content")) {}
    void decode(std::vector<std::string>& tokens, bool) const override {
        for (std::string& token : tokens)
            replaceAll(token, m_pattern, m_content);
    }

private:
    Pattern m_pattern;
    std::string m_content;
};

class ByteFallbackDecoder final : public Decoder {
public:
    void decode(std::vector<std::string>& tokens, bool display) const override {
        std::vector<std::string> out;
        std::string pending;
        std::size_t pendingCount = 0;
        const auto flush = [&] {
            if (pendingCount == 0) return;
            if (display || repairUtf8(pending) == pending) {
                out.push_back(pending);
            } else {
                for (std::size_t i = 0; i < pendingCount; ++i)
                    out.emplace_back("\xEF\xBF\xBD");
            }
            pending.clear();
            pendingCount = 0;
        };
        for (std::string& token : tokens) {
            if (const int byte = parseByteToken(token); byte >= 0) {
                pending += static_cast<char>(byte);
                ++pendingCount;
                continue;
            }
            flush();
            out.push_back(std::move(token));
        }
        flush();
        tokens.swap(out);
    }

private:
    static int parseByteToken(const std::string& token) {
        if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
        int value = 0;
        for (int k = 3; k < 5; ++k) {
            const char c = token[static_cast<std::size_t>(k)];
            int digit = -1;
            if (c >= '0' && c <= '9') digit = c - '0';
            if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
            if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
            if (digit < 0) return -1;
            value = value * 16 + digit;
        }
        return value;
    }
};

class FuseDecoder final : public Decoder {
public:
    void decode(std::vector<std::string>& tokens, bool) const override {
        std::string joined;
        for (const std::string& token : tokens)
            joined += token;
        tokens.assign(1, std::move(joined));
    }
};

class StripDecoder final : public Decoder {
public:
    StripDecoder(const Json& config, const std::string& path)
        : m_content(requireCharacter(config, path, "content")),
          m_start(static_cast<std::size_t>(
              requireInteger(requireMember(config, path, "start"), path + ".start", 0, 1 << 20))),
          m_stop(static_cast<std::size_t>(
              requireInteger(requireMember(config, path, "stop"), path + ".stop", 0, 1 << 20))) {}
    void decode(std::vector<std::string>& tokens, bool display) const override {
        if (display) return; // a lone token keeps its spaces so it reads as it sits in the text
        for (std::string& token : tokens) {
            std::size_t begin = 0, end = token.size();
            for (std::size_t k = 0;
                 k < m_start && token.compare(begin, m_content.size(), m_content) == 0 &&
                 begin < end;
                 ++k)
                begin += m_content.size();
            for (std::size_t k = 0;
                 k < m_stop && end >= begin + m_content.size() &&
                 token.compare(end - m_content.size(), m_content.size(), m_content) == 0;
                 ++k)
                end -= m_content.size();
            token = token.substr(begin, end - begin);
        }
    }

private:
    std::string m_content;
    std::size_t m_start, m_stop;
};

class MetaspaceDecoder final : public Decoder {
public:
    MetaspaceDecoder(const Json& config, const std::string& path)
        : m_replacement(requireCharacter(config, path, "replacement")),
          m_scheme(parsePrependScheme(config, path)) {}
    void decode(std::vector<std::string>& tokens, bool display) const override {
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            const bool drop = i == 0 && m_scheme != PrependScheme::Never && !display;
            std::string out;
            const std::string& token = tokens[i];
            for (std::size_t pos = 0; pos < token.size();) {
                if (token.compare(pos, m_replacement.size(), m_replacement) == 0) {
                    if (!drop) out += ' ';
                    pos += m_replacement.size();
                } else {
                    out += token[pos++];
                }
            }
            tokens[i].swap(out);
        }
    }

private:
    std::string m_replacement;
    PrependScheme m_scheme;
};

/// WordPiece's cleanup of spaces before punctuation and contractions (decoders/wordpiece.rs).
std::string wordPieceCleanup(std::string text) {
    static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
        {" .", "."},   {" ?", "?"},     {" !", "!"},     {" ,", ","},
        {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},   {" do not", " don't"},
        {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
    };
    for (const auto& [from, to] : kRules) {
        std::string out;
        std::size_t last = 0;
        for (std::size_t at = text.find(from); at != std::string::npos;
             at = text.find(from, at + from.size())) {
            out.append(text, last, at - last);
            out += to;
            last = at + from.size();
        }
        if (last == 0) continue;
        out.append(text, last, std::string::npos);
        text.swap(out);
    }
    return text;
}

/// WordPiece: pieces after the first lose the prefix ("##") and join the one before; the
/// others get a space before them; `cleanup` then removes spaces before punctuation. Shown
/// alone (display), a prefixed piece loses its prefix and another piece gets its space.
class WordPieceDecoder final : public Decoder {
public:
    WordPieceDecoder(const Json& config, const std::string& path)
        : m_prefix(optionalString(config, path, "prefix").value_or("##")),
          m_cleanup(optionalBool(config, path, "cleanup", true)) {}
    void decode(std::vector<std::string>& tokens, bool display) const override {
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            std::string& token = tokens[i];
            if (i != 0 || display) {
                if (token.compare(0, m_prefix.size(), m_prefix) == 0)
                    token.erase(0, m_prefix.size());
                else
                    token.insert(0, 1, ' ');
            }
            if (m_cleanup && !display) token = wordPieceCleanup(std::move(token));
        }
    }

private:
    std::string m_prefix;
    bool m_cleanup;
};

/// BPEDecoder: the end-of-word suffix ("</w>") becomes a space, except in the last token.
class BpeSuffixDecoder final : public Decoder {
public:
    BpeSuffixDecoder(const Json& config, const std::string& path)
        : m_suffix(optionalString(config, path, "suffix").value_or("</w>")) {}
    void decode(std::vector<std::string>& tokens, bool display) const override {
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            const bool last = i + 1 == tokens.size() && !display;
            replaceAll(tokens[i], Pattern(m_suffix), last ? "" : " ");
        }
    }

private:
    std::string m_suffix;
};

/// CTC: repeated tokens collapse, the pad token vanishes, the word delimiter becomes a space
/// (with cleanup), empty tokens are dropped.
class CtcDecoder final : public Decoder {
public:
    CtcDecoder(const Json& config, const std::string& path)
        : m_pad(optionalString(config, path, "pad_token").value_or("<pad>")),
          m_delimiter(optionalString(config, path, "word_delimiter_token").value_or("|")),
          m_cleanup(optionalBool(config, path, "cleanup", true)) {}
    void decode(std::vector<std::string>& tokens, bool) const override {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            if (i > 0 && tokens[i] == tokens[i - 1]) continue;
            std::string token = tokens[i];
            replaceAll(token, Pattern(m_pad), "");
            if (m_cleanup) {
                token = wordPieceCleanup(std::move(token));
                replaceAll(token, Pattern(m_delimiter), " ");
            }
            if (!token.empty()) out.push_back(std::move(token));
        }
        tokens.swap(out);
    }

private:
    std::string m_pad, m_delimiter;
    bool m_cleanup;
};

class SequenceDecoder final : public Decoder {
public:
    explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> stages)
        : m_stages(std::move(stages)) {}
    void decode(std::vector<std::string>& tokens, bool display) const override {
        for (const auto& stage : m_stages)
            stage->decode(tokens, display);
    }

private:
    std::vector<std::unique_ptr<Decoder>> m_stages;
};

template <typename Stage>
using StageMaker = std::unique_ptr<Stage> (*)(const Json& config, const std::string& path);

/// One row of a stage table: the "type", the keys besides "type" that it reads or that cannot
/// change the ids (offsets, the pair template), and how to build it.
template <typename Stage> struct StageKind {
    const char* type;
    std::array<const char*, 5> keys;
    StageMaker<Stage> make;
};

/// The stage `config` names in `kinds`; null gives nullptr. An unknown type or key is refused.
template <typename Stage, std::size_t N>
std::unique_ptr<Stage> makeStage(const Json& config, const std::string& path, const char* kind,
                                 const std::array<StageKind<Stage>, N>& kinds) {
    if (config.is_null()) return nullptr;
    const std::string type = stageType(config, path);
    for (const StageKind<Stage>& entry : kinds) {
        if (type != entry.type) continue;
        std::size_t keyCount = 0;
        while (keyCount < entry.keys.size() && entry.keys[keyCount])
            ++keyCount;
        refuseKeysOutside(config, path, entry.keys.data(), keyCount);
        return entry.make(config, path);
    }
    std::string supported;
    for (const StageKind<Stage>& entry : kinds)
        supported += (supported.empty() ? "" : ", ") + std::string(entry.type);
    formatError(path + ".type", "the " + std::string(kind) + " '" + type +
                                    "' is not supported (supported: " + supported + ")");
}

template <typename Stage>
std::vector<std::unique_ptr<Stage>> makeStages(const Json& config, const std::string& path,
                                               const char* key, StageMaker<Stage> make) {
    const Json& list = requireArray(config, path, key);
    std::vector<std::unique_ptr<Stage>> stages;
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto stage = make(list[i], element(path + "." + key, i));
        if (stage) stages.push_back(std::move(stage));
    }
    return stages;
}

/// A Sequence stage: the stages listed under `key`, each built by `makeOne`.
template <typename Stage, typename Sequence, const char* key,
          std::unique_ptr<Stage> (*makeOne)(const Json&, const std::string&)>
std::unique_ptr<Stage> makeSequence(const Json& config, const std::string& path) {
    return std::make_unique<Sequence>(makeStages<Stage>(config, path, key, makeOne));
}
constexpr char kNormalizersKey[] = "normalizers";
constexpr char kPreTokenizersKey[] = "pretokenizers";
constexpr char kProcessorsKey[] = "processors";
constexpr char kDecodersKey[] = "decoders";

std::unique_ptr<PostProcessor> makeClsSep(const Json& config, const std::string& path) {
    return std::make_unique<TemplatePostProcessor>(parseClsSep(config, path));
}

template <typename Stage, typename Concrete>
std::unique_ptr<Stage> make(const Json& config, const std::string& path) {
    if constexpr (std::is_constructible_v<Concrete, const Json&, const std::string&>)
        return std::make_unique<Concrete>(config, path);
    else
        return std::make_unique<Concrete>();
}

template <UnicodeForm form>
std::unique_ptr<Normalizer> makeUnicode(const Json&, const std::string&) {
    return std::make_unique<UnicodeNormalizer>(form);
}

using CharacterSplit = CharacterSplitPreTokenizer;

const std::array<StageKind<Normalizer>, 14> kNormalizers = {{
    {"BertNormalizer",
     {"clean_text", "handle_chinese_chars", "strip_accents", "lowercase"},
     make<Normalizer, BertNormalizer>},
    {"NFC", {}, makeUnicode<UnicodeForm::Nfc>},
    {"NFD", {}, makeUnicode<UnicodeForm::Nfd>},
    {"NFKC", {}, makeUnicode<UnicodeForm::Nfkc>},
    {"NFKD", {}, makeUnicode<UnicodeForm::Nfkd>},
    {"Nmt", {}, make<Normalizer, NmtNormalizer>},
    {"Precompiled", {"precompiled_charsmap"}, makePrecompiledNormalizer},
    {"Lowercase", {}, make<Normalizer, LowercaseNormalizer>},
    {"StripAccents", {}, make<Normalizer, StripAccentsNormalizer>},
    {"Strip",
     {"strip_left", "strip_right"},
     [](const Json& config, const std::string& path) -> std::unique_ptr<Normalizer> {
         return std::make_unique<StripNormalizer>(optionalBool(config, path, "strip_left", true),
                                                  optionalBool(config, path, "strip_right", true));
     }},
    {"Prepend",
     {"prepend"},
     [](const Json& config, const std::string& path) -> std::unique_ptr<Normalizer> {
         return std::make_unique<PrependNormalizer>(requireString(config, path, "prepend"));
     }},
    {"Replace", {"pattern", "content"}, make<Normalizer, ReplaceNormalizer>},
    {"ByteLevel", {}, make<Normalizer, ByteLevelNormalizer>},
    {"Sequence",
     {"normalizers"},
     makeSequence<Normalizer, SequenceNormalizer, kNormalizersKey, makeNormalizer>},
}};

const std::array<StageKind<PreTokenizer>, 10> kPreTokenizers = {{
    {"BertPreTokenizer",
     {},
     [](const Json&, const std::string&) -> std::unique_ptr<PreTokenizer> {
         return std::make_unique<CharacterSplit>(
             std::vector<CharacterSplit::Step>{{CharacterSplit::whitespace, Behavior::Removed},
                                               {CharacterSplit::punctuation, Behavior::Isolated}});
     }},
    {"ByteLevel",
     {"add_prefix_space", "trim_offsets", "use_regex"},
     make<PreTokenizer, ByteLevelPreTokenizer>},
    {"CharDelimiterSplit",
     {"delimiter"},
     [](const Json& config, const std::string& path) -> std::unique_ptr<PreTokenizer> {
         const std::string delimiter = requireCharacter(config, path, "delimiter");
         std::size_t pos = 0;
         return std::make_unique<CharacterSplit>(
             std::vector<CharacterSplit::Step>{{CharacterSplit::delimiter, Behavior::Removed}},
             nextCodePoint(delimiter, pos));
     }},
    {"Digits",
     {"individual_digits"},
     [](const Json& config, const std::string& path) -> std::unique_ptr<PreTokenizer> {
         return std::make_unique<DigitsPreTokenizer>(
             optionalBool(config, path, "individual_digits", false));
     }},
    {"Metaspace",
     {"replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"},
     make<PreTokenizer, MetaspacePreTokenizer>},
    {"Punctuation",
     {"behavior"},
     [](const Json& config, const std::string& path) -> std::unique_ptr<PreTokenizer> {
         const Behavior behavior =
             config.contains("behavior") ? parseBehavior(config, path) : Behavior::Isolated;
         return std::make_unique<CharacterSplit>(
             std::vector<CharacterSplit::Step>{{CharacterSplit::punctuation, behavior}});
     }},
    {"Split", {"pattern", "behavior", "invert"}, make<PreTokenizer, SplitPreTokenizer>},
    {"Whitespace", {}, make<PreTokenizer, WordRunsPreTokenizer>},
    {"WhitespaceSplit",
     {},
     [](const Json&, const std::string&) -> std::unique_ptr<PreTokenizer> {
         return std::make_unique<CharacterSplit>(
             std::vector<CharacterSplit::Step>{{CharacterSplit::whitespace, Behavior::Removed}});
     }},
    {"Sequence",
     {"pretokenizers"},
     makeSequence<PreTokenizer, SequencePreTokenizer, kPreTokenizersKey, makePreTokenizer>},
}};

const std::array<StageKind<PostProcessor>, 5> kPostProcessors = {{
    {"TemplateProcessing",
     {"single", "pair", "special_tokens"},
     [](const Json& config, const std::string& path) -> std::unique_ptr<PostProcessor> {
         return std::make_unique<TemplatePostProcessor>(parseTemplate(config, path));
     }},
    {"BertProcessing", {"sep", "cls"}, makeClsSep},
    {"RobertaProcessing", {"sep", "cls", "trim_offsets", "add_prefix_space"}, makeClsSep},
    {"ByteLevel",
     {"add_prefix_space", "trim_offsets", "use_regex"},
     [](const Json&, const std::string&) -> std::unique_ptr<PostProcessor> {
         return std::make_unique<TemplatePostProcessor>(std::vector<TemplateItem>{});
     }},
    {"Sequence",
     {"processors"},
     makeSequence<PostProcessor, SequencePostProcessor, kProcessorsKey, makePostProcessor>},
}};

const std::array<StageKind<Decoder>, 10> kDecoders = {{
    {"ByteLevel",
     {"add_prefix_space", "trim_offsets", "use_regex"},
     make<Decoder, ByteLevelDecoder>},
    {"WordPiece", {"prefix", "cleanup"}, make<Decoder, WordPieceDecoder>},
    {"Metaspace",
     {"replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"},
     make<Decoder, MetaspaceDecoder>},
    {"BPEDecoder", {"suffix"}, make<Decoder, BpeSuffixDecoder>},
    {"CTC", {"pad_token", "word_delimiter_token", "cleanup"}, make<Decoder, CtcDecoder>},
    {"Replace", {"pattern", "content"}, make<Decoder, ReplaceDecoder>},
    {"ByteFallback", {}, make<Decoder, ByteFallbackDecoder>},
    {"Fuse", {}, make<Decoder, FuseDecoder>},
    {"Strip", {"content", "start", "stop"}, make<Decoder, StripDecoder>},
    {"Sequence", {"decoders"}, makeSequence<Decoder, SequenceDecoder, kDecodersKey, makeDecoder>},
}};

} // namespace

std::unique_ptr<Normalizer> makeNormalizer(const Json& config, const std::string& path) {
    return makeStage(config, path, "normalizer", kNormalizers);
}

std::unique_ptr<PreTokenizer> makePreTokenizer(const Json& config, const std::string& path) {
    return makeStage(config, path, "pre-tokenizer", kPreTokenizers);
}

std::unique_ptr<PostProcessor> makePostProcessor(const Json& config, const std::string& path) {
    return makeStage(config, path, "post-processor", kPostProcessors);
}

std::unique_ptr<Decoder> makeDecoder(const Json& config, const std::string& path) {
    return makeStage(config, path, "decoder", kDecoders);
}

} // namespace attnlab::model::detail

#pragma once
// A Unicode regular expression for tokenizer.json's patterns (internal), through PCRE2 with
// PCRE2_UTF | PCRE2_UCP and JIT. Hugging Face compiles these patterns with Oniguruma, whose
// \s also matches U+0085 (NEL); the pattern is adjusted so PCRE2 agrees.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab::model::detail {

class Regex {
public:
    /// Throws std::invalid_argument with PCRE2's message when the pattern does not compile.
    explicit Regex(const std::string& pattern);

    /// The non-overlapping matches in valid UTF-8 `text`, left to right, as byte ranges
    /// [begin, end). An empty match right where the previous one ended is skipped.
    void findAll(std::string_view text,
                 std::vector<std::pair<std::size_t, std::size_t>>& out) const;

private:
    std::shared_ptr<void> m_code; // pcre2_code_8, shared by copies (matching is read-only)
};

/// Oniguruma's \s and \S spelled for PCRE2 (adds U+0085 to \s). Exposed for tests.
std::string onigurumaToPcre2(std::string_view pattern);

} // namespace attnlab::model::detail

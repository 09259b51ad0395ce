// The Unigram model of tokenizer.json, after Hugging Face tokenizers' models/unigram
// (Unigram::encode_optimized, itself SentencePiece's unigram_model.cc): the segmentation of
// a word with the highest sum of piece scores (Viterbi over the vocabulary's prefixes at each
// character), an unknown character scoring `min_score - 10`, runs of unknown characters fused
// into one unk token, byte fallback for those when the vocabulary has <0x41> pieces.

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "tokenizer_model.h"
#include "tokenizer_text.h"

namespace attnlab::model::detail {

namespace {

/// The penalty below the lowest score that an unknown character costs (K_UNK_PENALTY).
constexpr double kUnknownPenalty = 10.0;

/// serde_json's default float parsing (no float_roundtrip feature), which Hugging Face's
/// loader uses: the decimal digits as a u64 rounded to a double, then one multiplication or
/// division by a power of ten. It can differ from the correctly rounded value (what the JSON
/// reader gave) in the last bit, and Viterbi's ties follow such bits. The digits are
/// recovered as the shortest decimal form of `value`, which is how the files are written.
double serdeJsonDouble(double value) {
    if (!std::isfinite(value) || value == 0.0) return value;
    std::array<char, 64> text{};
    const auto written =
        std::to_chars(text.data(), text.data() + text.size(), value, std::chars_format::scientific);
    const std::string_view shortest(text.data(),
                                    static_cast<std::size_t>(written.ptr - text.data()));
    const bool negative = shortest.front() == '-';
    const std::size_t ePos = shortest.find('e');
    uint64_t significand = 0;
    int digits = 0;
    for (std::size_t i = negative ? 1 : 0; i < ePos; ++i) {
        if (shortest[i] == '.') continue;
        significand = significand * 10 + static_cast<uint64_t>(shortest[i] - '0');
        ++digits;
    }
    int exponent = 0;
    std::from_chars(shortest.data() + ePos + (shortest[ePos + 1] == '+' ? 2 : 1),
                    shortest.data() + shortest.size(), exponent);
    exponent -= digits - 1;

    static const std::array<double, 309> powersOfTen = [] {
        std::array<double, 309> table{};
        for (std::size_t e = 0; e < table.size(); ++e) {
            std::array<char, 16> literal{};
            std::snprintf(literal.data(), literal.size(), "1e%zu", e);
            table[e] = std::strtod(literal.data(), nullptr); // correctly rounded, as Rust's 1eN
        }
        return table;
    }();
    auto result = static_cast<double>(significand);
    while (true) {
        const auto magnitude = static_cast<std::size_t>(exponent < 0 ? -exponent : exponent);
        if (magnitude < powersOfTen.size()) {
            if (exponent >= 0)
                result *= powersOfTen[magnitude];
            else
                result /= powersOfTen[magnitude];
            break;
        }
        if (result == 0.0 || exponent >= 0) break; // (the JSON reader refused overflows)
        result /= 1e308;
        exponent += 308;
    }
    return negative ? -result : result;
}

class Unigram final : public Model {
public:
    Unigram(const Json& config, const std::string& path);
    const Vocabulary& vocabulary() const override { return m_vocab; }
    std::string_view kind() const override { return "Unigram"; }

private:
    /// A byte trie of the pieces: first-child / next-sibling lists, the root's children in a
    /// table. `piece` is the id of the piece ending at the node (the last of equal pieces, as
    /// Hugging Face's token map keeps), or -1.
    struct TrieNode {
        int32_t firstChild = -1;
        int32_t nextSibling = -1;
        int32_t piece = -1;
        unsigned char byte = 0;
    };
    void insert(std::string_view piece, int32_t id);
    int32_t child(int32_t node, unsigned char byte) const;
    void tokenizeWord(std::string_view word, std::vector<int32_t>& ids) const override;

    Vocabulary m_vocab;
    std::vector<double> m_scores; ///< id -> score
    std::vector<TrieNode> m_trie; ///< [0] is the root
    std::array<int32_t, 256> m_rootChildren{};
    std::vector<int32_t> m_byteIds;
    double m_unknownScore = 0.0;
    int32_t m_unkId = 0;
    bool m_byteFallback = false;
};

Unigram::Unigram(const Json& config, const std::string& path) {
    refuseUnknownKeys(config, path, {"unk_id", "vocab", "byte_fallback"});
    const std::string vocabPath = path + ".vocab";
    const Json& vocabJson = requireMember(config, path, "vocab");
    if (!vocabJson.is_array()) formatError(vocabPath, "must be an array of [piece, score]");
    if (vocabJson.empty()) formatError(vocabPath, "is empty (at least the unk piece is needed)");
    if (vocabJson.size() > static_cast<std::size_t>(kMaxTokenId))
        formatError(vocabPath, "has too many pieces");
    m_trie.emplace_back();
    m_rootChildren.fill(-1);
    m_scores.reserve(vocabJson.size());
    m_vocab.reserve(vocabJson.size());
    double minScore = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < vocabJson.size(); ++i) {
        const Json& entry = vocabJson[i];
        const std::string where = vocabPath + "[" + std::to_string(i) + "]";
        if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() ||
            !entry[1].is_number())
            formatError(where, "must be [piece, score]");
        const std::string& piece = entry[0].get_ref<const std::string&>();
        const double score = entry[1].is_number_float() ? serdeJsonDouble(entry[1].get<double>())
                                                        : entry[1].get<double>();
        if (std::isnan(score)) formatError(where, "the score is not a number");
        const auto id = static_cast<int32_t>(i);
        m_vocab[piece] = id; // a repeated piece: the last id wins, as in Hugging Face
        m_scores.push_back(score);
        minScore = std::min(minScore, score);
        insert(piece, id);
    }
    m_unknownScore = minScore - kUnknownPenalty;

    const auto unk = config.find("unk_id");
    if (unk == config.end() || unk->is_null())
        formatError(path + ".unk_id", "is missing: Hugging Face fails on any character outside "
                                      "the vocabulary without it, so it is required here");
    m_unkId = static_cast<int32_t>(
        requireInteger(*unk, path + ".unk_id", 0, static_cast<int64_t>(vocabJson.size()) - 1));
    m_byteFallback = optionalBool(config, path, "byte_fallback", false);
    m_byteIds = byteTokenIds(m_vocab);
}

void Unigram::insert(std::string_view piece, int32_t id) {
    int32_t node = 0;
    for (const char c : piece) {
        const auto byte = static_cast<unsigned char>(c);
        int32_t next = child(node, byte);
        if (next < 0) {
            next = static_cast<int32_t>(m_trie.size());
            TrieNode created;
            created.byte = byte;
            if (node == 0) {
                m_rootChildren[byte] = next;
            } else {
                created.nextSibling = m_trie[static_cast<std::size_t>(node)].firstChild;
                m_trie[static_cast<std::size_t>(node)].firstChild = next;
            }
            m_trie.push_back(created);
        }
        node = next;
    }
    if (node != 0) m_trie[static_cast<std::size_t>(node)].piece = id; // "" never matches
}

int32_t Unigram::child(int32_t node, unsigned char byte) const {
    if (node == 0) return m_rootChildren[byte];
    for (int32_t at = m_trie[static_cast<std::size_t>(node)].firstChild; at >= 0;
         at = m_trie[static_cast<std::size_t>(at)].nextSibling)
        if (m_trie[static_cast<std::size_t>(at)].byte == byte) return at;
    return -1;
}

void Unigram::tokenizeWord(std::string_view word, std::vector<int32_t>& ids) const {
    // best[end]: the best path over word[0, end): its score, where its last piece starts
    // (-1: no path yet) and that piece's id (the unk id for an unknown character).
    struct Best {
        double score = 0.0;
        int64_t start = -1;
        int32_t id = 0;
    };
    const std::size_t size = word.size();
    std::vector<Best> best(size + 1);
    for (std::size_t start = 0; start < size;) {
        const double scoreHere = best[start].score;
        const std::size_t charLength = utf8CharLength(static_cast<unsigned char>(word[start]));
        bool hasSingleCharacter = false;
        int32_t node = 0;
        for (std::size_t end = start; end < size;) {
            node = child(node, static_cast<unsigned char>(word[end]));
            if (node < 0) break;
            ++end;
            const int32_t piece = m_trie[static_cast<std::size_t>(node)].piece;
            if (piece < 0) continue;
            Best& target = best[end];
            const double candidate = m_scores[static_cast<std::size_t>(piece)] + scoreHere;
            if (target.start < 0 || candidate > target.score)
                target = {candidate, static_cast<int64_t>(start), piece};
            if (end - start == charLength) hasSingleCharacter = true;
        }
        if (!hasSingleCharacter) {
            Best& target = best[start + charLength];
            const double candidate = m_unknownScore + scoreHere;
            if (target.start < 0 || candidate > target.score)
                target = {candidate, static_cast<int64_t>(start), m_unkId};
        }
        start += charLength;
    }

    // Back from the end; adjacent unknown pieces fuse into one string.
    std::vector<std::pair<std::size_t, std::size_t>> pieces; // [begin, end), last first
    bool lastWasUnknown = false;
    for (std::size_t end = size; end > 0;) {
        const Best& node = best[end];
        const auto start = static_cast<std::size_t>(node.start);
        const bool unknown = node.id == m_unkId;
        if (unknown && lastWasUnknown)
            pieces.back().first = start;
        else
            pieces.emplace_back(start, end);
        lastWasUnknown = unknown;
        end = start;
    }

    // Each string to ids (Unigram::tokenize): the vocabulary's id, else its bytes' <0x..>
    // pieces when byte fallback is on and all exist, else the unk id.
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        const std::string_view text = word.substr(it->first, it->second - it->first);
        if (const auto found = m_vocab.find(text); found != m_vocab.end()) {
            ids.push_back(found->second);
            continue;
        }
        if (m_byteFallback) {
            bool all = true;
            for (const char c : text)
                all = all && m_byteIds[static_cast<unsigned char>(c)] >= 0;
            if (all) {
                for (const char c : text)
                    ids.push_back(m_byteIds[static_cast<unsigned char>(c)]);
                continue;
            }
        }
        ids.push_back(m_unkId);
    }
}

} // namespace

std::unique_ptr<Model> makeUnigramModel(const Json& config, const std::string& path) {
    return std::make_unique<Unigram>(config, path);
}

} // namespace attnlab::model::detail

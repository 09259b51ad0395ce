#include "tokenizer_precompiled.h"

#include <unicode/uchar.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "tokenizer_text.h"

namespace attnlab::model::detail {

namespace {

// ---- Darts-clone's double-array units (spm_precompiled's ArrayUnit) -------------------------

bool hasLeaf(uint32_t unit) {
    return ((unit >> 8) & 1) == 1;
}
uint32_t leafValue(uint32_t unit) {
    return unit & ((1u << 31) - 1);
}
uint32_t unitLabel(uint32_t unit) {
    return unit & ((1u << 31) | 0xFF);
}
uint64_t unitOffset(uint32_t unit) {
    return static_cast<uint64_t>(unit >> 10) << ((unit & (1u << 9)) >> 6);
}

uint32_t readLittleEndian(std::string_view bytes, std::size_t at) {
    uint32_t value = 0;
    for (std::size_t k = 0; k < 4; ++k)
        value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + k])) << (8 * k);
    return value;
}

bool isCharBoundary(std::string_view text, std::size_t at) {
    return at >= text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80;
}

// ---- the Precompiled normalizer -------------------------------------------------------------

class PrecompiledNormalizer final : public Normalizer {
public:
    explicit PrecompiledNormalizer(PrecompiledCharsmap map) : m_map(std::move(map)) {}
    void normalize(std::string& text) const override { text = m_map.normalize(text); }

private:
    PrecompiledCharsmap m_map;
};

// ---- grapheme clusters ----------------------------------------------------------------------

int breakClass(char32_t codePoint) {
    return u_getIntPropertyValue(static_cast<UChar32>(codePoint), UCHAR_GRAPHEME_CLUSTER_BREAK);
}

bool isControlLike(int gcb) {
    return gcb == U_GCB_CONTROL || gcb == U_GCB_CR || gcb == U_GCB_LF;
}

} // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string_view blob) {
    if (blob.size() < 4)
        throw std::invalid_argument("is " + std::to_string(blob.size()) +
                                    " bytes, too short for the trie's size (4 bytes)");
    const uint32_t trieBytes = readLittleEndian(blob, 0);
    // spm_precompiled reads trieBytes / 4 whole units; what is left is the strings.
    const std::size_t unitCount = trieBytes / 4;
    if (unitCount == 0) throw std::invalid_argument("its trie is empty");
    if (unitCount > (blob.size() - 4) / 4)
        throw std::invalid_argument("says its trie is " + std::to_string(trieBytes) +
                                    " bytes, but only " + std::to_string(blob.size() - 4) +
                                    " bytes follow (truncated?)");
    m_units.resize(unitCount);
    for (std::size_t i = 0; i < unitCount; ++i)
        m_units[i] = readLittleEndian(blob, 4 + 4 * i);
    m_strings.assign(blob.substr(4 + 4 * unitCount));
    if (repairUtf8(m_strings) != m_strings)
        throw std::invalid_argument("its replacement strings are not valid UTF-8");

    // Visit every node once (a node's children depend on its position alone, so a corrupt
    // trie with cycles still ends): each matched child and each leaf must lie inside.
    const auto badTrie = [](const std::string& what) {
        throw std::invalid_argument("its trie is corrupt: " + what);
    };
    std::vector<uint8_t> visited(unitCount, 0);
    std::vector<uint64_t> pending;
    const uint64_t root = unitOffset(m_units[0]);
    if (root >= unitCount) badTrie("the root points outside the trie");
    pending.push_back(root);
    visited[root] = 1;
    while (!pending.empty()) {
        const uint64_t node = pending.back();
        pending.pop_back();
        for (uint32_t label = 1; label < 256; ++label) {
            const uint64_t at = node ^ label;
            if (at >= unitCount || unitLabel(m_units[at]) != label) continue;
            const uint64_t child = at ^ unitOffset(m_units[at]);
            if (child >= unitCount)
                badTrie("unit " + std::to_string(at) + " points outside the trie");
            if (hasLeaf(m_units[at])) {
                const uint32_t offset = leafValue(m_units[child]);
                if (offset > m_strings.size() || !isCharBoundary(m_strings, offset))
                    badTrie("unit " + std::to_string(child) + " names string offset " +
                            std::to_string(offset) + ", outside the " +
                            std::to_string(m_strings.size()) + " bytes of strings");
            }
            if (!visited[child]) {
                visited[child] = 1;
                pending.push_back(child);
            }
        }
    }
}

std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view chunk) const {
    // DoubleArray::common_prefix_search, stopped at its first (shortest) result.
    uint64_t node = unitOffset(m_units[0]);
    for (const char byte : chunk) {
        const auto label = static_cast<unsigned char>(byte);
        if (label == 0) break;
        node ^= label;
        if (node >= m_units.size()) return std::nullopt; // checked at load; kept for safety
        const uint32_t unit = m_units[node];
        if (unitLabel(unit) != label) return std::nullopt;
        node ^= unitOffset(unit);
        if (node >= m_units.size()) return std::nullopt;
        if (hasLeaf(unit)) {
            const std::size_t begin = leafValue(m_units[node]);
            if (begin > m_strings.size()) return std::nullopt;
            const std::size_t end = std::min(m_strings.find('\0', begin), m_strings.size());
            return std::string_view(m_strings).substr(begin, end - begin);
        }
    }
    return std::nullopt;
}

std::string PrecompiledCharsmap::normalize(std::string_view text) const {
    std::string out;
    out.reserve(text.size());
    std::vector<std::size_t> ends;
    graphemeClusterEnds(text, ends);
    std::size_t begin = 0;
    for (const std::size_t end : ends) {
        const std::string_view cluster = text.substr(begin, end - begin);
        begin = end;
        // Whole clusters under 6 bytes first: "weird, but matches XNLI on every language"
        // says the Rust code; a cluster's first character in the map replaces all of it.
        if (cluster.size() < 6) {
            if (const auto replaced = transform(cluster)) {
                out += *replaced;
                continue;
            }
        }
        for (std::size_t pos = 0; pos < cluster.size();) {
            const std::size_t start = pos;
            pos += utf8CharLength(static_cast<unsigned char>(cluster[pos]));
            const std::string_view character = cluster.substr(start, pos - start);
            if (const auto replaced = transform(character))
                out += *replaced;
            else
                out += character;
        }
    }
    return out;
}

void checkCharsmapForDarts(std::string_view blob, std::size_t maxMatches) {
    // A real charsmap has tens of thousands of units; past this the check itself would cost.
    constexpr std::size_t kMaxUnits = std::size_t{1} << 22;
    if (blob.size() <= 4)
        throw std::invalid_argument("is " + std::to_string(blob.size()) +
                                    " bytes, too short for a trie");
    const uint32_t trieBytes = readLittleEndian(blob, 0);
    if (trieBytes > blob.size() - 4)
        throw std::invalid_argument("says its trie is " + std::to_string(trieBytes) +
                                    " bytes, but only " + std::to_string(blob.size() - 4) +
                                    " bytes follow");
    const std::size_t unitCount = trieBytes / 4;
    if (unitCount == 0) throw std::invalid_argument("its trie is empty");
    if (unitCount > kMaxUnits)
        throw std::invalid_argument("its trie of " + std::to_string(unitCount) +
                                    " units is too large for a charsmap");
    std::vector<uint32_t> units(unitCount);
    for (std::size_t i = 0; i < unitCount; ++i)
        units[i] = readLittleEndian(blob, 4 + 4 * i);
    const std::size_t stringBytes = blob.size() - 4 - trieBytes;
    const auto badTrie = [](const std::string& what) {
        throw std::invalid_argument("its trie is corrupt: " + what);
    };

    // Depth-first over the nodes a walk can reach (a node is the base its children are XORed
    // with): every one of its 256 cells must be readable, and the most matches on a walk from
    // each node is remembered once the node is done. Meeting a node still on the path is a
    // cycle, which a text repeating it could walk round for ever.
    enum : uint8_t { kUnseen, kOnPath, kDone };
    std::vector<uint8_t> state(unitCount, kUnseen);
    std::vector<std::size_t> matchesFrom(unitCount, 0);
    struct Frame {
        std::size_t node;
        uint32_t nextLabel = 0;
        std::size_t best = 0;     ///< most matches on a walk from here, over the labels done
        std::size_t edgeLeaf = 0; ///< whether the edge to the child being walked is a match
    };
    std::vector<Frame> path;
    const auto requireInside = [&](std::size_t node, const std::string& from) {
        if ((node | 0xFF) >= unitCount)
            badTrie(from + " leads to cells " + std::to_string(node & ~std::size_t{0xFF}) + "..." +
                    std::to_string(node | 0xFF) + ", past its " + std::to_string(unitCount) +
                    " units");
    };
    const std::size_t root = unitOffset(units[0]);
    requireInside(root, "the root");
    state[root] = kOnPath;
    path.push_back(Frame{root});
    while (!path.empty()) {
        Frame& frame = path.back();
        if (frame.nextLabel == 256) {
            const std::size_t done = frame.best;
            matchesFrom[frame.node] = done;
            state[frame.node] = kDone;
            path.pop_back();
            if (!path.empty())
                path.back().best = std::max(path.back().best, path.back().edgeLeaf + done);
            continue;
        }
        const uint32_t label = frame.nextLabel++;
        const std::size_t at = frame.node ^ label;
        const uint32_t unit = units[at];
        if (unitLabel(unit) != label) continue;
        const std::size_t child = at ^ unitOffset(unit);
        const std::size_t edgeLeaf = hasLeaf(unit) ? 1 : 0;
        // An empty cell under label 0: a NUL byte leaves the walk where it was, harmlessly.
        if (child == frame.node && edgeLeaf == 0) continue;
        const std::string unitName = "unit " + std::to_string(at);
        requireInside(child, unitName);
        if (edgeLeaf != 0 && leafValue(units[child]) > stringBytes)
            badTrie("unit " + std::to_string(child) + " names string offset " +
                    std::to_string(leafValue(units[child])) + ", past the " +
                    std::to_string(stringBytes) + " bytes of strings");
        if (state[child] == kOnPath) badTrie(unitName + " closes a cycle");
        if (state[child] == kDone) {
            frame.best = std::max(frame.best, edgeLeaf + matchesFrom[child]);
            continue;
        }
        frame.edgeLeaf = edgeLeaf;
        state[child] = kOnPath;
        path.push_back(Frame{child}); // invalidates `frame`
    }
    if (matchesFrom[root] > maxMatches)
        badTrie("a text can match " + std::to_string(matchesFrom[root]) +
                " of its keys at one place, more than the " + std::to_string(maxMatches) +
                " SentencePiece makes room for");
}

void graphemeClusterEnds(std::string_view text, std::vector<std::size_t>& ends) {
    ends.clear();
    int previous = -1;                 // the break class of the character before, -1 at the start
    bool pictographicRun = false;      // the text so far ends in ExtPict Extend*
    bool zwjAfterPictographic = false; // ... ends in ExtPict Extend* ZWJ
    std::size_t regionalRun = 0;       // regional indicators just before
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t begin = pos;
        const char32_t codePoint = nextCodePoint(text, pos);
        const int current = breakClass(codePoint);
        const bool pictographic =
            u_hasBinaryProperty(static_cast<UChar32>(codePoint), UCHAR_EXTENDED_PICTOGRAPHIC);
        bool join = false;
        if (previous >= 0) {
            if (previous == U_GCB_CR && current == U_GCB_LF)
                join = true; // GB3
            else if (isControlLike(previous) || isControlLike(current))
                join = false; // GB4, GB5
            else if (previous == U_GCB_L && (current == U_GCB_L || current == U_GCB_V ||
                                             current == U_GCB_LV || current == U_GCB_LVT))
                join = true; // GB6
            else if ((previous == U_GCB_LV || previous == U_GCB_V) &&
                     (current == U_GCB_V || current == U_GCB_T))
                join = true; // GB7
            else if ((previous == U_GCB_LVT || previous == U_GCB_T) && current == U_GCB_T)
                join = true; // GB8
            else if (current == U_GCB_EXTEND || current == U_GCB_ZWJ ||
                     current == U_GCB_SPACING_MARK)
                join = true; // GB9, GB9a
            else if (previous == U_GCB_PREPEND)
                join = true; // GB9b
            else if (zwjAfterPictographic && pictographic)
                join = true; // GB11
            else if (previous == U_GCB_REGIONAL_INDICATOR && current == U_GCB_REGIONAL_INDICATOR &&
                     regionalRun % 2 == 1)
                join = true; // GB12, GB13
        }
        if (previous >= 0 && !join) ends.push_back(begin);

        zwjAfterPictographic = current == U_GCB_ZWJ && pictographicRun;
        pictographicRun = pictographic || (current == U_GCB_EXTEND && pictographicRun);
        regionalRun = current == U_GCB_REGIONAL_INDICATOR ? regionalRun + 1 : 0;
        previous = current;
    }
    if (!text.empty()) ends.push_back(text.size());
}

std::string decodeBase64(std::string_view text) {
    static const std::array<int8_t, 256> values = [] {
        std::array<int8_t, 256> table{};
        table.fill(-1);
        const std::string_view alphabet =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (std::size_t i = 0; i < alphabet.size(); ++i)
            table[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
        return table;
    }();
    if (text.size() % 4 != 0)
        throw std::invalid_argument("not base64: its length " + std::to_string(text.size()) +
                                    " is not a multiple of 4");
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t group = 0; group < text.size(); group += 4) {
        const bool last = group + 4 == text.size();
        uint32_t bits = 0;
        int padding = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const char c = text[group + k];
            if (c == '=' && last && k >= 2 && (k == 3 || text[group + 3] == '=')) {
                ++padding;
                bits <<= 6;
                continue;
            }
            const int8_t value = values[static_cast<unsigned char>(c)];
            if (value < 0 || padding > 0)
                throw std::invalid_argument("not base64: character " + std::to_string(group + k) +
                                            " is not allowed there");
            bits = (bits << 6) | static_cast<uint32_t>(value);
        }
        // Canonical: the bits that padding leaves over must be zero.
        if ((padding == 1 && (bits & 0xFF) != 0) || (padding == 2 && (bits & 0xFFFF) != 0))
            throw std::invalid_argument("not base64: trailing bits before the padding");
        out += static_cast<char>((bits >> 16) & 0xFF);
        if (padding < 2) out += static_cast<char>((bits >> 8) & 0xFF);
        if (padding < 1) out += static_cast<char>(bits & 0xFF);
    }
    return out;
}

std::unique_ptr<Normalizer> makePrecompiledNormalizer(const Json& config, const std::string& path) {
    refuseUnknownKeys(config, path, {"precompiled_charsmap"});
    const std::string key = path + ".precompiled_charsmap";
    try {
        return std::make_unique<PrecompiledNormalizer>(
            PrecompiledCharsmap(decodeBase64(requireString(config, path, "precompiled_charsmap"))));
    } catch (const std::invalid_argument& error) {
        formatError(key, error.what());
    }
}

} // namespace attnlab::model::detail

#include "tokenizer_bpe.h"

#include <cstdio>
#include <queue>
#include <stdexcept>

#include "tokenizer_text.h"

namespace attnlab::model::detail {

namespace {

uint64_t pairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
}

/// Longer words are rarely repeated; caching them costs memory for nothing.
constexpr std::size_t kMaxCachedWordBytes = 256;

} // namespace

Bpe::Bpe(Vocabulary vocab, const std::vector<std::pair<std::string_view, std::string_view>>& merges,
         BpeOptions options)
    : m_vocab(std::move(vocab)), m_options(std::move(options)) {
    if (m_options.unkToken) {
        const auto it = m_vocab.find(*m_options.unkToken);
        if (it == m_vocab.end())
            throw std::invalid_argument("unk_token '" + *m_options.unkToken +
                                        "' is not in the vocabulary");
        m_unkId = it->second;
    }
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned>(b));
        const auto it = m_vocab.find(std::string_view(name));
        m_byteIds[b] = it == m_vocab.end() ? -1 : it->second;
    }
    m_merges.reserve(merges.size());
    const std::string_view prefix = m_options.continuingSubwordPrefix;
    std::string merged;
    for (std::size_t rank = 0; rank < merges.size(); ++rank) {
        const auto& [left, right] = merges[rank];
        const auto where = [&] { return "merges[" + std::to_string(rank) + "]: "; };
        const auto leftId = m_vocab.find(left);
        if (leftId == m_vocab.end())
            throw std::invalid_argument(where() + "'" + std::string(left) +
                                        "' is not in the vocabulary");
        const auto rightId = m_vocab.find(right);
        if (rightId == m_vocab.end())
            throw std::invalid_argument(where() + "'" + std::string(right) +
                                        "' is not in the vocabulary");
        if (!prefix.empty() && right.substr(0, prefix.size()) != prefix)
            throw std::invalid_argument(where() + "'" + std::string(right) +
                                        "' does not start with continuing_subword_prefix");
        merged.assign(left);
        merged.append(right.substr(prefix.size()));
        const auto mergedId = m_vocab.find(merged);
        if (mergedId == m_vocab.end())
            throw std::invalid_argument(where() + "the merge result '" + merged +
                                        "' is not in the vocabulary");
        // A repeated pair keeps its last rank, as Hugging Face's map building does.
        m_merges[pairKey(leftId->second, rightId->second)] =
            Merge{static_cast<uint32_t>(rank), mergedId->second};
    }
}

const Bpe::Merge* Bpe::findMerge(int32_t left, int32_t right) const {
    const auto it = m_merges.find(pairKey(left, right));
    return it == m_merges.end() ? nullptr : &it->second;
}

void Bpe::tokenize(std::string_view word, std::vector<int32_t>& ids, BpeCache& cache) const {
    if (word.empty()) return;
    if (m_options.ignoreMerges) {
        if (const auto it = m_vocab.find(word); it != m_vocab.end()) {
            ids.push_back(it->second);
            return;
        }
    }
    if (const auto it = cache.find(word); it != cache.end()) {
        ids.insert(ids.end(), it->second.begin(), it->second.end());
        return;
    }
    const std::size_t first = ids.size();
    mergeWord(word, ids);
    if (word.size() <= kMaxCachedWordBytes)
        cache.emplace(
            std::string(word),
            std::vector<int32_t>(ids.begin() + static_cast<std::ptrdiff_t>(first), ids.end()));
}

void Bpe::mergeWord(std::string_view word, std::vector<int32_t>& ids) const {
    // The word's initial symbols (Hugging Face's BPE::merge_word).
    std::vector<int32_t> symbols;
    symbols.reserve(word.size());
    std::optional<int32_t> pendingUnk;
    const auto flushUnk = [&] {
        if (pendingUnk) symbols.push_back(*pendingUnk);
        pendingUnk.reset();
    };
    std::string piece;
    std::size_t pos = 0;
    while (pos < word.size()) {
        const std::size_t begin = pos;
        nextCodePoint(word, pos);
        const std::string_view character = word.substr(begin, pos - begin);
        const std::string_view* lookup = &character;
        std::string_view decorated;
        if ((begin > 0 && !m_options.continuingSubwordPrefix.empty()) ||
            (pos >= word.size() && !m_options.endOfWordSuffix.empty())) {
            piece.clear();
            if (begin > 0) piece += m_options.continuingSubwordPrefix;
            piece += character;
            if (pos >= word.size()) piece += m_options.endOfWordSuffix;
            decorated = piece;
            lookup = &decorated;
        }
        if (const auto it = m_vocab.find(*lookup); it != m_vocab.end()) {
            flushUnk();
            symbols.push_back(it->second);
            continue;
        }
        if (m_options.byteFallback) {
            bool all = true;
            for (const char c : *lookup)
                all = all && m_byteIds[static_cast<unsigned char>(c)] >= 0;
            if (all) {
                flushUnk();
                for (const char c : *lookup)
                    symbols.push_back(m_byteIds[static_cast<unsigned char>(c)]);
                continue;
            }
        }
        if (m_unkId) {
            if (!(pendingUnk && m_options.fuseUnk)) {
                flushUnk();
                pendingUnk = m_unkId;
            }
        }
        // With no unk token an unknown character is dropped, as Hugging Face does.
    }
    flushUnk();

    // Merge by rank with a queue of candidate pairs (Hugging Face's Word::merge_all).
    const std::size_t n = symbols.size();
    if (n > 1) {
        std::vector<int32_t> prev(n), next(n);
        std::vector<uint8_t> alive(n, 1);
        for (std::size_t i = 0; i < n; ++i) {
            prev[i] = static_cast<int32_t>(i) - 1;
            next[i] = i + 1 < n ? static_cast<int32_t>(i + 1) : -1;
        }
        struct Candidate {
            uint32_t rank;
            int32_t pos;
            int32_t result;
            bool operator>(const Candidate& other) const {
                return rank != other.rank ? rank > other.rank : pos > other.pos;
            }
        };
        std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
        const auto offer = [&](int32_t left) {
            const int32_t right = next[static_cast<std::size_t>(left)];
            if (right < 0) return;
            if (const Merge* merge = findMerge(symbols[static_cast<std::size_t>(left)],
                                               symbols[static_cast<std::size_t>(right)]))
                queue.push({merge->rank, left, merge->result});
        };
        for (std::size_t i = 0; i + 1 < n; ++i)
            offer(static_cast<int32_t>(i));
        while (!queue.empty()) {
            const Candidate top = queue.top();
            queue.pop();
            const auto left = static_cast<std::size_t>(top.pos);
            if (!alive[left] || next[left] < 0) continue;
            const auto right = static_cast<std::size_t>(next[left]);
            const Merge* current = findMerge(symbols[left], symbols[right]);
            if (!current || current->result != top.result) continue; // stale entry
            symbols[left] = top.result;
            alive[right] = 0;
            next[left] = next[right];
            if (next[left] >= 0) prev[static_cast<std::size_t>(next[left])] = top.pos;
            if (prev[left] >= 0) offer(prev[left]);
            offer(top.pos);
        }
        for (int32_t i = 0; i >= 0; i = next[static_cast<std::size_t>(i)])
            ids.push_back(symbols[static_cast<std::size_t>(i)]);
    } else if (n == 1) {
        ids.push_back(symbols[0]);
    }
}

} // namespace attnlab::model::detail

#include "tokenizer_bpe.h"

#include <queue>
#include <stdexcept>

#include "tokenizer_text.h"

namespace attnlab::model::detail {

namespace {

uint64_t pairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
}

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
    m_byteIds = byteTokenIds(m_vocab);
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

void Bpe::tokenizeWord(std::string_view word, std::vector<int32_t>& ids) const {
    if (m_options.ignoreMerges) {
        if (const auto it = m_vocab.find(word); it != m_vocab.end()) {
            ids.push_back(it->second);
            return;
        }
    }
    mergeWord(word, ids);
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

std::unique_ptr<Model> makeBpeModel(const Json& model, const std::string& path) {
    refuseUnknownKeys(model, path,
                      {"dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix",
                       "fuse_unk", "byte_fallback", "ignore_merges", "vocab", "merges"});
    if (const auto dropout = model.find("dropout");
        dropout != model.end() && !dropout->is_null() &&
        !(dropout->is_number() && dropout->get<double>() == 0.0))
        formatError(path + ".dropout", "BPE dropout is random at encode time and not supported");

    Vocabulary vocab = readVocabularyObject(model, path);
    const std::string mergesPath = path + ".merges";
    const Json& mergesJson = requireMember(model, path, "merges");
    if (!mergesJson.is_array()) formatError(mergesPath, "must be an array");
    // Views into the parsed JSON, which outlives the BPE's construction.
    std::vector<std::pair<std::string_view, std::string_view>> merges;
    merges.reserve(mergesJson.size());
    for (std::size_t i = 0; i < mergesJson.size(); ++i) {
        const Json& entry = mergesJson[i];
        const auto where = [&] { return mergesPath + "[" + std::to_string(i) + "]"; };
        if (entry.is_string()) {
            const std::string& line = entry.get_ref<const std::string&>();
            if (line.rfind("#version", 0) == 0) continue;
            const std::size_t space = line.find(' ');
            if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
                formatError(where(), "must be \"left right\" with one space, got '" + line + "'");
            const std::string_view view = line;
            merges.emplace_back(view.substr(0, space), view.substr(space + 1));
        } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() &&
                   entry[1].is_string()) {
            merges.emplace_back(entry[0].get_ref<const std::string&>(),
                                entry[1].get_ref<const std::string&>());
        } else {
            formatError(where(), "must be \"left right\" or [left, right]");
        }
    }

    BpeOptions options;
    options.unkToken = optionalString(model, path, "unk_token");
    options.continuingSubwordPrefix =
        optionalString(model, path, "continuing_subword_prefix").value_or("");
    options.endOfWordSuffix = optionalString(model, path, "end_of_word_suffix").value_or("");
    options.fuseUnk = optionalBool(model, path, "fuse_unk", false);
    options.byteFallback = optionalBool(model, path, "byte_fallback", false);
    options.ignoreMerges = optionalBool(model, path, "ignore_merges", false);
    try {
        return std::make_unique<Bpe>(std::move(vocab), merges, std::move(options));
    } catch (const std::invalid_argument& error) {
        formatError(path, error.what());
    }
}

} // namespace attnlab::model::detail

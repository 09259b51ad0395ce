#pragma once
// The BPE model of tokenizer.json (internal): Hugging Face tokenizers' models/bpe, word by
// word. A word's characters become vocabulary ids (unknown characters through byte fallback
// or the unk token), then the pair of adjacent symbols with the lowest merge rank is merged
// until no pair has a rank (ties go to the leftmost pair). O(n log n) per word.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer_model.h"

namespace attnlab::model::detail {

struct BpeOptions {
    std::optional<std::string> unkToken;
    std::string continuingSubwordPrefix;
    std::string endOfWordSuffix;
    bool fuseUnk = false;
    bool byteFallback = false;
    bool ignoreMerges = false;
};

class Bpe final : public Model {
public:
    /// `merges` are (left, right) pieces in rank order (views that need to live only during
    /// the call); throws std::invalid_argument naming the index of a merge whose pieces or
    /// result are not in the vocabulary.
    Bpe(Vocabulary vocab, const std::vector<std::pair<std::string_view, std::string_view>>& merges,
        BpeOptions options);

    const Vocabulary& vocabulary() const override { return m_vocab; }
    std::string_view kind() const override { return "BPE"; }
    const BpeOptions& options() const { return m_options; }

private:
    void tokenizeWord(std::string_view word, std::vector<int32_t>& ids) const override;
    struct Merge {
        uint32_t rank;
        int32_t result;
    };
    void mergeWord(std::string_view word, std::vector<int32_t>& ids) const;
    const Merge* findMerge(int32_t left, int32_t right) const;

    Vocabulary m_vocab;
    std::unordered_map<uint64_t, Merge> m_merges;
    BpeOptions m_options;
    std::optional<int32_t> m_unkId;
    std::vector<int32_t> m_byteIds; // "<0x41>" ... when byte fallback is on; -1 where absent
};

} // namespace attnlab::model::detail

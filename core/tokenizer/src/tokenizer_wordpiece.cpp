// The WordPiece model of tokenizer.json, after Hugging Face tokenizers' models/wordpiece
// (BERT): a word is split greedily into the longest pieces of the vocabulary from the left,
// pieces after the first spelled with the continuing-subword prefix ("##"); a word with a
// part no piece covers, or longer than max_input_chars_per_word characters, is the unk token.

#include <limits>

#include "tokenizer_model.h"
#include "tokenizer_text.h"

namespace attnlab::model::detail {

namespace {

class WordPiece final : public Model {
public:
    WordPiece(const Json& config, const std::string& path)
        : m_vocab(readVocabularyObject(config, path)) {
        refuseUnknownKeys(
            config, path,
            {"unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"});
        m_unkId =
            requireUnkToken(m_vocab, optionalString(config, path, "unk_token").value_or("[UNK]"),
                            path + ".unk_token");
        m_prefix = optionalString(config, path, "continuing_subword_prefix").value_or("##");
        if (const auto max = config.find("max_input_chars_per_word");
            max != config.end() && !max->is_null())
            m_maxChars = static_cast<std::size_t>(requireInteger(
                *max, path + ".max_input_chars_per_word", 0, std::numeric_limits<int64_t>::max()));
    }

    const Vocabulary& vocabulary() const override { return m_vocab; }
    std::string_view kind() const override { return "WordPiece"; }

private:
    void tokenizeWord(std::string_view word, std::vector<int32_t>& ids) const override {
        std::size_t characters = 0;
        for (std::size_t pos = 0; pos < word.size(); ++characters)
            pos += utf8CharLength(static_cast<unsigned char>(word[pos]));
        if (characters > m_maxChars) {
            ids.push_back(m_unkId);
            return;
        }
        const std::size_t mark = ids.size();
        std::string candidate;
        for (std::size_t start = 0; start < word.size();) {
            // The longest piece from `start`, shortening one character at a time.
            std::size_t end = word.size();
            int32_t found = -1;
            while (start < end) {
                std::string_view piece = word.substr(start, end - start);
                if (start > 0) {
                    candidate.assign(m_prefix);
                    candidate.append(piece);
                    piece = candidate;
                }
                if (const auto it = m_vocab.find(piece); it != m_vocab.end()) {
                    found = it->second;
                    break;
                }
                do
                    --end;
                while (end > start && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80);
            }
            if (found < 0) {
                ids.resize(mark);
                ids.push_back(m_unkId);
                return;
            }
            ids.push_back(found);
            start = end;
        }
    }

    Vocabulary m_vocab;
    std::string m_prefix;
    std::size_t m_maxChars = 100;
    int32_t m_unkId = 0;
};

} // namespace

std::unique_ptr<Model> makeWordPieceModel(const Json& config, const std::string& path) {
    return std::make_unique<WordPiece>(config, path);
}

} // namespace attnlab::model::detail

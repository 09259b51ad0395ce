// The model stage: which model a tokenizer.json names, the vocabulary reading the models
// share, and WordLevel (Hugging Face tokenizers' models/mod.rs and models/wordlevel).

#include "tokenizer_model.h"

#include <array>
#include <cstdio>

namespace attnlab::model::detail {

namespace {

/// WordLevel: a word is one token, or the unk token when the vocabulary lacks it.
class WordLevel final : public Model {
public:
    WordLevel(const Json& config, const std::string& path)
        : m_vocab(readVocabularyObject(config, path)) {
        refuseUnknownKeys(config, path, {"vocab", "unk_token"});
        m_unkId =
            requireUnkToken(m_vocab, requireString(config, path, "unk_token"), path + ".unk_token");
    }
    const Vocabulary& vocabulary() const override { return m_vocab; }
    std::string_view kind() const override { return "WordLevel"; }

private:
    void tokenizeWord(std::string_view word, std::vector<int32_t>& ids) const override {
        const auto it = m_vocab.find(word);
        ids.push_back(it == m_vocab.end() ? m_unkId : it->second);
    }

    Vocabulary m_vocab;
    int32_t m_unkId = 0;
};

/// A model object without "type" (files from before it): told apart by its keys, in the
/// order Hugging Face tries them.
std::string guessModelType(const Json& config) {
    if (config.contains("merges")) return "BPE";
    if (config.contains("continuing_subword_prefix") && config.contains("max_input_chars_per_word"))
        return "WordPiece";
    if (const auto vocab = config.find("vocab"); vocab != config.end()) {
        if (vocab->is_array()) return "Unigram";
        if (config.contains("unk_token")) return "WordLevel";
    }
    return "";
}

} // namespace

void Model::tokenize(std::string_view word, std::vector<int32_t>& ids, WordCache& cache) const {
    if (word.empty()) return;
    if (const auto it = cache.find(word); it != cache.end()) {
        ids.insert(ids.end(), it->second.begin(), it->second.end());
        return;
    }
    const std::size_t first = ids.size();
    tokenizeWord(word, ids);
    if (word.size() <= kMaxCachedWordBytes)
        cache.emplace(
            std::string(word),
            std::vector<int32_t>(ids.begin() + static_cast<std::ptrdiff_t>(first), ids.end()));
}

int32_t requireUnkToken(const Vocabulary& vocab, const std::string& unk, const std::string& path) {
    const auto it = vocab.find(unk);
    if (it == vocab.end())
        formatError(path, "'" + unk +
                              "' is not in the vocabulary (Hugging Face fails on any word it "
                              "cannot tokenize without it)");
    return it->second;
}

Vocabulary readVocabularyObject(const Json& config, const std::string& path) {
    return readVocabulary(requireMember(config, path, "vocab"), path + ".vocab");
}

Vocabulary readVocabulary(const Json& vocabJson, const std::string& path) {
    if (!vocabJson.is_object()) formatError(path, "must be an object of token: id");
    Vocabulary vocab;
    vocab.reserve(vocabJson.size());
    for (const auto& [piece, idJson] : vocabJson.items()) {
        const int64_t id = requireInteger(idJson, path + "[\"" + piece + "\"]", 0, kMaxTokenId);
        vocab.emplace(piece, static_cast<int32_t>(id));
    }
    return vocab;
}

std::vector<int32_t> byteTokenIds(const Vocabulary& vocab) {
    std::vector<int32_t> ids(256, -1);
    for (int b = 0; b < 256; ++b) {
        std::array<char, 8> name{};
        std::snprintf(name.data(), name.size(), "<0x%02X>", static_cast<unsigned>(b));
        if (const auto it = vocab.find(std::string_view(name.data())); it != vocab.end())
            ids[static_cast<std::size_t>(b)] = it->second;
    }
    return ids;
}

std::unique_ptr<Model> makeModel(const Json& config, const std::string& path) {
    if (!config.is_object()) formatError(path, "must be an object");
    const std::string type = optionalString(config, path, "type").value_or(guessModelType(config));
    if (type == "BPE") return makeBpeModel(config, path);
    if (type == "WordPiece") return makeWordPieceModel(config, path);
    if (type == "Unigram") return makeUnigramModel(config, path);
    if (type == "WordLevel") return std::make_unique<WordLevel>(config, path);
    formatError(path + ".type", "the model '" + type +
                                    "' is not supported (supported: BPE, WordPiece, "
                                    "Unigram, WordLevel)");
}

} // namespace attnlab::model::detail

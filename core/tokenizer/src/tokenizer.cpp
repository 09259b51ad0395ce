// tokenizer.json: added tokens -> normalizer -> pre-tokenizer -> model -> post-processor, after
// Hugging Face tokenizers (tokenizer/mod.rs encode_single_sequence, added_vocabulary.rs).
// SentencePiece .model files and Marian folders fill the same parts (tokenizer_parts.h) with a
// model and decoder that run libsentencepiece (tokenizer_sentencepiece.cpp).

#include "attnlab/tokenizer/tokenizer.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

#include "attnlab/base/check.h"
#include "attnlab/io/json_read.h"
#include "tokenizer_model.h"
#include "tokenizer_parts.h"
#include "tokenizer_pipeline.h"
#include "tokenizer_sentencepiece.h"
#include "tokenizer_text.h"

namespace attnlab::model {

using namespace detail;

namespace {

/// tokenizer.json files are tens of megabytes; a gigabyte is not a tokenizer.
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 30;
constexpr int64_t kMaxId = kMaxTokenId;

/// A run of text on its way through the pipeline, or an added token found in it.
struct Segment {
    std::string text;
    int32_t added = -1; ///< index into the added tokens, or -1 for text
    bool atTextStart = false;
};

/// Finds added tokens in text, leftmost first and longest at a place (Hugging Face's
/// Aho-Corasick with MatchKind::LeftmostLongest), honouring single_word, lstrip and rstrip.
class AddedMatcher {
public:
    void add(std::string content, int32_t index) {
        if (content.empty()) return;
        const auto first = static_cast<unsigned char>(content[0]);
        m_contents.push_back(std::move(content));
        m_indices.push_back(index);
        m_byFirstByte[first].push_back(static_cast<int32_t>(m_contents.size() - 1));
    }
    void finish() {
        for (auto& bucket : m_byFirstByte)
            std::stable_sort(bucket.begin(), bucket.end(), [&](int32_t a, int32_t b) {
                return m_contents[static_cast<std::size_t>(a)].size() >
                       m_contents[static_cast<std::size_t>(b)].size();
            });
    }
    bool empty() const { return m_contents.empty(); }

    /// Splits `text` into text segments and added-token segments, in order.
    void split(std::string text, bool atTextStart, const std::vector<AddedToken>& tokens,
               std::vector<Segment>& out) const {
        if (m_contents.empty()) {
            out.push_back({std::move(text), -1, atTextStart});
            return;
        }
        std::size_t taken = 0; // text before this is already in `out`
        std::size_t pos = 0;
        while (pos < text.size()) {
            const int32_t found = longestAt(text, pos);
            if (found < 0) {
                ++pos;
                continue;
            }
            const int32_t index = m_indices[static_cast<std::size_t>(found)];
            const AddedToken& token = tokens[static_cast<std::size_t>(index)];
            std::size_t begin = pos;
            std::size_t end = pos + m_contents[static_cast<std::size_t>(found)].size();
            pos = end;
            if (token.singleWord &&
                !(isWordBoundary(text, begin) && isWordBoundaryAfter(text, end)))
                continue;
            if (token.lstrip) begin = std::max(spaceRunStart(text, begin), taken);
            if (token.rstrip) end = spaceRunEnd(text, end);
            if (taken < begin)
                out.push_back({text.substr(taken, begin - taken), -1, atTextStart && taken == 0});
            out.push_back({text.substr(begin, end - begin), index, false});
            taken = end;
            pos = std::max(pos, end);
        }
        if (taken < text.size()) out.push_back({text.substr(taken), -1, atTextStart && taken == 0});
    }

private:
    int32_t longestAt(const std::string& text, std::size_t pos) const {
        for (const int32_t candidate : m_byFirstByte[static_cast<unsigned char>(text[pos])]) {
            const std::string& content = m_contents[static_cast<std::size_t>(candidate)];
            if (text.compare(pos, content.size(), content) == 0) return candidate;
        }
        return -1;
    }
    static char32_t codePointBefore(const std::string& text, std::size_t pos) {
        std::size_t start = pos - 1;
        while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
            --start;
        return nextCodePoint(text, start);
    }
    /// No word character right before `pos` (\w$ does not match text[..pos]).
    static bool isWordBoundary(const std::string& text, std::size_t pos) {
        return pos == 0 || !isWordChar(codePointBefore(text, pos));
    }
    static bool isWordBoundaryAfter(const std::string& text, std::size_t pos) {
        if (pos >= text.size()) return true;
        std::size_t at = pos;
        return !isWordChar(nextCodePoint(text, at));
    }
    static std::size_t spaceRunStart(const std::string& text, std::size_t pos) {
        while (pos > 0) {
            std::size_t start = pos - 1;
            while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
                --start;
            std::size_t at = start;
            if (!isWhiteSpace(nextCodePoint(text, at))) break;
            pos = start;
        }
        return pos;
    }
    static std::size_t spaceRunEnd(const std::string& text, std::size_t pos) {
        while (pos < text.size()) {
            std::size_t next = pos;
            if (!isWhiteSpace(nextCodePoint(text, next))) break;
            pos = next;
        }
        return pos;
    }

    std::vector<std::string> m_contents;
    std::vector<int32_t> m_indices;
    std::array<std::vector<int32_t>, 256> m_byFirstByte;
};

} // namespace

namespace detail {

std::string readWholeFile(const std::filesystem::path& path, const std::string& name) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error))
        throw FormatError(name + ": not a readable file");
    const std::uintmax_t size = std::filesystem::file_size(path, error);
    if (error) throw FormatError(name + ": cannot read its size (" + error.message() + ")");
    if (size > kMaxFileBytes)
        throw FormatError(name + ": " + std::to_string(size) +
                          " bytes is too large for a tokenizer file (at most 1 GiB)");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FormatError(name + ": cannot open it");
    std::string content(static_cast<std::size_t>(size), '\0');
    in.read(content.data(), static_cast<std::streamsize>(size));
    if (in.gcount() != static_cast<std::streamsize>(size))
        throw FormatError(name + ": could read only " + std::to_string(in.gcount()) + " of " +
                          std::to_string(size) + " bytes");
    return content;
}

// The core's one JSON reader (attnlab/io/json_read.h); its message names the file.
Json parseJsonFile(std::string_view text, const std::string& name) {
    Result<Json> parsed = attnlab::detail::parseJson(text);
    if (!parsed) throw FormatError(name + ": " + parsed.error());
    return std::move(*parsed);
}

std::optional<std::string> configToken(const Json& config, const char* key) {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return std::nullopt;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object()) return optionalString(*it, key, "content");
    formatError(key, "must be a string, an object with content, or null");
}

} // namespace detail

struct Tokenizer::Impl {
    std::string source;
    std::unique_ptr<Normalizer> normalizer;
    std::unique_ptr<PreTokenizer> preTokenizer;
    std::unique_ptr<Model> model;
    std::unique_ptr<Decoder> decoder;
    std::vector<TemplateItem> singleTemplate;
    std::vector<AddedToken> added;
    AddedMatcher rawMatcher;         ///< added tokens matched in the text as given
    AddedMatcher normalizedMatcher;  ///< added tokens with normalized: true
    std::vector<std::string> pieces; ///< id -> raw piece
    std::vector<uint8_t> known;      ///< id -> whether a token has this id
    std::vector<uint8_t> special;    ///< id -> added special token
    Vocabulary addedIds;             ///< added token content -> id
    std::optional<int64_t> bos, eos;

    void encodeText(std::string text, bool atTextStart, std::vector<int32_t>& ids,
                    std::vector<uint8_t>& specialMask, WordCache& cache) const;
    std::string displayOf(int32_t id) const;
};

void Tokenizer::Impl::encodeText(std::string text, bool atTextStart, std::vector<int32_t>& ids,
                                 std::vector<uint8_t>& specialMask, WordCache& cache) const {
    if (normalizer) normalizer->normalize(text);
    if (text.empty()) return;
    std::vector<Segment> segments;
    normalizedMatcher.split(std::move(text), atTextStart, added, segments);
    std::vector<Piece> words;
    for (Segment& segment : segments) {
        if (segment.added >= 0) {
            const AddedToken& token = added[static_cast<std::size_t>(segment.added)];
            ids.push_back(token.id);
            specialMask.push_back(token.special ? 1 : 0);
            continue;
        }
        words.clear();
        words.push_back({std::move(segment.text), segment.atTextStart});
        if (preTokenizer) preTokenizer->split(words);
        const std::size_t before = ids.size();
        for (const Piece& word : words)
            model->tokenize(word.text, ids, cache);
        specialMask.resize(specialMask.size() + (ids.size() - before), 0);
    }
}

std::string Tokenizer::Impl::displayOf(int32_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= pieces.size() ||
        !known[static_cast<std::size_t>(id)])
        return {};
    const std::string& piece = pieces[static_cast<std::size_t>(id)];
    // Special tokens show as they are; other added tokens (Gemma's "▁▁") go through the decoder
    // as decode() takes them.
    if (special[static_cast<std::size_t>(id)] || !decoder) return displayUtf8(piece);
    std::vector<std::string> parts{piece};
    decoder->decode(parts, true);
    std::string joined;
    for (const std::string& part : parts)
        joined += part;
    return displayUtf8(joined);
}

namespace {

/// tokenizer.json's stages, each read from its key.
TokenizerParts readJsonParts(std::string_view jsonText, const std::string& name) {
    const Json root = parseJsonFile(jsonText, name);
    if (!root.is_object()) throw FormatError(name + ": must hold a JSON object");

    refuseUnknownKeys(root, "",
                      {"version", "truncation", "padding", "added_tokens", "normalizer",
                       "pre_tokenizer", "model", "post_processor", "decoder"});
    TokenizerParts parts;
    // The model: BPE, WordPiece, Unigram or WordLevel.
    parts.model = makeModel(requireMember(root, "", "model"), "model");

    // Added tokens.
    if (const auto it = root.find("added_tokens"); it != root.end() && !it->is_null()) {
        if (!it->is_array()) formatError("added_tokens", "must be an array");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const Json& entry = (*it)[i];
            const std::string path = "added_tokens[" + std::to_string(i) + "]";
            refuseUnknownKeys(
                entry, path,
                {"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"});
            AddedToken token;
            token.id = static_cast<int32_t>(
                requireInteger(requireMember(entry, path, "id"), path + ".id", 0, kMaxId));
            token.content = requireString(entry, path, "content");
            if (token.content.empty()) formatError(path + ".content", "is empty");
            token.singleWord = optionalBool(entry, path, "single_word", false);
            token.lstrip = optionalBool(entry, path, "lstrip", false);
            token.rstrip = optionalBool(entry, path, "rstrip", false);
            token.special = optionalBool(entry, path, "special", false);
            token.normalized = optionalBool(entry, path, "normalized", !token.special);
            parts.added.push_back(std::move(token));
        }
    }

    // Normalizer, pre-tokenizer, post-processor and decoder.
    parts.normalizer = makeNormalizer(root.value("normalizer", Json()), "normalizer");
    parts.preTokenizer = makePreTokenizer(root.value("pre_tokenizer", Json()), "pre_tokenizer");
    if (const auto processor =
            makePostProcessor(root.value("post_processor", Json()), "post_processor"))
        parts.singleTemplate = processor->singleTemplate();
    parts.decoder = makeDecoder(root.value("decoder", Json()), "decoder");
    return parts;
}

/// Indexes `parts` into the tables that encode(), decode() and the lookups share. Throws
/// FormatError when the ids do not hold together.
std::shared_ptr<const Tokenizer::Impl> assemble(TokenizerParts parts, const std::string& name) {
    auto impl = std::make_shared<Tokenizer::Impl>();
    impl->source = name;
    int64_t maxId = -1;
    for (const auto& [piece, id] : parts.model->vocabulary())
        maxId = std::max<int64_t>(maxId, id);
    for (const AddedToken& token : parts.added)
        maxId = std::max<int64_t>(maxId, token.id);

    // Ids index tables: refuse a file whose ids are so sparse that the tables would be mostly
    // holes (a hostile id of 2^31 must not allocate gigabytes).
    const auto count = static_cast<int64_t>(parts.model->vocabulary().size() + parts.added.size());
    if (maxId >= 2 * count + 1024)
        formatError(parts.vocabularyKey, "the largest id " + std::to_string(maxId) +
                                             " is far beyond the " + std::to_string(count) +
                                             " tokens");
    const auto size = static_cast<std::size_t>(maxId + 1);
    impl->pieces.assign(size, std::string());
    impl->known.assign(size, 0);
    impl->special.assign(size, 0);
    for (const auto& [piece, id] : parts.model->vocabulary()) {
        auto& slot = impl->pieces[static_cast<std::size_t>(id)];
        if (!impl->known[static_cast<std::size_t>(id)] || piece < slot) slot = piece;
        impl->known[static_cast<std::size_t>(id)] = 1;
    }
    for (const int32_t id : parts.specialIds)
        if (id >= 0 && static_cast<std::size_t>(id) < size)
            impl->special[static_cast<std::size_t>(id)] = 1;

    // The normalizer also rewrites normalized added tokens.
    impl->normalizer = std::move(parts.normalizer);
    impl->preTokenizer = std::move(parts.preTokenizer);
    impl->added = std::move(parts.added);
    for (std::size_t i = 0; i < impl->added.size(); ++i) {
        AddedToken& token = impl->added[i];
        const auto index = static_cast<int32_t>(i);
        impl->pieces[static_cast<std::size_t>(token.id)] = token.content;
        impl->known[static_cast<std::size_t>(token.id)] = 1;
        impl->special[static_cast<std::size_t>(token.id)] = token.special ? 1 : 0;
        impl->addedIds[token.content] = token.id;
        if (token.normalized) {
            std::string normalizedContent = token.content;
            if (impl->normalizer) impl->normalizer->normalize(normalizedContent);
            impl->normalizedMatcher.add(std::move(normalizedContent), index);
        } else {
            impl->rawMatcher.add(token.content, index);
        }
    }
    impl->rawMatcher.finish();
    impl->normalizedMatcher.finish();

    // Post-processor and decoder.
    impl->singleTemplate = std::move(parts.singleTemplate);
    for (const TemplateItem& item : impl->singleTemplate)
        for (const int32_t id : item.ids)
            if (id < 0 || static_cast<std::size_t>(id) >= size ||
                !impl->known[static_cast<std::size_t>(id)])
                formatError("post_processor", "the template's id " + std::to_string(id) +
                                                  " is not a token of this vocabulary");
    impl->decoder = std::move(parts.decoder);
    impl->model = std::move(parts.model);

    // bos/eos as the file names them, else from the template (for tokenizer.json,
    // tokenizer_config.json, read by fromFile, may override).
    impl->bos = parts.bos;
    impl->eos = parts.eos;
    const auto sequenceAt = std::find_if(impl->singleTemplate.begin(), impl->singleTemplate.end(),
                                         [](const TemplateItem& item) { return item.isSequence; });
    if (!impl->bos && sequenceAt != impl->singleTemplate.begin() &&
        sequenceAt != impl->singleTemplate.end() && !impl->singleTemplate.front().ids.empty())
        impl->bos = impl->singleTemplate.front().ids.front();
    if (!impl->eos && sequenceAt != impl->singleTemplate.end() &&
        sequenceAt + 1 != impl->singleTemplate.end() && !impl->singleTemplate.back().ids.empty())
        impl->eos = impl->singleTemplate.back().ids.back();
    return impl;
}

/// Runs a loader, turning whatever it throws into one line that names the file: a
/// FormatError's message (with `name` put first unless `messagesNameTheirFile`), running out
/// of memory, or anything else (libsentencepiece's darts-clone throws on a corrupt model).
template <typename Load>
Result<std::shared_ptr<const Tokenizer::Impl>>
loadGuarded(const std::string& name, bool messagesNameTheirFile, Load&& load) {
    try {
        return load();
    } catch (const FormatError& error) {
        const std::string message = error.what();
        if (messagesNameTheirFile || message.rfind(name + ":", 0) == 0) return Error{message};
        return Error{name + ": " + message};
    } catch (const std::bad_alloc&) {
        return Error{name + ": not enough memory to load this tokenizer"};
    } catch (const std::exception& error) {
        return Error{name + ": " + error.what()};
    } catch (...) {
        return Error{name + ": could not be read (an unknown error)"};
    }
}

/// SentencePiece model files go by these extensions: `tokenizer.model` (Llama, T5, ...),
/// `spiece.model`, Marian's `source.spm` / `target.spm`.
bool isSentencePieceFileName(const std::filesystem::path& file) {
    const std::string extension = file.extension().string();
    return extension == ".model" || extension == ".spm";
}

} // namespace

Tokenizer::Tokenizer(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}

Result<Tokenizer> Tokenizer::fromFile(const std::string& path) {
    const std::filesystem::path file(path);
    std::error_code error;
    if (std::filesystem::is_directory(file, error)) return fromFolder(path, TokenizerSide::Source);
    if (!std::filesystem::exists(file, error)) return Error{path + ": no such file"};
    if (isSentencePieceFileName(file)) {
        auto loaded = loadGuarded(path, false, [&] {
            return assemble(sentencePieceParts(readWholeFile(file, path)), path);
        });
        if (!loaded) return Error{loaded.error()};
        return Tokenizer(std::move(loaded).value());
    }
    try {
        const std::string name = file.string();
        const std::string text = readWholeFile(file, name);
        Result<Tokenizer> loaded = fromJson(text, name);
        if (!loaded) return loaded;

        // tokenizer_config.json beside it names the bos and eos tokens.
        const std::filesystem::path configPath = file.parent_path() / "tokenizer_config.json";
        if (std::filesystem::is_regular_file(configPath, error)) {
            const std::string configName = configPath.string();
            const Json config = parseJsonFile(readWholeFile(configPath, configName), configName);
            if (!config.is_object()) return Error{configName + ": must hold a JSON object"};
            auto impl = std::const_pointer_cast<Impl>(loaded->m_impl);
            try {
                if (const auto bos = configToken(config, "bos_token"))
                    if (const auto id = loaded->tokenToId(*bos)) impl->bos = *id;
                if (const auto eos = configToken(config, "eos_token"))
                    if (const auto id = loaded->tokenToId(*eos)) impl->eos = *id;
            } catch (const FormatError& problem) {
                return Error{configName + ": " + problem.what()};
            }
        }
        return loaded;
    } catch (const FormatError& problem) {
        return Error{problem.what()};
    } catch (const std::bad_alloc&) {
        return Error{path + ": not enough memory to load this tokenizer"};
    } catch (const std::exception& problem) {
        return Error{path + ": " + problem.what()};
    }
}

Result<Tokenizer> Tokenizer::fromFolder(const std::string& dir, TokenizerSide side) {
    const std::filesystem::path folder(dir);
    std::error_code error;
    if (!std::filesystem::is_directory(folder, error))
        return Error{
            dir + (std::filesystem::exists(folder, error) ? ": not a folder" : ": no such folder")};
    if (!folderHasTokenizer(dir))
        return Error{dir + ": no tokenizer.json in this folder (nor Marian's source.spm, "
                           "target.spm and vocab.json)"};
    // tokenizer.json serves both sides (T5, BART and most encoder-decoders share one).
    if (std::filesystem::exists(folder / "tokenizer.json", error))
        return fromFile((folder / "tokenizer.json").string());
    auto loaded = loadGuarded(dir, true, [&] {
        return assemble(marianParts(folder, side == TokenizerSide::Target), dir);
    });
    if (!loaded) return Error{loaded.error()};
    return Tokenizer(std::move(loaded).value());
}

bool Tokenizer::folderHasTokenizer(const std::string& dir) {
    const std::filesystem::path folder(dir);
    std::error_code error;
    return std::filesystem::exists(folder / "tokenizer.json", error) || isMarianFolder(folder);
}

Result<Tokenizer> Tokenizer::fromSentencePiece(std::string_view bytes, const std::string& name) {
    auto loaded =
        loadGuarded(name, false, [&] { return assemble(sentencePieceParts(bytes), name); });
    if (!loaded) return Error{loaded.error()};
    return Tokenizer(std::move(loaded).value());
}

Result<Tokenizer> Tokenizer::fromJson(std::string_view jsonText, const std::string& name) {
    auto loaded =
        loadGuarded(name, false, [&] { return assemble(readJsonParts(jsonText, name), name); });
    if (!loaded) return Error{loaded.error()};
    return Tokenizer(std::move(loaded).value());
}

Encoding Tokenizer::encode(std::string_view text, bool addSpecialTokens) const {
    const Impl& impl = *m_impl;
    std::vector<int32_t> ids;
    std::vector<uint8_t> specialMask;
    ids.reserve(text.size() / 3 + 4);
    specialMask.reserve(ids.capacity());
    WordCache cache;

    std::vector<Segment> segments;
    impl.rawMatcher.split(repairUtf8(text), true, impl.added, segments);
    for (Segment& segment : segments) {
        if (segment.added >= 0) {
            const AddedToken& token = impl.added[static_cast<std::size_t>(segment.added)];
            ids.push_back(token.id);
            specialMask.push_back(token.special ? 1 : 0);
        } else {
            impl.encodeText(std::move(segment.text), segment.atTextStart, ids, specialMask, cache);
        }
    }

    Encoding encoding;
    if (addSpecialTokens && !impl.singleTemplate.empty()) {
        for (const TemplateItem& item : impl.singleTemplate) {
            if (item.isSequence) {
                encoding.ids.insert(encoding.ids.end(), ids.begin(), ids.end());
                encoding.special.insert(encoding.special.end(), specialMask.begin(),
                                        specialMask.end());
            } else {
                encoding.ids.insert(encoding.ids.end(), item.ids.begin(), item.ids.end());
                encoding.special.resize(encoding.special.size() + item.ids.size(), 1);
            }
        }
    } else {
        encoding.ids.assign(ids.begin(), ids.end());
        encoding.special = std::move(specialMask);
    }
    encoding.tokens.reserve(encoding.ids.size());
    encoding.display.reserve(encoding.ids.size());
    for (const int64_t id : encoding.ids) {
        encoding.tokens.push_back(impl.pieces[static_cast<std::size_t>(id)]);
        encoding.display.push_back(impl.displayOf(static_cast<int32_t>(id)));
    }
    return encoding;
}

int64_t Tokenizer::vocabSize() const {
    return static_cast<int64_t>(m_impl->pieces.size());
}

std::optional<std::string> Tokenizer::idToToken(int64_t id) const {
    if (id < 0 || id >= vocabSize() || !m_impl->known[static_cast<std::size_t>(id)])
        return std::nullopt;
    return m_impl->pieces[static_cast<std::size_t>(id)];
}

std::optional<int64_t> Tokenizer::tokenToId(std::string_view token) const {
    if (const auto it = m_impl->addedIds.find(token); it != m_impl->addedIds.end())
        return it->second;
    const auto& vocab = m_impl->model->vocabulary();
    if (const auto it = vocab.find(token); it != vocab.end()) return it->second;
    return std::nullopt;
}

std::string Tokenizer::displayToken(int64_t id) const {
    if (id < 0 || id >= vocabSize()) return {};
    return m_impl->displayOf(static_cast<int32_t>(id));
}

std::string Tokenizer::decode(std::span<const int64_t> ids, bool skipSpecialTokens) const {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (const int64_t id : ids) {
        if (id < 0 || id >= vocabSize() || !m_impl->known[static_cast<std::size_t>(id)]) continue;
        if (skipSpecialTokens && m_impl->special[static_cast<std::size_t>(id)]) continue;
        tokens.push_back(m_impl->pieces[static_cast<std::size_t>(id)]);
    }
    std::string text;
    if (m_impl->decoder) {
        m_impl->decoder->decode(tokens, false);
        for (const std::string& token : tokens)
            text += token;
    } else {
        // No decoder: Hugging Face joins the tokens with spaces.
        for (std::size_t i = 0; i < tokens.size(); ++i)
            text += (i ? " " : "") + tokens[i];
    }
    return repairUtf8(text);
}

std::optional<int64_t> Tokenizer::bosId() const {
    return m_impl->bos;
}
std::optional<int64_t> Tokenizer::eosId() const {
    return m_impl->eos;
}

bool Tokenizer::isSpecial(int64_t id) const {
    return id >= 0 && id < vocabSize() && m_impl->special[static_cast<std::size_t>(id)];
}

const std::string& Tokenizer::source() const {
    return m_impl->source;
}

std::string Tokenizer::kind() const {
    return m_impl->model ? std::string(m_impl->model->kind()) : std::string();
}

} // namespace attnlab::model

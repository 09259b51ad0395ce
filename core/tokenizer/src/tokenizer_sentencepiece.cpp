// SentencePiece model files through libsentencepiece, the reference implementation, and
// Marian's tokenizer folder on top of them (transformers' models/marian/tokenization_marian.py).

#include "tokenizer_sentencepiece.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <stdexcept>
#include <system_error>

#include "tokenizer_precompiled.h"
#include "tokenizer_text.h"

// libsentencepiece's switch for its LOG() lines (src/common.h: INFO 0, WARNING 1, ERROR 2,
// FATAL 3). The library exports it but its installed header does not declare it.
namespace sentencepiece::logging {
void SetMinLogLevel(int level);
} // namespace sentencepiece::logging

namespace attnlab::model::detail {
namespace {

using Processor = sentencepiece::SentencePieceProcessor;
namespace fs = std::filesystem;

// ---- what is checked before libsentencepiece reads the bytes ---------------------------------

// ModelProto's fields that the checks read (sentencepiece_model.proto).
constexpr uint64_t kPiecesField = 1;           // repeated SentencePiece pieces
constexpr uint64_t kTrainerSpecField = 2;      // TrainerSpec trainer_spec
constexpr uint64_t kNormalizerSpecField = 3;   // NormalizerSpec normalizer_spec
constexpr uint64_t kDenormalizerSpecField = 5; // NormalizerSpec denormalizer_spec
constexpr uint64_t kPieceField = 1;            // SentencePiece.piece
constexpr uint64_t kCharsmapField = 2;         // NormalizerSpec.precompiled_charsmap
// The fixed result arrays libsentencepiece gives darts-clone's commonPrefixSearch:
// Normalizer::kMaxTrieResultsSize (the charsmap) and PrefixMatcher's kResultSize (the trie of
// user-defined pieces, which are matched before the charsmap).
constexpr std::size_t kMaxCharsmapMatches = 32;
constexpr std::size_t kMaxPieceMatches = 64;

bool readVarint(std::string_view bytes, std::size_t& pos, uint64_t& value) {
    value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (pos >= bytes.size()) return false;
        const auto byte = static_cast<unsigned char>(bytes[pos++]);
        value |= static_cast<uint64_t>(byte & 0x7F) << shift;
        if ((byte & 0x80) == 0) return true;
    }
    return false;
}

/// Calls `visit(fieldNumber, bytes)` for each length-delimited field of a protobuf message in
/// its wire format, skipping the others. This reads no model: libsentencepiece does that; it
/// only finds the few byte strings the library would walk unchecked. False where the bytes are
/// not the wire format (protobuf would refuse them too) or hold groups, which no SentencePiece
/// model has.
template <typename Visit> bool forEachLengthDelimited(std::string_view message, Visit&& visit) {
    std::size_t pos = 0;
    while (pos < message.size()) {
        uint64_t tag = 0, value = 0;
        if (!readVarint(message, pos, tag) || (tag >> 3) == 0) return false;
        switch (tag & 7) {
        case 0: // varint
            if (!readVarint(message, pos, value)) return false;
            break;
        case 1: // fixed64
            if (message.size() - pos < 8) return false;
            pos += 8;
            break;
        case 5: // fixed32
            if (message.size() - pos < 4) return false;
            pos += 4;
            break;
        case 2: // length-delimited
            if (!readVarint(message, pos, value) || value > message.size() - pos) return false;
            if (!visit(tag >> 3, message.substr(pos, static_cast<std::size_t>(value))))
                return false;
            pos += static_cast<std::size_t>(value);
            break;
        default:
            return false;
        }
    }
    return true;
}

[[noreturn]] void notAModel(const std::string& why) {
    throw FormatError("not a SentencePiece model: " + why);
}

/// The most pieces that are each the start of the next ("a", "ab", "abc"): how many results
/// one lookup in libsentencepiece's tries of pieces can give.
std::size_t longestPrefixChain(std::vector<std::string_view> pieces) {
    std::sort(pieces.begin(), pieces.end());
    pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
    std::vector<std::string_view> chain; // in sorted order, each a prefix of the next
    std::size_t longest = 0;
    for (const std::string_view piece : pieces) {
        if (piece.empty()) continue; // refused by the library; no prefix of the others
        while (!chain.empty() && piece.substr(0, chain.back().size()) != chain.back())
            chain.pop_back();
        chain.push_back(piece);
        longest = std::max(longest, chain.size());
    }
    return longest;
}

/// Checks the bytes of a model file where libsentencepiece would not, before it reads them
/// (its Load runs the model's self-test, which already encodes). Throws FormatError.
void checkBeforeLoading(std::string_view bytes) {
    if (bytes.empty()) throw FormatError("is empty, not a SentencePiece model");
    bool hasTrainerSpec = false, hasNormalizerSpec = false;
    std::vector<std::pair<const char*, std::string_view>> charsmaps;
    std::vector<std::string_view> pieces;
    const auto collect = [](std::vector<std::string_view>& into, uint64_t wanted) {
        return [&into, wanted](uint64_t field, std::string_view value) {
            if (field == wanted) into.push_back(value);
            return true;
        };
    };
    const bool wireFormat =
        forEachLengthDelimited(bytes, [&](uint64_t field, std::string_view value) {
            std::vector<std::string_view> found;
            switch (field) {
            case kPiecesField: {
                // One entry per piece, so that its index is its id; of a piece field given
                // twice, protobuf keeps the last.
                std::vector<std::string_view> piece;
                if (!forEachLengthDelimited(value, collect(piece, kPieceField))) return false;
                pieces.push_back(piece.empty() ? std::string_view() : piece.back());
                return true;
            }
            case kTrainerSpecField:
                hasTrainerSpec = true;
                return true;
            case kNormalizerSpecField:
            case kDenormalizerSpecField:
                hasNormalizerSpec = hasNormalizerSpec || field == kNormalizerSpecField;
                if (!forEachLengthDelimited(value, collect(found, kCharsmapField))) return false;
                for (const std::string_view charsmap : found)
                    charsmaps.emplace_back(field == kNormalizerSpecField ? "normalizer_spec"
                                                                         : "denormalizer_spec",
                                           charsmap);
                return true;
            default:
                return true;
            }
        });
    if (!wireFormat) {
        const std::size_t first = bytes.find_first_not_of(" \t\r\n");
        if (first != std::string_view::npos && (bytes[first] == '{' || bytes[first] == '['))
            notAModel("it holds JSON (a tokenizer.json? load that by its own name)");
        notAModel("its bytes are not a protobuf ModelProto (cut short, or another kind of file)");
    }
    if (!hasTrainerSpec || !hasNormalizerSpec)
        notAModel(std::string("it has no ") +
                  (hasTrainerSpec ? "normalizer_spec" : "trainer_spec") +
                  ", which every model file has (cut short?)");
    for (const auto& [spec, charsmap] : charsmaps) {
        if (charsmap.empty()) continue; // no normalization rules
        try {
            checkCharsmapForDarts(charsmap, kMaxCharsmapMatches);
        } catch (const std::invalid_argument& error) {
            notAModel(std::string(spec) + ".precompiled_charsmap: " + error.what());
        }
    }
    for (std::size_t i = 0; i < pieces.size(); ++i)
        if (pieces[i].find('\0') != std::string_view::npos)
            notAModel("piece " + std::to_string(i) + " holds a NUL byte");
    // libsentencepiece keeps control, unknown and byte pieces apart from the others, so it
    // loads a model with "<s>" both a control piece and a normal one; but a vocabulary maps
    // each piece to one id, and the other id would have no piece (shown empty, lost in decode).
    std::vector<std::pair<std::string_view, std::size_t>> sorted;
    for (std::size_t i = 0; i < pieces.size(); ++i)
        if (!pieces[i].empty()) sorted.emplace_back(pieces[i], i); // the library refuses ""
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t k = 1; k < sorted.size(); ++k)
        if (sorted[k].first == sorted[k - 1].first)
            notAModel("pieces " + std::to_string(sorted[k - 1].second) + " and " +
                      std::to_string(sorted[k].second) +
                      " are the same string, which can have one id only");
    if (const std::size_t chain = longestPrefixChain(pieces); chain > kMaxPieceMatches)
        notAModel(std::to_string(chain) + " of its pieces are each the start of the next, more " +
                  "than the " + std::to_string(kMaxPieceMatches) +
                  " libsentencepiece can match at one place");
}

/// libsentencepiece's status message without the source location its CHECKs put first
/// ("./src/sentencepiece_processor.cc(232) [model_proto->ParseFromArray(...)] ").
std::string describeStatus(const sentencepiece::util::Status& status) {
    const std::string message = status.message();
    if (message.find("ParseFromArray") != std::string::npos)
        return "its bytes are not a protobuf ModelProto (cut short, or another kind of file)";
    if (message.find("Self-test failures") != std::string::npos)
        return "its own self-test fails (the pieces it records for its sample texts are not "
               "the pieces it gives)";
    if (const std::size_t bracket = message.find(") ["); bracket != std::string::npos)
        if (const std::size_t end = message.find("] ", bracket); end != std::string::npos)
            return message.substr(end + 2).empty() ? message : message.substr(end + 2);
    return message.empty() ? "libsentencepiece refused it" : message;
}

/// A processor for the model in `bytes`; throws FormatError without the file's name.
std::shared_ptr<const Processor> loadProcessor(std::string_view bytes) {
    // A model whose self-test fails makes the library LOG(INFO) each failure on stderr.
    static const bool silenced = [] {
        sentencepiece::logging::SetMinLogLevel(3);
        return true;
    }();
    (void)silenced;
    checkBeforeLoading(bytes);
    auto processor = std::make_shared<Processor>();
    const sentencepiece::util::Status status = processor->LoadFromSerializedProto(bytes);
    if (!status.ok()) notAModel(describeStatus(status));
    if (processor->GetPieceSize() <= 0) notAModel("it has no pieces");
    return processor;
}

// ---- the model and decoder stages ------------------------------------------------------------

/// The vocabulary of a processor: each piece with its id.
Vocabulary piecesOf(const Processor& processor) {
    Vocabulary vocab;
    const int count = processor.GetPieceSize();
    vocab.reserve(static_cast<std::size_t>(count));
    for (int id = 0; id < count; ++id)
        vocab.emplace(processor.IdToPiece(id), id);
    return vocab;
}

/// A .model file's model: the whole text (between added tokens; a .model file has none) to
/// SentencePieceProcessor::Encode. The processor's const calls keep no state between calls
/// (its normalizer and model are read-only after Load), so encode() may run on several threads.
class SentencePieceModel final : public Model {
public:
    explicit SentencePieceModel(std::shared_ptr<const Processor> processor)
        : m_processor(std::move(processor)), m_vocabulary(piecesOf(*m_processor)) {}
    const Vocabulary& vocabulary() const override { return m_vocabulary; }
    std::string_view kind() const override { return "SentencePiece"; }

protected:
    void tokenizeWord(std::string_view text, std::vector<int32_t>& ids) const override {
        std::vector<int> pieceIds;
        // Encode fails only for a processor that did not load, which is never kept.
        if (!m_processor->Encode(text, &pieceIds).ok()) return;
        ids.insert(ids.end(), pieceIds.begin(), pieceIds.end());
    }

private:
    std::shared_ptr<const Processor> m_processor;
    Vocabulary m_vocabulary;
};

/// MarianTokenizer's _tokenize and _convert_token_to_id: a leading language code ">>fra<<" is
/// one token, the rest the side's SentencePiece pieces, each looked up in vocab.json (a piece it
/// lacks gives the unk id).
class MarianModel final : public Model {
public:
    MarianModel(std::shared_ptr<const Processor> processor, Vocabulary vocab, int32_t unkId)
        : m_processor(std::move(processor)), m_vocabulary(std::move(vocab)), m_unkId(unkId) {}
    const Vocabulary& vocabulary() const override { return m_vocabulary; }
    std::string_view kind() const override { return "SentencePiece"; }

protected:
    void tokenizeWord(std::string_view text, std::vector<int32_t>& ids) const override {
        if (text.substr(0, 2) == ">>")
            if (const std::size_t end = text.find("<<"); end != std::string_view::npos) {
                ids.push_back(idOf(text.substr(0, end + 2)));
                text.remove_prefix(end + 2);
            }
        std::vector<std::string> pieces;
        if (!m_processor->Encode(text, &pieces).ok()) return;
        for (const std::string& piece : pieces)
            ids.push_back(idOf(piece));
    }

private:
    int32_t idOf(std::string_view piece) const {
        const auto it = m_vocabulary.find(piece);
        return it == m_vocabulary.end() ? m_unkId : it->second;
    }

    std::shared_ptr<const Processor> m_processor;
    Vocabulary m_vocabulary;
    int32_t m_unkId;
};

/// Python's str.strip(): Unicode white space and the separators \x1c-\x1f off both ends.
std::string stripPythonSpace(const std::string& text) {
    const auto isSpace = [](char32_t c) { return isWhiteSpace(c) || (c >= 0x1C && c <= 0x1F); };
    std::size_t begin = 0, end = text.size();
    for (std::size_t pos = 0; pos < text.size();) {
        if (!isSpace(nextCodePoint(text, pos))) break;
        begin = pos;
    }
    for (std::size_t pos = begin; pos < text.size();) {
        if (!isSpace(nextCodePoint(text, pos))) end = pos;
    }
    return begin >= end ? std::string() : text.substr(begin, end - begin);
}

/// Decoding through the processor. Shown alone (display), a piece reads with "▁" as a space
/// and a byte piece "<0x0A>" as its byte, as the tokenizer.json path shows them. A .model file
/// decodes as SentencePieceProcessor::Decode; a Marian folder as MarianTokenizer's
/// convert_tokens_to_string: each special token written out and followed by a space, the runs
/// between through the processor, "▁" made a space and the whole stripped.
class SentencePieceDecoder final : public Decoder {
public:
    SentencePieceDecoder(std::shared_ptr<const Processor> processor,
                         std::optional<std::vector<std::string>> marianSpecials)
        : m_processor(std::move(processor)), m_marianSpecials(std::move(marianSpecials)),
          m_display(makeDecoder(Json::parse(R"({"type": "Sequence", "decoders": [
                                    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                    {"type": "ByteFallback"}]})"),
                                "decoder")) {}

    void decode(std::vector<std::string>& tokens, bool display) const override {
        if (display) {
            m_display->decode(tokens, true);
            return;
        }
        if (!m_marianSpecials) {
            tokens.assign(1, decodePieces(tokens));
            return;
        }
        std::string text;
        std::vector<std::string> run;
        for (std::string& token : tokens) {
            if (std::find(m_marianSpecials->begin(), m_marianSpecials->end(), token) ==
                m_marianSpecials->end()) {
                run.push_back(std::move(token));
                continue;
            }
            text += decodePieces(run) + token + " ";
            run.clear();
        }
        text += decodePieces(run);
        std::string spaced;
        for (std::size_t at = 0; at < text.size();) {
            if (text.compare(at, 3, "\u2581") == 0) {
                spaced += ' ';
                at += 3;
            } else {
                spaced += text[at++];
            }
        }
        tokens.assign(1, stripPythonSpace(repairUtf8(spaced)));
    }

private:
    std::string decodePieces(const std::vector<std::string>& pieces) const {
        std::string text;
        if (pieces.empty() || !m_processor->Decode(pieces, &text).ok()) return {};
        return text;
    }

    std::shared_ptr<const Processor> m_processor;
    std::optional<std::vector<std::string>> m_marianSpecials; ///< nullopt: a .model file
    std::unique_ptr<Decoder> m_display;
};

/// The JSON object of the file at `path`, named by its path in messages.
Json readJsonObject(const fs::path& path) {
    const std::string name = path.string();
    Json json = parseJsonFile(readWholeFile(path, name), name);
    if (!json.is_object()) throw FormatError(name + ": must hold a JSON object");
    return json;
}

} // namespace

TokenizerParts sentencePieceParts(std::string_view bytes) {
    const std::shared_ptr<const Processor> processor = loadProcessor(bytes);
    TokenizerParts parts;
    parts.vocabularyKey = "pieces";
    for (int id = 0; id < processor->GetPieceSize(); ++id)
        if (processor->IsControl(id) || processor->IsUnknown(id)) parts.specialIds.push_back(id);
    if (processor->bos_id() >= 0) parts.bos = processor->bos_id();
    if (processor->eos_id() >= 0) parts.eos = processor->eos_id();
    parts.model = std::make_unique<SentencePieceModel>(processor);
    parts.decoder = std::make_unique<SentencePieceDecoder>(processor, std::nullopt);
    return parts;
}

bool isMarianFolder(const fs::path& dir) {
    std::error_code error;
    return fs::exists(dir / "source.spm", error) || fs::exists(dir / "target.spm", error);
}

TokenizerParts marianParts(const fs::path& dir, bool targetSide) {
    std::error_code error;
    const fs::path configPath = dir / "tokenizer_config.json";
    const std::string configName = configPath.string();
    const Json config = fs::exists(configPath, error) ? readJsonObject(configPath) : Json::object();
    // MarianTokenizer's arguments, from tokenizer_config.json.
    const auto option = [&](auto read) {
        try {
            return read();
        } catch (const FormatError& problem) {
            throw FormatError(configName + ": " + problem.what());
        }
    };
    const std::string unkToken =
        option([&] { return configToken(config, "unk_token").value_or("<unk>"); });
    const std::string eosToken =
        option([&] { return configToken(config, "eos_token").value_or("</s>"); });
    const std::string padToken =
        option([&] { return configToken(config, "pad_token").value_or("<pad>"); });
    const bool separateVocabs =
        option([&] { return optionalBool(config, "", "separate_vocabs", false); });

    const fs::path spmPath = dir / (targetSide ? "target.spm" : "source.spm");
    const fs::path vocabPath =
        dir / (targetSide && separateVocabs ? "target_vocab.json" : "vocab.json");
    const std::string spmName = spmPath.string(), vocabName = vocabPath.string();
    if (!fs::exists(spmPath, error))
        throw FormatError(spmName + ": missing: the " + (targetSide ? "target" : "source") +
                          " side of a Marian folder is this SentencePiece model");
    if (!fs::exists(vocabPath, error))
        throw FormatError(vocabName + ": missing: a Marian folder maps " +
                          spmPath.filename().string() + "'s pieces to ids through it");

    std::shared_ptr<const Processor> processor;
    try {
        processor = loadProcessor(readWholeFile(spmPath, spmName));
    } catch (const FormatError& problem) {
        const std::string message = problem.what();
        throw FormatError(message.rfind(spmName + ":", 0) == 0 ? message
                                                               : spmName + ": " + message);
    }
    Vocabulary vocab = readVocabulary(readJsonObject(vocabPath), vocabName);

    // MarianTokenizer refuses a vocabulary without its unk token; the eos token ends every
    // encoding, so it must have an id too.
    const auto idOf = [&](const std::string& token, const char* key) {
        const auto it = vocab.find(token);
        if (it == vocab.end())
            throw FormatError(vocabName + ": has no '" + token + "', the " + key +
                              " (tokenizer_config.json names it; the default is " +
                              (std::string_view(key) == "unk_token" ? "<unk>" : "</s>") + ")");
        return it->second;
    };
    const int32_t unkId = idOf(unkToken, "unk_token");
    const int32_t eosId = idOf(eosToken, "eos_token");

    TokenizerParts parts;
    parts.vocabularyKey = vocabName;
    // The special tokens are split out of the text before SentencePiece sees it, as
    // transformers' slow tokenizers do with their special tokens.
    std::vector<std::string> specials;
    for (const std::string& token : {unkToken, eosToken, padToken}) {
        const auto it = vocab.find(token);
        if (it == vocab.end() ||
            std::find(specials.begin(), specials.end(), token) != specials.end())
            continue;
        AddedToken added;
        added.content = token;
        added.id = it->second;
        added.special = true;
        parts.added.push_back(added);
        specials.push_back(token);
    }
    parts.singleTemplate = {TemplateItem{true, {}}, TemplateItem{false, {eosId}}};
    parts.eos = eosId;
    parts.model = std::make_unique<MarianModel>(processor, std::move(vocab), unkId);
    parts.decoder = std::make_unique<SentencePieceDecoder>(processor, std::move(specials));
    return parts;
}

} // namespace attnlab::model::detail

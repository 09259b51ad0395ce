#pragma once
// The stages of tokenizer.json's pipeline (internal), each a small type built from its JSON
// object: normalizers, pre-tokenizers, post-processors and decoders. Unknown types are
// refused with the key that names them.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnlab::model::detail {

using Json = nlohmann::json;

/// A malformed tokenizer.json: `what` is "<key path>: <problem>"; the loader adds the file.
class FormatError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
[[noreturn]] void formatError(const std::string& path, const std::string& problem);

// Typed access to a JSON object's members; `path` names the object in messages.
const Json& requireMember(const Json& object, const std::string& path, const char* key);
std::string requireString(const Json& object, const std::string& path, const char* key);
std::optional<std::string> optionalString(const Json& object, const std::string& path,
                                          const char* key);
bool optionalBool(const Json& object, const std::string& path, const char* key, bool fallback);
int64_t requireInteger(const Json& value, const std::string& path, int64_t minimum,
                       int64_t maximum);
/// The "type" of a stage object.
std::string stageType(const Json& object, const std::string& path);
/// Refuses any key of `object` not in `known` (besides "type"), naming it: Hugging Face acts
/// on keys this reader would not understand, and skipping one silently could change the ids.
void refuseUnknownKeys(const Json& object, const std::string& path,
                       std::initializer_list<const char*> known);

// ---- normalizers --------------------------------------------------------------------------

class Normalizer {
public:
    virtual ~Normalizer() = default;
    /// Rewrites valid UTF-8 in place (it stays valid).
    virtual void normalize(std::string& text) const = 0;
};
/// `config` may be null (no normalizer: returns nullptr).
std::unique_ptr<Normalizer> makeNormalizer(const Json& config, const std::string& path);

// ---- pre-tokenizers -----------------------------------------------------------------------

/// A piece of text on its way to the model. `atTextStart`: the piece begins at the start of
/// the input text (Metaspace's prepend_scheme "first" needs it).
struct Piece {
    std::string text;
    bool atTextStart = false;
};

class PreTokenizer {
public:
    virtual ~PreTokenizer() = default;
    /// Replaces `pieces` by their split (and possibly rewritten) pieces; no piece is empty.
    virtual void split(std::vector<Piece>& pieces) const = 0;
};
std::unique_ptr<PreTokenizer> makePreTokenizer(const Json& config, const std::string& path);

// ---- post-processors ----------------------------------------------------------------------

/// One id of a template, with whether it is the sequence itself.
struct TemplateItem {
    bool isSequence = false;
    std::vector<int32_t> ids; ///< the special token's ids when !isSequence
};

class PostProcessor {
public:
    virtual ~PostProcessor() = default;
    /// The template for one sequence with special tokens added (empty: the sequence alone).
    virtual std::vector<TemplateItem> singleTemplate() const = 0;
};
/// `config` may be null (no post-processor: returns nullptr).
std::unique_ptr<PostProcessor> makePostProcessor(const Json& config, const std::string& path);

// ---- decoders -----------------------------------------------------------------------------

class Decoder {
public:
    virtual ~Decoder() = default;
    /// Hugging Face's decode_chain: turns the tokens into (fewer) strings. With `display`,
    /// one token is decoded alone for showing: stripping meant for whole texts is skipped and
    /// byte tokens give their raw byte even when it is not a whole character.
    virtual void decode(std::vector<std::string>& tokens, bool display) const = 0;
};
/// `config` may be null (no decoder: returns nullptr).
std::unique_ptr<Decoder> makeDecoder(const Json& config, const std::string& path);

} // namespace attnlab::model::detail

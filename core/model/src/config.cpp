// config.json: the Hugging Face keys of gpt2 and the llama family, with their defaults.

#include "attnlab/model/config.h"
#include "attnlab/io/json_read.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace attnlab::model {
namespace {

using Json = nlohmann::json;

/// Bounds that no real checkpoint reaches; beyond them a config is corrupt, not large.
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 24;
constexpr std::int64_t kMaxLayers = 4096;

struct ConfigError {
    std::string message;
};

class Reader {
public:
    Reader(const Json& json, std::string name) : m_json(json), m_name(std::move(name)) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw ConfigError{m_name + ": " + what};
    }

    bool has(const char* key) const {
        const auto it = m_json.find(key);
        return it != m_json.end() && !it->is_null();
    }

    /// A positive integer under key (or the first present of the keys), or fail.
    Index positive(std::initializer_list<const char*> keys, std::int64_t limit = kMaxExtent,
                   std::optional<Index> fallback = std::nullopt) const {
        for (const char* key : keys) {
            if (!has(key)) continue;
            const Json& value = m_json.at(key);
            if (!value.is_number_integer() || value.get<std::int64_t>() <= 0)
                fail(std::string("'") + key + "' must be a positive integer");
            const std::int64_t v = value.get<std::int64_t>();
            if (v > limit)
                fail(std::string("'") + key + "' = " + std::to_string(v) +
                     " is larger than AttnLab accepts (" + std::to_string(limit) + ")");
            return static_cast<Index>(v);
        }
        if (fallback) return *fallback;
        fail(std::string("missing '") + *keys.begin() + "'");
    }

    double number(const char* key, double fallback, bool positiveOnly = true) const {
        if (!has(key)) return fallback;
        const Json& value = m_json.at(key);
        if (!value.is_number()) fail(std::string("'") + key + "' must be a number");
        const double v = value.get<double>();
        if (positiveOnly && !(v > 0)) fail(std::string("'") + key + "' must be positive");
        return v;
    }

    bool flag(const char* key, bool fallback) const {
        if (!has(key)) return fallback;
        const Json& value = m_json.at(key);
        if (!value.is_boolean()) fail(std::string("'") + key + "' must be true or false");
        return value.get<bool>();
    }

    std::string text(const char* key, const std::string& fallback) const {
        if (!has(key)) return fallback;
        const Json& value = m_json.at(key);
        if (!value.is_string()) fail(std::string("'") + key + "' must be a string");
        return value.get<std::string>();
    }

    std::optional<std::int64_t> tokenId(const char* key) const {
        if (!has(key)) return std::nullopt;
        const Json& value = m_json.at(key);
        if (value.is_number_integer()) return value.get<std::int64_t>();
        if (value.is_array() && !value.empty() && value.front().is_number_integer())
            return value.front().get<std::int64_t>(); // eos lists (Llama 3.1): the first
        return std::nullopt;
    }

    const Json& json() const { return m_json; }

private:
    const Json& m_json;
    std::string m_name;
};

RopeScaling parseRopeScaling(const Reader& config) {
    RopeScaling scaling;
    if (!config.has("rope_scaling")) return scaling;
    const Json& json = config.json().at("rope_scaling");
    if (!json.is_object()) config.fail("'rope_scaling' must be an object or null");
    Reader rope(json, "");
    std::string type = rope.has("rope_type") ? json.at("rope_type").is_string()
                                                   ? json.at("rope_type").get<std::string>()
                                                   : std::string("?")
                                             : std::string();
    if (type.empty() && rope.has("type"))
        type = json.at("type").is_string() ? json.at("type").get<std::string>() : "?";
    auto ropeNumber = [&](const char* key, double fallback) {
        if (!rope.has(key)) return fallback;
        const Json& value = json.at(key);
        if (!value.is_number() || !(value.get<double>() > 0))
            config.fail(std::string("rope_scaling '") + key + "' must be a positive number");
        return value.get<double>();
    };
    if (type == "default" || type.empty()) return scaling;
    if (type == "linear") {
        scaling.type = RopeScalingType::Linear;
        scaling.factor = ropeNumber("factor", 1.0);
    } else if (type == "llama3") {
        scaling.type = RopeScalingType::Llama3;
        scaling.factor = ropeNumber("factor", 8.0);
        scaling.lowFreqFactor = ropeNumber("low_freq_factor", 1.0);
        scaling.highFreqFactor = ropeNumber("high_freq_factor", 4.0);
        scaling.originalMaxPositions = ropeNumber("original_max_position_embeddings", 8192);
        if (!(scaling.highFreqFactor > scaling.lowFreqFactor))
            config.fail("rope_scaling high_freq_factor must be larger than low_freq_factor");
    } else {
        config.fail("rope_scaling type '" + type +
                    "' is not supported (AttnLab runs 'linear' and 'llama3')");
    }
    return scaling;
}

ModelConfig parseGpt2(const Reader& config) {
    ModelConfig c;
    c.architecture = Architecture::Gpt2;
    c.hidden = config.positive({"n_embd", "hidden_size"});
    c.layers = config.positive({"n_layer", "num_hidden_layers"}, kMaxLayers);
    c.heads = config.positive({"n_head", "num_attention_heads"});
    c.kvHeads = c.heads;
    if (c.hidden % c.heads != 0)
        config.fail("n_embd " + std::to_string(c.hidden) + " is not a multiple of n_head " +
                    std::to_string(c.heads));
    c.headDim = c.hidden / c.heads;
    c.intermediate = config.positive({"n_inner"}, kMaxExtent, 4 * c.hidden);
    c.vocab = config.positive({"vocab_size"});
    c.maxPositions = config.positive({"n_positions", "n_ctx", "max_position_embeddings"});
    c.normEps = config.number("layer_norm_epsilon", 1e-5);
    c.tiedEmbeddings = config.flag("tie_word_embeddings", true);
    const std::string activation = config.text("activation_function", "gelu_new");
    if (activation != "gelu_new" && activation != "gelu_pytorch_tanh")
        config.fail("activation_function '" + activation +
                    "' is not supported (AttnLab runs gelu_new)");
    if (config.flag("scale_attn_by_inverse_layer_idx", false))
        config.fail("scale_attn_by_inverse_layer_idx is not supported");
    if (!config.flag("scale_attn_weights", true))
        config.fail("scale_attn_weights = false is not supported");
    return c;
}

ModelConfig parseLlamaFamily(const Reader& config, Architecture architecture) {
    ModelConfig c;
    c.architecture = architecture;
    c.hidden = config.positive({"hidden_size"});
    c.layers = config.positive({"num_hidden_layers"}, kMaxLayers);
    c.heads = config.positive({"num_attention_heads"});
    c.kvHeads = config.positive({"num_key_value_heads"}, kMaxExtent, c.heads);
    if (c.heads % c.kvHeads != 0)
        config.fail("num_attention_heads " + std::to_string(c.heads) +
                    " is not a multiple of num_key_value_heads " + std::to_string(c.kvHeads));
    if (config.has("head_dim")) {
        c.headDim = config.positive({"head_dim"});
    } else {
        if (c.hidden % c.heads != 0)
            config.fail("hidden_size " + std::to_string(c.hidden) +
                        " is not a multiple of num_attention_heads " + std::to_string(c.heads) +
                        " and there is no head_dim");
        c.headDim = c.hidden / c.heads;
    }
    if (c.headDim % 2 != 0)
        config.fail("head_dim " + std::to_string(c.headDim) + " is odd; RoPE needs it even");
    c.intermediate = config.positive({"intermediate_size"});
    c.vocab = config.positive({"vocab_size"});
    c.maxPositions = config.positive({"max_position_embeddings"});
    c.normEps = config.number("rms_norm_eps", 1e-6);
    c.ropeTheta = config.number("rope_theta", 10000.0);
    c.ropeScaling = parseRopeScaling(config);
    c.tiedEmbeddings = config.flag("tie_word_embeddings", false);
    const std::string activation = config.text("hidden_act", "silu");
    if (activation != "silu")
        config.fail("hidden_act '" + activation + "' is not supported (AttnLab runs silu)");
    if (config.flag("mlp_bias", false)) config.fail("mlp_bias = true is not supported");

    const bool attentionBias = config.flag("attention_bias", false);
    switch (architecture) {
    case Architecture::Llama:
        c.qkvBias = attentionBias;
        c.outputBias = attentionBias;
        break;
    case Architecture::Qwen2:
        c.qkvBias = true; // Qwen2Attention: q/k/v with bias, o_proj without
        if (config.flag("use_sliding_window", false))
            config.fail("use_sliding_window = true is not supported for qwen2");
        break;
    case Architecture::Qwen3:
        c.qkvBias = attentionBias;
        c.outputBias = attentionBias;
        c.qkNorm = true;
        if (config.flag("use_sliding_window", false))
            config.fail("use_sliding_window = true is not supported for qwen3");
        break;
    case Architecture::Mistral:
        if (config.has("sliding_window")) c.slidingWindow = config.positive({"sliding_window"});
        break;
    case Architecture::Gpt2:
        break;
    }
    return c;
}

} // namespace

const char* architectureName(Architecture a) {
    switch (a) {
    case Architecture::Gpt2:
        return "gpt2";
    case Architecture::Llama:
        return "llama";
    case Architecture::Qwen2:
        return "qwen2";
    case Architecture::Qwen3:
        return "qwen3";
    case Architecture::Mistral:
        return "mistral";
    }
    return "?";
}

Result<ModelConfig> parseConfig(const std::string& text, const std::string& name) {
    // The core's one JSON reader: a number beyond a double ("rope_theta": 1e400) is refused
    // naming its key, as in sessions and lessons.
    Result<Json> parsed = detail::parseJson(text);
    if (!parsed) return Error{name + ": " + parsed.error()};
    const Json json = std::move(*parsed);
    if (!json.is_object()) return Error{name + ": not a JSON object"};
    try {
        Reader config(json, name);
        const std::string type = config.text("model_type", "");
        if (type.empty()) config.fail("missing 'model_type'");
        ModelConfig c;
        if (type == "gpt2") {
            c = parseGpt2(config);
        } else if (type == "llama") {
            c = parseLlamaFamily(config, Architecture::Llama);
        } else if (type == "qwen2") {
            c = parseLlamaFamily(config, Architecture::Qwen2);
        } else if (type == "qwen3") {
            c = parseLlamaFamily(config, Architecture::Qwen3);
        } else if (type == "mistral") {
            c = parseLlamaFamily(config, Architecture::Mistral);
        } else {
            config.fail("model_type '" + type +
                        "' is not supported (AttnLab runs gpt2, llama, qwen2, qwen3, mistral)");
        }
        c.bosTokenId = config.tokenId("bos_token_id");
        c.eosTokenId = config.tokenId("eos_token_id");
        return c;
    } catch (const ConfigError& e) {
        return Error{e.message};
    }
}

Result<ModelConfig> readConfig(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot open"};
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return parseConfig(buffer.str(), path);
}

} // namespace attnlab::model

// config.json as transformers 4 and 5 write it, read against the table of architectures. Every
// key is either read here, on the list of keys that change nothing, or refused: a checkpoint
// whose config says something AttnLab does not understand is never run as if it did not.

#include "attnlab/model/config.h"
#include "attnlab/io/json_read.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numbers>
#include <set>
#include <sstream>

namespace attnlab::model {
namespace {

using Json = nlohmann::json;

/// Bounds that no real checkpoint reaches; beyond them a config is corrupt, not large.
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 24;
constexpr std::int64_t kMaxLayers = 4096;

// clang-format off: a table laid out by kind
constexpr std::string_view kChangeNothing[] = {
    // what the file is and who wrote it
    "architectures", "transformers_version", "_name_or_path", "dtype", "torch_dtype",
    "auto_map", "tokenizer_class", "model_max_length", "_commit_hash",
    // token ids: they name tokens, the computation never reads them
    "pad_token_id", "sep_token_id", "unk_token_id", "cls_token_id", "mask_token_id",
    "decoder_start_token_id", "forced_bos_token_id", "forced_eos_token_id", "image_token_id",
    "suppress_tokens", "begin_suppress_tokens", "bad_words_ids",
    // training only: dropout is off at inference, initialisation is overwritten by the weights
    "attention_dropout", "attn_pdrop", "embd_pdrop", "resid_pdrop", "hidden_dropout",
    "hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout",
    "embedding_dropout", "residual_dropout", "dropout", "initializer_range",
    "initializer_factor", "init_std", "layerdrop", "gradient_checkpointing",
    "use_cache", "cache_implementation", "torchscript", "output_attentions",
    "output_hidden_states", "return_dict", "use_return_dict", "chunk_size_feed_forward",
    "pretraining_tp", "reorder_and_upcast_attn", "encoder_layerdrop", "decoder_layerdrop",
    "activation_dropout", "dropout_rate", "classifier_activation",
    // heads for other tasks than language modelling
    "id2label", "label2id", "num_labels", "problem_type", "finetuning_task",
    "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels",
    "summary_first_dropout", "task_specific_params", "prefix",
    // generation settings
    "max_length", "min_length", "do_sample", "temperature", "top_k", "top_p", "num_beams",
    "repetition_penalty", "length_penalty", "no_repeat_ngram_size", "early_stopping",
    "num_return_sequences", "num_beam_groups", "diversity_penalty", "typical_p",
    "output_scores", "return_dict_in_generate", "remove_invalid_values",
    "exponential_decay_length_penalty", "encoder_no_repeat_ngram_size", "use_bfloat16",
    "tf_legacy_loss", "tie_encoder_decoder", "cross_attention_hidden_size",
};
// clang-format on

struct ConfigError {
    std::string message;
};

/// A JSON object whose keys are marked as they are read, so the keys nobody read can be named.
class Reader {
public:
    Reader(const Json& json, std::string name, std::string where = {})
        : m_json(json), m_name(std::move(name)), m_where(std::move(where)) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw ConfigError{m_name + ": " + m_where + what};
    }

    /// The first of `keys` ("a|b") present and not null, marking every candidate read.
    const char* find(std::string_view keys) const {
        const char* found = nullptr;
        std::size_t at = 0;
        while (at <= keys.size()) {
            const std::size_t bar = std::min(keys.find('|', at), keys.size());
            const std::string key(keys.substr(at, bar - at));
            m_read.insert(key);
            const auto it = m_json.find(key);
            if (!found && it != m_json.end() && !it->is_null()) found = it.key().c_str();
            at = bar + 1;
        }
        return found;
    }
    bool has(std::string_view keys) const { return find(keys) != nullptr; }
    const Json& at(const char* key) const { return m_json.at(key); }

    /// A positive integer under the first present of `keys`, else `fallback`, else fail.
    Index positive(std::string_view keys, std::optional<Index> fallback = std::nullopt,
                   std::int64_t limit = kMaxExtent) const {
        const char* key = find(keys);
        if (!key) {
            if (fallback) return *fallback;
            fail("missing '" + std::string(keys.substr(0, keys.find('|'))) + "'");
        }
        const Json& value = at(key);
        if (!value.is_number_integer() || value.get<std::int64_t>() <= 0)
            fail(std::string("'") + key + "' must be a positive integer");
        const std::int64_t v = value.get<std::int64_t>();
        if (v > limit)
            fail(std::string("'") + key + "' = " + std::to_string(v) +
                 " is larger than AttnLab accepts (" + std::to_string(limit) + ")");
        return static_cast<Index>(v);
    }

    double number(std::string_view keys, double fallback, bool positiveOnly = true) const {
        const char* key = find(keys);
        if (!key) return fallback;
        const Json& value = at(key);
        if (!value.is_number() || !std::isfinite(value.get<double>()))
            fail(std::string("'") + key + "' must be a number");
        const double v = value.get<double>();
        if (positiveOnly && !(v > 0)) fail(std::string("'") + key + "' must be positive");
        return v;
    }

    bool flag(std::string_view keys, bool fallback) const {
        const char* key = find(keys);
        if (!key) return fallback;
        const Json& value = at(key);
        if (!value.is_boolean()) fail(std::string("'") + key + "' must be true or false");
        return value.get<bool>();
    }

    std::string text(std::string_view keys, const std::string& fallback) const {
        const char* key = find(keys);
        if (!key) return fallback;
        const Json& value = at(key);
        if (!value.is_string()) fail(std::string("'") + key + "' must be a string");
        return value.get<std::string>();
    }

    /// A key that must be false (or absent) for AttnLab to run the model as transformers does.
    void mustBeFalse(const char* key, const std::string& why) const {
        if (flag(key, false)) fail(std::string("'") + key + "' = true is not supported (" + why + ")");
    }

    std::optional<std::int64_t> tokenId(const char* key) const {
        if (!has(key)) return std::nullopt;
        const Json& value = at(key);
        if (value.is_number_integer()) return value.get<std::int64_t>();
        if (value.is_array() && !value.empty() && value.front().is_number_integer())
            return value.front().get<std::int64_t>(); // eos lists (Llama 3.1): the first
        return std::nullopt;
    }

    /// Fails naming the first key that was neither read nor listed in `ignorable`. A null value
    /// says "not set" and is ignored.
    void refuseUnread(std::span<const std::string_view> ignorable) const {
        for (auto it = m_json.begin(); it != m_json.end(); ++it) {
            if (it->is_null() || m_read.count(it.key())) continue;
            if (std::find(ignorable.begin(), ignorable.end(), it.key()) != ignorable.end())
                continue;
            fail("key '" + it.key() +
                 "' is not one AttnLab understands; it may change the computation, so the "
                 "checkpoint is refused (docs/models.md lists the keys it reads)");
        }
    }

    const Json& json() const { return m_json; }

    /// A Reader of the object under `key` (checked to be one), with the same file name.
    Reader child(const Json& json, const std::string& where) const {
        if (!json.is_object()) fail("'" + where + "' must be an object");
        return Reader(json, m_name, m_where + where + ": ");
    }

private:
    const Json& m_json;
    std::string m_name;
    std::string m_where;
    mutable std::set<std::string, std::less<>> m_read;
};

Activation parseActivation(const std::string& name, const Reader& config) {
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast")
        return Activation::GeluTanh;
    if (name == "gelu") return Activation::GeluErf;
    if (name == "silu" || name == "swish") return Activation::Silu;
    if (name == "relu") return Activation::Relu;
    if (name == "quick_gelu") return Activation::QuickGelu;
    config.fail("activation '" + name +
                "' is not supported (AttnLab runs gelu, gelu_new, gelu_pytorch_tanh, silu, relu, "
                "quick_gelu)");
}

// ---- RoPE -------------------------------------------------------------------------------------

/// Hugging Face's 1 / theta^(arange(0, dim, 2) / dim), the exponent in float32.
std::vector<double> defaultFrequencies(double theta, Index dim) {
    std::vector<double> inverse(static_cast<std::size_t>(dim / 2));
    for (std::size_t i = 0; i < inverse.size(); ++i) {
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
        inverse[i] = static_cast<float>(1.0 / std::pow(theta, static_cast<double>(exponent)));
    }
    return inverse;
}

/// What the RoPE keys of a config say, before frequencies are computed: either a v5
/// rope_parameters object or v4's rope_theta + rope_scaling, read into one Reader.
struct RopeContext {
    Index headDim = 0;
    Index maxPositions = 0;
    std::optional<Index> originalMaxPositions; ///< Phi-3's top-level key
    double partialRotary = 1.0;
    double thetaFallback = 10000.0;
};

std::vector<double> factorList(const Reader& rope, const char* key, Index count) {
    if (!rope.has(key)) rope.fail(std::string("missing '") + key + "'");
    const Json& list = rope.at(key);
    if (!list.is_array() || static_cast<Index>(list.size()) != count)
        rope.fail(std::string("'") + key + "' must be a list of " + std::to_string(count) +
                  " numbers (rotary dim / 2)");
    std::vector<double> values;
    for (const Json& v : list) {
        if (!v.is_number() || !(v.get<double>() > 0))
            rope.fail(std::string("'") + key + "' must hold positive numbers");
        values.push_back(v.get<double>());
    }
    return values;
}

/// One Rope from a rope_parameters object (or a v4 rope_scaling object with theta given).
Rope parseRope(const Reader& rope, const RopeContext& context) {
    Rope r;
    r.theta = rope.number("rope_theta", context.thetaFallback);
    r.type = rope.text("rope_type|type", "default");
    const double partial = rope.number("partial_rotary_factor", context.partialRotary);
    if (partial > 1.0) rope.fail("'partial_rotary_factor' must be at most 1");
    r.dim = static_cast<Index>(static_cast<double>(context.headDim) * partial);
    if (r.dim < 2 || r.dim % 2 != 0)
        rope.fail("the rotary dimension " + std::to_string(r.dim) +
                  " (head_dim x partial_rotary_factor) must be even and at least 2");
    r.inverseFrequencies = defaultFrequencies(r.theta, r.dim);
    const Index half = r.dim / 2;
    auto& inverse = r.inverseFrequencies;

    if (r.type == "default") {
    } else if (r.type == "linear") {
        const double factor = rope.number("factor", 1.0);
        for (auto& f : inverse)
            f /= factor;
    } else if (r.type == "dynamic") {
        // Dynamic NTK changes the base only for runs longer than max_position_embeddings,
        // which AttnLab refuses: within them it is the default RoPE.
        (void)rope.number("factor", 1.0);
        (void)rope.positive("original_max_position_embeddings", context.maxPositions);
    } else if (r.type == "llama3") {
        // Llama 3.1's _compute_llama3_parameters
        const double factor = rope.number("factor", 8.0);
        const double low = rope.number("low_freq_factor", 1.0);
        const double high = rope.number("high_freq_factor", 4.0);
        const double original =
            static_cast<double>(rope.positive("original_max_position_embeddings", 8192));
        if (!(high > low)) rope.fail("high_freq_factor must be larger than low_freq_factor");
        const double lowWavelength = original / low;
        const double highWavelength = original / high;
        for (auto& f : inverse) {
            const double wavelength = 2 * std::numbers::pi / f;
            if (wavelength < highWavelength) continue;
            if (wavelength > lowWavelength) {
                f /= factor;
                continue;
            }
            const double smooth = (original / wavelength - low) / (high - low);
            f = (1 - smooth) * f / factor + smooth * f;
        }
    } else if (r.type == "yarn") {
        const double factor = rope.number("factor", 1.0);
        const double original = static_cast<double>(
            rope.positive("original_max_position_embeddings", context.maxPositions));
        const double mscale = rope.number("mscale", 0.0, false);
        const double mscaleAllDim = rope.number("mscale_all_dim", 0.0, false);
        auto getMscale = [](double scale, double m) {
            return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
        };
        r.attentionFactor = rope.number(
            "attention_factor", mscale != 0 && mscaleAllDim != 0
                                    ? getMscale(factor, mscale) / getMscale(factor, mscaleAllDim)
                                    : getMscale(factor, 1.0));
        const double betaFast = rope.number("beta_fast", 32);
        const double betaSlow = rope.number("beta_slow", 1);
        const bool truncate = rope.flag("truncate", true);
        const auto dim = static_cast<double>(r.dim);
        auto correctionDim = [&](double rotations) {
            return dim * std::log(original / (rotations * 2 * std::numbers::pi)) /
                   (2 * std::log(r.theta));
        };
        double lowDim = correctionDim(betaFast);
        double highDim = correctionDim(betaSlow);
        if (truncate) {
            lowDim = std::floor(lowDim);
            highDim = std::ceil(highDim);
        }
        lowDim = std::max(lowDim, 0.0);
        highDim = std::min(highDim, dim - 1);
        if (lowDim == highDim) highDim += 0.001;
        for (Index i = 0; i < half; ++i) {
            auto& f = inverse[static_cast<std::size_t>(i)];
            const float ramp = std::clamp(
                static_cast<float>((static_cast<double>(i) - lowDim) / (highDim - lowDim)), 0.0f,
                1.0f);
            const float extrapolation = 1.0f - ramp;
            const auto extrapolated = static_cast<float>(f);
            const auto interpolated = static_cast<float>(f / factor);
            f = interpolated * (1.0f - extrapolation) + extrapolated * extrapolation;
        }
    } else if (r.type == "longrope") {
        const std::vector<double> shortFactor = factorList(rope, "short_factor", half);
        const std::vector<double> longFactor = factorList(rope, "long_factor", half);
        Index original = rope.positive("original_max_position_embeddings",
                                       context.originalMaxPositions.value_or(context.maxPositions));
        double factor = rope.number("factor", 1.0);
        // Phi-3 keeps the pretrained length at the top level and scales by the ratio to it.
        if (context.originalMaxPositions) {
            original = *context.originalMaxPositions;
            factor = static_cast<double>(context.maxPositions) / static_cast<double>(original);
        }
        r.attentionFactor = rope.number(
            "attention_factor",
            factor <= 1 ? 1.0
                        : std::sqrt(1 + std::log(factor) / std::log(static_cast<double>(original))));
        r.longAbove = original;
        r.longInverseFrequencies.resize(inverse.size());
        for (Index i = 0; i < half; ++i) {
            // 1 / (factor_i * theta^(2i / dim)), as _compute_longrope_parameters
            const auto at = static_cast<std::size_t>(i);
            const float exponent = static_cast<float>(2 * i) / static_cast<float>(r.dim);
            const double power = std::pow(r.theta, static_cast<double>(exponent));
            inverse[at] = static_cast<float>(1.0 / (shortFactor[at] * power));
            r.longInverseFrequencies[at] = static_cast<float>(1.0 / (longFactor[at] * power));
        }
    } else {
        rope.fail("rope_type '" + r.type +
                  "' is not supported (AttnLab runs default, linear, dynamic, yarn, longrope, "
                  "llama3)");
    }
    rope.refuseUnread({});
    return r;
}

// ---- layers -------------------------------------------------------------------------------------

enum class LayerType { Full, Sliding };

std::vector<LayerType> parseLayerTypes(const Reader& config, Index layers) {
    const Json& list = config.at("layer_types");
    if (!list.is_array() || static_cast<Index>(list.size()) != layers)
        config.fail("'layer_types' must list one type per layer (" + std::to_string(layers) + ")");
    std::vector<LayerType> types;
    for (const Json& type : list) {
        if (type == "full_attention")
            types.push_back(LayerType::Full);
        else if (type == "sliding_attention")
            types.push_back(LayerType::Sliding);
        else
            config.fail("layer type " + type.dump() +
                        " is not supported (AttnLab runs full_attention and sliding_attention)");
    }
    return types;
}

/// Each layer's type from layer_types, or from the family's older keys.
std::vector<LayerType> layerTypes(const Reader& config, const Architecture& a, Index layers) {
    std::vector<LayerType> types(static_cast<std::size_t>(layers), LayerType::Full);
    if (a.has(kLayerTypes)) {
        // Qwen2/3, SmolLM3: no window unless use_sliding_window; then layer_types, or before
        // layer_types existed, every layer from max_window_layers on.
        const bool sliding = config.flag("use_sliding_window", false);
        const Index from = config.positive("max_window_layers", layers, kMaxLayers);
        const bool listed = config.has("layer_types");
        if (!sliding) {
            if (listed) (void)parseLayerTypes(config, layers); // checked, but nothing slides
            return types;
        }
        if (listed) return parseLayerTypes(config, layers);
        for (Index l = from; l < layers; ++l)
            types[static_cast<std::size_t>(l)] = LayerType::Sliding;
        return types;
    }
    if (a.has(kWindowPattern))
        (void)config.has("sliding_window_pattern|_sliding_window_pattern"); // layer_types wins
    if ((a.has(kAlternatingWindow) || a.has(kWindowPattern)) && config.has("layer_types"))
        return parseLayerTypes(config, layers);
    if (a.has(kSlidingWindow)) {
        if (config.has("sliding_window") || a.slidingWindowDefault > 0)
            std::fill(types.begin(), types.end(), LayerType::Sliding);
    } else if (a.has(kAlternatingWindow)) {
        for (Index l = 0; l < layers; l += 2)
            types[static_cast<std::size_t>(l)] = LayerType::Sliding;
    } else if (a.has(kWindowPattern)) {
        const Index pattern =
            config.positive("sliding_window_pattern|_sliding_window_pattern", 6, kMaxLayers);
        for (Index l = 0; l < layers; ++l)
            if ((l + 1) % pattern != 0) types[static_cast<std::size_t>(l)] = LayerType::Sliding;
    }
    return types;
}

// ---- the whole config -----------------------------------------------------------------------

/// BART and Marian: d_model, encoder_* and decoder_* (the two stacks must have the same heads
/// and MLP width).
void parseSeq2SeqSizes(const Reader& config, ModelConfig& c) {
    c.hidden = config.positive("d_model");
    c.layers = config.positive("decoder_layers", std::nullopt, kMaxLayers);
    c.encoderLayers = config.positive("encoder_layers", std::nullopt, kMaxLayers);
    c.heads = config.positive("decoder_attention_heads");
    c.intermediate = config.positive("decoder_ffn_dim");
    if (config.positive("encoder_attention_heads") != c.heads ||
        config.positive("encoder_ffn_dim") != c.intermediate)
        config.fail("encoder and decoder differ in attention heads or ffn_dim; AttnLab runs "
                    "stacks of one shape");
    (void)config.has("num_hidden_layers"); // an alias of encoder_layers in BartConfig
    c.vocab = config.positive("vocab_size");
    if (config.has("decoder_vocab_size") && config.positive("decoder_vocab_size") != c.vocab)
        config.fail("'decoder_vocab_size' differs from 'vocab_size': separate target "
                    "vocabularies are not supported");
    if (!config.flag("share_encoder_decoder_embeddings", true))
        config.fail("'share_encoder_decoder_embeddings' = false is not supported");
    c.maxPositions = config.positive("max_position_embeddings");
    config.mustBeFalse("normalize_before", "AttnLab runs BART's post-norm");
    config.mustBeFalse("add_final_layer_norm", "AttnLab runs BART's post-norm");
    if (config.flag("scale_embedding", false))
        c.embeddingScale = std::sqrt(static_cast<double>(c.hidden));
}

/// T5: d_model, d_kv, d_ff, num_layers / num_decoder_layers, num_heads, relative buckets.
void parseT5Sizes(const Reader& config, ModelConfig& c) {
    c.hidden = config.positive("d_model");
    c.headDim = config.positive("d_kv");
    c.intermediate = config.positive("d_ff");
    c.encoderLayers = config.positive("num_layers", std::nullopt, kMaxLayers);
    c.layers = config.positive("num_decoder_layers", c.encoderLayers, kMaxLayers);
    c.heads = config.positive("num_heads");
    c.vocab = config.positive("vocab_size");
    c.relativeBuckets = config.positive("relative_attention_num_buckets", 32);
    c.relativeMaxDistance = config.positive("relative_attention_max_distance", 128);
    if (c.relativeBuckets < 4)
        config.fail("'relative_attention_num_buckets' must be at least 4");
    c.maxPositions = config.positive("n_positions", Index{1} << 14);
    const std::string projection = config.text("feed_forward_proj", "relu");
    if (projection.rfind("gated-", 0) == 0 || config.flag("is_gated_act", false))
        config.fail("feed_forward_proj '" + projection +
                    "' (gated, T5 v1.1 / Flan-T5) is not supported yet; AttnLab runs relu T5");
}

/// An image model's image, patches and labels (ViTConfig; id2label as transformers saves it,
/// "0".."n-1" -> a name). The labels are the classifier's; a checkpoint without one (ViTModel,
/// Dinov2Model, CLIP) drops them when it is loaded.
void parseVisionSizes(const Reader& config, ModelConfig& c) {
    const Architecture& a = c.arch();
    c.imageSize = config.positive("image_size");
    c.patchSize = config.positive("patch_size");
    c.channels = config.positive("num_channels", 3);
    if (c.imageSize % c.patchSize != 0)
        config.fail("image_size " + std::to_string(c.imageSize) +
                    " is not a multiple of patch_size " + std::to_string(c.patchSize));
    c.leadingTokens = a.names.distillationToken.empty() ? 1 : 2;
    c.positionGrid = c.patchGrid();
    c.maxPositions = c.positionGrid * c.positionGrid + c.leadingTokens;
    if (a.has(kDinov2Keys)) {
        // Initialisation, training and the backbone's outputs: none is on the path from an
        // image to its attention and its classes.
        for (const char* key :
             {"layerscale_value", "drop_path_rate", "use_mask_token", "out_features", "out_indices",
              "stage_names", "apply_layernorm", "reshape_hidden_states"})
            (void)config.has(key);
        config.mustBeFalse("use_swiglu_ffn", "DINOv2 with its plain MLP (the giant's SwiGLU is not "
                                             "supported yet)");
    }
    if (a.has(kClipVisionKeys)) {
        // CLIPModel's projection is as wide as its own projection_dim says, not its tower's.
        const Index width = config.positive("projection_dim", 512);
        if (!a.vision.nestedConfig) c.projectionDim = width;
    }
    if (config.has("id2label")) {
        const Json& names = config.at("id2label");
        if (!names.is_object() || names.empty() ||
            names.size() > static_cast<std::size_t>(kMaxExtent))
            config.fail("'id2label' must be an object naming each class");
        c.labels.assign(names.size(), std::string());
        std::vector<bool> seen(names.size(), false);
        for (const auto& [key, value] : names.items()) {
            std::size_t id = 0;
            const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
            if (error != std::errc() || end != key.data() + key.size() || id >= names.size() ||
                seen[id] || !value.is_string())
                config.fail("'id2label' must map the ids 0 to " + std::to_string(names.size() - 1) +
                            " to names (key '" + key.substr(0, 40) + "')");
            seen[id] = true;
            c.labels[id] = value.get<std::string>();
        }
    }
    if (config.has("num_labels")) {
        const Index count = config.positive("num_labels");
        if (c.labels.empty())
            for (Index i = 0; i < count; ++i)
                c.labels.push_back("LABEL_" + std::to_string(i));
        if (static_cast<Index>(c.labels.size()) != count)
            config.fail("'num_labels' " + std::to_string(count) + " but 'id2label' names " +
                        std::to_string(c.labels.size()));
    }
    c.vocab = static_cast<Index>(c.labels.size());
    // The masked-image-modelling decoder's stride, and ViTModel's pooler: neither is on the
    // path from an image to its attention and its classes.
    (void)config.has("encoder_stride");
    (void)config.has("pooler_output_size");
    (void)config.has("pooler_act");
}

void parseSizes(const Reader& config, const Architecture& a, ModelConfig& c) {
    if (a.has(kSeq2SeqKeys)) {
        parseSeq2SeqSizes(config, c);
    } else if (a.has(kT5Keys)) {
        parseT5Sizes(config, c);
    }
    if (a.has(kSeq2SeqKeys) || a.has(kT5Keys)) {
        c.kvHeads = c.heads;
        if (c.headDim == 0) {
            if (c.hidden % c.heads != 0)
                config.fail("d_model " + std::to_string(c.hidden) +
                            " is not a multiple of the head count " + std::to_string(c.heads));
            c.headDim = c.hidden / c.heads;
        }
        return;
    }
    const bool gpt2 = a.has(kGpt2Keys);
    c.hidden = config.positive(gpt2 ? "n_embd|hidden_size" : "hidden_size");
    c.layers = config.positive(gpt2 ? "n_layer|num_hidden_layers" : "num_hidden_layers",
                               std::nullopt, kMaxLayers);
    c.heads = config.positive(gpt2 ? "n_head|num_attention_heads" : "num_attention_heads");
    c.kvHeads = gpt2 ? c.heads : config.positive("num_key_value_heads", c.heads);
    if (c.heads % c.kvHeads != 0)
        config.fail("num_attention_heads " + std::to_string(c.heads) +
                    " is not a multiple of num_key_value_heads " + std::to_string(c.kvHeads));
    if (!gpt2 && config.has("head_dim")) {
        c.headDim = config.positive("head_dim");
    } else {
        if (c.hidden % c.heads != 0)
            config.fail("hidden size " + std::to_string(c.hidden) +
                        " is not a multiple of the head count " + std::to_string(c.heads) +
                        " and there is no head_dim");
        c.headDim = c.hidden / c.heads;
    }
    if (a.has(kDinov2Keys)) {
        // Dinov2MLP: int(hidden_size * mlp_ratio) features.
        const double ratio = config.number("mlp_ratio", 4.0);
        const double inner = std::floor(static_cast<double>(c.hidden) * ratio);
        if (!(inner >= 1 && inner <= static_cast<double>(kMaxExtent)))
            config.fail("'mlp_ratio' " + std::to_string(ratio) + " gives no MLP width");
        c.intermediate = static_cast<Index>(inner);
    } else {
        c.intermediate =
            gpt2 ? config.positive("n_inner", 4 * c.hidden) : config.positive("intermediate_size");
    }
    if (a.has(kVisionKeys)) {
        parseVisionSizes(config, c);
        return;
    }
    c.vocab = config.positive("vocab_size");
    c.maxPositions = config.positive(gpt2 ? "n_positions|n_ctx|max_position_embeddings"
                                          : "max_position_embeddings");
    if (gpt2) (void)config.has("n_ctx");
}

bool biasOf(const Reader& config, const BiasRule& rule) {
    switch (rule.kind) {
    case BiasRule::Kind::Never:
        return false;
    case BiasRule::Kind::Always:
        return true;
    case BiasRule::Kind::Key:
        return config.flag(rule.key, rule.fallback);
    }
    return false;
}

const Json kNoKeys = Json::object();

/// The RoPE sets and each layer's attention.
void parsePositions(const Reader& config, const Architecture& a, ModelConfig& c) {
    const std::vector<LayerType> types = layerTypes(config, a, c.layers);
    const bool anySliding = std::find(types.begin(), types.end(), LayerType::Sliding) != types.end();
    Index window = -1;
    if (a.has(kSlidingWindow) || a.has(kLayerTypes) || a.has(kAlternatingWindow) ||
        a.has(kWindowPattern)) {
        const bool has = config.has("sliding_window");
        if (anySliding) {
            if (!has && a.slidingWindowDefault <= 0)
                config.fail("a layer slides but there is no 'sliding_window'");
            window = config.positive("sliding_window", static_cast<Index>(a.slidingWindowDefault));
        }
    }
    c.layerAttention.assign(static_cast<std::size_t>(c.layers), LayerAttention{});
    for (std::size_t l = 0; l < types.size(); ++l)
        if (types[l] == LayerType::Sliding) c.layerAttention[l].window = window;

    if (a.positions != Positions::Rope) return;
    RopeContext context;
    context.headDim = c.headDim;
    context.maxPositions = c.maxPositions;
    context.thetaFallback = config.number(
        a.has(kPartialRotary) ? "rope_theta|rotary_emb_base" : "rope_theta", a.ropeThetaDefault);
    if (a.has(kPartialRotary))
        context.partialRotary = config.number("partial_rotary_factor|rotary_pct", 1.0);
    if (a.has(kOriginalMaxPositions) && config.has("original_max_position_embeddings"))
        context.originalMaxPositions = config.positive("original_max_position_embeddings");

    // Which set each layer reads: one set, or one per layer type (Gemma 3).
    bool perType = false;
    if (config.has("rope_parameters")) {
        const Json& json = config.at("rope_parameters");
        if (!json.is_object()) config.fail("'rope_parameters' must be an object");
        perType = json.contains("full_attention") || json.contains("sliding_attention");
        if (perType) {
            const Reader sets = config.child(json, "rope_parameters");
            for (const char* type : {"full_attention", "sliding_attention"}) {
                if (!sets.has(type)) sets.fail(std::string("missing '") + type + "'");
                c.ropes.push_back(parseRope(sets.child(sets.at(type), type), context));
            }
            sets.refuseUnread({});
        } else {
            c.ropes.push_back(parseRope(config.child(json, "rope_parameters"), context));
        }
    } else if (config.has("rope_scaling")) {
        c.ropes.push_back(parseRope(config.child(config.at("rope_scaling"), "rope_scaling"), context));
    } else {
        c.ropes.push_back(parseRope(config.child(kNoKeys, "rope"), context));
    }
    if (!perType && a.has(kLocalRopeBase)) {
        // Gemma 3 before rope_parameters: sliding layers use rope_local_base_freq, unscaled.
        RopeContext local = context;
        local.thetaFallback = config.number("rope_local_base_freq", 10000.0);
        c.ropes.push_back(parseRope(config.child(kNoKeys, "rope"), local));
        perType = true;
    }
    for (std::size_t l = 0; l < types.size(); ++l)
        c.layerAttention[l].rope = perType && types[l] == LayerType::Sliding ? 1 : 0;

    if (a.has(kNoRopeLayers)) {
        if (config.has("no_rope_layers")) {
            const Json& list = config.at("no_rope_layers");
            if (!list.is_array() || static_cast<Index>(list.size()) != c.layers)
                config.fail("'no_rope_layers' must hold one 0 or 1 per layer");
            for (std::size_t l = 0; l < list.size(); ++l) {
                if (!list[l].is_number_integer() || (list[l] != 0 && list[l] != 1))
                    config.fail("'no_rope_layers' must hold one 0 or 1 per layer");
                if (list[l] == 0) c.layerAttention[l].rope = -1; // 1 means "uses RoPE"
            }
            (void)config.has("no_rope_layer_interval");
        } else {
            const Index interval = config.positive("no_rope_layer_interval", 4, kMaxLayers);
            for (Index l = 0; l < c.layers; ++l)
                if ((l + 1) % interval == 0) c.layerAttention[static_cast<std::size_t>(l)].rope = -1;
        }
    }
}

void parseScalings(const Reader& config, const Architecture& a, ModelConfig& c) {
    if (a.embedScaleSqrtHidden) c.embeddingScale = std::sqrt(static_cast<double>(c.hidden));
    if (a.has(kQueryPreAttnScalar))
        c.attentionScale = 1.0 / std::sqrt(config.number("query_pre_attn_scalar", 256.0));
    if (a.has(kSoftcapping)) {
        c.attentionSoftcap = config.number("attn_logit_softcapping", a.attnSoftcapDefault);
        c.finalSoftcap = config.number("final_logit_softcapping", a.finalSoftcapDefault);
        // An explicit null turns a family default off.
        if (config.json().contains("attn_logit_softcapping") &&
            config.json().at("attn_logit_softcapping").is_null())
            c.attentionSoftcap = 0;
        if (config.json().contains("final_logit_softcapping") &&
            config.json().at("final_logit_softcapping").is_null())
            c.finalSoftcap = 0;
    }
    if (a.has(kMultipliers)) {
        c.embeddingScale = config.number("embedding_multiplier", 1.0);
        c.attentionScale = config.number("attention_multiplier", 1.0);
        c.residualScale = config.number("residual_multiplier", 1.0);
        c.logitScale = 1.0 / config.number("logits_scaling", 1.0);
    }
    if (a.has(kGpt2Keys)) {
        config.mustBeFalse("scale_attn_by_inverse_layer_idx", "GPT-2 scales by 1/sqrt(head dim)");
        if (!config.flag("scale_attn_weights", true))
            config.fail("'scale_attn_weights' = false is not supported");
    }
    if (a.has(kParallelResidualKey) && !config.flag("use_parallel_residual", true))
        c.residual = Residual::Sequential;
    if (a.has(kQkLayernormKey)) config.mustBeFalse("qk_layernorm", "Phi without q/k LayerNorm");
    if (a.has(kBidirectionalKey))
        config.mustBeFalse("use_bidirectional_attention", "AttnLab runs these models causally");
}

ModelConfig parseModel(const Reader& config, const Architecture& a) {
    ModelConfig c;
    c.architecture = &a;
    c.residual = a.residual;
    parseSizes(config, a, c);
    c.normEps = a.normEpsKey ? config.number(a.normEpsKey, a.normEpsDefault) : a.normEpsDefault;
    c.activation = parseActivation(config.text(a.activationKey, a.activationDefault), config);
    // An image model has no word embeddings to tie: transformers ties nothing whatever the key
    // says (PretrainedConfig's default, true, is in every full config it saves).
    c.tiedEmbeddings = config.flag("tie_word_embeddings", a.tiedDefault) && !a.has(kVisionKeys);
    c.qkvBias = biasOf(config, a.qkvBias);
    c.outputBias = biasOf(config, a.outBias);
    c.mlpBias = biasOf(config, a.mlpBias);
    c.lmHeadBias = !a.names.logitsBias.empty();
    c.kind = a.kind;
    parsePositions(config, a, c);
    parseScalings(config, a, c);
    if (!a.scaledScores) c.attentionScale = 1.0;
    config.mustBeFalse("add_cross_attention", "cross-attention inside this family");
    if (a.kind == ModelKind::EncoderDecoder) {
        (void)config.has("is_encoder_decoder");
        (void)config.has("is_decoder");
        c.decoderStartTokenId = config.tokenId("decoder_start_token_id");
        if (!c.decoderStartTokenId && a.has(kT5Keys)) c.decoderStartTokenId = config.tokenId("pad_token_id");
        if (!c.decoderStartTokenId) config.fail("missing 'decoder_start_token_id'");
        if (*c.decoderStartTokenId < 0 || *c.decoderStartTokenId >= c.vocab)
            config.fail("'decoder_start_token_id' " + std::to_string(*c.decoderStartTokenId) +
                        " is outside the vocabulary");
        if (a.has(kT5Keys) && config.flag("scale_decoder_outputs", c.tiedEmbeddings))
            c.logitScale = 1.0 / std::sqrt(static_cast<double>(c.hidden));
    } else {
        config.mustBeFalse("is_encoder_decoder", "this family is not an encoder-decoder");
    }
    if (a.has(kVisionKeys)) {
        config.mustBeFalse("is_decoder", "a vision encoder attends two ways");
    } else if (a.kind == ModelKind::Encoder) {
        config.mustBeFalse("is_decoder", "BERT as a decoder is causal; AttnLab runs it as an encoder");
        c.typeVocab = config.positive("type_vocab_size", 2);
        const std::string type = config.text("position_embedding_type", "absolute");
        if (type != "absolute")
            config.fail("position_embedding_type '" + type + "' is not supported (absolute only)");
    } else if (a.kind == ModelKind::Decoder) {
        (void)config.has("is_decoder"); // decoders are causal whatever it says
    }
    if (config.has("pruned_heads") &&
        !(config.at("pruned_heads").is_object() && config.at("pruned_heads").empty()))
        config.fail("'pruned_heads' is not supported");
    c.bosTokenId = config.tokenId("bos_token_id");
    c.eosTokenId = config.tokenId("eos_token_id");
    config.refuseUnread(kChangeNothing);
    return c;
}

/// CLIPModel's config: the image tower's settings in "vision_config" (an old config's second
/// copy, "vision_config_dict", adds its keys and must agree on the ones both name) and the
/// projection's width at the top. The text tower is not run: its settings are not read.
ModelConfig parseNestedVision(const Reader& config, const Architecture& a) {
    if (!config.has("vision_config")) config.fail("missing 'vision_config': the image tower");
    Json merged = config.at("vision_config");
    if (!merged.is_object()) config.fail("'vision_config' must be an object");
    if (config.has("vision_config_dict")) {
        // An old config's second copy of the tower's settings: where both name a key they must
        // agree (versions of transformers differ on which wins).
        const Json& other = config.at("vision_config_dict");
        if (!other.is_object()) config.fail("'vision_config_dict' must be an object");
        for (const auto& [key, value] : other.items()) {
            if (key == "transformers_version") continue;
            const auto it = merged.find(key);
            if (it != merged.end() && *it != value)
                config.fail("'vision_config' and 'vision_config_dict' disagree on '" + key + "'");
            if (it == merged.end()) merged[key] = value;
        }
    }
    const Reader vision = config.child(merged, "vision_config");
    const std::string inner = vision.text("model_type", "clip_vision_model");
    if (inner != "clip_vision_model")
        vision.fail("model_type '" + inner + "' is not CLIP's image tower (clip_vision_model)");
    ModelConfig c = parseModel(vision, a);
    c.projectionDim = config.positive("projection_dim", 512);
    for (const char* key : {"text_config", "text_config_dict", "logit_scale_init_value"})
        (void)config.has(key);
    config.refuseUnread(kChangeNothing);
    return c;
}

} // namespace

std::optional<Index> ModelConfig::uniformWindow() const {
    if (layerAttention.empty()) return -1;
    const Index first = layerAttention.front().window;
    for (const LayerAttention& layer : layerAttention)
        if (layer.window != first) return std::nullopt;
    return first;
}

std::span<const std::string_view> keysThatChangeNothing() {
    return kChangeNothing;
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
        const Architecture* architecture = findArchitecture(type);
        if (!architecture)
            config.fail("model_type '" + type + "' is not supported (AttnLab runs " +
                        architectureList() + ")");
        if (architecture->vision.nestedConfig) return parseNestedVision(config, *architecture);
        return parseModel(config, *architecture);
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

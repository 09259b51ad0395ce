#pragma once
/// The table of architectures AttnLab runs: one row per Hugging Face `model_type`, holding the
/// traits the forward pass reads (norm, MLP, Q/K/V layout, residual, positions, biases), the
/// optional config keys the family may carry and the names of its tensors. The forward, the
/// loader, the window, `bench` and the docs read this table; none of them names a family.
///
/// Adding a family is one row in architecture.cpp and one checkpoint saved by transformers in
/// tests/model/fixtures/hf/ (a test fails for a row without one).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace attnlab::model {

enum class NormKind {
    LayerNorm,     ///< (x - mean) / sqrt(var + eps) * w (+ b)
    RmsNorm,       ///< x / sqrt(mean(x^2) + eps) * w
    RmsNormPlusOne ///< Gemma: x / sqrt(mean(x^2) + eps) * (1 + w)
};

enum class MlpKind {
    Plain,     ///< down(act(up(x)))
    Gated,     ///< down(act(gate(x)) * up(x)): SwiGLU, GeGLU
    GatedFused ///< the same with gate and up stacked in one gate_up_proj [2I, D] (gate first)
};

enum class QkvLayout {
    Separate,   ///< q_proj, k_proj, v_proj
    Fused,      ///< one projection whose output is [q | k | v] (GPT-2's c_attn, Phi-3's qkv_proj)
    FusedPerHead ///< GPT-NeoX's query_key_value: per head [q_h | k_h | v_h]
};

enum class QkNorm {
    None,
    PerHead,       ///< Qwen3, Gemma 3: a norm over each head's hd values
    OverProjection ///< OLMo 2: a norm over the whole q (H*hd) and k (Hkv*hd) projections
};

enum class Residual {
    Sequential,        ///< x += attn(norm(x)); x += mlp(norm(x))
    ParallelSharedNorm, ///< Phi: h = norm(x); x += attn(h) + mlp(h)
    ParallelTwoNorms    ///< GPT-NeoX: x += attn(norm1(x)) + mlp(norm2(x))
};

enum class Positions {
    Learned,        ///< a table of position embeddings (BERT, GPT-2, BART with an offset)
    Rope,           ///< rotary, rotate-half
    Sinusoidal,     ///< Marian: sin in the first half of the features, cos in the second
    RelativeBuckets ///< T5: a learned bias per head and bucketed relative distance
};

/// What the model is: a decoder (causal LM), an encoder (two-way attention: BERT's masked-LM
/// head, or ViT's classifier over an image's patches), or an encoder-decoder (translation:
/// encoder, causal decoder, cross-attention).
enum class ModelKind { Decoder, Encoder, EncoderDecoder };

/// Where a bias comes from: never, always, or a boolean config key with its default.
struct BiasRule {
    enum class Kind { Never, Always, Key } kind = Kind::Never;
    const char* key = nullptr;
    bool fallback = false;

    static constexpr BiasRule never() { return {}; }
    static constexpr BiasRule always() { return {Kind::Always, nullptr, true}; }
    static constexpr BiasRule fromKey(const char* key, bool fallback) {
        return {Kind::Key, key, fallback};
    }
};

/// Optional config keys a family may carry, each understood by the config reader. A key of a
/// feature the row does not list is refused, as is any key nobody understands.
enum Feature : std::uint32_t {
    kGpt2Keys = 1u << 0,           ///< n_embd, n_layer, n_head, n_inner, n_positions, scale_attn_*
    kSlidingWindow = 1u << 1,      ///< sliding_window on every layer (Mistral, Starcoder2, Phi-3)
    kLayerTypes = 1u << 2,         ///< layer_types / use_sliding_window / max_window_layers (Qwen)
    kAlternatingWindow = 1u << 3,  ///< Gemma 2: layer_types, else every other layer sliding
    kWindowPattern = 1u << 4,      ///< Gemma 3: layer_types, else sliding_window_pattern
    kQueryPreAttnScalar = 1u << 5, ///< Gemma 2/3: scale = query_pre_attn_scalar^-1/2
    kSoftcapping = 1u << 6,        ///< attn_logit_softcapping, final_logit_softcapping
    kMultipliers = 1u << 7,        ///< Granite: embedding/attention/residual multipliers, logits_scaling
    kNoRopeLayers = 1u << 8,       ///< SmolLM3: no_rope_layers, no_rope_layer_interval
    kPartialRotary = 1u << 9,      ///< partial_rotary_factor / rotary_pct (rotary_emb_base)
    kParallelResidualKey = 1u << 10, ///< GPT-NeoX: use_parallel_residual (default true)
    kLocalRopeBase = 1u << 11,     ///< Gemma 3 v4 configs: rope_local_base_freq
    kOriginalMaxPositions = 1u << 12, ///< Phi-3: original_max_position_embeddings (longrope)
    kQkLayernormKey = 1u << 13,    ///< Phi: qk_layernorm (false only)
    kBidirectionalKey = 1u << 14,  ///< Gemma: use_bidirectional_attention (false only)
    kBertKeys = 1u << 15,          ///< type_vocab_size, position_embedding_type
    kSeq2SeqKeys = 1u << 16,       ///< d_model, encoder_/decoder_ layers, heads, ffn_dim (BART, Marian)
    kT5Keys = 1u << 17,            ///< d_model, d_kv, d_ff, num_layers, relative_attention_*
    /// An image model (ViT): image_size, patch_size, num_channels, id2label; the input is an
    /// image's patches (a convolution with stride = kernel = patch size) after a class token
    kVisionKeys = 1u << 18,
    /// DINOv2: mlp_ratio, layerscale_value, use_swiglu_ffn (false only), the backbone's keys
    kDinov2Keys = 1u << 19,
    /// CLIP's image tower: projection_dim
    kClipVisionKeys = 1u << 20,
};

/// The names of a family's tensors: module names, to which ".weight" / ".bias" are added. The
/// prefix ("model.") is optional in a checkpoint (a bare base model saves without it); the lm
/// head's name is never prefixed. An empty name means the family has no such tensor.
struct TensorNames {
    std::string_view prefix{};
    std::string_view embed{};
    std::string_view positions{}; ///< learned position embeddings
    std::string_view layers{};    ///< "layers" -> "model.layers.3."
    std::string_view attnNormIn{}, attnNormOut{}; ///< before attention, on its output (Gemma 2, OLMo 2)
    std::string_view mlpNormIn{}, mlpNormOut{};   ///< before the MLP, on its output
    std::string_view q{}, k{}, v{}, qkv{}, o{};
    std::string_view qNorm{}, kNorm{};
    std::string_view up{}, gate{}, gateUp{}, down{};
    std::string_view finalNorm{};
    std::string_view lmHead{};
    // Encoders and encoder-decoders:
    std::string_view embedNorm{};   ///< a norm of the summed embeddings (BERT, BART)
    std::string_view tokenTypes{};  ///< BERT's token type embeddings (type 0 is added)
    std::string_view attnNormAfter{}, mlpNormAfter{}; ///< post-LN: a norm after the residual sum
    std::string_view crossQ{}, crossK{}, crossV{}, crossO{}; ///< the decoder's cross-attention
    std::string_view crossNormIn{}, crossNormAfter{};
    std::string_view relativeBias{}; ///< T5: in the stack's first layer, [buckets, H]
    std::string_view headTransform{}, headNorm{}; ///< BERT's masked-LM head (never prefixed)
    std::string_view logitsBias{};   ///< a bias added to the logits (never prefixed)
    // Vision (embed: the patch projection, a convolution; positions and the class token are
    // parameters, named without ".weight"):
    std::string_view classToken{};   ///< [1, 1, D], the first position
    /// DeiT: the distillation token [1, 1, D], the second position, and the classifier that
    /// reads it (its logits and the class token's are averaged); a checkpoint without that
    /// classifier (DeiTForImageClassification) reads the class token alone, with `classifier`.
    std::string_view distillationToken{};
    std::string_view distillationHead{};
    /// DINOv2's layer scale: a per-feature factor [D] on the attention's and the MLP's output
    /// before each residual sum (a parameter, named without ".weight").
    std::string_view attnScale{}, mlpScale{};
    /// CLIP: a norm of the class token's final state (the pooled output), and the projection
    /// [projection_dim, D] without bias that makes it the image embedding (never prefixed).
    std::string_view poolNorm{};
    std::string_view projection{};
};

/// How an image model's input and output differ from ViT's.
struct VisionTraits {
    bool patchBias = true; ///< the patch convolution has a bias (CLIP's has none)
    /// The learned positions are interpolated (bicubic, antialiased, as torch's interpolate) to
    /// the grid of the image the processor makes, when it is not the table's (DINOv2)
    bool interpolatedPositions = false;
    /// The classifier reads the class token's final state and the mean of the patches' (2 D
    /// inputs; DINOv2), not the class token's alone
    bool headReadsPatchMean = false;
    /// The model's settings sit in the config's "vision_config" (CLIPModel: the image tower of
    /// two; the text tower is not run)
    bool nestedConfig = false;
};

struct Architecture {
    std::string_view modelType;   ///< config.json's model_type
    std::string_view displayName; ///< "Gemma 2"
    std::string_view examples;    ///< released checkpoints of this family, for the docs and help
    NormKind norm = NormKind::RmsNorm;
    bool normBias = false;        ///< LayerNorms carry a bias
    MlpKind mlp = MlpKind::Gated;
    QkvLayout qkv = QkvLayout::Separate;
    QkNorm qkNorm = QkNorm::None;
    Residual residual = Residual::Sequential;
    Positions positions = Positions::Rope;
    bool weightsInOut = false;    ///< GPT-2's Conv1D: matrices stored [in, out]
    bool embedScaleSqrtHidden = false; ///< Gemma: embeddings times sqrt(hidden_size)
    BiasRule qkvBias{}, outBias{}, mlpBias{};
    const char* normEpsKey = "rms_norm_eps"; ///< nullptr: the family's eps is fixed
    double normEpsDefault = 1e-6;
    const char* activationKey = "hidden_act";
    const char* activationDefault = "silu";
    bool tiedDefault = false;     ///< tie_word_embeddings when the config does not say
    double ropeThetaDefault = 10000.0;
    long long slidingWindowDefault = -1; ///< sliding_window when the config does not say
    double attnSoftcapDefault = 0;       ///< attn_logit_softcapping when the config does not say
    double finalSoftcapDefault = 0;      ///< final_logit_softcapping likewise
    std::uint32_t features = 0;
    ModelKind kind = ModelKind::Decoder;
    bool scaledScores = true; ///< scores times 1/sqrt(head_dim); T5 does not scale
    long long positionOffset = 0; ///< BART's learned positions start at row 2
    TensorNames names;        ///< the model, or an encoder-decoder's decoder
    TensorNames encoderNames{}; ///< an encoder-decoder's encoder
    VisionTraits vision{};      ///< an image model's (kVisionKeys)

    bool has(Feature f) const { return (features & f) != 0; }
};

/// Every architecture, in the order the docs list them.
std::span<const Architecture> architectures();
/// The row of a model_type, or nullptr.
const Architecture* findArchitecture(std::string_view modelType);
/// "gpt2, llama, qwen2, ..." for messages and help.
std::string architectureList();
/// What a row says, in words: its norm, MLP, attention and positions.
struct ArchitectureSummary {
    std::string norm, mlp, attention, positions;
};
ArchitectureSummary summarize(const Architecture& a);
/// The whole table as Markdown, one row per model_type (docs/models.md carries it verbatim;
/// `attnlab model --architectures` prints it).
std::string architectureMarkdown();

} // namespace attnlab::model

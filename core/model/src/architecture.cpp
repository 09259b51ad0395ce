// The table of architectures: one row per model_type, checked against a checkpoint saved by
// transformers itself (tests/model/fixtures/hf/, tests/model/architecture_test.cpp). The rows
// say what the family's modeling file in transformers does; the forward reads only this.

#include "attnlab/model/architecture.h"

#include <array>

namespace attnlab::model {
namespace {

using B = BiasRule;

/// The module names of the Llama lineage (Llama, Mistral, Qwen, Gemma, Granite, SmolLM3, ...).
constexpr TensorNames kLlamaNames{
    .prefix = "model.",
    .embed = "embed_tokens",
    .layers = "layers",
    .attnNormIn = "input_layernorm",
    .mlpNormIn = "post_attention_layernorm",
    .q = "self_attn.q_proj",
    .k = "self_attn.k_proj",
    .v = "self_attn.v_proj",
    .o = "self_attn.o_proj",
    .up = "mlp.up_proj",
    .gate = "mlp.gate_proj",
    .down = "mlp.down_proj",
    .finalNorm = "norm",
    .lmHead = "lm_head",
};

constexpr TensorNames withQkNorm(TensorNames names) {
    names.qNorm = "self_attn.q_norm";
    names.kNorm = "self_attn.k_norm";
    return names;
}

/// Gemma 2 and 3: a norm before and after both the attention and the MLP.
constexpr TensorNames sandwiched(TensorNames names) {
    names.attnNormOut = "post_attention_layernorm";
    names.mlpNormIn = "pre_feedforward_layernorm";
    names.mlpNormOut = "post_feedforward_layernorm";
    return names;
}

/// OLMo 2: no norm on the way in, one on each block's output.
constexpr TensorNames postNormed(TensorNames names) {
    names.attnNormIn = {};
    names.mlpNormIn = {};
    names.attnNormOut = "post_attention_layernorm";
    names.mlpNormOut = "post_feedforward_layernorm";
    return names;
}

/// BART's decoder and encoder (post-LN: each sublayer's norm after its residual sum).
constexpr TensorNames kBartDecoder{
    .prefix = "model.",
    .embed = "shared",
    .positions = "decoder.embed_positions",
    .layers = "decoder.layers",
    .q = "self_attn.q_proj",
    .k = "self_attn.k_proj",
    .v = "self_attn.v_proj",
    .o = "self_attn.out_proj",
    .up = "fc1",
    .down = "fc2",
    .lmHead = "lm_head",
    .embedNorm = "decoder.layernorm_embedding",
    .attnNormAfter = "self_attn_layer_norm",
    .mlpNormAfter = "final_layer_norm",
    .crossQ = "encoder_attn.q_proj",
    .crossK = "encoder_attn.k_proj",
    .crossV = "encoder_attn.v_proj",
    .crossO = "encoder_attn.out_proj",
    .crossNormAfter = "encoder_attn_layer_norm",
    .logitsBias = "final_logits_bias",
};

constexpr TensorNames kBartEncoder{
    .prefix = "model.",
    .embed = "shared",
    .positions = "encoder.embed_positions",
    .layers = "encoder.layers",
    .q = "self_attn.q_proj",
    .k = "self_attn.k_proj",
    .v = "self_attn.v_proj",
    .o = "self_attn.out_proj",
    .up = "fc1",
    .down = "fc2",
    .embedNorm = "encoder.layernorm_embedding",
    .attnNormAfter = "self_attn_layer_norm",
    .mlpNormAfter = "final_layer_norm",
};

/// Marian: BART's names without learned positions or an embedding norm.
constexpr TensorNames withoutPositions(TensorNames names) {
    names.positions = {};
    names.embedNorm = {};
    return names;
}

/// ViT's encoder (pre-LN, a classifier on the class token); DeiT's is the same under "deit.".
constexpr TensorNames kVitNames{.prefix = "vit.",
                                .embed = "embeddings.patch_embeddings.projection",
                                .positions = "embeddings.position_embeddings",
                                .layers = "encoder.layer",
                                .attnNormIn = "layernorm_before",
                                .mlpNormIn = "layernorm_after",
                                .q = "attention.attention.query",
                                .k = "attention.attention.key",
                                .v = "attention.attention.value",
                                .o = "attention.output.dense",
                                .up = "intermediate.dense",
                                .down = "output.dense",
                                .finalNorm = "layernorm",
                                .lmHead = "classifier",
                                .logitsBias = "classifier.bias",
                                .classToken = "embeddings.cls_token"};

/// DeiT: the distillation token after the class token, and a classifier on each.
constexpr TensorNames distilled(TensorNames names) {
    names.prefix = "deit.";
    names.lmHead = "cls_classifier";
    names.logitsBias = "cls_classifier.bias";
    names.distillationToken = "embeddings.distillation_token";
    names.distillationHead = "distillation_classifier";
    return names;
}

/// An image classifier of ViT's shape: learned positions over its leading tokens and patches,
/// LayerNorm with bias, GELU, biases everywhere (q/k/v's by `qkv_bias`).
constexpr Architecture visionTransformer(std::string_view type, std::string_view name,
                                         std::string_view examples, TensorNames names) {
    return Architecture{
        .modelType = type,
        .displayName = name,
        .examples = examples,
        .norm = NormKind::LayerNorm,
        .normBias = true,
        .mlp = MlpKind::Plain,
        .positions = Positions::Learned,
        .qkvBias = B::fromKey("qkv_bias", true),
        .outBias = B::always(),
        .mlpBias = B::always(),
        .normEpsKey = "layer_norm_eps",
        .normEpsDefault = 1e-12,
        .activationDefault = "gelu",
        .features = kVisionKeys,
        .kind = ModelKind::Encoder,
        .names = names,
    };
}

/// DINOv2's encoder (modeling_dinov2.py): ViT's with norm1/norm2, fc1/fc2 and a layer scale
/// on each block's output; Dinov2ForImageClassification's classifier reads [CLS, patch mean].
constexpr TensorNames layerScaled(TensorNames names) {
    names.prefix = "dinov2.";
    names.attnNormIn = "norm1";
    names.mlpNormIn = "norm2";
    names.up = "mlp.fc1";
    names.down = "mlp.fc2";
    names.attnScale = "layer_scale1.lambda1";
    names.mlpScale = "layer_scale2.lambda1";
    return names;
}

/// CLIP's image tower (modeling_clip.py, CLIPVisionTransformer): a bias-free patch convolution,
/// the class embedding [D], positions as an embedding table, a norm before the encoder
/// (pre_layrnorm), none after it but on the pooled class token (post_layernorm), and with a
/// projection (CLIPVisionModelWithProjection, CLIPModel) the image embedding.
constexpr TensorNames kClipVisionNames{.prefix = "vision_model.",
                                       .embed = "embeddings.patch_embedding",
                                       .positions = "embeddings.position_embedding.weight",
                                       .layers = "encoder.layers",
                                       .attnNormIn = "layer_norm1",
                                       .mlpNormIn = "layer_norm2",
                                       .q = "self_attn.q_proj",
                                       .k = "self_attn.k_proj",
                                       .v = "self_attn.v_proj",
                                       .o = "self_attn.out_proj",
                                       .up = "mlp.fc1",
                                       .down = "mlp.fc2",
                                       .embedNorm = "pre_layrnorm",
                                       .classToken = "embeddings.class_embedding",
                                       .poolNorm = "post_layernorm",
                                       .projection = "visual_projection"};

constexpr Architecture dinov2() {
    Architecture a = visionTransformer("dinov2", "DINOv2",
                                       "facebook/dinov2-small, facebook/dinov2-base, "
                                       "facebook/dinov2-small-imagenet1k-1-layer",
                                       layerScaled(kVitNames));
    a.normEpsDefault = 1e-6;
    a.features = kVisionKeys | kDinov2Keys;
    a.vision.interpolatedPositions = true;
    a.vision.headReadsPatchMean = true;
    return a;
}

/// CLIP's image tower: alone (clip_vision_model) or as the image half of CLIPModel (clip).
constexpr Architecture clipVision(std::string_view type, std::string_view name,
                                  std::string_view examples, bool nested) {
    Architecture a = visionTransformer(type, name, examples, kClipVisionNames);
    a.qkvBias = B::always();
    a.normEpsDefault = 1e-5;
    a.activationDefault = "quick_gelu";
    a.features = kVisionKeys | kClipVisionKeys;
    a.vision.patchBias = false;
    a.vision.nestedConfig = nested;
    return a;
}

constexpr std::array kArchitectures{
    Architecture{
        .modelType = "gpt2",
        .displayName = "GPT-2",
        .examples = "gpt2, distilgpt2",
        .norm = NormKind::LayerNorm,
        .normBias = true,
        .mlp = MlpKind::Plain,
        .qkv = QkvLayout::Fused,
        .positions = Positions::Learned,
        .weightsInOut = true,
        .qkvBias = B::always(),
        .outBias = B::always(),
        .mlpBias = B::always(),
        .normEpsKey = "layer_norm_epsilon",
        .normEpsDefault = 1e-5,
        .activationKey = "activation_function",
        .activationDefault = "gelu_new",
        .tiedDefault = true,
        .features = kGpt2Keys,
        .names = {.prefix = "transformer.",
                  .embed = "wte",
                  .positions = "wpe",
                  .layers = "h",
                  .attnNormIn = "ln_1",
                  .mlpNormIn = "ln_2",
                  .qkv = "attn.c_attn",
                  .o = "attn.c_proj",
                  .up = "mlp.c_fc",
                  .down = "mlp.c_proj",
                  .finalNorm = "ln_f",
                  .lmHead = "lm_head"},
    },
    Architecture{
        .modelType = "llama",
        .displayName = "Llama",
        .examples = "Llama 2, Llama 3.x, TinyLlama, DeepSeek-R1-Distill-Llama",
        .qkvBias = B::fromKey("attention_bias", false),
        .outBias = B::fromKey("attention_bias", false),
        .mlpBias = B::fromKey("mlp_bias", false),
        .names = kLlamaNames,
    },
    Architecture{
        .modelType = "qwen2",
        .displayName = "Qwen2",
        .examples = "Qwen2, Qwen2.5, DeepSeek-R1-Distill-Qwen",
        .qkvBias = B::always(),
        .features = kLayerTypes,
        .names = kLlamaNames,
    },
    Architecture{
        .modelType = "qwen3",
        .displayName = "Qwen3",
        .examples = "Qwen3",
        .qkNorm = QkNorm::PerHead,
        .qkvBias = B::fromKey("attention_bias", false),
        .outBias = B::fromKey("attention_bias", false),
        .features = kLayerTypes,
        .names = withQkNorm(kLlamaNames),
    },
    Architecture{
        .modelType = "mistral",
        .displayName = "Mistral",
        .examples = "Mistral 7B, Ministral",
        .slidingWindowDefault = 4096,
        .features = kSlidingWindow,
        .names = kLlamaNames,
    },
    Architecture{
        .modelType = "gemma",
        .displayName = "Gemma",
        .examples = "Gemma 2B/7B, CodeGemma",
        .norm = NormKind::RmsNormPlusOne,
        .embedScaleSqrtHidden = true,
        .qkvBias = B::fromKey("attention_bias", false),
        .outBias = B::fromKey("attention_bias", false),
        .activationKey = "hidden_activation|hidden_act",
        .activationDefault = "gelu_pytorch_tanh",
        .tiedDefault = true,
        .features = kBidirectionalKey,
        .names = kLlamaNames,
    },
    Architecture{
        .modelType = "gemma2",
        .displayName = "Gemma 2",
        .examples = "Gemma 2 2B/9B/27B",
        .norm = NormKind::RmsNormPlusOne,
        .embedScaleSqrtHidden = true,
        .qkvBias = B::fromKey("attention_bias", false),
        .outBias = B::fromKey("attention_bias", false),
        .activationKey = "hidden_activation|hidden_act",
        .activationDefault = "gelu_pytorch_tanh",
        .tiedDefault = true,
        .slidingWindowDefault = 4096,
        .attnSoftcapDefault = 50.0,
        .finalSoftcapDefault = 30.0,
        .features = kAlternatingWindow | kQueryPreAttnScalar | kSoftcapping | kBidirectionalKey,
        .names = sandwiched(kLlamaNames),
    },
    Architecture{
        .modelType = "gemma3_text",
        .displayName = "Gemma 3",
        .examples = "Gemma 3 1B (text), the text tower of Gemma 3 4B-27B",
        .norm = NormKind::RmsNormPlusOne,
        .qkNorm = QkNorm::PerHead,
        .embedScaleSqrtHidden = true,
        .qkvBias = B::fromKey("attention_bias", false),
        .outBias = B::fromKey("attention_bias", false),
        .activationKey = "hidden_activation|hidden_act",
        .activationDefault = "gelu_pytorch_tanh",
        .tiedDefault = true,
        .ropeThetaDefault = 1000000.0,
        .slidingWindowDefault = 4096,
        .features = kWindowPattern | kQueryPreAttnScalar | kSoftcapping | kLocalRopeBase |
                    kBidirectionalKey,
        .names = withQkNorm(sandwiched(kLlamaNames)),
    },
    Architecture{
        .modelType = "phi3",
        .displayName = "Phi-3",
        .examples = "Phi-3 mini/medium, Phi-3.5 mini, Phi-4 mini",
        .mlp = MlpKind::GatedFused,
        .qkv = QkvLayout::Fused,
        .normEpsDefault = 1e-5,
        .features = kSlidingWindow | kPartialRotary | kOriginalMaxPositions,
        .names = [] {
            TensorNames names = kLlamaNames;
            names.q = names.k = names.v = names.up = names.gate = {};
            names.qkv = "self_attn.qkv_proj";
            names.gateUp = "mlp.gate_up_proj";
            return names;
        }(),
    },
    Architecture{
        .modelType = "phi",
        .displayName = "Phi",
        .examples = "Phi-1, Phi-1.5, Phi-2",
        .norm = NormKind::LayerNorm,
        .normBias = true,
        .mlp = MlpKind::Plain,
        .residual = Residual::ParallelSharedNorm,
        .qkvBias = B::always(),
        .outBias = B::always(),
        .mlpBias = B::always(),
        .normEpsKey = "layer_norm_eps",
        .normEpsDefault = 1e-5,
        .activationDefault = "gelu_new",
        .features = kPartialRotary | kQkLayernormKey,
        .names = {.prefix = "model.",
                  .embed = "embed_tokens",
                  .layers = "layers",
                  .attnNormIn = "input_layernorm",
                  .q = "self_attn.q_proj",
                  .k = "self_attn.k_proj",
                  .v = "self_attn.v_proj",
                  .o = "self_attn.dense",
                  .up = "mlp.fc1",
                  .down = "mlp.fc2",
                  .finalNorm = "final_layernorm",
                  .lmHead = "lm_head",
                  .logitsBias = "lm_head.bias"},
    },
    Architecture{
        .modelType = "gpt_neox",
        .displayName = "GPT-NeoX",
        .examples = "Pythia, GPT-NeoX-20B",
        .norm = NormKind::LayerNorm,
        .normBias = true,
        .mlp = MlpKind::Plain,
        .qkv = QkvLayout::FusedPerHead,
        .residual = Residual::ParallelTwoNorms,
        .qkvBias = B::fromKey("attention_bias", true),
        .outBias = B::fromKey("attention_bias", true),
        .mlpBias = B::always(),
        .normEpsKey = "layer_norm_eps",
        .normEpsDefault = 1e-5,
        .activationDefault = "gelu",
        .features = kPartialRotary | kParallelResidualKey,
        .names = {.prefix = "gpt_neox.",
                  .embed = "embed_in",
                  .layers = "layers",
                  .attnNormIn = "input_layernorm",
                  .mlpNormIn = "post_attention_layernorm",
                  .qkv = "attention.query_key_value",
                  .o = "attention.dense",
                  .up = "mlp.dense_h_to_4h",
                  .down = "mlp.dense_4h_to_h",
                  .finalNorm = "final_layer_norm",
                  .lmHead = "embed_out"},
    },
    Architecture{
        .modelType = "olmo2",
        .displayName = "OLMo 2",
        .examples = "OLMo 2 1B/7B/13B",
        .qkNorm = QkNorm::OverProjection,
        .qkvBias = B::fromKey("attention_bias", false),
        .outBias = B::fromKey("attention_bias", false),
        .normEpsDefault = 1e-5,
        .names = withQkNorm(postNormed(kLlamaNames)),
    },
    Architecture{
        .modelType = "granite",
        .displayName = "Granite",
        .examples = "Granite 3.x",
        .qkvBias = B::fromKey("attention_bias", false),
        .outBias = B::fromKey("attention_bias", false),
        .mlpBias = B::fromKey("mlp_bias", false),
        .features = kMultipliers,
        .names = kLlamaNames,
    },
    Architecture{
        .modelType = "starcoder2",
        .displayName = "StarCoder2",
        .examples = "StarCoder2 3B/7B/15B",
        .norm = NormKind::LayerNorm,
        .normBias = true,
        .mlp = MlpKind::Plain,
        .qkvBias = B::fromKey("use_bias", true),
        .outBias = B::fromKey("use_bias", true),
        .mlpBias = B::fromKey("use_bias", true),
        .normEpsKey = "norm_epsilon",
        .normEpsDefault = 1e-5,
        .activationDefault = "gelu_pytorch_tanh",
        .tiedDefault = true,
        .features = kSlidingWindow,
        .names = [] {
            TensorNames names = kLlamaNames;
            names.gate = {};
            names.up = "mlp.c_fc";
            names.down = "mlp.c_proj";
            return names;
        }(),
    },
    Architecture{
        .modelType = "smollm3",
        .displayName = "SmolLM3",
        .examples = "SmolLM3 3B",
        .qkvBias = B::fromKey("attention_bias", false),
        .outBias = B::fromKey("attention_bias", false),
        .mlpBias = B::fromKey("mlp_bias", false),
        .tiedDefault = true,
        .features = kLayerTypes | kNoRopeLayers,
        .names = kLlamaNames,
    },
    Architecture{
        .modelType = "bert",
        .displayName = "BERT",
        .examples = "bert-base-uncased, bert-base-chinese, MiniLM",
        .norm = NormKind::LayerNorm,
        .normBias = true,
        .mlp = MlpKind::Plain,
        .positions = Positions::Learned,
        .qkvBias = B::always(),
        .outBias = B::always(),
        .mlpBias = B::always(),
        .normEpsKey = "layer_norm_eps",
        .normEpsDefault = 1e-12,
        .activationDefault = "gelu",
        .tiedDefault = true,
        .features = kBertKeys,
        .kind = ModelKind::Encoder,
        .names = {.prefix = "bert.",
                  .embed = "embeddings.word_embeddings",
                  .positions = "embeddings.position_embeddings",
                  .layers = "encoder.layer",
                  .q = "attention.self.query",
                  .k = "attention.self.key",
                  .v = "attention.self.value",
                  .o = "attention.output.dense",
                  .up = "intermediate.dense",
                  .down = "output.dense",
                  .lmHead = "cls.predictions.decoder",
                  .embedNorm = "embeddings.LayerNorm",
                  .tokenTypes = "embeddings.token_type_embeddings",
                  .attnNormAfter = "attention.output.LayerNorm",
                  .mlpNormAfter = "output.LayerNorm",
                  .headTransform = "cls.predictions.transform.dense",
                  .headNorm = "cls.predictions.transform.LayerNorm",
                  .logitsBias = "cls.predictions.bias"},
    },
    visionTransformer("vit", "ViT", "google/vit-base-patch16-224, WinKawaks/vit-tiny-patch16-224",
                      kVitNames),
    visionTransformer("deit", "DeiT",
                      "facebook/deit-tiny-distilled-patch16-224, facebook/deit-small-patch16-224",
                      distilled(kVitNames)),
    dinov2(),
    clipVision("clip_vision_model", "CLIP vision",
               "openai/clip-vit-base-patch32 (CLIPVisionModel, CLIPVisionModelWithProjection)",
               false),
    clipVision("clip", "CLIP",
               "openai/clip-vit-base-patch32, openai/clip-vit-large-patch14 (the image tower)",
               true),
    Architecture{
        .modelType = "bart",
        .displayName = "BART",
        .examples = "facebook/bart-base, bart-large-cnn",
        .norm = NormKind::LayerNorm,
        .normBias = true,
        .mlp = MlpKind::Plain,
        .positions = Positions::Learned,
        .qkvBias = B::always(),
        .outBias = B::always(),
        .mlpBias = B::always(),
        .normEpsKey = nullptr,
        .normEpsDefault = 1e-5,
        .activationKey = "activation_function",
        .activationDefault = "gelu",
        .tiedDefault = true,
        .features = kSeq2SeqKeys,
        .kind = ModelKind::EncoderDecoder,
        .positionOffset = 2,
        .names = kBartDecoder,
        .encoderNames = kBartEncoder,
    },
    Architecture{
        .modelType = "marian",
        .displayName = "Marian",
        .examples = "Helsinki-NLP/opus-mt-en-zh and the other opus-mt models",
        .norm = NormKind::LayerNorm,
        .normBias = true,
        .mlp = MlpKind::Plain,
        .positions = Positions::Sinusoidal,
        .qkvBias = B::always(),
        .outBias = B::always(),
        .mlpBias = B::always(),
        .normEpsKey = nullptr,
        .normEpsDefault = 1e-5,
        .activationKey = "activation_function",
        .activationDefault = "gelu",
        .tiedDefault = true,
        .features = kSeq2SeqKeys,
        .kind = ModelKind::EncoderDecoder,
        .names = withoutPositions(kBartDecoder),
        .encoderNames = withoutPositions(kBartEncoder),
    },
    Architecture{
        .modelType = "t5",
        .displayName = "T5",
        .examples = "t5-small, t5-base",
        .mlp = MlpKind::Plain,
        .positions = Positions::RelativeBuckets,
        .normEpsKey = "layer_norm_epsilon",
        .activationKey = "dense_act_fn",
        .activationDefault = "relu",
        .tiedDefault = true,
        .features = kT5Keys,
        .kind = ModelKind::EncoderDecoder,
        .scaledScores = false,
        .names = {.embed = "shared",
                  .layers = "decoder.block",
                  .attnNormIn = "layer.0.layer_norm",
                  .mlpNormIn = "layer.2.layer_norm",
                  .q = "layer.0.SelfAttention.q",
                  .k = "layer.0.SelfAttention.k",
                  .v = "layer.0.SelfAttention.v",
                  .o = "layer.0.SelfAttention.o",
                  .up = "layer.2.DenseReluDense.wi",
                  .down = "layer.2.DenseReluDense.wo",
                  .finalNorm = "decoder.final_layer_norm",
                  .lmHead = "lm_head",
                  .crossQ = "layer.1.EncDecAttention.q",
                  .crossK = "layer.1.EncDecAttention.k",
                  .crossV = "layer.1.EncDecAttention.v",
                  .crossO = "layer.1.EncDecAttention.o",
                  .crossNormIn = "layer.1.layer_norm",
                  .relativeBias = "layer.0.SelfAttention.relative_attention_bias"},
        .encoderNames = {.embed = "shared",
                         .layers = "encoder.block",
                         .attnNormIn = "layer.0.layer_norm",
                         .mlpNormIn = "layer.1.layer_norm",
                         .q = "layer.0.SelfAttention.q",
                         .k = "layer.0.SelfAttention.k",
                         .v = "layer.0.SelfAttention.v",
                         .o = "layer.0.SelfAttention.o",
                         .up = "layer.1.DenseReluDense.wi",
                         .down = "layer.1.DenseReluDense.wo",
                         .finalNorm = "encoder.final_layer_norm",
                         .relativeBias = "layer.0.SelfAttention.relative_attention_bias"},
    },
};

} // namespace

std::span<const Architecture> architectures() {
    return kArchitectures;
}

const Architecture* findArchitecture(std::string_view modelType) {
    for (const Architecture& a : kArchitectures)
        if (a.modelType == modelType) return &a;
    return nullptr;
}

namespace {

std::string activationName(std::string_view name) {
    if (name == "silu") return "SiLU";
    if (name == "gelu") return "GELU (erf)";
    if (name == "relu") return "ReLU";
    if (name == "quick_gelu") return "quick GELU";
    return "tanh GELU"; // gelu_new, gelu_pytorch_tanh
}

} // namespace

ArchitectureSummary summarize(const Architecture& a) {
    ArchitectureSummary s;
    const TensorNames& n = a.names;
    s.norm = a.norm == NormKind::LayerNorm        ? "LayerNorm"
             : a.norm == NormKind::RmsNorm        ? "RMSNorm"
                                                  : "RMSNorm x (1 + w)";
    if (a.normBias) s.norm += " with bias";
    const bool in = !n.attnNormIn.empty();
    const bool out = !n.attnNormOut.empty();
    s.norm += !n.attnNormAfter.empty() ? ", after each residual sum (post-norm)"
              : in && out              ? ", before and after each block"
              : out                    ? ", on each block's output"
                                       : ", pre-norm";
    if (!n.embedNorm.empty()) s.norm += "; embeddings normed";

    const std::string act = activationName(a.activationDefault);
    switch (a.mlp) {
    case MlpKind::Plain:
        s.mlp = "up, " + act + ", down";
        break;
    case MlpKind::Gated:
        s.mlp = a.activationDefault == std::string_view("silu") ? "SwiGLU" : "GeGLU (" + act + ")";
        break;
    case MlpKind::GatedFused:
        s.mlp = std::string(a.activationDefault == std::string_view("silu") ? "SwiGLU" : "GeGLU") +
                ", fused `gate_up_proj`";
        break;
    }
    if (!a.names.headTransform.empty()) s.mlp += "; masked-LM head: dense, activation, norm";
    if (!n.attnScale.empty()) s.mlp += "; layer scale on each block's output";
    if (a.has(kVisionKeys))
        s.mlp += !n.projection.empty() ? "; no classes: the class token, normed and projected"
                 : a.vision.headReadsPatchMean
                     ? "; classifier on the class token and the patch mean"
                 : n.distillationToken.empty() ? "; classifier on the class token"
                                               : "; classifiers on the class and distillation "
                                                 "tokens, averaged (or the class token's alone)";
    if (a.residual == Residual::ParallelSharedNorm)
        s.mlp += "; parallel to attention, one shared norm";
    else if (a.residual == Residual::ParallelTwoNorms)
        s.mlp += "; parallel to attention (`use_parallel_residual`)";

    switch (a.qkv) {
    case QkvLayout::Separate:
        s.attention = "q/k/v projections";
        break;
    case QkvLayout::Fused:
        s.attention = a.weightsInOut ? "fused Conv1D `c_attn` [in, out]" : "fused `qkv_proj`";
        break;
    case QkvLayout::FusedPerHead:
        s.attention = "fused per-head `query_key_value`";
        break;
    }
    if (a.kind == ModelKind::Encoder) s.attention += ", two-way (no causal mask)";
    if (a.kind == ModelKind::EncoderDecoder)
        s.attention += ": two-way encoder, causal decoder, cross-attention to the source";
    if (a.kind == ModelKind::Decoder && !a.has(kGpt2Keys) && a.qkv != QkvLayout::FusedPerHead)
        s.attention += ", grouped-query";
    if (!a.scaledScores) s.attention += ", scores not scaled by 1/sqrt(d)";
    if (a.qkNorm == QkNorm::PerHead) s.attention += ", q/k norm per head";
    if (a.qkNorm == QkNorm::OverProjection) s.attention += ", q/k norm over the projection";
    if (a.qkvBias.kind == BiasRule::Kind::Always) s.attention += ", q/k/v bias";
    if (a.qkvBias.kind == BiasRule::Kind::Key)
        s.attention += std::string(", biases: `") + a.qkvBias.key + "`";
    if (a.has(kSlidingWindow)) s.attention += ", `sliding_window` on every layer";
    if (a.has(kLayerTypes)) s.attention += ", `layer_types` / `use_sliding_window`";
    if (a.has(kAlternatingWindow)) s.attention += ", sliding window on alternate layers";
    if (a.has(kWindowPattern)) s.attention += ", sliding window except every 6th layer";
    if (a.has(kQueryPreAttnScalar)) s.attention += ", scale `query_pre_attn_scalar`^-1/2";
    if (a.has(kSoftcapping))
        s.attention += a.attnSoftcapDefault > 0 ? ", soft-capped scores and logits"
                                                : ", soft-capping when the config sets it";
    if (a.has(kMultipliers))
        s.attention += ", embedding / attention / residual multipliers, `logits_scaling`";
    if (a.embedScaleSqrtHidden) s.attention += ", embeddings x sqrt(hidden)";

    if (a.has(kVisionKeys)) {
        s.positions = std::string("learned, over the class token") +
                      (n.distillationToken.empty() ? "" : ", the distillation token") +
                      " and the image's patches (a convolution, stride = kernel = patch size" +
                      (a.vision.patchBias ? "" : ", no bias") + ")";
        if (a.vision.interpolatedPositions)
            s.positions += ", bicubic-interpolated to the processor's grid";
        if (a.vision.nestedConfig) s.positions += "; the config's `vision_config`";
    } else if (a.positions == Positions::Learned) {
        s.positions = a.positionOffset > 0 ? "learned, from row " + std::to_string(a.positionOffset)
                                            : "learned";
        if (!a.names.tokenTypes.empty()) s.positions += ", token type 0 added";
    } else if (a.positions == Positions::Sinusoidal) {
        s.positions = "sinusoidal (sin half, cos half)";
    } else if (a.positions == Positions::RelativeBuckets) {
        s.positions = "relative: a learned bias per head and distance bucket";
    } else {
        s.positions = "RoPE (rotate-half)";
        if (a.has(kPartialRotary)) s.positions += ", partial (`partial_rotary_factor`)";
        if (a.has(kLocalRopeBase)) s.positions += ", local and global theta";
        if (a.has(kNoRopeLayers)) s.positions += ", NoPE layers (`no_rope_layers`)";
    }
    return s;
}

std::string architectureMarkdown() {
    std::string table = "| `model_type` | family | checkpoints | norm | MLP | attention | positions |\n"
                        "| --- | --- | --- | --- | --- | --- | --- |\n";
    for (const Architecture& a : kArchitectures) {
        const ArchitectureSummary s = summarize(a);
        table += "| `" + std::string(a.modelType) + "` | " + std::string(a.displayName) + " | " +
                 std::string(a.examples) + " | " + s.norm + " | " + s.mlp + " | " + s.attention +
                 " | " + s.positions + " |\n";
    }
    return table;
}

std::string architectureList() {
    std::string list;
    for (const Architecture& a : kArchitectures) {
        if (!list.empty()) list += ", ";
        list += a.modelType;
    }
    return list;
}

} // namespace attnlab::model

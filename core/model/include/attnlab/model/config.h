#pragma once
/// config.json of a Hugging Face checkpoint, as transformers 4 and 5 write it, resolved against
/// the table of architectures (architecture.h) into what the forward pass reads: sizes, the
/// family's traits, each layer's attention (window, RoPE or none) and the scalings. A model_type
/// outside the table, a value AttnLab cannot run, and any key it does not understand (other
/// than the keys known to change nothing) are refused with one line naming the key.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/model/architecture.h"

namespace attnlab::model {

enum class Activation {
    GeluTanh, ///< gelu_new, gelu_pytorch_tanh, gelu_fast
    GeluErf,  ///< gelu
    Silu,     ///< silu, swish
    Relu,
    QuickGelu ///< quick_gelu (CLIP): x * sigmoid(1.702 x)
};

/// One set of rotary frequencies (rotate-half RoPE on the first `dim` values of each head).
struct Rope {
    std::string type = "default"; ///< default, linear, dynamic, yarn, longrope, llama3
    double theta = 10000.0;
    Index dim = 0; ///< rotated values per head (even, <= head_dim)
    std::vector<double> inverseFrequencies; ///< dim / 2 values
    double attentionFactor = 1.0;           ///< cos and sin are scaled by it (yarn, longrope)
    /// longrope: a run longer than this many positions uses longInverseFrequencies (0: never).
    Index longAbove = 0;
    std::vector<double> longInverseFrequencies;

    const std::vector<double>& frequenciesFor(Index length) const {
        return longAbove > 0 && length > longAbove ? longInverseFrequencies : inverseFrequencies;
    }
};

/// How one layer attends.
struct LayerAttention {
    Index window = -1; ///< sliding window W: query i sees keys i - W < j <= i; -1 = all j <= i
    int rope = 0;      ///< index into ModelConfig::ropes; -1 = no rotary positions (NoPE)
};

struct ModelConfig {
    const Architecture* architecture = nullptr; ///< the table's row; never null after parsing
    Index layers = 0;
    Index hidden = 0;       ///< d_model
    Index heads = 0;        ///< query heads
    Index kvHeads = 0;      ///< key/value heads
    Index headDim = 0;      ///< may differ from hidden / heads (explicit head_dim)
    Index intermediate = 0; ///< MLP width
    Index vocab = 0;
    Index maxPositions = 0;
    double normEps = 1e-5;
    Activation activation = Activation::Silu;
    bool tiedEmbeddings = false; ///< lm head is the embedding matrix
    bool qkvBias = false;
    bool outputBias = false;
    bool mlpBias = false;
    bool lmHeadBias = false;
    Residual residual = Residual::Sequential;
    std::vector<Rope> ropes;                   ///< empty for learned positions
    std::vector<LayerAttention> layerAttention; ///< one per layer
    double embeddingScale = 1.0;               ///< Gemma sqrt(hidden), Granite embedding_multiplier
    std::optional<double> attentionScale;      ///< replaces 1/sqrt(head_dim)
    double residualScale = 1.0;                ///< Granite residual_multiplier
    double logitScale = 1.0;                   ///< Granite 1 / logits_scaling
    double attentionSoftcap = 0.0;             ///< Gemma 2: cap * tanh(s / cap) on the scores; 0 = none
    double finalSoftcap = 0.0;                 ///< Gemma 2: the same on the logits
    std::optional<std::int64_t> bosTokenId;
    std::optional<std::int64_t> eosTokenId;
    // Encoders and encoder-decoders:
    ModelKind kind = ModelKind::Decoder;
    Index encoderLayers = 0;  ///< an encoder-decoder's encoder (layers: its decoder)
    Index typeVocab = 0;      ///< BERT's token types (type 0 is added)
    Index relativeBuckets = 0;     ///< T5: relative_attention_num_buckets
    Index relativeMaxDistance = 0; ///< T5: relative_attention_max_distance
    /// The first id of an encoder-decoder's target (decoder_start_token_id; T5: the pad id).
    std::optional<std::int64_t> decoderStartTokenId;
    // Image models (ViT, DeiT, DINOv2, CLIP's image tower): a square image of imageSize pixels,
    // cut into patchSize squares; vocab is the number of labels (0: a model without a
    // classifier, which gives the image's embedding), maxPositions the leading tokens and the
    // patches.
    Index imageSize = 0;
    Index patchSize = 0;
    Index channels = 0;
    /// The tokens before the patches: the class token, and DeiT's distillation token.
    Index leadingTokens = 0;
    /// Patches per side of the learned positions' table: the image's grid, or (DINOv2) the
    /// grid of config.json's image_size, interpolated to the image's (imageSize is then its
    /// image processor's, see loadModel).
    Index positionGrid = 0;
    /// CLIP: the image embedding's width (projection_dim), where the checkpoint has the
    /// projection.
    Index projectionDim = 0;
    std::vector<std::string> labels; ///< id2label, by id; empty without a classifier

    const Architecture& arch() const { return *architecture; }
    bool usesRope() const { return !ropes.empty(); }
    /// Reads an image, not tokens.
    bool vision() const { return imageSize > 0; }
    /// Patches per side of the image.
    Index patchGrid() const { return patchSize > 0 ? imageSize / patchSize : 0; }
    /// The sliding window of every layer when they all share one, -1 when all are full, and
    /// nullopt when the layers differ (Gemma 2's alternation).
    std::optional<Index> uniformWindow() const;
};

/// The keys that change nothing AttnLab computes (generation settings, ids, dropout, versions).
std::span<const std::string_view> keysThatChangeNothing();

/// Parses config.json's text; `name` (the file) starts every message.
Result<ModelConfig> parseConfig(const std::string& text, const std::string& name);
/// Reads and parses a config.json file.
Result<ModelConfig> readConfig(const std::string& path);

} // namespace attnlab::model

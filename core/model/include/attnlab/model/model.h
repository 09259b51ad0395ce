#pragma once
/// A Hugging Face checkpoint loaded for inference (config + mmap'd weights, every tensor checked
/// present with the shape the config implies) and its float32 forward pass, which keeps per
/// layer what reproduces its attention (q and k after q/k norm and RoPE, and v: the cache) but
/// not the L x H x S x S weights: a map is computed when asked (attention_maps.h).
///
///   auto model = loadModel("gpt2/");                  // Result<Model>
///   auto run = runModel(*model, ids, {.logits = LogitRows::Last});
///   Matrix map = attentionMap(*model, *run, layer, head);  // [S, S], on demand
///   auto longer = runModel(*model, moreIds, options, &*run);  // KV cache reused when moreIds
///                                                             // extends ids

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/model/config.h"
#include "attnlab/model/safetensors.h"

namespace attnlab::model {

/// The precision a weight is held in: the checkpoint's own (F32, F16, BF16).
enum class WeightType : std::uint8_t { F32, F16, BF16 };

/// A weight with its shape, held in the checkpoint's precision: a view into the mapping (or, for
/// a tensor the file leaves misaligned, into an aligned copy owned by the Model). F16/BF16
/// matrices stay 16-bit and are widened to float32 where they are used (project() widens one
/// block of outputs at a time, the embedding the rows it reads); vectors and small tables are
/// widened once at load, so they are always F32. Empty when the architecture has no such weight.
struct Weight {
    std::span<const float> values;          ///< F32: the values; empty for F16/BF16
    const std::uint16_t* halves = nullptr;  ///< F16/BF16: the values' 16-bit patterns
    WeightType type = WeightType::F32;
    Index rows = 0;      ///< first extent (1 for a vector)
    Index cols = 0;      ///< second extent (the length for a vector)
    bool inOut = false;  ///< a matrix stored [in, out] (GPT-2's Conv1D), not nn.Linear's [out, in]

    bool empty() const { return rows * cols == 0; }
    bool isFloat32() const { return type == WeightType::F32; }
    /// Where the values are (the mapping, or a copy the Model owns).
    const void* data() const {
        return isFloat32() ? static_cast<const void*>(values.data()) : halves;
    }
    /// Bytes the values take in memory.
    std::size_t bytes() const;
    /// A F32 weight as a row-major [rows, cols] matrix, in place. Throws for F16/BF16: widen().
    Eigen::Map<const Matrix> matrix() const;
    /// A F32 weight's values as a vector, in place. Throws for F16/BF16: widen().
    Eigen::Map<const Vector> vector() const;
    /// Rows [first, first + count) as float32 into out (count x cols, row-major), exact.
    void widenRows(Index first, Index count, float* out) const;
    /// Columns [first, first + count) of every row as float32 into out (rows x count,
    /// row-major), exact.
    void widenColumns(Index first, Index count, float* out) const;
    /// One output feature's weights of a projection (`cols` of [out, in], `rows` of a Conv1D
    /// [in, out]) as float32 into out, exact: an unembedding's row for one token.
    void widenOutput(Index output, float* out) const;
    /// The whole weight as a float32 [rows, cols] copy: for small weights and tests.
    Matrix widen() const;
    /// Output features of a projection matrix.
    Index outputs() const { return inOut ? cols : rows; }
};

/// A projection: weight and optional bias.
struct Linear {
    Weight weight, bias;
    bool empty() const { return weight.empty(); }
};

/// A norm: weight and, for LayerNorms with one, bias. Empty where the family has no such norm.
struct Norm {
    Weight weight, bias;
    bool empty() const { return weight.empty(); }
};

/// One decoder block, as the table's row names it (architecture.h): every slot the family
/// does not have stays empty.
struct LayerWeights {
    Norm attnNormIn, attnNormOut, mlpNormIn, mlpNormOut;
    Norm attnNormAfter, mlpNormAfter; ///< post-LN (BERT, BART): after the residual sum
    Linear q, k, v; ///< separate projections
    Linear qkv;     ///< fused: [q | k | v] or, per head, [q_h | k_h | v_h]
    Linear o;
    Norm qNorm, kNorm;
    Linear up, gate, gateUp, down;
    Linear crossQ, crossK, crossV, crossO; ///< an encoder-decoder's decoder: cross-attention
    Norm crossNormIn, crossNormAfter;
    Weight attnScale, mlpScale; ///< DINOv2's layer scale [D] on each block's output
};

/// One stack of layers with what surrounds it: a decoder-only model or an encoder has one, an
/// encoder-decoder two. Slots the family does not have stay empty.
struct StackWeights {
    Weight positions;  ///< learned positions [P (+ offset), D]
    Weight tokenTypes; ///< BERT: [types, D]; type 0 is added
    Norm embedNorm;    ///< BERT, BART: a norm of the summed embeddings
    std::vector<LayerWeights> layers;
    Norm finalNorm;
    Weight relativeBias; ///< T5: [buckets, H], shared by the stack's layers
};

struct LoadOptions {
    /// Called with the fraction of the checkpoint processed (0..1), from the loading thread.
    std::function<void(double fraction)> progress;
    /// When set and true, loading stops and returns the error "cancelled".
    const std::atomic<bool>* cancel = nullptr;
    /// Read every mapped page during loading (so the first run does not stall on the disk,
    /// and progress means something; `attnlab model` and `bench`: so that the forward's time is
    /// its arithmetic). Off: pages are read on first use.
    bool touchPages = false;
};

class Model {
public:
    ModelConfig config;
    std::string directory;
    std::string name; ///< the folder's name, for titles

    Weight tokenEmbedding; ///< [V, D], shared by an encoder-decoder's two stacks
    StackWeights main;     ///< the model's layers; an encoder-decoder's decoder
    StackWeights encoder;  ///< an encoder-decoder's encoder
    Linear headTransform;  ///< BERT's masked-LM head: dense, activation, norm, then lmHead
    Norm headNorm;
    Linear lmHead; ///< [V, D]; the embedding when tied; its bias is the family's logits bias
                   ///< (an image classifier's: [labels, D], the classifier)
    /// An image classifier's input (config.vision()): the patch convolution as a projection
    /// [D, C * P * P] of each patch's pixels (channel, row, column), and the class token [1, D].
    Linear patchEmbedding;
    Weight classToken;
    /// DeiT: the distillation token [1, D] and, with a teacher's head, its classifier (empty
    /// when the checkpoint reads the class token alone).
    Weight distillationToken;
    Linear distillationHead;
    /// CLIP: the norm of the pooled class token, and the projection to the image embedding
    /// [projection_dim, D] (empty without one).
    Norm poolNorm;
    Linear projection;
    /// An image model with a classifier (lmHead; config.labels names its classes); without one
    /// it gives the image's embedding.
    bool classifies() const { return !lmHead.empty(); }

    /// Bytes of the mapped checkpoint files.
    std::size_t checkpointBytes() const { return m_tensors ? m_tensors->mappedBytes() : 0; }
    /// Bytes of the weights held outside the mapping: the float32 copies of 16-bit vectors and
    /// small tables widened at load, and aligned copies of tensors a file leaves misaligned.
    std::size_t copiedBytes() const;

private:
    friend Result<Model> loadModel(const std::string&, const LoadOptions&);
    std::shared_ptr<SafeTensors> m_tensors;
    /// Float32 copies of the small weights widened at load, and aligned copies of the tensors
    /// a file leaves misaligned.
    std::vector<std::unique_ptr<std::vector<float>>> m_widened;
    std::vector<std::unique_ptr<std::vector<std::uint16_t>>> m_realigned;
};

/// Loads DIR/config.json and DIR's safetensors (single or sharded), checking every tensor the
/// config needs is present with the right shape and a float dtype. Errors name the file and
/// the problem (the tensor's name when a tensor is at fault).
Result<Model> loadModel(const std::string& directory, const LoadOptions& options = {});

enum class LogitRows { None, Last, All };

/// One of a run's attentions: the main stack's self-attention (a decoder's causal one, an
/// encoder's two-way one), or an encoder-decoder's encoder or cross-attention.
enum class AttentionOf : std::uint8_t { Self, Encoder, Cross };

/// Activations a run uses instead of its own (activation patching, lens.h), in the main stack.
/// Positions are absolute; a run that extends a `previous` one applies the entries of its fresh
/// positions only, so the caller gives a `previous` whose positions the patch leaves unchanged.
struct ActivationPatch {
    /// (layer, head) -> the head's attention output before the output projection, [S, hd] for
    /// every position of the run.
    std::map<std::pair<Index, Index>, Matrix> heads;
    /// (layer, position) -> the residual stream [1, D] entering `layer` at `position`; layer L
    /// (the layer count) is the last layer's output, before the final norm.
    std::map<std::pair<Index, Index>, RowVector> residual;
};

/// What a run records on request (RunOptions::record) for the lens, over its fresh positions:
/// every term that is added to the main stack's residual stream.
struct RunRecording {
    /// L + 1 entries [S, D]: the residual entering each layer (the first is the embedding),
    /// then the last layer's output before the final norm.
    std::vector<Matrix> residual;
    std::vector<Matrix> headInputs;  ///< per layer [S, H * hd]: heads before the output projection
    /// per layer [H, D]: each head's output through its slice of the output projection at the
    /// last position, as added to the residual (times the residual multiplier; no bias).
    std::vector<Matrix> headOutputs;
    std::vector<RowVector> attentionBias; ///< per layer [1, D]: the output bias as added
    std::vector<Matrix> mlpOutputs;               ///< per layer [S, D]: the MLP's output as added
};

struct RunOptions {
    LogitRows logits = LogitRows::None;
    /// With LogitRows::Last: only these ids' logits, in this order (run.logits [1, n]), each a
    /// dot product of the last hidden row with its row of the LM head. Activation patching
    /// reads two logits per run; the whole LM head is the largest read of a short text's run.
    std::vector<std::int64_t> logitIds;
    int threads = 0;        ///< GEMM and attention workers; 0 = hardware concurrency
    /// Heads switched off: (layer, head) pairs whose attention output is zeroed before the
    /// output projection.
    std::set<std::pair<Index, Index>> ablatedHeads;
    /// When set and true between layers, the run stops and returns the error "cancelled".
    const std::atomic<bool>* cancel = nullptr;
    /// A `previous` run whose ids differ from the new ones part way (a retyped word) is reused
    /// up to the first id that differs, and one that is longer (a deleted word) up to all but
    /// the new last position; off: only a proper prefix is reused.
    bool reuseCommonPrefix = false;
    /// When 0 or more, at most this many of `previous`'s positions are reused: activation
    /// patching reads the corrupted run's cache of the positions before each patch, not more.
    Index reuseAtMost = -1;
    /// When set, called before each layer of the main stack with the share of its layers done
    /// (0, 1/L, ..., (L-1)/L), on the thread that runs the model: a progress bar.
    std::function<void(double fraction)> progress;
    /// Main stack only: activations to use instead of the run's own, and where to record the
    /// residual stream's terms (null: nothing patched or recorded, at no cost).
    const ActivationPatch* patch = nullptr;
    RunRecording* record = nullptr;
    /// When set, the wall-clock seconds the main stack's attention took (q k^T, the softmax and
    /// p v, every layer) are added to it: where a forward's time goes (`attnlab bench --model`).
    double* attentionSeconds = nullptr;
};

/// One layer's cached heads [H, S, hd] (q, k or v of a run), held as blocks of positions: a run
/// extended from another shares the other's blocks instead of copying them, so appending a
/// token holds only that token's rows, and a retyped word shares what it kept. Reads are
/// contiguous copies: a head [S, hd] or the whole layer [1, H, S, hd]. Immutable once made;
/// blocks are shared between runs and threads.
class HeadCache {
public:
    HeadCache() = default;
    /// The heads `t` [1, H, S, hd] as one block (moved, not copied).
    explicit HeadCache(Tensor4 t);
    /// `previous`'s first `keep` positions (shared), then `fresh` [1, H, S_new, hd].
    static HeadCache extended(const HeadCache& previous, Index keep, Tensor4 fresh);

    Index heads() const { return m_heads; }
    Index seq() const { return m_seq; }
    Index dim() const { return m_dim; }
    /// Head h's rows [begin, begin + count) as a contiguous [count, hd] copy.
    Matrix headRows(Index h, Index begin, Index count) const;
    /// Head h [S, hd].
    Matrix head(Index h) const { return headRows(h, 0, m_seq); }
    /// The whole layer [1, H, S, hd] as one tensor.
    Tensor4 tensor() const;
    /// The same into `out`, whose storage is reused when it has the room (the forward's copy
    /// for the kernel, layer after layer: no fresh pages to fault in on each).
    void tensorInto(Tensor4& out) const;
    /// Floats of the blocks it reads (shared ones counted in full).
    std::size_t floats() const;

private:
    struct Block {
        std::shared_ptr<const Tensor4> data; ///< [1, H, rows of its pass, hd]
        Index begin = 0;                     ///< the block's first position in the layer
        Index rows = 0;                      ///< of data's rows, how many this cache reads
    };
    std::vector<Block> m_blocks;
    Index m_heads = 0;
    Index m_seq = 0;
    Index m_dim = 0;
};

/// The recorded forward of ids. Every per-layer tensor has batch 1. What a run keeps grows
/// with S, not S^2: per layer q, k and v (L (H + 2 Hkv) S hd floats), the final hidden states
/// and the logits asked for; attention maps are computed from q and k on demand
/// (attention_maps.h), byte-equal to the weights the forward's own kernel used.
struct ModelRun {
    std::vector<std::int64_t> ids;   ///< an encoder-decoder: the target (the decoder's input)
    std::vector<HeadCache> q;        ///< per layer [H, S, hd] after q-norm and RoPE
    std::vector<HeadCache> k;        ///< per layer [Hkv, S, hd] after k-norm and RoPE
    std::vector<HeadCache> v;        ///< per layer [Hkv, S, hd]
    /// The first position of each pass of the main stack over fresh positions: {0} for a run
    /// from scratch, then where each extension through the cache began. A map's rows are
    /// recomputed pass by pass, as the forward computed them.
    std::vector<Index> passes;
    Matrix finalHidden;              ///< [S, D] after the final norm
    Matrix logits;                   ///< [S, V] (All), [1, V] (Last) or empty
    /// An image model without a classifier: the image's embedding [1, E] (the class token's
    /// final state; CLIP's normed and, with its projection, projected); else empty.
    Matrix imageEmbedding;
    LogitRows logitRows = LogitRows::None;
    std::set<std::pair<Index, Index>> ablatedHeads;
    bool extended = false;     ///< this run reused a previous run's cache
    Index reusedPositions = 0; ///< how many positions came from that cache

    // Encoder-decoders (runTranslation): the source, run once, and what the decoder reads of it.
    std::vector<std::int64_t> sourceIds;
    std::vector<Tensor4> encoderQ, encoderK; ///< per encoder layer [1, H|Hkv, Ss, hd]
    std::vector<HeadCache> crossQ;           ///< per decoder layer [H, St, hd]
    std::vector<Tensor4> crossK, crossV;     ///< per decoder layer [1, H, Ss, hd]: computed once
    Matrix encoderHidden;                    ///< [Ss, D], the encoder's output
};

/// Checks ids against the model (non-empty, every id < vocab, at most max positions) and the ablated and patched heads and residual cells
/// against its shape.
Status validateRun(const ModelConfig& config, std::span<const std::int64_t> ids,
                   const RunOptions& options);

/// How many leading ids two id lists share (what a run of b can reuse of a run of a).
std::size_t commonPrefix(std::span<const std::int64_t> a, std::span<const std::int64_t> b);

/// Runs the model on ids. When `previous` is a run of the same model with the same ablated
/// heads whose ids are a proper prefix of ids (or, with reuseCommonPrefix, share a prefix with
/// them), only the new positions are computed, reading K/V of the shared positions from
/// previous (one copy, no run cut back first); the result equals a full run.
/// Errors: validateRun's messages, or "cancelled".
Result<ModelRun> runModel(const Model& model, std::span<const std::int64_t> ids,
                          const RunOptions& options = {}, const ModelRun* previous = nullptr);

/// Runs an image model (config.vision(): ViT, DeiT, DINOv2, CLIP's image tower) on one image's
/// pixel values [C, H, W], row-major, H = W = config.imageSize, already processed as the
/// model's image processor does (resized, cropped, rescaled, normalised). The sequence is the
/// class token (and DeiT's distillation token), then the patches row by row (T = lead +
/// (H / P)^2; ids holds T zeros); attention is two-way. With a classifier the logits [1, labels]
/// are its (on the class token; DeiT's teacher: the mean with the distillation token's; DINOv2:
/// on the class token and the patches' mean); without one, imageEmbedding is set. Errors: a
/// model that reads tokens, pixels of another size, or "cancelled".
Result<ModelRun> runImage(const Model& model, std::span<const float> pixels,
                          const RunOptions& options = {});

/// Runs an encoder-decoder: the encoder over `source` (two-way attention), then the decoder
/// over `target` (its input as given, starting with the decoder start token) with causal
/// self-attention and cross-attention to the encoder's output; logits are the decoder's. When
/// `previous` ran the same source, its encoder output and cross K/V are reused, and when its
/// target is a proper prefix of `target` the decoder's cache too: the result equals a full run.
Result<ModelRun> runTranslation(const Model& model, std::span<const std::int64_t> source,
                                std::span<const std::int64_t> target,
                                const RunOptions& options = {}, const ModelRun* previous = nullptr);

/// The inverse frequencies of the model's rotate-half RoPE (its first set, the full-attention
/// layers' where they differ): rotary dim / 2 values; empty for learned positions.
std::vector<double> ropeInverseFrequencies(const ModelConfig& config);

} // namespace attnlab::model

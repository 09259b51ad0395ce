#pragma once
// The forward's own final norm and unembedding (forward.cpp), for the lens (lens.cpp): one path
// from the residual stream to logits, so the lens reads exactly what the model computes and any
// change to how weights are stored or multiplied reaches it. And the projection every layer
// runs, for its tests.

#include <cstdint>
#include <memory>
#include <span>

#include "attnlab/attention/attention.h"
#include "attnlab/model/model.h"

namespace attnlab::model {

/// Whether `of`'s attention is causal: a decoder's self-attention.
bool causalAttention(const ModelConfig& c, AttentionOf of);

/// The spec under which the forward runs `of`'s attention in `layer`: mask (causal, a layer's
/// sliding window), scale and soft-capping; no weights, one thread, no position bias (its
/// values depend on the positions: scoreBiasOf). attention_maps.cpp reruns the same spec.
AttentionSpec attentionSpecOf(const ModelConfig& c, AttentionOf of, Index layer);

/// Whether `of`'s scores get a position bias (T5's relative buckets; not cross-attention).
bool positionBiased(const ModelConfig& c, AttentionOf of);

/// T5's relative position bias [1, count, rows, keys] of heads [firstHead, firstHead + count)
/// for queries at positions first.. and keys 0..keys-1; null where the family has none.
std::shared_ptr<const Tensor4> scoreBiasOf(const Model& model, AttentionOf of, Index firstHead,
                                           Index count, Index first, Index rows, Index keys);

} // namespace attnlab::model

namespace attnlab::model::seams {

/// Where a resumed run starts (resumeRun).
struct Resume {
    const ModelRun* below = nullptr;  ///< a whole run of the same ids with the same options
    const Matrix* entering = nullptr; ///< [S, D]: the residual entering `first` in it (recorded)
    Index first = 0;                  ///< the first layer computed again
};

/// runModel(model, ids, options, previous) for a run that equals `resume.below` below layer
/// `resume.first`: options differ from below's only by a patch of that layer or later (a patch
/// changes nothing below the layer it patches). The layers below are below's, their q/k/v
/// shared, not computed; the stack starts from `resume.entering`'s rows. Activation patching
/// runs each patched run so (lens.cpp). Its logits and q/k/v are the full run's; its maps are
/// not asked for (the layers below were computed in below's passes, not in the run's).
Result<ModelRun> resumeRun(const Model& model, std::span<const std::int64_t> ids,
                           const RunOptions& options, const ModelRun* previous,
                           const Resume& resume);

/// One run of a batch that resumeBatch runs together: its patch and how many leading positions
/// it may read from the prefix's cache (RunOptions::reuseAtMost; 0: every position computed).
struct BatchedRun {
    const ActivationPatch* patch = nullptr;
    Index old = 0;
};

/// What resumeBatch computed: the logits of each run's last position [runs, ids]
/// (RunOptions::logitIds), and the positions the runs read from the cache, all together.
struct Batch {
    Matrix logits;
    Index reusedPositions = 0;
};

/// `runs`, each resumeRun(model, ids, options with its patch, reuseCommonPrefix and reuseAtMost
/// = its old, prefix, {below, entering, first}), computed together so that each layer's
/// weights are read once per batch, not once per run; byte for byte each run's own logits. A
/// batch holds up to kBatchRows rows; a run of fewer rows than the projections pack for runs
/// alone where that would change its bits (a projection that packs from kPackedGemmRows rows
/// on). A decoder's main stack without a position bias (batchable); the patches patch `first`
/// or later; no recording.
Result<Batch> resumeBatch(const Model& model, std::span<const std::int64_t> ids,
                          const RunOptions& options, const ModelRun* prefix, const Matrix& entering,
                          Index first, std::span<const BatchedRun> runs);

/// Whether resumeBatch can run this model's runs: a decoder without a position bias.
bool batchable(const ModelConfig& c);

/// y [R, out] = x [R, in] W^T (+ bias) for an nn.Linear weight [out, in], or x W for a Conv1D
/// [in, out], as every layer's projections compute it, on `threads` threads.
void project(const Matrix& x, const Linear& p, Matrix& y, int threads);

/// Rows [R, D] of the main stack's residual through its final norm (where it has one), in place.
void finalNorm(const Model& model, Matrix& rows);

/// Logits [R, V] of final-normed rows [R, D], as the forward computes them (head transform, lm
/// head and its bias, logit scale, soft-capping).
void logits(const Model& model, const Matrix& hidden, Matrix& out, int threads);

/// Direct logits [T + 1, K] of residual-stream terms [T, D] for K tokens: each term through the
/// final norm with the scale of `finalResidual` frozen (TransformerLens's `apply_ln_to_stack`:
/// a LayerNorm centres each term and divides by the residual's standard deviation, an RMSNorm
/// divides by its root mean square), then the tokens' lm head rows and the logit scale. The
/// last row is what belongs to no term: the final norm's bias and the lm head's bias. Exact only
/// where the head after the final norm is linear (no head transform, no soft-capping): the
/// caller refuses the others.
MatrixD frozenDirectLogits(const Model& model, const Matrix& terms, const RowVector& finalResidual,
                           std::span<const std::int64_t> tokens);

} // namespace attnlab::model::seams

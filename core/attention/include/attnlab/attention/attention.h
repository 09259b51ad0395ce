#pragma once
/// attend(): every attention variant over [B, H, S, D] tensors, with masks, GQA,
/// and on request the weights, raw scores and a FlashAttention tile trace. float32 tensors
/// (Qkv) are computed in float, float64 tensors (QkvD) in double, by the same kernels.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/attention/dropout.h"
#include "attnlab/attention/flash_trace.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"

namespace attnlab {

enum class Variant { Softmax, Flash, Linear, Additive };

const char* variantName(Variant v);
std::optional<Variant> parseVariant(const std::string& name);

/// Parameters of additive (MLP, Bahdanau) attention: score = v^T tanh(Wq q + Wk k).
/// wq is [units, Dq], wk is [units, Dk], v has `units` entries.
template <typename T> struct AdditiveParamsT {
    MatrixT<T> wq;
    MatrixT<T> wk;
    VectorT<T> v;

    /// The same parameters in U (exact from float to double).
    template <typename U> AdditiveParamsT<U> cast() const {
        return {wq.template cast<U>(), wk.template cast<U>(), v.template cast<U>()};
    }
};
using AdditiveParams = AdditiveParamsT<float>;
using AdditiveParamsD = AdditiveParamsT<double>;

/// Seeded additive parameters (uniform Xavier), reproducible across runs and machines.
AdditiveParams makeAdditiveParams(Index units, Index dq, Index dk, std::uint64_t seed);

/// Q, K, V as [B, H, Sq, D], [B, Hkv, Sk, D], [B, Hkv, Sk, Dv]; H % Hkv == 0.
/// Query head h reads kv head h / (H / Hkv); K/V are never expanded.
template <typename T> struct QkvT {
    Tensor4T<T> q;
    Tensor4T<T> k;
    Tensor4T<T> v;
};
using Qkv = QkvT<float>;
using QkvD = QkvT<double>;

struct AttentionSpec {
    Variant variant = Variant::Softmax;
    MaskSpec mask;
    std::optional<double> scale; ///< replaces the default 1/sqrt(D)
    /// Softmax only: the scaled scores are soft-capped, cap * tanh(s / cap), before the mask
    /// (Gemma 2's attn_logit_softcapping). Scores, when asked, are the capped ones.
    std::optional<double> softcap;
    /// Softmax over float32 only: [1 or B, H, Sq, Sk] added to the scaled scores before the
    /// mask (T5's relative position bias). Scores, when asked, include it.
    std::shared_ptr<const Tensor4> scoreBias;
    /// Flash tiles of the generic kernels (double, trace, scores, dropout, custom mask); a
    /// float run without them takes the fast path (fast_attention.h), which tiles for the
    /// machine: same result up to rounding.
    Index qBlock = 64;           ///< flash: query tile rows
    Index kvBlock = 64;          ///< flash: key/value tile columns
    bool wantWeights = true;     ///< fill Attention::weights [B, H, Sq, Sk]
    bool wantScores = false;     ///< fill Attention::scores (scaled, before mask)
    bool wantFlashTrace = false; ///< flash only: fill Attention::flashTrace
    /// Additive only; seeded default when empty. Held in double so that a float64 run uses
    /// them as given; a float32 run rounds them to float once.
    std::optional<AdditiveParamsD> additive;
    std::uint64_t additiveSeed = 0;
    Index additiveUnits = 8;
    int threads = 1; ///< worker threads over (batch, head) pairs; 0 = hardware
    /// Train mode when rate > 0 (softmax, flash, additive): weights are dropped after the
    /// softmax (dropout.h) and the output is the dropped weights times V. Rate 0: eval mode,
    /// the kernels run exactly as without dropout.
    Dropout dropout;
};

/// The result of attend() in the precision of its inputs (Attention: float, AttentionD: double).
template <typename T> struct AttentionT {
    Tensor4T<T> output;  ///< [B, H, Sq, Dv]
    Tensor4T<T> weights; ///< [B, H, Sq, Sk] when asked, after dropout; masked cells exactly 0
    Tensor4T<T> scores;  ///< [B, H, Sq, Sk] when asked: scaled logits, mask not applied
    /// [B * Sq] flags, row b * Sq + i: true where the row has no allowed key (its weights
    /// and output are zero). The mask does not depend on the head.
    std::vector<unsigned char> emptyRows;
    std::optional<FlashTraceT<T>> flashTrace;
    double scale = 0; ///< the scale actually used (rounded to T by the kernels)
};
using Attention = AttentionT<float>;
using AttentionD = AttentionT<double>;

/// Grouped-query attention's sharing rule, the one place it is written: query head `head` of
/// `heads` reads kv head head / (heads / kvHeads), so each kv head serves heads / kvHeads
/// consecutive query heads (kvHeads == heads is multi-head attention, 1 is multi-query).
/// Counts below 1 count as 1 and the result is clamped to [0, kvHeads).
inline Index kvHeadOf(Index head, Index heads, Index kvHeads) {
    heads = std::max<Index>(1, heads);
    kvHeads = std::max<Index>(1, kvHeads);
    return std::clamp<Index>(head / std::max<Index>(1, heads / kvHeads), 0, kvHeads - 1);
}

/// Checks shapes and options and returns a message naming the first problem, or nothing.
Status validate(const Qkv& qkv, const AttentionSpec& spec);
Status validate(const QkvD& qkv, const AttentionSpec& spec);

/// Runs the attention variant in spec over qkv. Throws InvalidArgument where validate()
/// would complain. S == 0 gives empty outputs; a row with no allowed key gives zero weights
/// and zero output, never NaN.
Attention attend(const Qkv& qkv, const AttentionSpec& spec);
AttentionD attend(const QkvD& qkv, const AttentionSpec& spec);
/// The same into `into`, whose output, weights and scores keep their storage where it is large
/// enough: a loop over a model's layers allocates them once, and touches their pages once.
void attend(const Qkv& qkv, const AttentionSpec& spec, Attention& into);
void attend(const QkvD& qkv, const AttentionSpec& spec, AttentionD& into);

/// Query rows attend() computes together for a float32 run of spec: a call over the rows of
/// one such block or more, starting at a multiple of it (with the keys the mask lets those rows
/// see), gives each row the same bytes as a call over all rows. 0 when only the whole call
/// does (the generic kernels, whose GEMM sums in an order chosen from the whole shape).
Index attendRowBlock(const AttentionSpec& spec);

/// The numerically stable masked softmax of one row in place: subtracts the max over allowed
/// entries; entries outside [range) and where customRow is false become exactly 0.
/// Returns false (and zeros the row) when no entry is allowed.
bool softmaxRow(Eigen::Ref<RowVector> row, KeyRange range, const bool* customRow = nullptr);
bool softmaxRow(Eigen::Ref<RowVectorD> row, KeyRange range, const bool* customRow = nullptr);

} // namespace attnlab

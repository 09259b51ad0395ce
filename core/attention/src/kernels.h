#pragma once
// Per-head kernels behind attend(). Internal to attnlab_core: the public entry points
// are attend() and attendKvCache(). Each kernel handles one (batch, head) pair; the
// caller splits work across threads and wires GQA (kv head = h / (H / Hkv)).
// Every kernel is a template on the scalar T, defined in its .cpp file and instantiated
// there for exactly float and double.

#include <limits>
#include <type_traits>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/dropout.h"

namespace attnlab::kernels {

/// Train-mode dropout of one head's job: the rate and seed, the query head, and the index in
/// the whole sequence of the job's query row 0 (a KV-cache step starts part way down).
struct HeadDropout {
    Dropout dropout;
    Index head = 0;
    Index rowOffset = 0;
};

template <typename T> struct HeadJobT {
    ConstMatrixMapT<T> q; // [Sq, D]
    ConstMatrixMapT<T> k; // [Sk, D]
    ConstMatrixMapT<T> v; // [Sk, Dv]
    MatrixMapT<T> out;    // [Sq, Dv], written fully
    T* weights;           // [Sq, Sk] row-major or nullptr
    T* scores;            // [Sq, Sk] row-major or nullptr (scaled logits, unmasked)
    const MaskSpec& mask;
    Index batch; // batch entry, for validLen
    T scale;
    unsigned char* emptyRows; // [Sq] or nullptr: set to 1 where a row has no allowed key
    /// Train mode: drop weights after the softmax (kernels dispatch on it once per head, so
    /// eval mode runs exactly the code it ran before dropout existed). nullptr in eval mode.
    const HeadDropout* dropout = nullptr;
    /// Soft-capping of the scaled scores, cap * tanh(s / cap), before the mask (softmax only;
    /// 0 = none, checked once per chunk).
    T softcap = 0;
    /// [Sq, Sk] row-major, added to the scaled (and capped) scores before the mask (softmax
    /// only: T5's relative position bias); nullptr for none.
    const T* scoreBias = nullptr;
};
using HeadJob = HeadJobT<float>;

/// Dropout of the `count` weights of job-local query row `row` that sit in key columns
/// [firstColumn, firstColumn + count): each is zeroed (dropped) or multiplied by keepScale =
/// 1 / (1 - p). Masked weights are 0 and stay 0.
template <typename T>
void dropWeights(T* weights, Index count, Index firstColumn, const HeadDropout& dropout,
                 Index batch, Index row, T keepScale) {
    const DropoutRow pattern(dropout.dropout, batch, dropout.head, dropout.rowOffset + row);
    for (Index c = 0; c < count; ++c)
        weights[c] = pattern.dropped(firstColumn + c) ? T(0) : weights[c] * keepScale;
}

/// exp of logits in which masked cells hold -inf; those come out exactly 0. Eigen's vectorised
/// exp returns a denormal (~3e-39) for -inf in whole packets and 0 in the scalar tail, so a
/// masked weight's value depended on where the packets of its row fell.
template <typename Derived> auto expMasked(const Eigen::ArrayBase<Derived>& x) {
    using T = typename Derived::Scalar;
    return (x > -std::numeric_limits<T>::infinity()).select(x.exp(), T(0));
}

/// The sum of a contiguous row in an order fixed by the index alone: eight interleaved partial
/// sums, then combined. Eigen's sum() starts its packets at the first aligned address, so its
/// order, and its last bits, depend on where the row lies in memory: a head's weights written
/// into the caller's [B, H, Sq, Sk] buffer summed differently from the same row in scratch,
/// and the output changed with whether weights were asked for.
template <typename Derived>
typename Derived::Scalar indexOrderSum(const Eigen::DenseBase<Derived>& x) {
    using T = typename Derived::Scalar;
    const Index n = x.size();
    T lanes[8] = {};
    Index j = 0;
    for (; j + 8 <= n; j += 8)
        for (Index l = 0; l < 8; ++l)
            lanes[l] += x.coeff(j + l);
    for (Index l = 0; j < n; ++j, ++l)
        lanes[l] += x.coeff(j);
    return ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) +
           ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
}

/// 1 / (1 - p) in T.
template <typename T> T keepScale(const HeadDropout& dropout) {
    return static_cast<T>(1.0 / (1.0 - dropout.dropout.rate));
}

/// The Attention a run over qkv fills: the scale in use, a zeroed output [B, H, Sq, Dv],
/// weights and scores [B, H, Sq, Sk] only when the spec asks, and the empty-row flags.
/// `kernelWritesAll`: the kernel writes every cell of the output and the weights (the fast
/// path), which are then left unset rather than zeroed.
template <typename T>
AttentionT<T> prepareResult(const QkvT<T>& qkv, const AttentionSpec& spec,
                            bool kernelWritesAll = false);
/// The same in `result`, whose buffers keep their storage where it is large enough.
template <typename T>
void prepareResult(const QkvT<T>& qkv, const AttentionSpec& spec, bool kernelWritesAll,
                   AttentionT<T>& result);

/// The additive parameters a run uses (the spec's, or seeded ones) in T; none for other
/// variants.
template <typename T>
std::optional<AdditiveParamsT<T>> additiveParamsFor(const QkvT<T>& qkv, const AttentionSpec& spec);

/// Dense O(S^2) softmax attention for one head.
template <typename T> void softmaxHead(const HeadJobT<T>& job);

/// Tiled online-softmax attention (Dao et al. 2022, Alg. 1); skips fully masked tiles.
/// Records every tile into `trace` when it is non-null.
template <typename T>
void flashHead(const HeadJobT<T>& job, Index qBlock, Index kvBlock,
               std::type_identity_t<FlashHeadTraceT<T>>* trace);

/// Linear attention with phi(x) = elu(x) + 1 (Katharopoulos et al. 2020); interval masks by
/// prefix sums, a custom mask by the explicit form. Weights are the implied normalised
/// phi(q).phi(k).
template <typename T> void linearHead(const HeadJobT<T>& job);

/// Additive attention v^T tanh(Wq q + Wk k) (Bahdanau et al. 2015), masked softmax.
template <typename T>
void additiveHead(const HeadJobT<T>& job, const std::type_identity_t<AdditiveParamsT<T>>& params);

/// One head through spec's variant: the one switch from a variant to its kernel (attend() and
/// the KV cache's steps). `additive` holds the additive variant's parameters; `trace` records
/// the flash kernel's tiles when non-null.
template <typename T>
void runHead(const HeadJobT<T>& job, const AttentionSpec& spec,
             const std::optional<AdditiveParamsT<T>>& additive,
             std::type_identity_t<FlashHeadTraceT<T>>* trace) {
    switch (spec.variant) {
    case Variant::Softmax:
        softmaxHead(job);
        break;
    case Variant::Flash:
        flashHead(job, spec.qBlock, spec.kvBlock, trace);
        break;
    case Variant::Linear:
        linearHead(job);
        break;
    case Variant::Additive:
        additiveHead(job, *additive);
        break;
    }
}

} // namespace attnlab::kernels

#pragma once
// Per-head kernels behind attend(). Internal to attnlab_core: the public entry points
// are attend() and attendKvCache(). Each kernel handles one (batch, head) pair; the
// caller splits work across threads and wires GQA (kv head = h / (H / Hkv)).

#include "attnlab/attention.h"

namespace attnlab::kernels {

struct HeadJob {
    ConstMatrixMap q; // [Sq, D]
    ConstMatrixMap k; // [Sk, D]
    ConstMatrixMap v; // [Sk, Dv]
    MatrixMap out;    // [Sq, Dv], written fully
    Scalar* weights;  // [Sq, Sk] row-major or nullptr
    Scalar* scores;   // [Sq, Sk] row-major or nullptr (scaled logits, unmasked)
    const MaskSpec& mask;
    Index batch; // batch entry, for validLen
    Scalar scale;
    unsigned char* emptyRows; // [Sq] or nullptr: set to 1 where a row has no allowed key
};

/// The Attention a run over qkv fills: the scale in use, a zeroed output [B, H, Sq, Dv],
/// weights and scores [B, H, Sq, Sk] only when the spec asks, and the empty-row flags.
Attention prepareResult(const Qkv& qkv, const AttentionSpec& spec);

/// The additive parameters a run uses (the spec's, or seeded ones); none for other variants.
std::optional<AdditiveParams> additiveParamsFor(const Qkv& qkv, const AttentionSpec& spec);

/// Dense O(S^2) softmax attention for one head.
void softmaxHead(const HeadJob& job);

/// Tiled online-softmax attention (Dao et al. 2022, Alg. 1); skips fully masked tiles.
/// Records every tile into `trace` when it is non-null.
void flashHead(const HeadJob& job, Index qBlock, Index kvBlock, FlashHeadTrace* trace);

/// Linear attention with phi(x) = elu(x) + 1 (Katharopoulos et al. 2020); interval masks by
/// prefix sums, a custom mask by the explicit form. Weights are the implied normalised
/// phi(q).phi(k).
void linearHead(const HeadJob& job);

/// Additive attention v^T tanh(Wq q + Wk k) (Bahdanau et al. 2015), masked softmax.
void additiveHead(const HeadJob& job, const AdditiveParams& params);

} // namespace attnlab::kernels

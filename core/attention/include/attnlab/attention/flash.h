#pragma once
/// The online-softmax state of FlashAttention (Dao et al. 2022, Alg. 1) part way through a
/// head, for views that show the accumulator growing tile by tile.

#include <vector>

#include "attnlab/attention/attention.h"

namespace attnlab {

/// State of one head after some tiles. Rows of tiles not yet visited hold accumulator 0,
/// rowMax -inf and rowSum 0; a visited row's output is accumulator.row(i) / rowSum[i].
template <typename T> struct FlashStateT {
    MatrixT<T> accumulator;        ///< [Sq, Dv], un-normalised sum_j exp(s_ij - rowMax_i) v_j
    std::vector<T> rowMax, rowSum; ///< [Sq] running max m (-inf until a key is seen), sum l
    Index stepsDone = 0;           ///< tiles visited (skipped tiles count), <= total tiles
};
using FlashState = FlashStateT<float>;

/// The state of head (batch, head) of qkv after its first `steps` tiles in visiting order
/// (q tile outer, kv tile inner; skipped tiles count as steps), with spec's mask, scale and
/// qBlock / kvBlock. steps <= 0 gives the initial state; steps beyond the total run them all.
/// Throws InvalidArgument where validate() would complain or when batch/head is out of range.
FlashState flashStateAfter(const Qkv& qkv, const AttentionSpec& spec, Index batch, Index head,
                           Index steps);

} // namespace attnlab

#pragma once
/// One cell of an attention map, computed from its row alone: what the heatmap's hover shows
/// (q.k, the scale, the mask, the row's max and sum, the weight), in double, in O(S_k d) work,
/// never from the whole S x S matrix.

#include <optional>

#include "attnlab/lab/session.h"

namespace attnlab {

struct CellComputation {
    Index head = 0;   ///< the query head (clamped to the experiment's heads)
    Index kvHead = 0; ///< the kv head it reads (kvHeadOf)
    Index row = 0;
    Index column = 0;
    /// False for an attention dump, which holds weights but no Q or K: only storedWeight is set.
    bool hasScores = false;
    double dot = 0;    ///< q_i . k_j
    double scaled = 0; ///< s = q_i . k_j x scale: as the run stored it where it stored scores
    bool masked = false;
    /// Whether the weight is a softmax of s (softmax and flash); the fields below are set then.
    bool softmax = false;
    double rowMax = 0;       ///< max of s over the row's allowed keys
    double rowSum = 0;       ///< sum over the row's allowed keys of exp(s - rowMax)
    double numerator = 0;    ///< exp(s - rowMax)
    double weight = 0;       ///< numerator / rowSum, before dropout
    double storedWeight = 0; ///< the weight the run computed (after dropout)
    bool dropoutActive = false;
    bool dropped = false; ///< train-mode dropout zeroed this weight
    double keepScale = 1; ///< 1 / (1 - p) for a kept weight in train mode
};

/// The computation of weight (row, column) of query head `head`; nothing when the cell lies
/// outside the experiment's weights.
std::optional<CellComputation> explainCell(const Experiment& experiment, Index head, Index row,
                                           Index column);

} // namespace attnlab

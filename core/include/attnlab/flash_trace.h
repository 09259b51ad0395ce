#pragma once
/// The record of a FlashAttention run (Dao et al. 2022, Alg. 1): one step per
/// (q tile, kv tile) in visiting order, with the online-softmax state after it.

#include <vector>

#include "attnlab/tensor.h"

namespace attnlab {

struct FlashStep {
    Index qStart = 0, qEnd = 0;   ///< query rows [qStart, qEnd)
    Index kvStart = 0, kvEnd = 0; ///< key columns [kvStart, kvEnd)
    bool skipped = false;         ///< no allowed cell in the tile: not computed, state unchanged
    /// Per query row of the tile after this step: running max m (-inf while no key seen),
    /// running sum l relative to m, and exp(m_old - m_new) applied to the accumulator.
    std::vector<float> rowMax, rowSum, rescale;
};

struct FlashHeadTrace {
    Index batch = 0;
    Index head = 0;
    std::vector<FlashStep> steps;
};

struct FlashTrace {
    Index qBlock = 0;
    Index kvBlock = 0;
    std::vector<FlashHeadTrace> heads;
};

/// DESIGN.md's trace JSON: {"variant":"flash","q_block":..,"kv_block":..,"heads":[...]}
/// with null for a running max that is still minus infinity.
std::string flashTraceJson(const FlashTrace& trace);

} // namespace attnlab

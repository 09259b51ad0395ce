#pragma once
/// The record of a FlashAttention run (Dao et al. 2022, Alg. 1): one step per
/// (q tile, kv tile) in visiting order, with the online-softmax state after it, in the
/// precision of the run (FlashTrace for float32 inputs, FlashTraceD for float64).

#include <string>
#include <vector>

#include "attnlab/base/tensor.h"

namespace attnlab {

/// One tile of the walk: query rows [qStart, qEnd) x key columns [kvStart, kvEnd).
struct FlashTile {
    Index qStart = 0, qEnd = 0;
    Index kvStart = 0, kvEnd = 0;
    bool skipped = false; ///< no allowed cell in the tile: not computed, state unchanged
};

/// A tile of a traced run with the state after it.
template <typename T> struct FlashStepT : FlashTile {
    /// Per query row of the tile after this step: running max m (-inf while no key seen),
    /// running sum l relative to m, and exp(m_old - m_new) applied to the accumulator.
    std::vector<T> rowMax, rowSum, rescale;
};

template <typename T> struct FlashHeadTraceT {
    Index batch = 0;
    Index head = 0;
    std::vector<FlashStepT<T>> steps;
};

template <typename T> struct FlashTraceT {
    Index qBlock = 0;
    Index kvBlock = 0;
    std::vector<FlashHeadTraceT<T>> heads;
};

using FlashStep = FlashStepT<float>;
using FlashHeadTrace = FlashHeadTraceT<float>;
using FlashTrace = FlashTraceT<float>;
using FlashTraceD = FlashTraceT<double>;

/// docs/architecture.md's trace JSON: {"variant":"flash","q_block":..,"kv_block":..,"heads":[...]}
/// with null for a running max that is still minus infinity. Numbers are the shortest
/// decimals that read back as the trace's own values (float or double).
std::string flashTraceJson(const FlashTrace& trace);
std::string flashTraceJson(const FlashTraceD& trace);

} // namespace attnlab

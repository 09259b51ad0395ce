#pragma once
/// FlashWalk: FlashAttention (Dao et al. 2022, Alg. 1) walked tile by tile over ONE head, for
/// the stepper view: the tiles in visiting order (q tile outer, kv tile inner), which of them
/// are skipped, the standard-attention reference output (double), the max error against it
/// after sampled steps, and the online-softmax state after any step.
///
/// Memory is bounded whatever S and the block sizes (Sq, Sk <= 4096 give a few MiB):
///   - the head's Q, K, V ((Sq + Sk) D + Sk Dv floats), the reference (Sq Dv doubles) and the
///     final state (Sq (Dv + 2) floats);
///   - one bit per tile for "skipped" plus a running count per 64 tiles (<= Sq Sk / 8 bytes);
///   - at most kMaxErrorSamples + 1 error points;
///   - at most kMaxCheckpoints tile states, and never more than kCheckpointBytes of them.
/// No per-tile record is kept: a tile's bounds are arithmetic, a row's curves (rowHistory)
/// are recomputed from its q and K in O(Sk D), and stateAfter() replays at most
/// checkpointSpacing() tiles from the nearest checkpoint.

#include <cstdint>
#include <vector>

#include "attnlab/attention/flash.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/tensor.h"

namespace attnlab {

/// The online-softmax values of one query row after one computed tile.
struct FlashRowPoint {
    Index stepsDone = 0; ///< the tile is step stepsDone (1-based: tiles done after it)
    float rowMax = 0;    ///< running max m (-inf while the row has seen no allowed key)
    float rowSum = 0;    ///< running sum l relative to m
    float rescale = 0;   ///< exp(m_old - m_new) applied to the row's accumulator
};

/// max_i,d |O_i,d - O_std,i,d| over the head after `stepsDone` tiles, where O is the
/// accumulator divided by l (rows not yet visited, or with l = 0, count as O = 0).
struct FlashErrorPoint {
    Index stepsDone = 0;
    double maxError = 0;
};

class FlashWalk {
public:
    static constexpr Index kMaxErrorSamples = 400;
    static constexpr Index kMaxCheckpoints = 1024;
    static constexpr std::size_t kCheckpointBytes = std::size_t(32) << 20;

    /// Walks one head: q [Sq, D], k [Sk, D], v [Sk, Dv], the mask of batch entry `batch`
    /// (validLen), logits scale * q.k, tiles of qBlock x kvBlock (each >= 1).
    /// Sq == 0 or Sk == 0 gives a walk of 0 tiles. Throws InvalidArgument on mismatched
    /// shapes, blocks < 1 or a mask that does not fit.
    FlashWalk(const Matrix& q, const Matrix& k, const Matrix& v, const MaskSpec& mask, Index batch,
              double scale, Index qBlock, Index kvBlock);

    Index sq() const { return m_q.rows(); }
    Index sk() const { return m_k.rows(); }
    Index dim() const { return m_q.cols(); }
    Index dimV() const { return m_v.cols(); }
    Index qBlock() const { return m_qBlock; }
    Index kvBlock() const { return m_kvBlock; }
    /// Tiles in visiting order, skipped ones included.
    Index totalSteps() const { return m_qTiles * m_kvTiles; }
    /// Tile `step` (0-based, < totalSteps()).
    FlashTile tile(Index step) const;
    /// How many of the first `steps` tiles are skipped.
    Index skippedAmong(Index steps) const;

    /// Standard softmax attention of the head, in double: [Sq, Dv]; empty rows are 0.
    const MatrixD& reference() const { return m_reference; }
    /// The error after 0, ..., totalSteps() tiles when there are at most kMaxErrorSamples,
    /// else after kMaxErrorSamples + 1 evenly spaced step counts (0 and the last included).
    const std::vector<FlashErrorPoint>& errors() const { return m_errors; }

    /// The state after the first `steps` tiles (clamped to [0, totalSteps()]), equal to
    /// flashStateAfter() on the same head. Replays at most checkpointSpacing() tiles.
    FlashState stateAfter(Index steps) const;
    /// Tiles between checkpoints (the most stateAfter() replays).
    Index checkpointSpacing() const { return m_spacing; }
    /// The values of query row `row` after each computed (not skipped) tile among the first
    /// `steps` that covers the row, in order. O(Sk D). Empty for a row outside [0, Sq).
    std::vector<FlashRowPoint> rowHistory(Index row, Index steps) const;

    /// Bytes this walk holds (the bound above, for tests and notes).
    std::size_t bytes() const;

private:
    struct TileState {
        Index step = 0; ///< tiles done when the state was taken
        Matrix accumulator;
        std::vector<float> rowMax, rowSum;
    };
    void walk();
    /// Applies kv tile [k0, k0 + bc) to the rows [q0, q0 + br) held in `state`.
    void applyTile(Index q0, Index br, Index k0, Index bc, Matrix& accumulator,
                   std::vector<float>& rowMax, std::vector<float>& rowSum,
                   std::vector<float>* rescaleOut) const;
    bool tileHasAllowed(Index q0, Index br, Index k0, Index bc) const;
    bool skippedAt(Index step) const;

    Matrix m_q, m_k, m_v;
    MaskSpec m_mask;
    Index m_batch = 0;
    float m_scale = 1;           ///< the kernel's float scale, as flash.cpp uses it
    double m_referenceScale = 1; ///< the reference's, in double
    Index m_qBlock = 1, m_kvBlock = 1;
    Index m_qTiles = 0, m_kvTiles = 0;
    std::vector<std::uint64_t> m_skipBits;
    std::vector<Index> m_skipCountBefore; ///< skipped tiles before word w of m_skipBits
    Index m_skippedTotal = 0;
    Matrix m_finalAccumulator;
    std::vector<float> m_finalMax, m_finalSum;
    MatrixD m_reference;
    std::vector<FlashErrorPoint> m_errors;
    std::vector<TileState> m_checkpoints; ///< in step order, each strictly inside a q tile
    Index m_spacing = 1;
};

} // namespace attnlab

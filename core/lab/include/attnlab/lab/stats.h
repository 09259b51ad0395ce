#pragma once
/// Attention statistics (seed 002, "analyze_attention_patterns" and §2.5): entropy,
/// diagonal mass, most-attended token, distance, first-token weight, histogram.

#include <algorithm>
#include <vector>

#include "attnlab/attention/mask.h"

namespace attnlab {

struct HeadStats {
    std::vector<double> entropy;           ///< per query row, nats: -sum w log w (0 log 0 = 0)
    std::vector<double> normalizedEntropy; ///< entropy / log(allowed); 0 where allowed <= 1
    std::vector<Index> allowed;            ///< allowed keys per row
    std::vector<unsigned char> emptyRow;   ///< 1 where no key is allowed
    /// sum_j w_ij per row: 1 for a softmax row, 0 for an empty one; after train-mode dropout
    /// a row sums to 1 only in expectation.
    std::vector<double> rowSum;
    double minRowSum = 0; ///< over non-empty rows (0 when there are none)
    double maxRowSum = 0;
    std::vector<Index> mostAttended; ///< argmax_j w_ij over j != p; -1 when none
    std::vector<double> mostAttendedWeight;
    std::vector<double> meanDistance;     ///< sum_j w_ij |p - j|
    std::vector<double> firstTokenWeight; ///< w_i0
    double meanEntropy = 0;               ///< over non-empty rows
    double diagonalMean = 0;              ///< mean of w_{i,p} over rows whose p is a key
    double offDiagonalMean = 0;           ///< mean of the other Sq*Sk - #diagonal cells
    std::vector<Index> histogram;         ///< counts of allowed weights in [0, 1], equal bins
};

/// Statistics of one [Sq, Sk] weight matrix under the mask it was computed with (batch b).
/// Query i sits at p = i + Sk - Sq. bins >= 1.
HeadStats headStats(ConstMatrixMap weights, const MaskSpec& mask, Index batch, Index bins = 20);
/// The same of a map held in a Matrix (a dump's head computed when asked).
inline HeadStats headStats(const Matrix& weights, const MaskSpec& mask, Index batch,
                           Index bins = 20) {
    return headStats(ConstMatrixMap(weights.data(), weights.rows(), weights.cols()), mask, batch,
                     bins);
}

/// A map as a thumbnail draws it: each cell the largest weight of a `block` x `block` block of
/// cells that `mask` allows (NaN where the whole block is masked), so a strong weight is never
/// dropped. A custom mask of another shape than the map's does not apply (maskFor).
/// [ceil(Sq/b), ceil(Sk/b)]. Cost: the allowed cells, read a row's interval at a time.
MatrixD blockMax(ConstMatrixMap weights, const MaskSpec& mask, Index block);
/// Positions per overview cell along a side of `positions`: at most kOverviewCells cells.
inline constexpr Index kOverviewCells = 512;
inline Index overviewBlock(Index positions) {
    return std::max<Index>(1, (positions + kOverviewCells - 1) / kOverviewCells);
}

} // namespace attnlab

#include "attnlab/lab/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab {

HeadStats headStats(ConstMatrixMap weights, const MaskSpec& mask, Index batch, Index bins) {
    ATTN_CHECK(bins >= 1, "a histogram needs at least 1 bin (got " << bins << ")");
    const Index sq = weights.rows();
    const Index sk = weights.cols();
    const BoolMatrix allowedCells = denseMask(mask, batch, sq, sk);

    HeadStats stats;
    const auto rows = static_cast<std::size_t>(sq);
    stats.entropy.assign(rows, 0.0);
    stats.normalizedEntropy.assign(rows, 0.0);
    stats.allowed.assign(rows, 0);
    stats.emptyRow.assign(rows, 0);
    stats.rowSum.assign(rows, 0.0);
    stats.mostAttended.assign(rows, -1);
    stats.mostAttendedWeight.assign(rows, 0.0);
    stats.meanDistance.assign(rows, 0.0);
    stats.firstTokenWeight.assign(rows, 0.0);
    stats.histogram.assign(static_cast<std::size_t>(bins), 0);

    double entropySum = 0;
    Index nonEmptyRows = 0;
    double diagonalSum = 0;
    Index diagonalCells = 0;
    double totalSum = 0;

    // Each row's logarithms at once (vectorized, float: an entropy term w log w is off by
    // under 1e-7 relative), not one call per cell.
    Eigen::ArrayXf logs(sk);
    for (Index i = 0; i < sq; ++i) {
        const auto r = static_cast<std::size_t>(i);
        logs = weights.row(i).transpose().array().max(std::numeric_limits<float>::min()).log();
        const Index p = i + sk - sq; // the key at the query's own position
        Index allowedKeys = 0;
        double entropy = 0;
        double distance = 0;
        double rowSum = 0;
        Index best = -1;
        double bestWeight = 0;
        for (Index j = 0; j < sk; ++j) {
            const double w = weights(i, j);
            totalSum += w;
            rowSum += w;
            if (!allowedCells(i, j)) continue;
            ++allowedKeys;
            if (w > 0) entropy -= w * static_cast<double>(logs[j]); // 0 log 0 = 0
            distance += w * static_cast<double>(std::abs(p - j));
            // np.argmax semantics: the first of equal maxima wins.
            if (j != p && (best < 0 || w > bestWeight)) {
                best = j;
                bestWeight = w;
            }
            // A NaN weight falls in no bin: casting it to an integer is undefined.
            if (std::isnan(w)) continue;
            const double clamped = std::clamp(w, 0.0, 1.0);
            const Index bin = std::min<Index>(bins - 1, static_cast<Index>(clamped * bins));
            ++stats.histogram[static_cast<std::size_t>(bin)];
        }
        if (p >= 0 && p < sk) {
            diagonalSum += weights(i, p);
            ++diagonalCells;
        }
        stats.allowed[r] = allowedKeys;
        stats.rowSum[r] = rowSum;
        stats.emptyRow[r] = allowedKeys == 0 ? 1 : 0;
        stats.entropy[r] = entropy;
        stats.normalizedEntropy[r] =
            allowedKeys > 1 ? entropy / std::log(static_cast<double>(allowedKeys)) : 0.0;
        stats.mostAttended[r] = best;
        stats.mostAttendedWeight[r] = best >= 0 ? bestWeight : 0.0;
        stats.meanDistance[r] = distance;
        stats.firstTokenWeight[r] = sk > 0 ? static_cast<double>(weights(i, 0)) : 0.0;
        if (allowedKeys > 0) {
            entropySum += entropy;
            stats.minRowSum = nonEmptyRows == 0 ? rowSum : std::min(stats.minRowSum, rowSum);
            stats.maxRowSum = nonEmptyRows == 0 ? rowSum : std::max(stats.maxRowSum, rowSum);
            ++nonEmptyRows;
        }
    }

    stats.meanEntropy = nonEmptyRows > 0 ? entropySum / static_cast<double>(nonEmptyRows) : 0.0;
    stats.diagonalMean = diagonalCells > 0 ? diagonalSum / static_cast<double>(diagonalCells) : 0.0;
    // The mean over the cells off the diagonal. Seed 002's attention_pattern_analysis computes
    // np.mean(weights - np.diag(np.diag(weights))), which divides the off-diagonal sum by all
    // n^2 cells (diagonal zeros included) and so understates it by a factor (n - 1) / n; here
    // the divisor is the number of off-diagonal cells, Sq * Sk - #diagonal cells.
    const Index offCells = sq * sk - diagonalCells;
    stats.offDiagonalMean =
        offCells > 0 ? (totalSum - diagonalSum) / static_cast<double>(offCells) : 0.0;
    return stats;
}

} // namespace attnlab

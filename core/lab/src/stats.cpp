#include "attnlab/lab/stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace attnlab {

namespace {

/// Interleaved accumulators of a row's sums (see headStats).
constexpr Index kSumLanes = 8;

/// Four histograms counted in turn: consecutive cells mostly fall in the same bin, and one
/// counter would make each increment wait for the last.
constexpr Index kHistogramLanes = 4;

/// Cells the argmax and histogram passes test at once (one vector of floats, two of doubles):
/// most chunks of a long row hold neither the row's largest weight nor a weight past the first
/// bin, and are passed over without a branch per cell.
constexpr Index kScanChunk = 16;

/// Whether one of the kScanChunk weights at `w` equals `value`.
inline bool anyEqual(const float* w, float value) {
    bool any = false;
    for (Index l = 0; l < kScanChunk; ++l)
        any |= w[l] == value;
    return any;
}

/// Whether one of the kScanChunk weights at `w` lies past the first of `scale` bins (w * scale
/// >= 1, in double as the binning computes it).
inline bool anyPastFirstBin(const float* w, double scale) {
    bool any = false;
    for (Index l = 0; l < kScanChunk; ++l)
        any |= static_cast<double>(w[l]) * scale >= 1.0;
    return any;
}

/// Weight w of key j in its bin of histogram lane j % kHistogramLanes (a NaN in none: casting
/// it to an integer is undefined).
inline void countCell(double w, Index j, Index bins, Index* laneCounts) {
    if (std::isnan(w)) return;
    const double clamped = std::clamp(w, 0.0, 1.0);
    const Index bin = std::min<Index>(bins - 1, static_cast<Index>(clamped * bins));
    ++laneCounts[(j % kHistogramLanes) * bins + bin];
}

/// An allowed cell's share of the row's entropy, distance, argmax and histogram.
inline void addCell(double w, float log, Index j, Index p, Index bins, double& entropy,
                    double& distance, Index& best, double& bestWeight, Index* laneCounts) {
    if (w > 0) entropy -= w * static_cast<double>(log); // 0 log 0 = 0
    distance += w * std::abs(static_cast<double>(p - j));
    // np.argmax semantics: the first of equal maxima wins.
    if (j != p && (best < 0 || w > bestWeight)) {
        best = j;
        bestWeight = w;
    }
    countCell(w, j, bins, laneCounts);
}

} // namespace

HeadStats headStats(ConstMatrixMap weights, const MaskSpec& mask, Index batch, Index bins) {
    ATTN_CHECK(bins >= 1, "a histogram needs at least 1 bin (got " << bins << ")");
    const Index sq = weights.rows();
    const Index sk = weights.cols();
    // Rows are intervals of allowed keys (keyRange) with, at most, a custom mask within: the
    // cells outside the interval only add to the sums, so the loop over them tests nothing.
    const BoolMatrix* custom =
        mask.custom && mask.custom->rows() == sq && mask.custom->cols() == sk ? &*mask.custom
                                                                              : nullptr;

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
    std::vector<Index> laneCounts(static_cast<std::size_t>(kHistogramLanes * bins), 0);

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
        const KeyRange range = keyRange(mask, batch, i, sq, sk);
        const Index begin = std::clamp<Index>(range.begin, 0, sk);
        const Index end = std::clamp<Index>(range.end, begin, sk);
        const float* row = weights.data() + i * weights.rowStride();
        logs.segment(begin, end - begin) = weights.row(i)
                                               .segment(begin, end - begin)
                                               .transpose()
                                               .array()
                                               .max(std::numeric_limits<float>::min())
                                               .log();
        const Index p = i + sk - sq; // the key at the query's own position
        Index allowedKeys = 0;
        double entropy = 0;
        double distance = 0;
        double rowSum = 0;
        Index best = -1;
        double bestWeight = 0;
        if (custom) {
            // A custom mask within the interval: cell by cell.
            for (Index j = 0; j < sk; ++j) {
                const double w = row[j];
                rowSum += w;
                if (j < begin || j >= end || !(*custom)(i, j)) continue;
                ++allowedKeys;
                addCell(w, logs[j], j, p, bins, entropy, distance, best, bestWeight,
                        laneCounts.data());
            }
        } else {
            // The sums over kLanes interleaved accumulators, each a chain of its own (the
            // compiler turns the lanes into one vector; the same order at any thread count),
            // then the argmax and the histogram over the interval.
            std::array<double, kSumLanes> sums{}, entropies{}, distances{};
            Index j = 0;
            for (; j + kSumLanes <= sk; j += kSumLanes)
                for (Index l = 0; l < kSumLanes; ++l)
                    sums[static_cast<std::size_t>(l)] += static_cast<double>(row[j + l]);
            for (; j < sk; ++j)
                sums[0] += static_cast<double>(row[j]);
            j = begin;
            for (; j + kSumLanes <= end; j += kSumLanes)
                for (Index l = 0; l < kSumLanes; ++l) {
                    const double w = row[j + l];
                    const auto lane = static_cast<std::size_t>(l);
                    // 0 log 0 = 0; a negative or NaN weight adds no entropy.
                    entropies[lane] -= w > 0 ? w * static_cast<double>(logs[j + l]) : 0.0;
                    distances[lane] += w * std::abs(static_cast<double>(p - j - l));
                }
            for (; j < end; ++j) {
                const double w = row[j];
                entropies[0] -= w > 0 ? w * static_cast<double>(logs[j]) : 0.0;
                distances[0] += w * std::abs(static_cast<double>(p - j));
            }
            for (Index l = 0; l < kSumLanes; ++l) {
                const auto lane = static_cast<std::size_t>(l);
                rowSum += sums[lane];
                entropy += entropies[lane];
                distance += distances[lane];
            }
            allowedKeys = end - begin;
            const auto keys = Eigen::Map<const Eigen::ArrayXf>(row + begin, end - begin);
            if (keys.size() > 0 && std::isnan(keys.maxCoeff<Eigen::PropagateNaN>())) {
                // A NaN weight: cell by cell (a NaN counts in no bin and never wins the argmax).
                for (j = begin; j < end; ++j) {
                    const double w = row[j];
                    if (j != p && (best < 0 || w > bestWeight)) {
                        best = j;
                        bestWeight = w;
                    }
                    countCell(w, j, bins, laneCounts.data());
                }
            } else if (keys.size() > 0) {
                // np.argmax: the first of the largest weights of the keys other than p.
                const Index ownAt = p - begin; // the own key's place in `keys`, if inside
                float largest = -std::numeric_limits<float>::infinity();
                if (ownAt > 0) largest = keys.head(std::min(ownAt, keys.size())).maxCoeff();
                if (ownAt + 1 < keys.size()) {
                    const Index after = std::max<Index>(ownAt + 1, 0);
                    largest = std::max(largest, keys.segment(after, keys.size() - after).maxCoeff());
                }
                if (keys.size() > 1 || ownAt != 0) {
                    j = begin;
                    // A chunk without the largest weight is passed over by one vector test.
                    while (j + kScanChunk <= end && !anyEqual(row + j, largest)) j += kScanChunk;
                    for (; j < end; ++j)
                        if (j != p && row[j] == largest) break;
                    best = j;
                    bestWeight = row[j];
                }
                // Most weights of a long row fall in the first bin: only the others are
                // binned one by one (w * bins is exact in double, so the bin is the
                // cell-by-cell one), and a chunk with none of them is passed over whole.
                const double scale = static_cast<double>(bins);
                Index above = 0;
                for (j = begin; j < end; j += kScanChunk) {
                    const Index stop = std::min(end, j + kScanChunk);
                    if (stop - j == kScanChunk && !anyPastFirstBin(row + j, scale)) continue;
                    for (Index c = j; c < stop; ++c) {
                        const double x = static_cast<double>(row[c]) * scale;
                        if (x < 1.0) continue;
                        ++above;
                        ++laneCounts[static_cast<std::size_t>(
                            std::min<Index>(bins - 1, static_cast<Index>(std::min(x, scale))))];
                    }
                }
                laneCounts[0] += (end - begin) - above;
            }
        }
        totalSum += rowSum;
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

    for (Index lane = 0; lane < kHistogramLanes; ++lane)
        for (Index bin = 0; bin < bins; ++bin)
            stats.histogram[static_cast<std::size_t>(bin)] +=
                laneCounts[static_cast<std::size_t>(lane * bins + bin)];

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

MatrixD blockMax(ConstMatrixMap weights, const MaskSpec& spec, Index block) {
    ATTN_CHECK(block >= 1, "an overview block holds at least 1 position (got " << block << ")");
    const Index sq = weights.rows();
    const Index sk = weights.cols();
    const MaskSpec mask = maskFor(spec, sq, sk);
    const Index cols = (sk + block - 1) / block;
    // -inf marks a cell no allowed weight reached yet (a weight is never -inf): NaN at the end.
    constexpr double kNone = -std::numeric_limits<double>::infinity();
    MatrixD cells = MatrixD::Constant((sq + block - 1) / block, cols, kNone);
    using Blocks = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>>;
    for (Index i = 0; i < sq; ++i) {
        const KeyRange range = keyRange(mask, 0, i, sq, sk);
        const float* row = weights.data() + i * sk;
        double* out = cells.data() + (i / block) * cols;
        auto one = [&](Index j) { out[j / block] = std::max<double>(out[j / block], row[j]); };
        if (mask.custom) {
            for (Index j = range.begin; j < range.end; ++j)
                if ((*mask.custom)(i, j)) one(j);
            continue;
        }
        // The whole blocks inside the row's interval as the columns of a block x n matrix,
        // reduced together; the partial blocks at its ends a weight at a time.
        const Index whole = (range.begin + block - 1) / block * block;
        const Index wholeEnd = std::max(whole, range.end / block * block);
        for (Index j = range.begin; j < std::min(whole, range.end); ++j)
            one(j);
        if (wholeEnd > whole) {
            const Index n = (wholeEnd - whole) / block;
            auto largest = Blocks(row + whole, block, n).colwise().maxCoeff();
            auto into = Eigen::Map<Eigen::RowVectorXd>(out + whole / block, n);
            into = into.cwiseMax(largest.cast<double>());
        }
        for (Index j = std::max(wholeEnd, range.begin); j < range.end; ++j)
            one(j);
    }
    return cells.unaryExpr([](double cell) {
        return cell == kNone ? std::numeric_limits<double>::quiet_NaN() : cell;
    });
}

} // namespace attnlab

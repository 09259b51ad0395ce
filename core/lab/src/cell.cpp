#include "attnlab/lab/cell.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab {

std::optional<CellComputation> explainCell(const Experiment& experiment, Index head, Index row,
                                           Index column) {
    if (!experiment.hasWeights() || experiment.weightHeads() < 1) return std::nullopt;
    CellComputation cell;
    cell.head = std::clamp<Index>(head, 0, experiment.weightHeads() - 1);
    const Tensor4& held = experiment.attention.weights;
    const Index sq = held.empty() ? experiment.sq() : held.seq;
    const Index sk = held.empty() ? experiment.sk() : held.dim;
    if (row < 0 || column < 0 || row >= sq || column >= sk) return std::nullopt;
    cell.kvHead = experiment.kvHeadOf(cell.head);
    cell.row = row;
    cell.column = column;
    // A model's layer computes the head's map when asked (the last head asked is kept).
    cell.storedWeight = held.empty()
                            ? experiment.maps->weight(experiment.qkv, cell.head, row, column)
                            : held(0, cell.head, row, column);
    cell.hasScores = experiment.hasQk() && experiment.sq() == sq && experiment.sk() == sk &&
                     experiment.qkv.q.dim == experiment.qkv.k.dim;
    if (!cell.hasScores) return cell;

    const auto q = experiment.qkv.q.head(0, cell.head).row(row).cast<double>();
    const auto k = experiment.qkv.k.head(0, cell.kvHead).row(column).cast<double>();
    cell.dot = q.dot(k);
    const MatrixD scores = experiment.scaledScores(cell.head, row, 1); // the query's row
    cell.scaled = scores(0, column);
    const MaskSpec mask = maskFor(experiment.mask, sq, sk);
    cell.masked = !allowed(mask, 0, row, column, sq, sk);
    cell.softmax = experiment.usesSoftmax();
    if (cell.masked || !cell.softmax) return cell;

    cell.rowMax = -std::numeric_limits<double>::infinity();
    for (Index j = 0; j < sk; ++j)
        if (allowed(mask, 0, row, j, sq, sk)) cell.rowMax = std::max(cell.rowMax, scores(0, j));
    for (Index j = 0; j < sk; ++j)
        if (allowed(mask, 0, row, j, sq, sk)) cell.rowSum += std::exp(scores(0, j) - cell.rowMax);
    cell.numerator = std::exp(cell.scaled - cell.rowMax);
    cell.weight = cell.numerator / cell.rowSum;
    cell.dropoutActive = experiment.dropout.active();
    if (cell.dropoutActive) {
        cell.dropped = experiment.isDropped(cell.head, row, column);
        cell.keepScale = 1.0 / (1.0 - experiment.dropout.rate);
    }
    return cell;
}

} // namespace attnlab

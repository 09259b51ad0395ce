#include "ui/experiment_data.h"

#include <algorithm>

namespace attnlab::ui {

QStringList displayTokens(const std::vector<std::string>& tokens) {
    QStringList out;
    out.reserve(static_cast<int>(tokens.size()));
    for (const std::string& token : tokens)
        out << (token.empty() ? QStringLiteral("\u2423") : QString::fromStdString(token));
    return out;
}

Index clampedHead(const Experiment& experiment, Index head) {
    const Index heads = experiment.attention.weights.heads;
    if (heads <= 0) return 0;
    return std::clamp<Index>(head, 0, heads - 1);
}

Index kvHeadOf(const Experiment& experiment, Index head) {
    const Index heads = std::max<Index>(1, experiment.headCount());
    const Index kvHeads = std::max<Index>(1, experiment.kvHeadCount());
    return std::min(kvHeads - 1, head / std::max<Index>(1, heads / kvHeads));
}

MatrixD headSlice(const Tensor4& tensor, Index head) {
    if (tensor.empty() || tensor.batch < 1 || head < 0 || head >= tensor.heads)
        return MatrixD(0, 0);
    return tensor.head(0, head).cast<double>();
}

MatrixD headWeights(const Experiment& experiment, Index head) {
    return headSlice(experiment.attention.weights, clampedHead(experiment, head));
}

MatrixD rawScores(const Experiment& experiment, Index head) {
    const Index h = clampedHead(experiment, head);
    const MatrixD q = headSlice(experiment.qkv.q, h);
    const MatrixD k = headSlice(experiment.qkv.k, kvHeadOf(experiment, h));
    if (q.size() == 0 || k.size() == 0 || q.cols() != k.cols()) return MatrixD(0, 0);
    MatrixD scores(q.rows(), k.rows());
    scores.noalias() = q * k.transpose();
    return scores;
}

MatrixD scaledScores(const Experiment& experiment, Index head) {
    const Index h = clampedHead(experiment, head);
    const Tensor4& scores = experiment.attention.scores;
    if (!scores.empty() && h < scores.heads) return headSlice(scores, h);
    // experiment.scale is baseScale / temperature already: divide by T once, there.
    return rawScores(experiment, h) * experiment.scale;
}

BoolMatrix maskedCells(const Experiment& experiment) {
    const Index sq = experiment.sq();
    const Index sk = experiment.sk();
    MaskSpec mask = experiment.mask;
    if (mask.custom && (mask.custom->rows() != sq || mask.custom->cols() != sk))
        mask.custom.reset();
    BoolMatrix allowedCells = denseMask(mask, 0, sq, sk);
    return allowedCells.array() == false;
}

} // namespace attnlab::ui

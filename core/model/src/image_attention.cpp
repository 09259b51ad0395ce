#include "attnlab/model/image_attention.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnlab/base/check.h"
#include "attnlab/model/attention_maps.h"

namespace attnlab::model {

std::vector<std::string> imageTokenNames(const ModelConfig& config) {
    const Index grid = config.patchGrid();
    std::vector<std::string> names;
    names.reserve(static_cast<std::size_t>(grid * grid + config.leadingTokens));
    names.emplace_back("[CLS]");
    if (config.leadingTokens > 1) names.emplace_back("[DIST]");
    for (Index r = 0; r < grid; ++r)
        for (Index c = 0; c < grid; ++c)
            names.push_back("r" + std::to_string(r) + "c" + std::to_string(c));
    return names;
}

PatchCell patchOfToken(const ModelConfig& config, Index token) {
    const Index grid = config.patchGrid();
    const Index patch = token - config.leadingTokens;
    if (patch < 0 || patch >= grid * grid) return {};
    return {patch / grid, patch % grid};
}

Index tokenOfPatch(const ModelConfig& config, Index row, Index column) {
    return config.leadingTokens + row * config.patchGrid() + column;
}

Matrix meanHeadAttention(const Model& model, const ModelRun& run, Index layer, int threads) {
    const AttentionShape shape = attentionShape(model, run);
    if (layer < 0 || layer >= shape.layers)
        throw InvalidArgument("layer " + std::to_string(layer) + " of a run with " +
                              std::to_string(shape.layers) + " layers");
    Matrix mean = Matrix::Zero(shape.queries, shape.keys);
    for (Index h = 0; h < shape.heads; ++h) {
        if (run.ablatedHeads.count({layer, h})) continue; // its output is zero in the forward
        mean.noalias() += attentionMap(model, run, layer, h, AttentionOf::Self, threads);
    }
    mean /= static_cast<float>(shape.heads);
    return mean;
}

Matrix attentionRollout(const Model& model, const ModelRun& run, Index layers, int threads) {
    const AttentionShape shape = attentionShape(model, run);
    if (shape.queries != shape.keys)
        throw InvalidArgument("attention rollout needs a run's self-attention");
    const Index count = layers > 0 ? std::min(layers, shape.layers) : shape.layers;
    // In double: L products of T x T rows that sum to one stay summing to one.
    using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    MatrixD rollout = MatrixD::Identity(shape.queries, shape.keys);
    MatrixD step(shape.queries, shape.keys), next(shape.queries, shape.keys);
    for (Index l = 0; l < count; ++l) {
        step = meanHeadAttention(model, run, l, threads).cast<double>();
        step.diagonal().array() += 1.0;
        // Rows sum to 2 without switched-off heads; to whatever is left with them.
        step.array().colwise() /= step.rowwise().sum().array();
        next.noalias() = step * rollout;
        rollout.swap(next);
    }
    return rollout.cast<float>();
}

std::vector<LabelProbability> topLabels(const ModelConfig& config, const Matrix& logits,
                                        Index count) {
    if (logits.rows() < 1 || logits.cols() < 1) return {};
    const Index classes = logits.cols();
    std::vector<double> p(static_cast<std::size_t>(classes));
    const double top = logits.row(0).maxCoeff();
    double sum = 0;
    for (Index i = 0; i < classes; ++i)
        sum += p[static_cast<std::size_t>(i)] = std::exp(double(logits(0, i)) - top);
    std::vector<Index> order(static_cast<std::size_t>(classes));
    std::iota(order.begin(), order.end(), Index{0});
    std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) {
        return p[static_cast<std::size_t>(a)] > p[static_cast<std::size_t>(b)];
    });
    std::vector<LabelProbability> best;
    for (Index k = 0; k < std::min(count, classes); ++k) {
        const Index id = order[static_cast<std::size_t>(k)];
        const bool named = id < static_cast<Index>(config.labels.size());
        best.push_back(
            {id,
             named ? config.labels[static_cast<std::size_t>(id)] : "LABEL_" + std::to_string(id),
             p[static_cast<std::size_t>(id)] / sum});
    }
    return best;
}

} // namespace attnlab::model

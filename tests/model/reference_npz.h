#pragma once
// Reading what an outside reference computed (.npz written by numpy) and comparing a model run
// with it: int64 id arrays, per-layer attentions, logits.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"

namespace attnlab::test {

/// The checkpoints saved by transformers with their numbers (fixtures/hf/README.md).
inline std::filesystem::path hfDir() {
    return std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests/model/fixtures/hf";
}

/// The names of hfDir()'s checkpoint folders, sorted.
inline std::vector<std::string> hfFixtureNames() {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(hfDir()))
        if (entry.is_directory()) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

/// The values of a 1-D int64 .npy image; throws naming `name` for anything else.
inline std::vector<std::int64_t> int64s(const std::string& bytes, const std::string& name) {
    auto header = parseNpyHeader(bytes, name);
    if (!header.ok() || header->descr != "<i8" || header->shape.size() != 1 ||
        bytes.size() != header->dataOffset + 8 * static_cast<std::size_t>(header->count))
        throw std::runtime_error(name + ": not a 1-D int64 array");
    std::vector<std::int64_t> values(static_cast<std::size_t>(header->count));
    std::memcpy(values.data(), bytes.data() + header->dataOffset, 8 * values.size());
    return values;
}

/// Largest |a - b| of per-layer [1, H, R, C] tensors against a reference [L, H, R, C]
/// (infinite when the sizes differ).
inline double worstDifference(const std::vector<Tensor4>& layers, const NpyArray& expected) {
    std::size_t at = 0;
    double worst = 0;
    for (const Tensor4& layer : layers)
        for (float value : layer.data) {
            if (at >= expected.data.size()) return INFINITY;
            worst = std::max(worst, std::abs(static_cast<double>(value) - expected.data[at++]));
        }
    return at == expected.data.size() ? worst : INFINITY;
}

/// Largest |a - b| of logits over the largest |b| (infinite when the shapes differ).
inline double relativeDifference(const Matrix& logits, const NpyArray& expected) {
    if (expected.shape != std::vector<Index>{logits.rows(), logits.cols()}) return INFINITY;
    const Eigen::Map<const Matrix> reference(expected.data.data(), logits.rows(), logits.cols());
    return (logits - reference).cwiseAbs().maxCoeff() / reference.cwiseAbs().maxCoeff();
}

} // namespace attnlab::test

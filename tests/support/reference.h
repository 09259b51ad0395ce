#pragma once
// An independent reference for attention tests: naive triple loops in double precision over
// one head, with the mask computed by its own loop from docs/architecture.md's rules (it never calls
// core/attention/src/mask.cpp). Plus seeded random tensors and a matrix comparison that prints the
// worst cell.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "attnlab/attention/mask.h"
#include "attnlab/base/tensor.h"

namespace attnlab::ref {

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MaskD = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The mask rules of docs/architecture.md written out cell by cell. Query i sits at p = i + Sk - Sq.
struct MaskRules {
    bool causal = false;
    long window = -1;       ///< >= 0: |p - j| <= window
    long causalWindow = -1; ///< >= 0: 0 <= p - j <= causalWindow
    long validLen = -1;     ///< >= 0: j < validLen
    const BoolMatrix* custom = nullptr;
};

/// Rules of a MaskSpec for batch entry b (copies the fields; does not call mask.cpp).
inline MaskRules rulesOf(const MaskSpec& spec, Index b) {
    MaskRules r;
    r.causal = spec.causal;
    r.window = static_cast<long>(spec.window);
    r.causalWindow = static_cast<long>(spec.causalWindow);
    if (!spec.validLen.empty())
        r.validLen = static_cast<long>(spec.validLen.size() == 1
                                           ? spec.validLen.front()
                                           : spec.validLen[static_cast<std::size_t>(b)]);
    r.custom = spec.custom ? &*spec.custom : nullptr;
    return r;
}

/// Dense [Sq, Sk] allowed-mask from the rules, one cell at a time.
inline MaskD allowedMask(const MaskRules& rules, long sq, long sk) {
    MaskD m(sq, sk);
    for (long i = 0; i < sq; ++i) {
        const long p = i + sk - sq;
        for (long j = 0; j < sk; ++j) {
            bool ok = true;
            if (rules.causal && !(j <= p)) ok = false;
            if (rules.window >= 0 && !(std::labs(p - j) <= rules.window)) ok = false;
            if (rules.causalWindow >= 0 && !(p - j >= 0 && p - j <= rules.causalWindow)) ok = false;
            if (rules.validLen >= 0 && !(j < rules.validLen)) ok = false;
            if (rules.custom && !(*rules.custom)(i, j)) ok = false;
            m(i, j) = ok;
        }
    }
    return m;
}

struct Result {
    MatD weights; ///< [Sq, Sk], masked cells 0, empty rows all 0
    MatD output;  ///< [Sq, Dv], empty rows 0
    MatD scores;  ///< [Sq, Sk] scaled logits, unmasked
    std::vector<unsigned char> emptyRow;
};

/// Naive softmax attention of one head in double precision.
/// q [Sq, D], k [Sk, D], v [Sk, Dv]; allowed [Sq, Sk]; scale < 0 means 1/sqrt(D).
template <typename Q, typename K, typename V>
Result attention(const Q& q, const K& k, const V& v, const MaskD& allowed, double scale = -1) {
    const long sq = static_cast<long>(q.rows());
    const long sk = static_cast<long>(k.rows());
    const long d = static_cast<long>(q.cols());
    const long dv = static_cast<long>(v.cols());
    if (scale < 0) scale = d > 0 ? 1.0 / std::sqrt(static_cast<double>(d)) : 1.0;
    Result r;
    r.weights = MatD::Zero(sq, sk);
    r.output = MatD::Zero(sq, dv);
    r.scores = MatD::Zero(sq, sk);
    r.emptyRow.assign(static_cast<std::size_t>(sq), 0);
    for (long i = 0; i < sq; ++i) {
        for (long j = 0; j < sk; ++j) {
            double s = 0;
            for (long c = 0; c < d; ++c)
                s += static_cast<double>(q(i, c)) * static_cast<double>(k(j, c));
            r.scores(i, j) = s * scale;
        }
        double rowMax = -std::numeric_limits<double>::infinity();
        for (long j = 0; j < sk; ++j)
            if (allowed(i, j)) rowMax = std::max(rowMax, r.scores(i, j));
        if (rowMax == -std::numeric_limits<double>::infinity()) {
            r.emptyRow[static_cast<std::size_t>(i)] = 1;
            continue;
        }
        double sum = 0;
        for (long j = 0; j < sk; ++j)
            if (allowed(i, j)) {
                r.weights(i, j) = std::exp(r.scores(i, j) - rowMax);
                sum += r.weights(i, j);
            }
        for (long j = 0; j < sk; ++j)
            r.weights(i, j) /= sum;
        for (long j = 0; j < sk; ++j)
            for (long c = 0; c < dv; ++c)
                r.output(i, c) += r.weights(i, j) * static_cast<double>(v(j, c));
    }
    return r;
}

/// Convenience overload: mask from a MaskSpec for batch entry b.
template <typename Q, typename K, typename V>
Result attention(const Q& q, const K& k, const V& v, const MaskSpec& spec, Index b,
                 double scale = -1) {
    return attention(
        q, k, v,
        allowedMask(rulesOf(spec, b), static_cast<long>(q.rows()), static_cast<long>(k.rows())),
        scale);
}

/// A [B, H, S, D] tensor of N(0, stddev) values from std::mt19937(seed).
inline Tensor4 randomTensor(Index b, Index h, Index s, Index d, std::uint32_t seed,
                            float stddev = 1.0f) {
    Tensor4 t(b, h, s, d);
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, stddev);
    for (auto& x : t.data)
        x = dist(gen);
    return t;
}

/// A [B, H, S, D] float64 tensor of N(0, 1) values from std::mt19937_64(seed): full 53-bit
/// mantissas, for checking that double inputs are computed in double.
inline Tensor4d randomDoubles(Index b, Index h, Index s, Index d, std::uint64_t seed) {
    Tensor4d t(b, h, s, d);
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> dist(0.0, 1.0);
    for (double& x : t.data)
        x = dist(gen);
    return t;
}

/// A [rows, cols] boolean matrix, each cell true with probability pTrue, from seed.
inline BoolMatrix randomMask(Index rows, Index cols, std::uint32_t seed, double pTrue = 0.6) {
    BoolMatrix m(rows, cols);
    std::mt19937 gen(seed);
    std::bernoulli_distribution dist(pTrue);
    for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < cols; ++j)
            m(i, j) = dist(gen);
    return m;
}

/// Largest |got - expected| over the largest |expected| (and at least 1): the relative tolerance
/// the model checks state ("1e-4 relative"); infinite when the sizes differ.
inline double relativeDifference(const std::vector<double>& got,
                                 const std::vector<double>& expected) {
    if (got.size() != expected.size()) return std::numeric_limits<double>::infinity();
    double worst = 0, scale = 1;
    for (std::size_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, std::abs(got[i] - expected[i]));
        scale = std::max(scale, std::abs(expected[i]));
    }
    return worst / scale;
}

/// Compares two matrices of the same shape (any scalar types); on failure names the shape
/// mismatch or the worst cell with both values.
template <typename A, typename B>
::testing::AssertionResult matrixNear(const A& a, const B& b, double tol) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) {
        return ::testing::AssertionFailure()
               << "shape " << a.rows() << "x" << a.cols() << " vs " << b.rows() << "x" << b.cols();
    }
    double worst = 0;
    long wi = -1, wj = -1;
    for (long i = 0; i < static_cast<long>(a.rows()); ++i)
        for (long j = 0; j < static_cast<long>(a.cols()); ++j) {
            const double x = static_cast<double>(a(i, j));
            const double y = static_cast<double>(b(i, j));
            // NaN anywhere fails; equal infinities match.
            double diff = x == y ? 0.0 : std::abs(x - y);
            if (std::isnan(diff)) diff = std::numeric_limits<double>::infinity();
            if (diff > worst || (wi < 0 && diff > tol)) {
                worst = diff;
                wi = i;
                wj = j;
            }
        }
    if (worst <= tol) return ::testing::AssertionSuccess();
    std::ostringstream out;
    out << "worst cell (" << wi << ", " << wj << "): " << static_cast<double>(a(wi, wj)) << " vs "
        << static_cast<double>(b(wi, wj)) << ", |diff| = " << worst << " > " << tol;
    return ::testing::AssertionFailure() << out.str();
}

} // namespace attnlab::ref

/// EXPECT_MATRIX_NEAR(a, b, tol): same shape and every |a - b| <= tol; prints the worst cell.
#define EXPECT_MATRIX_NEAR(a, b, tol) EXPECT_TRUE(::attnlab::ref::matrixNear((a), (b), (tol)))
#define ASSERT_MATRIX_NEAR(a, b, tol) ASSERT_TRUE(::attnlab::ref::matrixNear((a), (b), (tol)))

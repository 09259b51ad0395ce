// Additive attention: seed 003's d2l worked example, and a naive double loop of
// score_ij = v^T tanh(Wq q_i + Wk k_j) with a masked softmax.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "attnlab/attention/attention.h"
#include "attnlab/lab/embedding.h"
#include "kernels.h"
#include "reference.h"

namespace attnlab {
namespace {

using ref::MatD;

struct KernelRun {
    Matrix output, weights, scores;
    std::vector<unsigned char> emptyRow;
};

KernelRun runKernel(const Tensor4& q, const Tensor4& k, const Tensor4& v, const MaskSpec& mask,
                    Index batch, const AdditiveParams& params, bool want = true) {
    KernelRun r;
    const Index sq = q.seq, sk = k.seq;
    r.output = Matrix::Constant(sq, v.dim, 123.0f);
    r.weights = Matrix::Constant(sq, sk, 77.0f);
    r.scores = Matrix::Constant(sq, sk, 77.0f);
    r.emptyRow.assign(static_cast<std::size_t>(sq), 0);
    kernels::HeadJob job{q.head(batch, 0),
                         k.head(batch, 0),
                         v.head(batch, 0),
                         MatrixMap(r.output.data(), sq, v.dim),
                         want ? r.weights.data() : nullptr,
                         want ? r.scores.data() : nullptr,
                         mask,
                         batch,
                         0.125f, // must be ignored: additive scores are not scaled
                         r.emptyRow.data()};
    kernels::additiveHead(job, params);
    return r;
}

TEST(Additive, D2lWorkedExample) {
    // Seed 003 §2.2: queries ones (2, 1, 2), keys ones (2, 10, 2),
    // values arange(40).view(1, 10, 4).repeat(2, 1, 1), valid lengths [2, 6]
    // -> [[2, 3, 4, 5]], [[10, 11, 12, 13]]. The keys are equal, so every score of a row is
    // equal and the result does not depend on the parameters.
    Tensor4 q(2, 1, 1, 2), k(2, 1, 10, 2), v(2, 1, 10, 4);
    std::fill(q.data.begin(), q.data.end(), 1.0f);
    std::fill(k.data.begin(), k.data.end(), 1.0f);
    for (Index b = 0; b < 2; ++b)
        for (Index j = 0; j < 10; ++j)
            for (Index c = 0; c < 4; ++c)
                v(b, 0, j, c) = static_cast<Scalar>(j * 4 + c);
    MaskSpec mask;
    mask.validLen = {2, 6};
    const double expected[2][4] = {{2, 3, 4, 5}, {10, 11, 12, 13}};
    for (std::uint64_t seed : {0u, 1u, 99u})
        for (Index units : {1, 8}) {
            const AdditiveParams params = makeAdditiveParams(units, 2, 2, seed);
            for (Index b = 0; b < 2; ++b) {
                const KernelRun r = runKernel(q, k, v, mask, b, params);
                for (Index c = 0; c < 4; ++c)
                    EXPECT_NEAR(r.output(0, c), expected[b][c], 1e-5);
                const Index valid = mask.validLen[static_cast<std::size_t>(b)];
                for (Index j = 0; j < 10; ++j)
                    EXPECT_NEAR(r.weights(0, j), j < valid ? 1.0 / valid : 0.0, 1e-6);
            }
        }
}

/// The naive reference in double precision.
ref::Result naiveAdditive(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
                          const AdditiveParams& p, const ref::MaskD& allowed) {
    const Index sq = q.rows(), sk = k.rows(), units = p.v.size();
    ref::Result r;
    r.scores = MatD::Zero(sq, sk);
    r.weights = MatD::Zero(sq, sk);
    r.output = MatD::Zero(sq, v.cols());
    r.emptyRow.assign(static_cast<std::size_t>(sq), 0);
    for (Index i = 0; i < sq; ++i) {
        for (Index j = 0; j < sk; ++j) {
            double score = 0;
            for (Index u = 0; u < units; ++u) {
                double pre = 0;
                for (Index c = 0; c < q.cols(); ++c)
                    pre += double(p.wq(u, c)) * q(i, c);
                for (Index c = 0; c < k.cols(); ++c)
                    pre += double(p.wk(u, c)) * k(j, c);
                score += double(p.v(u)) * std::tanh(pre);
            }
            r.scores(i, j) = score;
        }
        double rowMax = -std::numeric_limits<double>::infinity();
        for (Index j = 0; j < sk; ++j)
            if (allowed(i, j)) rowMax = std::max(rowMax, r.scores(i, j));
        if (!std::isfinite(rowMax)) {
            r.emptyRow[static_cast<std::size_t>(i)] = 1;
            continue;
        }
        double sum = 0;
        for (Index j = 0; j < sk; ++j)
            if (allowed(i, j)) sum += r.weights(i, j) = std::exp(r.scores(i, j) - rowMax);
        for (Index j = 0; j < sk; ++j) {
            r.weights(i, j) /= sum;
            for (Index c = 0; c < v.cols(); ++c)
                r.output(i, c) += r.weights(i, j) * v(j, c);
        }
    }
    return r;
}

TEST(Additive, MatchesNaiveDoubleLoop) {
    const Index sq = 7, sk = 9, dq = 5, dk = 5, dv = 3;
    const Tensor4 q = ref::randomTensor(1, 1, sq, dq, 1);
    const Tensor4 k = ref::randomTensor(1, 1, sk, dk, 2);
    const Tensor4 v = ref::randomTensor(1, 1, sk, dv, 3);
    AdditiveParams params = makeAdditiveParams(6, dq, dk, 4);
    params.v *= 3.0f; // sharpen the softmax so that errors in the scores would show

    std::vector<MaskSpec> masks(5);
    masks[1].causal = true;
    masks[2].window = 1;
    masks[2].validLen = {6};
    masks[3].custom = ref::randomMask(sq, sk, 9, 0.5);
    masks[3].custom->row(2).setConstant(false);
    masks[4].causalWindow = 0;
    for (std::size_t m = 0; m < masks.size(); ++m) {
        SCOPED_TRACE("mask case " + std::to_string(m));
        const ref::MaskD allowed = ref::allowedMask(ref::rulesOf(masks[m], 0), sq, sk);
        const ref::Result e =
            naiveAdditive(q.head(0, 0), k.head(0, 0), v.head(0, 0), params, allowed);
        const KernelRun r = runKernel(q, k, v, masks[m], 0, params);
        EXPECT_MATRIX_NEAR(r.scores, e.scores, 1e-5);
        EXPECT_MATRIX_NEAR(r.weights, e.weights, 1e-6);
        EXPECT_MATRIX_NEAR(r.output, e.output, 1e-5);
        EXPECT_EQ(r.emptyRow, e.emptyRow);
        const KernelRun bare = runKernel(q, k, v, masks[m], 0, params, false);
        EXPECT_MATRIX_NEAR(bare.output, e.output, 1e-5);
    }
}

TEST(Additive, DifferentQueryAndKeyWidths) {
    // Wq is [units, Dq] and Wk is [units, Dk]: the formula allows Dq != Dk.
    const Tensor4 q = ref::randomTensor(1, 1, 3, 2, 5);
    const Tensor4 k = ref::randomTensor(1, 1, 4, 6, 6);
    const Tensor4 v = ref::randomTensor(1, 1, 4, 2, 7);
    const AdditiveParams params = makeAdditiveParams(4, 2, 6, 8);
    const ref::MaskD all = ref::MaskD::Constant(3, 4, true);
    const ref::Result e = naiveAdditive(q.head(0, 0), k.head(0, 0), v.head(0, 0), params, all);
    EXPECT_MATRIX_NEAR(runKernel(q, k, v, MaskSpec{}, 0, params).output, e.output, 1e-5);
}

TEST(Additive, ParamsAreSeededAndChecked) {
    const AdditiveParams a = makeAdditiveParams(8, 4, 6, 1);
    EXPECT_EQ(a.wq.rows(), 8);
    EXPECT_EQ(a.wq.cols(), 4);
    EXPECT_EQ(a.wk.cols(), 6);
    EXPECT_EQ(a.v.size(), 8);
    const AdditiveParams b = makeAdditiveParams(8, 4, 6, 1);
    EXPECT_MATRIX_NEAR(a.wq, b.wq, 0.0);
    EXPECT_MATRIX_NEAR(a.v, b.v, 0.0);
    EXPECT_GT((a.wq - makeAdditiveParams(8, 4, 6, 2).wq).norm(), 0.1f);
    EXPECT_THROW(makeAdditiveParams(0, 4, 4, 0), InvalidArgument);

    const Tensor4 q = ref::randomTensor(1, 1, 2, 3, 1);
    EXPECT_THROW(runKernel(q, q, q, MaskSpec{}, 0, makeAdditiveParams(4, 2, 3, 0)),
                 InvalidArgument);
}

} // namespace
} // namespace attnlab

// Linear attention (phi = elu + 1) against its explicit O(S^2) form written out here in
// double precision: w_ij = phi(q_i).phi(k_j) over the allowed keys,
// out_i = sum_j w_ij v_j / (sum_j w_ij + 1e-6), as seed 001's linear_attention.

#include <gtest/gtest.h>

#include <cmath>

#include "attnlab/attention/attention.h"
#include "kernels.h"
#include "reference.h"

namespace attnlab {
namespace {

using ref::MatD;

double elu1(double x) {
    return x > 0 ? x + 1.0 : std::exp(x) - 1.0 + 1.0;
}

struct Explicit {
    MatD output, weights, scores;
    std::vector<unsigned char> emptyRow;
};

Explicit explicitLinear(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const MaskSpec& mask,
                        Index batch) {
    const Index sq = q.rows(), sk = k.rows(), d = q.cols(), dv = v.cols();
    const ref::MaskD allowed = ref::allowedMask(ref::rulesOf(mask, batch), sq, sk);
    Explicit e;
    e.output = MatD::Zero(sq, dv);
    e.weights = MatD::Zero(sq, sk);
    e.scores = MatD::Zero(sq, sk);
    e.emptyRow.assign(static_cast<std::size_t>(sq), 0);
    for (Index i = 0; i < sq; ++i) {
        double denominator = 0;
        bool any = false;
        for (Index j = 0; j < sk; ++j) {
            double kernel = 0;
            for (Index c = 0; c < d; ++c)
                kernel += elu1(q(i, c)) * elu1(k(j, c));
            e.scores(i, j) = kernel;
            if (allowed(i, j)) {
                any = true;
                denominator += kernel;
            }
        }
        if (!any) {
            e.emptyRow[static_cast<std::size_t>(i)] = 1;
            continue;
        }
        denominator += 1e-6;
        for (Index j = 0; j < sk; ++j) {
            if (!allowed(i, j)) continue;
            e.weights(i, j) = e.scores(i, j) / denominator;
            for (Index c = 0; c < dv; ++c)
                e.output(i, c) += e.weights(i, j) * v(j, c);
        }
    }
    return e;
}

struct KernelRun {
    Matrix output, weights, scores;
    std::vector<unsigned char> emptyRow;
};

KernelRun runKernel(const Tensor4& q, const Tensor4& k, const Tensor4& v, const MaskSpec& mask,
                    Index batch, bool wantWeights = true) {
    KernelRun r;
    const Index sq = q.seq, sk = k.seq;
    r.output = Matrix::Constant(sq, v.dim, 123.0f); // the kernel must write every cell
    r.weights = Matrix::Constant(sq, sk, 77.0f);
    r.scores = Matrix::Constant(sq, sk, 77.0f);
    r.emptyRow.assign(static_cast<std::size_t>(sq), 0);
    kernels::HeadJob job{q.head(batch, 0),
                         k.head(batch, 0),
                         v.head(batch, 0),
                         MatrixMap(r.output.data(), sq, v.dim),
                         wantWeights ? r.weights.data() : nullptr,
                         wantWeights ? r.scores.data() : nullptr,
                         mask,
                         batch,
                         1.0f,
                         r.emptyRow.data()};
    kernels::linearHead(job);
    return r;
}

struct Case {
    const char* name;
    MaskSpec mask;
};

std::vector<Case> maskCases(Index sq, Index sk) {
    std::vector<Case> cases;
    cases.push_back({"none", MaskSpec{}});
    MaskSpec causal;
    causal.causal = true;
    cases.push_back({"causal", causal});
    MaskSpec window;
    window.window = 2;
    cases.push_back({"window", window});
    MaskSpec causalWindow;
    causalWindow.causalWindow = 1;
    cases.push_back({"causal window", causalWindow});
    MaskSpec padding;
    padding.validLen = {sk - 3};
    cases.push_back({"padding", padding});
    MaskSpec combined;
    combined.causal = true;
    combined.window = 3;
    combined.validLen = {sk - 2};
    cases.push_back({"causal+window+padding", combined});
    MaskSpec custom;
    custom.custom = ref::randomMask(sq, sk, 5, 0.4);
    custom.custom->row(1).setConstant(false); // an empty row
    cases.push_back({"custom", custom});
    MaskSpec customCausal = custom;
    customCausal.causal = true;
    cases.push_back({"custom+causal", customCausal});
    MaskSpec nothing;
    nothing.validLen = {0};
    cases.push_back({"all masked", nothing});
    return cases;
}

void expectMatchesExplicit(Index sq, Index sk, Index d, Index dv, std::uint32_t seed) {
    const Tensor4 q = ref::randomTensor(1, 1, sq, d, seed);
    const Tensor4 k = ref::randomTensor(1, 1, sk, d, seed + 1);
    const Tensor4 v = ref::randomTensor(1, 1, sk, dv, seed + 2);
    for (const Case& c : maskCases(sq, sk)) {
        SCOPED_TRACE(std::string(c.name) + " Sq=" + std::to_string(sq) +
                     " Sk=" + std::to_string(sk));
        const Explicit e = explicitLinear(q.head(0, 0), k.head(0, 0), v.head(0, 0), c.mask, 0);
        const KernelRun r = runKernel(q, k, v, c.mask, 0);
        EXPECT_MATRIX_NEAR(r.output, e.output, 2e-5);
        EXPECT_MATRIX_NEAR(r.weights, e.weights, 2e-6);
        EXPECT_MATRIX_NEAR(r.scores, e.scores, 1e-4 * (1 + e.scores.cwiseAbs().maxCoeff()));
        EXPECT_EQ(r.emptyRow, e.emptyRow);
        // Without weights the same output comes out (the custom path computes its own dots).
        const KernelRun bare = runKernel(q, k, v, c.mask, 0, false);
        EXPECT_MATRIX_NEAR(bare.output, e.output, 2e-5);
    }
}

TEST(Linear, EqualsExplicitFormSelfAttention) {
    expectMatchesExplicit(12, 12, 8, 5, 100);
}

TEST(Linear, EqualsExplicitFormCrossAttention) {
    expectMatchesExplicit(5, 11, 6, 4, 200); // bottom-right: query i at p = i + 6
    expectMatchesExplicit(9, 4, 4, 3, 300);  // Sk < Sq: early rows see nothing under causal
}

TEST(Linear, LongSlidingWindowStaysAccurate) {
    // Keys enter and leave the running sums 400 times; the difference must not drift.
    const Index s = 400;
    const Tensor4 q = ref::randomTensor(1, 1, s, 16, 7);
    const Tensor4 k = ref::randomTensor(1, 1, s, 16, 8);
    const Tensor4 v = ref::randomTensor(1, 1, s, 16, 9);
    MaskSpec window;
    window.window = 5;
    const Explicit e = explicitLinear(q.head(0, 0), k.head(0, 0), v.head(0, 0), window, 0);
    EXPECT_MATRIX_NEAR(runKernel(q, k, v, window, 0).output, e.output, 2e-5);
}

TEST(Linear, WeightRowsSumToOne) {
    const Tensor4 q = ref::randomTensor(1, 1, 10, 8, 21);
    const Tensor4 k = ref::randomTensor(1, 1, 10, 8, 22);
    const Tensor4 v = ref::randomTensor(1, 1, 10, 8, 23);
    for (const Case& c : maskCases(10, 10)) {
        const KernelRun r = runKernel(q, k, v, c.mask, 0);
        for (Index i = 0; i < 10; ++i) {
            const double sum = r.weights.row(i).cast<double>().sum();
            if (r.emptyRow[static_cast<std::size_t>(i)])
                EXPECT_EQ(sum, 0.0) << c.name;
            else
                EXPECT_NEAR(sum, 1.0, 1e-5) << c.name << " row " << i;
            EXPECT_GE(r.weights.row(i).minCoeff(), 0.0f);
        }
    }
}

TEST(Linear, Seed001NoMaskForm) {
    // Seed 001 verbatim: KV = phi(K)^T V; num = phi(Q) KV; den = phi(Q) sum phi(K); num/(den+eps).
    const Tensor4 q = ref::randomTensor(1, 1, 7, 4, 31);
    const Tensor4 k = ref::randomTensor(1, 1, 7, 4, 32);
    const Tensor4 v = ref::randomTensor(1, 1, 7, 3, 33);
    const MatD phiQ = q.head(0, 0).cast<double>().unaryExpr(&elu1);
    const MatD phiK = k.head(0, 0).cast<double>().unaryExpr(&elu1);
    const MatD kv = phiK.transpose() * v.head(0, 0).cast<double>();
    const MatD numerator = phiQ * kv;
    const Eigen::VectorXd denominator = phiQ * phiK.colwise().sum().transpose();
    MatD expected = numerator;
    for (Index i = 0; i < expected.rows(); ++i)
        expected.row(i) /= denominator(i) + 1e-6;
    EXPECT_MATRIX_NEAR(runKernel(q, k, v, MaskSpec{}, 0).output, expected, 1e-5);
}

TEST(Linear, BatchSelectsValidLength) {
    const Tensor4 q = ref::randomTensor(2, 1, 6, 4, 41);
    const Tensor4 k = ref::randomTensor(2, 1, 6, 4, 42);
    const Tensor4 v = ref::randomTensor(2, 1, 6, 4, 43);
    MaskSpec mask;
    mask.validLen = {2, 5};
    for (Index b = 0; b < 2; ++b) {
        const Explicit e = explicitLinear(q.head(b, 0), k.head(b, 0), v.head(b, 0), mask, b);
        EXPECT_MATRIX_NEAR(runKernel(q, k, v, mask, b).output, e.output, 2e-5);
    }
}

TEST(Linear, NoKeysGivesZeroOutputAndFlags) {
    const Tensor4 q = ref::randomTensor(1, 1, 3, 4, 51);
    const Tensor4 k(1, 1, 0, 4);
    const Tensor4 v(1, 1, 0, 2);
    const KernelRun r = runKernel(q, k, v, MaskSpec{}, 0, false);
    EXPECT_TRUE(r.output.isZero(0));
    EXPECT_EQ(r.emptyRow, (std::vector<unsigned char>{1, 1, 1}));
}

} // namespace
} // namespace attnlab

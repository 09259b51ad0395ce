// softmaxRow and the dense softmax kernel: analytic rows, masks by range and custom row,
// empty rows, huge logits, and whole heads against the double-precision reference.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "attnlab/attention/attention.h"
#include "reference.h"

namespace attnlab {
namespace {

/// softmax of x over the entries where keep is true, in double precision.
std::vector<double> expectedSoftmax(const std::vector<double>& x, const std::vector<bool>& keep) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < x.size(); ++j)
        if (keep[j]) m = std::max(m, x[j]);
    std::vector<double> out(x.size(), 0.0);
    double sum = 0;
    for (std::size_t j = 0; j < x.size(); ++j)
        if (keep[j]) sum += (out[j] = std::exp(x[j] - m));
    for (double& w : out)
        w /= sum;
    return out;
}

TEST(SoftmaxRow, FullRangeIsTheSoftmax) {
    RowVector row(4);
    row << 1.0f, 2.0f, 3.0f, 4.0f;
    ASSERT_TRUE(softmaxRow(row, {0, 4}));
    const auto expected = expectedSoftmax({1, 2, 3, 4}, {true, true, true, true});
    for (Index j = 0; j < 4; ++j)
        EXPECT_NEAR(row(j), expected[static_cast<std::size_t>(j)], 1e-7);
    // Analytic: equal logits give a uniform row.
    RowVector flat = RowVector::Constant(5, -3.5f);
    ASSERT_TRUE(softmaxRow(flat, {0, 5}));
    for (Index j = 0; j < 5; ++j)
        EXPECT_FLOAT_EQ(flat(j), 0.2f);
}

TEST(SoftmaxRow, RangeAndCustomRowMaskExactly) {
    RowVector row(6);
    row << 5.0f, 0.5f, -1.0f, 2.0f, 7.0f, 0.0f;
    const bool custom[6] = {true, true, false, true, true, true};
    ASSERT_TRUE(softmaxRow(row, {1, 5}, custom));
    const auto expected =
        expectedSoftmax({5, 0.5, -1, 2, 7, 0}, {false, true, false, true, true, false});
    for (Index j = 0; j < 6; ++j)
        EXPECT_NEAR(row(j), expected[static_cast<std::size_t>(j)], 1e-7) << j;
    EXPECT_EQ(row(0), 0.0f);
    EXPECT_EQ(row(2), 0.0f);
    EXPECT_EQ(row(5), 0.0f);
}

TEST(SoftmaxRow, EmptyRowIsZeroAndReported) {
    RowVector row = RowVector::Constant(4, 1.0f);
    EXPECT_FALSE(softmaxRow(row, {2, 2}));
    EXPECT_TRUE(row.isZero(0));
    row.setConstant(1.0f);
    EXPECT_FALSE(softmaxRow(row, {3, 1})); // begin > end
    EXPECT_TRUE(row.isZero(0));
    row.setConstant(1.0f);
    const bool none[4] = {false, false, false, false};
    EXPECT_FALSE(softmaxRow(row, {0, 4}, none));
    EXPECT_TRUE(row.isZero(0));
    RowVector nothing(0);
    EXPECT_FALSE(softmaxRow(nothing, {0, 0}));
}

TEST(SoftmaxRow, HugeLogitsStayFinite) {
    RowVector row(3);
    row << 1e4f, 1e4f - 1.0f, -1e4f;
    ASSERT_TRUE(softmaxRow(row, {0, 3}));
    const auto expected = expectedSoftmax({0, -1, -2e4}, {true, true, true});
    for (Index j = 0; j < 3; ++j) {
        EXPECT_TRUE(std::isfinite(row(j)));
        EXPECT_NEAR(row(j), expected[static_cast<std::size_t>(j)], 1e-6);
    }
    // A -inf logit (from a caller's own masking) is just a zero weight.
    row << -std::numeric_limits<float>::infinity(), 0.0f, 0.0f;
    ASSERT_TRUE(softmaxRow(row, {0, 3}));
    EXPECT_EQ(row(0), 0.0f);
    EXPECT_FLOAT_EQ(row(1), 0.5f);
}

TEST(SoftmaxHead, MatchesTheReferenceAcrossChunkBoundaries) {
    // Sk large enough that the kernel splits the rows into several chunks.
    const Index sq = 300, sk = 2000;
    Qkv qkv{ref::randomTensor(1, 1, sq, 8, 1), ref::randomTensor(1, 1, sk, 8, 2),
            ref::randomTensor(1, 1, sk, 4, 3)};
    for (bool weights : {false, true}) {
        AttentionSpec spec;
        spec.mask.causal = true;
        spec.mask.custom = ref::randomMask(sq, sk, 4, 0.9);
        spec.wantWeights = weights;
        spec.wantScores = true;
        const Attention a = attend(qkv, spec);
        const auto r =
            ref::attention(qkv.q.head(0, 0), qkv.k.head(0, 0), qkv.v.head(0, 0), spec.mask, 0);
        EXPECT_MATRIX_NEAR(a.output.head(0, 0), r.output, 1e-5);
        EXPECT_MATRIX_NEAR(ConstMatrixMap(a.scores.data.data(), sq, sk), r.scores, 1e-5);
        if (weights) {
            EXPECT_MATRIX_NEAR(ConstMatrixMap(a.weights.data.data(), sq, sk), r.weights, 1e-6);
        }
    }
}

} // namespace
} // namespace attnlab

namespace attnlab {
namespace {

// A custom-masked key's weight is exactly 0 wherever the row lies in memory: Eigen's AVX-512
// exp turns -inf into a denormal (~3e-39) inside whole packets and into 0 in the scalar
// tail, so the value once depended on the row's alignment (and so on the heap's state).
TEST(SoftmaxRow, CustomMaskedKeysAreExactlyZeroAtEveryAlignment) {
    constexpr Index kKeys = 37;
    std::vector<float> buffer(kKeys + 16);
    bool allowed[kKeys];
    for (Index j = 0; j < kKeys; ++j)
        allowed[j] = j % 3 != 1; // masked cells in every packet position
    for (Index offset = 0; offset < 16; ++offset) {
        Eigen::Map<RowVector> row(buffer.data() + offset, kKeys);
        for (Index j = 0; j < kKeys; ++j)
            row(j) = 0.25f * static_cast<float>((j * 7) % 11) - 1.0f;
        ASSERT_TRUE(softmaxRow(row, {0, kKeys}, allowed));
        double sum = 0;
        for (Index j = 0; j < kKeys; ++j) {
            if (!allowed[j]) {
                EXPECT_EQ(row(j), 0.0f) << "offset " << offset << ", key " << j;
            } else {
                EXPECT_GT(row(j), 0.0f);
                sum += row(j);
            }
        }
        EXPECT_NEAR(sum, 1.0, 1e-6);
    }
}

// Every buffer the core reduces over starts on a 64-byte boundary, so where Eigen's
// vectorised sums start their packets depends on an element's index, never on the heap.
TEST(Tensor4, StorageIsCacheLineAligned) {
    for (Index size : {1, 3, 17, 1000, 100000}) {
        const Tensor4 t(1, 1, size, 1);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data.data()) % 64, 0u) << size;
        const Tensor4d d(1, 1, size, 1);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(d.data.data()) % 64, 0u) << size;
    }
}

} // namespace
} // namespace attnlab

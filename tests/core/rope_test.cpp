// RoPE against seed 001's apply_rope and LLaMA's rotate_half, written out here, plus its
// two defining properties: rotations keep norms, and q.k depends only on i - j.

#include <gtest/gtest.h>

#include <cmath>

#include "attnlab/attention/rope.h"
#include "reference.h"

namespace attnlab {
namespace {

constexpr RopeStyle kStyles[] = {RopeStyle::Interleaved, RopeStyle::Half};

/// One vector as a [1, 1, 1, D] tensor.
Tensor4 single(const Eigen::VectorXf& x) {
    Tensor4 t(1, 1, 1, x.size());
    for (Index c = 0; c < x.size(); ++c)
        t(0, 0, 0, c) = x(c);
    return t;
}

/// x rotated as if it sat at `position`.
Eigen::VectorXd rotatedAt(const Eigen::VectorXf& x, Index position, RopeStyle style,
                          double base = 10000.0) {
    Tensor4 t = single(x);
    applyRope(t, style, base, position);
    return Eigen::Map<const Eigen::VectorXf>(t.data.data(), x.size()).cast<double>();
}

TEST(Rope, NamesRoundTrip) {
    for (RopeStyle s : kStyles)
        EXPECT_EQ(parseRopeStyle(ropeStyleName(s)), s);
    EXPECT_FALSE(parseRopeStyle("neox"));
}

TEST(Rope, AnglesArePositionOverBasePower) {
    const Matrix a = ropeAngles(4, 8, 10000.0, 3);
    ASSERT_EQ(a.rows(), 4);
    ASSERT_EQ(a.cols(), 4);
    for (Index s = 0; s < 4; ++s)
        for (Index i = 0; i < 4; ++i)
            EXPECT_NEAR(a(s, i), (3.0 + s) / std::pow(10000.0, 2.0 * i / 8.0), 1e-5);
    EXPECT_THROW(ropeAngles(2, 5), InvalidArgument);
}

TEST(Rope, InterleavedMatchesSeed001ApplyRope) {
    // Seed 001: freqs = 1 / 10000^(arange(0, D, 2) / D); angles = pos * freqs;
    // out = stack([even cos - odd sin, even sin + odd cos], -1).flatten(-2).
    const Index b = 2, h = 3, s = 8, d = 16;
    const Tensor4 x = ref::randomTensor(b, h, s, d, 11);
    Tensor4 rotated = x;
    applyRope(rotated, RopeStyle::Interleaved);
    for (Index bi = 0; bi < b; ++bi)
        for (Index hi = 0; hi < h; ++hi)
            for (Index pos = 0; pos < s; ++pos)
                for (Index pair = 0; pair < d / 2; ++pair) {
                    const double freq = 1.0 / std::pow(10000.0, static_cast<double>(2 * pair) / d);
                    const double angle = static_cast<double>(pos) * freq;
                    const double even = x(bi, hi, pos, 2 * pair);
                    const double odd = x(bi, hi, pos, 2 * pair + 1);
                    EXPECT_NEAR(rotated(bi, hi, pos, 2 * pair),
                                even * std::cos(angle) - odd * std::sin(angle), 1e-5);
                    EXPECT_NEAR(rotated(bi, hi, pos, 2 * pair + 1),
                                even * std::sin(angle) + odd * std::cos(angle), 1e-5);
                }
}

TEST(Rope, HalfMatchesLlamaRotateHalf) {
    // Hugging Face LLaMA: emb = cat(freqs, freqs); out = x cos(emb) + rotate_half(x) sin(emb),
    // rotate_half(x) = cat(-x[D/2:], x[:D/2]).
    const Index s = 6, d = 8, halfD = d / 2;
    const Tensor4 x = ref::randomTensor(1, 1, s, d, 12);
    Tensor4 rotated = x;
    const double base = 500.0;
    applyRope(rotated, RopeStyle::Half, base, 2);
    for (Index pos = 0; pos < s; ++pos)
        for (Index c = 0; c < d; ++c) {
            const Index pair = c % halfD;
            const double angle =
                static_cast<double>(pos + 2) / std::pow(base, static_cast<double>(2 * pair) / d);
            const double rot = c < halfD ? -x(0, 0, pos, c + halfD) : x(0, 0, pos, c - halfD);
            EXPECT_NEAR(rotated(0, 0, pos, c),
                        x(0, 0, pos, c) * std::cos(angle) + rot * std::sin(angle), 1e-5);
        }
}

TEST(Rope, HalfEqualsInterleavedUnderPermutation) {
    // Interleaved pair i is dims (2i, 2i+1); half pair i is dims (i, i + D/2).
    const Index s = 9, d = 12;
    const Tensor4 x = ref::randomTensor(1, 2, s, d, 13);
    Tensor4 permuted = x;
    for (Index h = 0; h < 2; ++h)
        for (Index pos = 0; pos < s; ++pos)
            for (Index i = 0; i < d / 2; ++i) {
                permuted(0, h, pos, i) = x(0, h, pos, 2 * i);
                permuted(0, h, pos, i + d / 2) = x(0, h, pos, 2 * i + 1);
            }
    Tensor4 interleaved = x;
    applyRope(interleaved, RopeStyle::Interleaved, 10000.0, 5);
    applyRope(permuted, RopeStyle::Half, 10000.0, 5);
    for (Index h = 0; h < 2; ++h)
        for (Index pos = 0; pos < s; ++pos)
            for (Index i = 0; i < d / 2; ++i) {
                EXPECT_NEAR(permuted(0, h, pos, i), interleaved(0, h, pos, 2 * i), 1e-6);
                EXPECT_NEAR(permuted(0, h, pos, i + d / 2), interleaved(0, h, pos, 2 * i + 1),
                            1e-6);
            }
    for (Index i = 0; i < d / 2; ++i) {
        EXPECT_EQ(ropePair(RopeStyle::Interleaved, i, d), std::make_pair(2 * i, 2 * i + 1));
        EXPECT_EQ(ropePair(RopeStyle::Half, i, d), std::make_pair(i, i + d / 2));
    }
}

TEST(Rope, PreservesNorms) {
    for (RopeStyle style : kStyles) {
        const Tensor4 x = ref::randomTensor(2, 2, 32, 16, 14);
        Tensor4 rotated = x;
        applyRope(rotated, style, 10000.0, 100);
        for (Index b = 0; b < 2; ++b)
            for (Index h = 0; h < 2; ++h)
                for (Index pos = 0; pos < 32; ++pos) {
                    const float before = x.head(b, h).row(pos).norm();
                    const float after = rotated.head(b, h).row(pos).norm();
                    EXPECT_NEAR(after, before, 1e-4f * before) << ropeStyleName(style);
                }
        // Position 0 is the identity.
        Tensor4 atZero = x;
        applyRope(atZero, style);
        for (Index h = 0; h < 2; ++h)
            EXPECT_MATRIX_NEAR(atZero.head(0, h).row(0), x.head(0, h).row(0), 0.0);
    }
}

TEST(Rope, DotProductDependsOnlyOnOffset) {
    const Tensor4 source = ref::randomTensor(1, 1, 2, 16, 15);
    const Eigen::VectorXf q = source.head(0, 0).row(0).transpose();
    const Eigen::VectorXf k = source.head(0, 0).row(1).transpose();
    for (RopeStyle style : kStyles) {
        for (Index offset : {-3, 0, 2, 7}) {
            // (i, j) and (i + t, j + t) for several shifts t.
            const double reference = rotatedAt(q, 10 + offset, style).dot(rotatedAt(k, 10, style));
            for (Index shift : {-10, -4, 1, 13, 250}) {
                const double shifted =
                    rotatedAt(q, 10 + offset + shift, style).dot(rotatedAt(k, 10 + shift, style));
                EXPECT_NEAR(shifted, reference, 2e-4 * (1 + std::abs(reference)))
                    << ropeStyleName(style) << " offset " << offset << " shift " << shift;
            }
        }
        // And it does depend on the offset (RoPE is not the identity).
        const double near = rotatedAt(q, 3, style).dot(rotatedAt(k, 3, style));
        const double far = rotatedAt(q, 9, style).dot(rotatedAt(k, 3, style));
        EXPECT_GT(std::abs(near - far), 1e-3);
    }
}

TEST(Rope, EdgeCases) {
    Tensor4 odd(1, 1, 2, 5);
    EXPECT_THROW(applyRope(odd, RopeStyle::Interleaved), InvalidArgument);
    EXPECT_THROW(applyRope(odd, RopeStyle::Half), InvalidArgument);
    Tensor4 empty(1, 2, 0, 4);
    EXPECT_NO_THROW(applyRope(empty, RopeStyle::Half));
    Tensor4 x = ref::randomTensor(1, 1, 3, 4, 16);
    EXPECT_THROW(applyRope(x, RopeStyle::Half, 0.0), InvalidArgument);
}

} // namespace
} // namespace attnlab

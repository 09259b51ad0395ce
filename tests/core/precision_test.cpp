// The float64 instantiation of the attention kernels (issue 9, item 6): attend() and
// attendKvCache() on QkvD agree with the naive double reference of tests/support/reference.h
// to ~1e-15 for every variant that reduces to softmax, with every mask (custom included) and
// GQA, and their float32 twins on the same values stay at the float tolerance.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/kv_cache.h"
#include "attnlab/attention/rope.h"
#include "reference.h"

namespace attnlab {
namespace {

using ref::randomDoubles;

constexpr double kDoubleTol = 1e-13;
constexpr double kFloatTol = 2e-5;

/// max |a - b| / max(1, max |b|).
template <typename A, typename B> double relativeError(const A& a, const B& b) {
    double worst = 0, scale = 1;
    for (Index i = 0; i < b.rows(); ++i)
        for (Index j = 0; j < b.cols(); ++j) {
            const double diff = std::abs(static_cast<double>(a(i, j)) - b(i, j));
            worst =
                std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(worst, diff);
            scale = std::max(scale, std::abs(b(i, j)));
        }
    return worst / scale;
}

std::vector<std::pair<std::string, MaskSpec>> masks(Index sq, Index sk) {
    std::vector<std::pair<std::string, MaskSpec>> all;
    all.emplace_back("none", MaskSpec{});
    MaskSpec causal;
    causal.causal = true;
    all.emplace_back("causal", causal);
    MaskSpec padding;
    padding.validLen = {4, 0};
    all.emplace_back("padding", padding);
    MaskSpec window;
    window.window = 1;
    all.emplace_back("window", window);
    MaskSpec causalWindow;
    causalWindow.causalWindow = 2;
    all.emplace_back("causal-window", causalWindow);
    MaskSpec custom;
    custom.causal = true;
    custom.custom = ref::randomMask(sq, sk, 7, 0.5);
    all.emplace_back("causal+custom", custom);
    return all;
}

/// The worst error of attention over every (batch, head) against the softmax reference.
template <typename T>
double worstError(const AttentionT<T>& result, const Tensor4d& q, const Tensor4d& k,
                  const Tensor4d& v, const MaskSpec& mask, bool weightsToo) {
    const Index group = q.heads / k.heads;
    double worst = 0;
    for (Index b = 0; b < q.batch; ++b)
        for (Index h = 0; h < q.heads; ++h) {
            const auto expected =
                ref::attention(q.head(b, h), k.head(b, h / group), v.head(b, h / group), mask, b);
            worst = std::max(worst, relativeError(result.output.head(b, h), expected.output));
            if (weightsToo)
                worst = std::max(worst, relativeError(result.weights.head(b, h), expected.weights));
        }
    return worst;
}

TEST(Precision, DoubleSoftmaxAndFlashMatchTheDoubleReferenceForEveryMask) {
    // GQA: 4 query heads over 2 kv heads; Sq = 7 queries over Sk = 9 keys (bottom-right).
    const QkvD qkv{randomDoubles(2, 4, 7, 6, 1), randomDoubles(2, 2, 9, 6, 2),
                   randomDoubles(2, 2, 9, 5, 3)};
    const Qkv qkvFloat{qkv.q.cast<float>(), qkv.k.cast<float>(), qkv.v.cast<float>()};
    const QkvD rounded{qkvFloat.q.cast<double>(), qkvFloat.k.cast<double>(),
                       qkvFloat.v.cast<double>()};
    for (const auto& [name, mask] : masks(7, 9))
        for (const auto& [variant, qBlock, kvBlock] :
             {std::tuple{Variant::Softmax, 64, 64}, std::tuple{Variant::Flash, 1, 1},
              std::tuple{Variant::Flash, 3, 4}, std::tuple{Variant::Flash, 64, 64}}) {
            SCOPED_TRACE(std::string(variantName(variant)) + " " + std::to_string(qBlock) + "x" +
                         std::to_string(kvBlock) + ", mask " + name);
            AttentionSpec spec;
            spec.variant = variant;
            spec.mask = mask;
            spec.qBlock = qBlock;
            spec.kvBlock = kvBlock;
            spec.wantFlashTrace = variant == Variant::Flash;
            const AttentionD result = attend(qkv, spec);
            EXPECT_LE(worstError(result, qkv.q, qkv.k, qkv.v, mask, true), kDoubleTol);
            if (variant == Variant::Flash) {
                ASSERT_TRUE(result.flashTrace.has_value());
                EXPECT_EQ(result.flashTrace->heads.size(), std::size_t(8));
            }
            const Attention floats = attend(qkvFloat, spec);
            const double floatError =
                worstError(floats, rounded.q, rounded.k, rounded.v, mask, true);
            EXPECT_LE(floatError, kFloatTol);
            EXPECT_GT(floatError, kDoubleTol); // float32 stays float32
        }
}

TEST(Precision, DoubleKvCacheAndRopeMatchTheDoubleReference) {
    QkvD qkv{randomDoubles(1, 4, 8, 6, 4), randomDoubles(1, 1, 8, 6, 5),
             randomDoubles(1, 1, 8, 3, 6)}; // multi-query attention
    MaskSpec causal;
    causal.causal = true;
    for (const Variant variant : {Variant::Softmax, Variant::Flash})
        for (const Index prefill : {0, 3, 8}) {
            SCOPED_TRACE(std::string(variantName(variant)) + ", prefill " +
                         std::to_string(prefill));
            AttentionSpec spec;
            spec.variant = variant;
            spec.qBlock = 2;
            spec.kvBlock = 3;
            KvCacheTrace trace;
            const AttentionD result = attendKvCache(qkv, spec, prefill, 8, &trace);
            EXPECT_LE(worstError(result, qkv.q, qkv.k, qkv.v, causal, true), kDoubleTol);
        }

    // RoPE in double: q.k after rotation depends on the positions' difference only, so
    // rotating both by the same offset leaves the scores (and the attention) as they were.
    QkvD shifted = qkv;
    applyRope(qkv.q, RopeStyle::Half, 10000.0, 0);
    applyRope(qkv.k, RopeStyle::Half, 10000.0, 0);
    applyRope(shifted.q, RopeStyle::Half, 10000.0, 1000);
    applyRope(shifted.k, RopeStyle::Half, 10000.0, 1000);
    AttentionSpec spec;
    spec.wantScores = true;
    const AttentionD a = attend(qkv, spec);
    const AttentionD b = attend(shifted, spec);
    // The angles at position 1000 are large; cos/sin of them carry ~1e-13 relative error.
    EXPECT_LE(relativeError(b.scores.head(0, 0), MatrixD(a.scores.head(0, 0))), 1e-11);
}

} // namespace
} // namespace attnlab

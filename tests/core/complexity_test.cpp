// The cost model against seed 002 §2.8's formulas (which count multiply-adds: QKV 3 n d^2,
// attention 2 n^2 d) and against counts made here by brute force.

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "attnlab/lab/complexity.h"

namespace attnlab {
namespace {

constexpr double kFlopsPerMultiplyAdd = 2.0;

CostParams params(Index n, Index d = 512, Index h = 8, Index hkv = 8) {
    CostParams p;
    p.seq = n;
    p.dModel = d;
    p.heads = h;
    p.kvHeads = hkv;
    return p;
}

TEST(Complexity, Seed002Table) {
    // analyze_complexity(): d_model = 512, n in 64 .. 1024.
    const double d = 512;
    for (Index n : {64, 128, 256, 512, 1024}) {
        const double nn = static_cast<double>(n);
        const double qkvMacs = 3 * nn * d * d;
        const double attentionMacs = 2 * nn * nn * d;
        EXPECT_DOUBLE_EQ(estimateCost(CostItem::QkvProjection, params(n)).flops,
                         kFlopsPerMultiplyAdd * qkvMacs);
        EXPECT_DOUBLE_EQ(estimateCost(CostItem::SoftmaxAttention, params(n)).flops,
                         kFlopsPerMultiplyAdd * attentionMacs);
    }
    // Seed 002's observation: at n = 1024 > 3d/2 the attention overtakes the projections.
    EXPECT_GT(estimateCost(CostItem::SoftmaxAttention, params(1024)).flops,
              estimateCost(CostItem::QkvProjection, params(1024)).flops);
    EXPECT_LT(estimateCost(CostItem::SoftmaxAttention, params(512)).flops,
              estimateCost(CostItem::QkvProjection, params(512)).flops);
}

TEST(Complexity, GqaShrinksOnlyKeyValueProjections) {
    // d = 512, H = 8, Hkv = 2: K and V project to 2 * 64 = 128 columns.
    const double n = 100, d = 512;
    const Cost gqa = estimateCost(CostItem::QkvProjection, params(100, 512, 8, 2));
    EXPECT_DOUBLE_EQ(gqa.flops, kFlopsPerMultiplyAdd * (n * d * d + 2 * n * d * 128));
    EXPECT_DOUBLE_EQ(estimateCost(CostItem::SoftmaxAttention, params(100, 512, 8, 2)).flops,
                     estimateCost(CostItem::SoftmaxAttention, params(100)).flops);
    // Multi-query attention: the KV cache holds one head.
    const Cost mqa = estimateCost(CostItem::KvCacheDecode, params(1000, 512, 8, 1));
    const Cost mha = estimateCost(CostItem::KvCacheDecode, params(1000, 512, 8, 8));
    EXPECT_DOUBLE_EQ(mqa.bytes, (2.0 * 1000 * 64 + 8 * 1000) * 4);
    EXPECT_DOUBLE_EQ(mha.bytes, (2.0 * 1000 * 512 + 8 * 1000) * 4);
}

TEST(Complexity, SoftmaxMemoryIsSSquaredPerHead) {
    CostParams p = params(300);
    p.bytesPerElement = 2;
    EXPECT_DOUBLE_EQ(estimateCost(CostItem::SoftmaxAttention, p).bytes, 8.0 * 300 * 300 * 2);
}

TEST(Complexity, SlidingWindowCountsTheBand) {
    for (Index n : {1, 5, 17}) {
        for (Index w : {0, 1, 3, 40}) {
            double cells = 0;
            for (Index i = 0; i < n; ++i)
                for (Index j = 0; j < n; ++j)
                    cells += std::abs(i - j) <= w ? 1 : 0;
            CostParams p = params(n, 64, 4, 4);
            p.window = w;
            const Cost cost = estimateCost(CostItem::SlidingWindow, p);
            EXPECT_DOUBLE_EQ(cost.flops, kFlopsPerMultiplyAdd * 2 * cells * 64)
                << "n " << n << " w " << w;
            EXPECT_DOUBLE_EQ(cost.bytes, 4 * cells * 4);
        }
    }
    // A window as wide as the sequence is full attention.
    CostParams wide = params(50);
    wide.window = 49;
    EXPECT_DOUBLE_EQ(estimateCost(CostItem::SlidingWindow, wide).flops,
                     estimateCost(CostItem::SoftmaxAttention, wide).flops);
}

TEST(Complexity, LinearIsLinearInSequenceLength) {
    // One head: phi(K)^T V and phi(Q)(.) are n d^2 each, the sums n d each.
    const double n = 256, d = 64;
    EXPECT_DOUBLE_EQ(estimateCost(CostItem::Linear, params(256, 64, 1, 1)).flops,
                     kFlopsPerMultiplyAdd * (2 * n * d * d + 2 * n * d));
    const double a = estimateCost(CostItem::Linear, params(1000)).flops;
    const double b = estimateCost(CostItem::Linear, params(2000)).flops;
    EXPECT_DOUBLE_EQ(b, 2 * a);
    EXPECT_DOUBLE_EQ(estimateCost(CostItem::Linear, params(1000)).bytes,
                     estimateCost(CostItem::Linear, params(2000)).bytes);
    // For long sequences it is far cheaper than softmax attention.
    EXPECT_LT(b, estimateCost(CostItem::SoftmaxAttention, params(2000)).flops / 10);
}

TEST(Complexity, FlashSameFlopsLinearMemory) {
    CostParams p = params(4096);
    p.qBlock = 64;
    p.kvBlock = 128;
    const Cost flash = estimateCost(CostItem::Flash, p);
    const Cost dense = estimateCost(CostItem::SoftmaxAttention, p);
    EXPECT_DOUBLE_EQ(flash.flops, dense.flops);
    EXPECT_DOUBLE_EQ(flash.bytes, (2.0 * 8 * 4096 + 64 * 128) * 4);
    EXPECT_LT(flash.bytes * 100, dense.bytes);
}

TEST(Complexity, KvCacheDecodeIsOneRow) {
    // One query row of full attention: 1/n of the attention products.
    const Index n = 640;
    EXPECT_DOUBLE_EQ(estimateCost(CostItem::KvCacheDecode, params(n)).flops * n,
                     estimateCost(CostItem::SoftmaxAttention, params(n)).flops);
}

TEST(Complexity, NamesAndValidation) {
    const auto items = allCostItems();
    EXPECT_EQ(items.size(), 6u);
    std::set<std::string> names;
    for (CostItem item : items) {
        const std::string name = costItemName(item);
        EXPECT_FALSE(name.empty());
        names.insert(name);
        EXPECT_GE(estimateCost(item, params(0)).flops, 0.0);
    }
    EXPECT_EQ(names.size(), items.size());
    EXPECT_THROW(estimateCost(CostItem::Flash, params(10, 30, 4, 4)), InvalidArgument);
    EXPECT_THROW(estimateCost(CostItem::Flash, params(10, 32, 4, 3)), InvalidArgument);
    CostParams bad = params(10);
    bad.window = -1;
    EXPECT_THROW(estimateCost(CostItem::SlidingWindow, bad), InvalidArgument);
}

} // namespace
} // namespace attnlab

// Attention dropout (issue 14, item 2): eval mode is the run without dropout bit for bit; in
// train mode which cells drop depends only on (seed, batch, head, query, key) -- not on
// threads, tiles, variant or precision --, kept weights are w / (1 - p), about a fraction p
// drops, flash equals softmax with the same pattern, and the output is the dropped weights
// times V (checked against the naive double reference of tests/support/reference.h).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/dropout.h"
#include "attnlab/attention/kv_cache.h"
#include "reference.h"

namespace attnlab {
namespace {

Qkv randomQkv(Index b, Index h, Index hkv, Index sq, Index sk, Index d, std::uint32_t seed) {
    return {ref::randomTensor(b, h, sq, d, seed), ref::randomTensor(b, hkv, sk, d, seed + 1),
            ref::randomTensor(b, hkv, sk, d, seed + 2)};
}

template <typename T> bool sameBits(const Tensor4T<T>& a, const Tensor4T<T>& b) {
    return a.sameShape(b) && a.data.size() == b.data.size() &&
           std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(T)) == 0;
}

/// Cells that the mask allows and whose weight is exactly 0: the drop pattern of a train run
/// (softmax weights of allowed cells are > 0 at these sizes, so nothing else is 0).
std::vector<unsigned char> zeroPattern(const Attention& attention, const MaskSpec& mask) {
    std::vector<unsigned char> pattern;
    const Tensor4& w = attention.weights;
    for (Index b = 0; b < w.batch; ++b) {
        const BoolMatrix allowed = denseMask(mask, b, w.seq, w.dim);
        for (Index h = 0; h < w.heads; ++h)
            for (Index i = 0; i < w.seq; ++i)
                for (Index j = 0; j < w.dim; ++j)
                    pattern.push_back(allowed(i, j) && w(b, h, i, j) == 0.0f ? 1 : 0);
    }
    return pattern;
}

TEST(Dropout, EvalModeIsTheRunWithoutDropoutBitForBit) {
    // Rate 0 with any seed dispatches to the kernels' dropout-free code. The weights are not
    // asked for: the softmax then works in its own aligned scratch, so the comparison does
    // not depend on where the allocator put a weights buffer (Eigen's vectorised exp and sum
    // peel differently at different alignments).
    const Qkv qkv = randomQkv(2, 4, 2, 19, 23, 8, 11);
    for (Variant variant : {Variant::Softmax, Variant::Flash, Variant::Linear, Variant::Additive})
        for (bool causal : {false, true}) {
            SCOPED_TRACE(std::string(variantName(variant)) + (causal ? " causal" : ""));
            AttentionSpec plain;
            plain.variant = variant;
            plain.mask.causal = causal;
            plain.qBlock = 5;
            plain.kvBlock = 7;
            plain.wantWeights = false;
            AttentionSpec eval = plain;
            eval.dropout = Dropout{0.0, 987654321};
            EXPECT_TRUE(sameBits(attend(qkv, plain).output, attend(qkv, eval).output));
        }
    // The KV cache's eval path too (causal self-attention).
    const Qkv self = randomQkv(1, 2, 1, 17, 17, 8, 5);
    AttentionSpec plain;
    plain.wantWeights = false;
    AttentionSpec eval = plain;
    eval.dropout.seed = 3;
    EXPECT_TRUE(sameBits(attendKvCache(self, plain, 6, 4, nullptr).output,
                         attendKvCache(self, eval, 6, 4, nullptr).output));
}

TEST(Dropout, PatternDependsOnlyOnTheSeedNotThreadsTilesOrVariant) {
    const Qkv qkv = randomQkv(2, 4, 2, 21, 26, 8, 21);
    const Dropout dropout{0.3, 42};
    MaskSpec mask;
    mask.causal = true;

    // The pattern the dropout contract defines, cell by cell.
    std::vector<unsigned char> expected;
    for (Index b = 0; b < 2; ++b) {
        const BoolMatrix allowed = denseMask(mask, b, 21, 26);
        for (Index h = 0; h < 4; ++h)
            for (Index i = 0; i < 21; ++i)
                for (Index j = 0; j < 26; ++j)
                    expected.push_back(allowed(i, j) && isDropped(dropout, b, h, i, j) ? 1 : 0);
    }
    Index dropped = 0;
    for (unsigned char cell : expected)
        dropped += cell;
    ASSERT_GT(dropped, 100); // the pattern is not empty, so matching it means something

    struct Run {
        Variant variant;
        int threads;
        Index qBlock, kvBlock;
    };
    for (const Run run : {Run{Variant::Softmax, 1, 64, 64}, Run{Variant::Softmax, 2, 64, 64},
                          Run{Variant::Flash, 1, 1, 1}, Run{Variant::Flash, 2, 3, 5},
                          Run{Variant::Flash, 2, 64, 64}, Run{Variant::Flash, 1, 7, 2},
                          Run{Variant::Additive, 2, 64, 64}}) {
        SCOPED_TRACE(std::string(variantName(run.variant)) + " threads " +
                     std::to_string(run.threads) + " tiles " + std::to_string(run.qBlock) + "x" +
                     std::to_string(run.kvBlock));
        AttentionSpec spec;
        spec.variant = run.variant;
        spec.mask = mask;
        spec.threads = run.threads;
        spec.qBlock = run.qBlock;
        spec.kvBlock = run.kvBlock;
        spec.dropout = dropout;
        EXPECT_EQ(zeroPattern(attend(qkv, spec), mask), expected);
    }

    // Another seed drops other cells.
    AttentionSpec other;
    other.mask = mask;
    other.dropout = Dropout{0.3, 43};
    EXPECT_NE(zeroPattern(attend(qkv, other), mask), expected);
}

TEST(Dropout, KeptWeightsAreTheEvalWeightsOverOneMinusP) {
    const QkvD qkv{ref::randomDoubles(1, 3, 13, 8, 31), ref::randomDoubles(1, 3, 16, 8, 32),
                   ref::randomDoubles(1, 3, 16, 6, 33)};
    for (double p : {0.1, 0.5, 0.8}) {
        AttentionSpec spec;
        spec.mask.window = 4;
        const AttentionD eval = attend(qkv, spec);
        spec.dropout = Dropout{p, 7};
        const AttentionD train = attend(qkv, spec);
        Index kept = 0, dropped = 0;
        for (Index h = 0; h < 3; ++h)
            for (Index i = 0; i < 13; ++i)
                for (Index j = 0; j < 16; ++j) {
                    const double w = eval.weights(0, h, i, j);
                    const double t = train.weights(0, h, i, j);
                    if (w == 0) { // masked: stays exactly 0
                        EXPECT_EQ(t, 0.0);
                    } else if (isDropped(spec.dropout, 0, h, i, j)) {
                        EXPECT_EQ(t, 0.0) << "cell " << h << "," << i << "," << j;
                        ++dropped;
                    } else {
                        EXPECT_NEAR(t, w / (1 - p), 1e-15 * w / (1 - p))
                            << "cell " << h << "," << i << "," << j;
                        ++kept;
                    }
                }
        EXPECT_GT(kept, 0);
        EXPECT_GT(dropped, 0);
    }
}

TEST(Dropout, DroppedFractionIsNearTheRate) {
    // 2 x 8 x 128 x 128 = 262144 cells per rate. A fixed seed makes the count a fixed number:
    // the bound (6 binomial standard deviations) fails only if the hash is biased.
    constexpr Index kBatch = 2, kHeads = 8, kSeq = 128;
    const double cells = kBatch * kHeads * kSeq * kSeq;
    for (double p : {0.05, 0.1, 0.5, 0.9}) {
        const Dropout dropout{p, 2024};
        double count = 0, pairs = 0;
        for (Index b = 0; b < kBatch; ++b)
            for (Index h = 0; h < kHeads; ++h)
                for (Index i = 0; i < kSeq; ++i) {
                    const DropoutRow row(dropout, b, h, i);
                    bool previous = false;
                    for (Index j = 0; j < kSeq; ++j) {
                        const bool now = row.dropped(j);
                        count += now ? 1 : 0;
                        pairs += now && previous ? 1 : 0;
                        previous = now;
                    }
                }
        const double sigma = std::sqrt(p * (1 - p) / cells);
        EXPECT_NEAR(count / cells, p, 6 * sigma) << "p = " << p;
        // Neighbours are independent: both dropped about p^2 of the time.
        const double neighbours = kBatch * kHeads * kSeq * (kSeq - 1);
        EXPECT_NEAR(pairs / neighbours, p * p, 6 * std::sqrt(p * p * (1 - p * p) / neighbours))
            << "p = " << p;
    }
}

TEST(Dropout, FlashWithDropoutEqualsSoftmaxWithDropout) {
    const Qkv qkv = randomQkv(2, 4, 2, 29, 33, 16, 41);
    for (const char* maskName : {"none", "causal", "padding"}) {
        SCOPED_TRACE(maskName);
        AttentionSpec softmax;
        if (std::string(maskName) == "causal") softmax.mask.causal = true;
        if (std::string(maskName) == "padding") softmax.mask.validLen = {20, 7};
        softmax.dropout = Dropout{0.25, 99};
        const Attention reference = attend(qkv, softmax);
        for (Index block : {1, 4, 8, 64}) {
            AttentionSpec flash = softmax;
            flash.variant = Variant::Flash;
            flash.qBlock = block;
            flash.kvBlock = block + 1;
            const Attention tiled = attend(qkv, flash);
            for (Index b = 0; b < 2; ++b)
                for (Index h = 0; h < 4; ++h) {
                    EXPECT_MATRIX_NEAR(tiled.output.head(b, h), reference.output.head(b, h), 1e-5);
                    EXPECT_MATRIX_NEAR(tiled.weights.head(b, h), reference.weights.head(b, h),
                                       1e-6);
                }
        }
    }
}

TEST(Dropout, OutputIsTheDroppedWeightsTimesVInDouble) {
    // Naive double reference: w from ref::attention, drop the cells dropout.h names, divide
    // the rest by 1 - p, multiply by V.
    const QkvD qkv{ref::randomDoubles(1, 2, 11, 6, 51), ref::randomDoubles(1, 1, 14, 6, 52),
                   ref::randomDoubles(1, 1, 14, 5, 53)};
    const double p = 0.4;
    for (Variant variant : {Variant::Softmax, Variant::Flash}) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.qBlock = 3;
        spec.kvBlock = 4;
        spec.mask.causal = true;
        spec.dropout = Dropout{p, 5};
        const AttentionD result = attend(qkv, spec);
        for (Index h = 0; h < 2; ++h) {
            const ref::Result plain =
                ref::attention(qkv.q.head(0, h), qkv.k.head(0, 0), qkv.v.head(0, 0), spec.mask, 0);
            ref::MatD weights = plain.weights;
            for (Index i = 0; i < weights.rows(); ++i)
                for (Index j = 0; j < weights.cols(); ++j)
                    weights(i, j) =
                        isDropped(spec.dropout, 0, h, i, j) ? 0.0 : weights(i, j) / (1 - p);
            const ref::MatD output = weights * ConstMatrixMapD(qkv.v.head(0, 0));
            EXPECT_MATRIX_NEAR(result.weights.head(0, h), weights, 1e-14);
            EXPECT_MATRIX_NEAR(result.output.head(0, h), output, 1e-13);
        }
    }
}

TEST(Dropout, KvCacheDropsTheCellsOfTheFullPass) {
    const Qkv qkv = randomQkv(1, 2, 2, 15, 15, 8, 61);
    AttentionSpec spec;
    spec.mask.causal = true;
    spec.dropout = Dropout{0.3, 17};
    const Attention full = attend(qkv, spec);
    const Attention cached = attendKvCache(qkv, spec, 5, 4, nullptr);
    EXPECT_EQ(zeroPattern(cached, spec.mask), zeroPattern(full, spec.mask));
    for (Index h = 0; h < 2; ++h)
        EXPECT_MATRIX_NEAR(cached.output.head(0, h), full.output.head(0, h), 1e-5);
}

TEST(Dropout, RatesOutsideZeroToOneAndLinearAttentionAreRefused) {
    const Qkv qkv = randomQkv(1, 1, 1, 4, 4, 4, 71);
    for (double p : {-0.1, 1.0, 1.5, std::nan("")}) {
        AttentionSpec spec;
        spec.dropout.rate = p;
        const auto problem = validate(qkv, spec);
        ASSERT_TRUE(problem.has_value()) << p;
        EXPECT_NE(problem->message.find("dropout"), std::string::npos) << problem->message;
        EXPECT_THROW(attend(qkv, spec), InvalidArgument);
    }
    AttentionSpec linear;
    linear.variant = Variant::Linear;
    linear.dropout.rate = 0.2;
    ASSERT_TRUE(validate(qkv, linear).has_value());
    EXPECT_NE(validate(qkv, linear)->message.find("linear"), std::string::npos);
    linear.dropout.rate = 0; // eval mode is fine
    EXPECT_FALSE(validate(qkv, linear).has_value());
}

} // namespace
} // namespace attnlab

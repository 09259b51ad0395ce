// FlashAttention: equal to softmax attention for every tile size, the trace's invariants
// (skips, running max and sum, rescale), the partial state, and the trace JSON.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/flash.h"
#include "reference.h"

namespace attnlab {
namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

std::vector<std::pair<std::string, MaskSpec>> masksFor(Index sq, Index sk) {
    std::vector<std::pair<std::string, MaskSpec>> masks;
    masks.push_back({"none", MaskSpec{}});
    MaskSpec causal;
    causal.causal = true;
    masks.push_back({"causal", causal});
    MaskSpec window;
    window.window = 1;
    masks.push_back({"window", window});
    MaskSpec padding;
    padding.validLen = {sk / 2};
    masks.push_back({"padding", padding});
    MaskSpec custom;
    custom.custom = ref::randomMask(sq, sk, 5, 0.3);
    masks.push_back({"custom", custom});
    return masks;
}

TEST(Flash, EqualsSoftmaxForEveryBlockSize) {
    for (const auto& [sq, sk] : {std::pair<Index, Index>{7, 7}, {5, 9}, {9, 4}}) {
        Qkv qkv{ref::randomTensor(1, 1, sq, 4, 1), ref::randomTensor(1, 1, sk, 4, 2),
                ref::randomTensor(1, 1, sk, 3, 3)};
        for (const auto& [name, mask] : masksFor(sq, sk)) {
            AttentionSpec spec;
            spec.mask = mask;
            const Attention soft = attend(qkv, spec);
            const auto r =
                ref::attention(qkv.q.head(0, 0), qkv.k.head(0, 0), qkv.v.head(0, 0), mask, 0);
            EXPECT_MATRIX_NEAR(soft.output.head(0, 0), r.output, 1e-5) << name;
            spec.variant = Variant::Flash;
            const Index largest = std::max(sq, sk) + 1;
            for (Index qBlock = 1; qBlock <= largest; ++qBlock)
                for (Index kvBlock = 1; kvBlock <= largest; ++kvBlock) {
                    spec.qBlock = qBlock;
                    spec.kvBlock = kvBlock;
                    const Attention flash = attend(qkv, spec);
                    SCOPED_TRACE(name + " Sq=" + std::to_string(sq) + " Sk=" + std::to_string(sk) +
                                 " qBlock=" + std::to_string(qBlock) +
                                 " kvBlock=" + std::to_string(kvBlock));
                    EXPECT_MATRIX_NEAR(flash.output.head(0, 0), soft.output.head(0, 0), 1e-5);
                    EXPECT_MATRIX_NEAR(ConstMatrixMap(flash.weights.data.data(), sq, sk), r.weights,
                                       1e-6);
                    EXPECT_EQ(flash.emptyRows, soft.emptyRows);
                }
        }
    }
}

/// Replays the trace of one head against the reference scores and mask.
void checkTrace(const FlashHeadTrace& trace, const ref::Result& r, const ref::MaskD& allowed,
                Index qBlock, Index kvBlock) {
    const Index sq = r.scores.rows();
    const Index sk = r.scores.cols();
    const Index qTiles = (sq + qBlock - 1) / qBlock;
    const Index kvTiles = (sk + kvBlock - 1) / kvBlock;
    ASSERT_EQ(static_cast<Index>(trace.steps.size()), qTiles * kvTiles);
    std::size_t n = 0;
    for (Index qt = 0; qt < qTiles; ++qt) {
        const Index q0 = qt * qBlock;
        const Index q1 = std::min(sq, q0 + qBlock);
        std::vector<double> previousMax(static_cast<std::size_t>(q1 - q0), kMinusInf);
        for (Index kt = 0; kt < kvTiles; ++kt, ++n) {
            const FlashStep& step = trace.steps[n];
            const Index k0 = kt * kvBlock;
            const Index k1 = std::min(sk, k0 + kvBlock);
            ASSERT_EQ(step.qStart, q0);
            ASSERT_EQ(step.qEnd, q1);
            ASSERT_EQ(step.kvStart, k0);
            ASSERT_EQ(step.kvEnd, k1);
            ASSERT_EQ(static_cast<Index>(step.rowMax.size()), q1 - q0);
            ASSERT_EQ(step.rowSum.size(), step.rowMax.size());
            ASSERT_EQ(step.rescale.size(), step.rowMax.size());
            // Skipped exactly when the tile holds no allowed cell.
            EXPECT_EQ(step.skipped, !allowed.block(q0, k0, q1 - q0, k1 - k0).any())
                << "tile " << qt << "," << kt;
            for (Index i = q0; i < q1; ++i) {
                const auto local = static_cast<std::size_t>(i - q0);
                // The running max and sum over the keys seen so far, from the reference.
                double seenMax = kMinusInf;
                for (Index j = 0; j < k1; ++j)
                    if (allowed(i, j)) seenMax = std::max(seenMax, r.scores(i, j));
                double seenSum = 0;
                for (Index j = 0; j < k1; ++j)
                    if (allowed(i, j)) seenSum += std::exp(r.scores(i, j) - seenMax);
                if (seenMax == kMinusInf) {
                    EXPECT_EQ(step.rowMax[local], -std::numeric_limits<float>::infinity());
                    EXPECT_EQ(step.rowSum[local], 0.0f);
                } else {
                    EXPECT_NEAR(step.rowMax[local], seenMax, 1e-5);
                    EXPECT_NEAR(step.rowSum[local], seenSum, 1e-5 * seenSum);
                }
                // The factor applied to the accumulator is exp(m_old - m_new); a skipped
                // tile applies none.
                if (step.skipped) {
                    EXPECT_EQ(step.rescale[local], 1.0f);
                } else {
                    const double expected =
                        seenMax == kMinusInf ? 0.0 : std::exp(previousMax[local] - seenMax);
                    EXPECT_NEAR(step.rescale[local], expected, 1e-5);
                }
                previousMax[local] = seenMax;
            }
        }
    }
}

TEST(Flash, TraceFollowsTheOnlineSoftmax) {
    const Index sq = 10, sk = 13;
    Qkv qkv{ref::randomTensor(2, 2, sq, 4, 11, 1.5f), ref::randomTensor(2, 1, sk, 4, 12, 1.5f),
            ref::randomTensor(2, 1, sk, 2, 13)};
    for (const auto& [name, mask] : masksFor(sq, sk))
        for (const auto& [qBlock, kvBlock] :
             {std::pair<Index, Index>{3, 4}, {1, 1}, {4, 20}, {16, 2}, {5, 5}}) {
            AttentionSpec spec;
            spec.variant = Variant::Flash;
            spec.mask = mask;
            spec.qBlock = qBlock;
            spec.kvBlock = kvBlock;
            spec.wantFlashTrace = true;
            const Attention a = attend(qkv, spec);
            ASSERT_TRUE(a.flashTrace.has_value());
            EXPECT_EQ(a.flashTrace->qBlock, qBlock);
            EXPECT_EQ(a.flashTrace->kvBlock, kvBlock);
            ASSERT_EQ(a.flashTrace->heads.size(), 4u);
            for (Index b = 0; b < 2; ++b)
                for (Index h = 0; h < 2; ++h) {
                    SCOPED_TRACE(name + " blocks " + std::to_string(qBlock) + "x" +
                                 std::to_string(kvBlock));
                    const FlashHeadTrace& trace =
                        a.flashTrace->heads[static_cast<std::size_t>(b * 2 + h)];
                    EXPECT_EQ(trace.batch, b);
                    EXPECT_EQ(trace.head, h);
                    const ref::MaskD allowed = ref::allowedMask(ref::rulesOf(mask, b), sq, sk);
                    checkTrace(trace,
                               ref::attention(qkv.q.head(b, h), qkv.k.head(b, 0), qkv.v.head(b, 0),
                                              allowed),
                               allowed, qBlock, kvBlock);
                }
        }
}

TEST(Flash, CausalSkipsTheUpperTiles) {
    // With equal square tiles on the diagonal, a causal mask leaves exactly the strictly
    // upper tiles without an allowed cell: T (T - 1) / 2 skipped of T^2.
    const Index s = 16, block = 4;
    Qkv qkv{ref::randomTensor(1, 1, s, 4, 1), ref::randomTensor(1, 1, s, 4, 2),
            ref::randomTensor(1, 1, s, 4, 3)};
    AttentionSpec spec;
    spec.variant = Variant::Flash;
    spec.mask.causal = true;
    spec.qBlock = spec.kvBlock = block;
    spec.wantFlashTrace = true;
    const Attention a = attend(qkv, spec);
    int skipped = 0;
    for (const FlashStep& step : a.flashTrace->heads[0].steps) {
        skipped += step.skipped;
        EXPECT_EQ(step.skipped, step.kvStart > step.qStart);
    }
    EXPECT_EQ(skipped, 6);
}

TEST(Flash, StateAfterAllStepsIsTheOutput) {
    const Index sq = 9, sk = 11;
    Qkv qkv{ref::randomTensor(1, 4, sq, 4, 21), ref::randomTensor(1, 2, sk, 4, 22),
            ref::randomTensor(1, 2, sk, 3, 23)};
    for (const auto& [name, mask] : masksFor(sq, sk)) {
        AttentionSpec spec;
        spec.variant = Variant::Flash;
        spec.mask = mask;
        spec.qBlock = 4;
        spec.kvBlock = 3;
        const Attention a = attend(qkv, spec);
        const Index total = 3 * 4;
        for (Index h : {0, 3}) {
            const FlashState state = flashStateAfter(qkv, spec, 0, h, total);
            EXPECT_EQ(state.stepsDone, total) << name;
            Matrix normalised = Matrix::Zero(sq, 3);
            for (Index i = 0; i < sq; ++i)
                if (state.rowSum[static_cast<std::size_t>(i)] > 0)
                    normalised.row(i) =
                        state.accumulator.row(i) / state.rowSum[static_cast<std::size_t>(i)];
            EXPECT_MATRIX_NEAR(normalised, a.output.head(0, h), 1e-6) << name;
            // More steps than there are change nothing.
            EXPECT_EQ(flashStateAfter(qkv, spec, 0, h, total + 5).stepsDone, total);
        }
    }
}

TEST(Flash, PartialStateHoldsTheKeysSeenSoFar) {
    const Index sq = 6, sk = 10;
    Qkv qkv{ref::randomTensor(1, 1, sq, 3, 31), ref::randomTensor(1, 1, sk, 3, 32),
            ref::randomTensor(1, 1, sk, 2, 33)};
    AttentionSpec spec;
    spec.variant = Variant::Flash;
    spec.mask.validLen = {8};
    spec.qBlock = 4;
    spec.kvBlock = 3; // 2 q tiles x 4 kv tiles
    const ref::MaskD allowed = ref::allowedMask(ref::rulesOf(spec.mask, 0), sq, sk);
    const auto r = ref::attention(qkv.q.head(0, 0), qkv.k.head(0, 0), qkv.v.head(0, 0), allowed);

    const FlashState initial = flashStateAfter(qkv, spec, 0, 0, 0);
    EXPECT_EQ(initial.stepsDone, 0);
    EXPECT_TRUE(initial.accumulator.isZero(0));
    for (float m : initial.rowMax)
        EXPECT_EQ(m, -std::numeric_limits<float>::infinity());

    for (Index steps = 1; steps <= 8; ++steps) {
        const FlashState state = flashStateAfter(qkv, spec, 0, 0, steps);
        EXPECT_EQ(state.stepsDone, steps);
        const Index qTile = (steps - 1) / 4; // the tile being worked on
        const Index keysSeen = ((steps - 1) % 4 + 1) * 3;
        for (Index i = 0; i < sq; ++i) {
            const auto row = static_cast<std::size_t>(i);
            const Index tile = i / 4;
            const Index seen = tile < qTile ? sk : tile == qTile ? std::min(keysSeen, sk) : 0;
            double m = kMinusInf, l = 0;
            Eigen::RowVectorXd acc = Eigen::RowVectorXd::Zero(2);
            for (Index j = 0; j < seen; ++j)
                if (allowed(i, j)) m = std::max(m, r.scores(i, j));
            for (Index j = 0; j < seen; ++j)
                if (allowed(i, j)) {
                    const double e = std::exp(r.scores(i, j) - m);
                    l += e;
                    acc += e * qkv.v.head(0, 0).row(j).cast<double>();
                }
            if (m == kMinusInf) {
                EXPECT_EQ(state.rowMax[row], -std::numeric_limits<float>::infinity());
            } else {
                EXPECT_NEAR(state.rowMax[row], m, 1e-5) << "steps " << steps << " row " << i;
            }
            EXPECT_NEAR(state.rowSum[row], l, 1e-5 * std::max(1.0, l));
            EXPECT_MATRIX_NEAR(state.accumulator.row(i), acc, 1e-5);
        }
    }
}

TEST(Flash, StateAfterChecksItsArguments) {
    Qkv qkv{ref::randomTensor(1, 2, 3, 2, 1), ref::randomTensor(1, 2, 3, 2, 2),
            ref::randomTensor(1, 2, 3, 2, 3)};
    AttentionSpec spec;
    EXPECT_THROW(flashStateAfter(qkv, spec, 1, 0, 1), InvalidArgument);
    EXPECT_THROW(flashStateAfter(qkv, spec, 0, 2, 1), InvalidArgument);
    spec.qBlock = 0;
    EXPECT_THROW(flashStateAfter(qkv, spec, 0, 0, 1), InvalidArgument);
}

TEST(Flash, TraceJsonHasTheDesignedShape) {
    // Window 1 over 6 positions with 6-row q tiles: kv tile [0, 2) leaves rows 3.. without a
    // key, so their running max is still -inf there and shows as null.
    Qkv qkv{ref::randomTensor(1, 1, 6, 2, 41), ref::randomTensor(1, 1, 6, 2, 42),
            ref::randomTensor(1, 1, 6, 2, 43)};
    AttentionSpec spec;
    spec.variant = Variant::Flash;
    spec.mask.window = 1;
    spec.qBlock = 6;
    spec.kvBlock = 2;
    spec.wantFlashTrace = true;
    const Attention a = attend(qkv, spec);
    const auto json = nlohmann::json::parse(flashTraceJson(*a.flashTrace));
    EXPECT_EQ(json["variant"], "flash");
    EXPECT_EQ(json["q_block"], 6);
    EXPECT_EQ(json["kv_block"], 2);
    ASSERT_EQ(json["heads"].size(), 1u);
    EXPECT_EQ(json["heads"][0]["batch"], 0);
    EXPECT_EQ(json["heads"][0]["head"], 0);
    const auto& steps = json["heads"][0]["steps"];
    ASSERT_EQ(steps.size(), 3u);
    const auto& first = steps[0];
    EXPECT_EQ(first["q_start"], 0);
    EXPECT_EQ(first["q_end"], 6);
    EXPECT_EQ(first["kv_start"], 0);
    EXPECT_EQ(first["kv_end"], 2);
    EXPECT_EQ(first["skipped"], false);
    ASSERT_EQ(first["row_max"].size(), 6u);
    EXPECT_TRUE(first["row_max"][0].is_number());
    EXPECT_TRUE(first["row_max"][2].is_number());
    EXPECT_TRUE(first["row_max"][3].is_null());
    EXPECT_TRUE(first["row_max"][5].is_null());
    EXPECT_EQ(first["row_sum"][5], 0.0);
    // Numbers read back as the exact floats of the trace.
    for (std::size_t r = 0; r < 3; ++r)
        EXPECT_EQ(static_cast<float>(first["row_max"][r].get<double>()),
                  a.flashTrace->heads[0].steps[0].rowMax[r]);
    EXPECT_TRUE(steps[2]["row_max"][5].is_number());
    EXPECT_EQ(steps[2]["rescale"].size(), 6u);
}

TEST(Flash, TraceCostsNothingWhenNotAsked) {
    Qkv qkv{ref::randomTensor(1, 1, 5, 2, 1), ref::randomTensor(1, 1, 5, 2, 2),
            ref::randomTensor(1, 1, 5, 2, 3)};
    AttentionSpec spec;
    spec.variant = Variant::Flash;
    EXPECT_FALSE(attend(qkv, spec).flashTrace.has_value());
    spec.variant = Variant::Softmax;
    spec.wantFlashTrace = true; // only flash records a trace
    EXPECT_FALSE(attend(qkv, spec).flashTrace.has_value());
}

TEST(Flash, LargeSequenceWithoutWeightsMatchesReferenceRows) {
    // S well above the tile sizes, no weights: spot-check rows against the reference.
    const Index s = 700;
    Qkv qkv{ref::randomTensor(1, 1, s, 16, 51), ref::randomTensor(1, 1, s, 16, 52),
            ref::randomTensor(1, 1, s, 8, 53)};
    AttentionSpec spec;
    spec.variant = Variant::Flash;
    spec.mask.causal = true;
    spec.wantWeights = false;
    spec.qBlock = 96;
    spec.kvBlock = 160;
    const Attention a = attend(qkv, spec);
    const auto r =
        ref::attention(qkv.q.head(0, 0), qkv.k.head(0, 0), qkv.v.head(0, 0), spec.mask, 0);
    EXPECT_MATRIX_NEAR(a.output.head(0, 0), r.output, 1e-5);
}

} // namespace
} // namespace attnlab

// FlashWalk: one head's tiles, skips and row curves are the flash kernel's own trace; the
// state after every step is flashStateAfter's; the error curve is measured against an
// independent double reference; memory does not grow with the number of tiles.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/flash.h"
#include "attnlab/attention/flash_walk.h"
#include "reference.h"

namespace attnlab {
namespace {

struct WalkCase {
    const char* name;
    Index sq, sk, qBlock, kvBlock;
    int mask; // 0 none, 1 causal, 2 window 1, 3 padding sk/2, 4 custom
};

/// By name: gtest would otherwise print the struct's bytes, padding included (memcheck reports
/// those as uninitialised).
void PrintTo(const WalkCase& c, std::ostream* out) {
    *out << c.name;
}

MaskSpec maskOf(const WalkCase& c) {
    MaskSpec mask;
    if (c.mask == 1) mask.causal = true;
    if (c.mask == 2) mask.window = 1;
    if (c.mask == 3) mask.validLen = {c.sk / 2};
    if (c.mask == 4) mask.custom = ref::randomMask(c.sq, c.sk, 11, 0.3);
    return mask;
}

Qkv oneHead(Index sq, Index sk, Index d, Index dv) {
    Qkv qkv;
    qkv.q = ref::randomTensor(1, 1, sq, d, 3);
    qkv.k = ref::randomTensor(1, 1, sk, d, 4);
    qkv.v = ref::randomTensor(1, 1, sk, dv, 5);
    return qkv;
}

class FlashWalkCases : public ::testing::TestWithParam<WalkCase> {};

TEST_P(FlashWalkCases, MatchesTheKernelsTraceAndPartialState) {
    const WalkCase c = GetParam();
    const Qkv qkv = oneHead(c.sq, c.sk, 4, 3);
    AttentionSpec spec;
    spec.variant = Variant::Flash;
    spec.mask = maskOf(c);
    spec.scale = 0.7;
    spec.qBlock = c.qBlock;
    spec.kvBlock = c.kvBlock;
    spec.wantFlashTrace = true;
    const Attention flash = attend(qkv, spec);
    ASSERT_TRUE(flash.flashTrace.has_value());
    const std::vector<FlashStep>& steps = flash.flashTrace->heads.at(0).steps;

    const FlashWalk walk(Matrix(qkv.q.head(0, 0)), Matrix(qkv.k.head(0, 0)),
                         Matrix(qkv.v.head(0, 0)), spec.mask, 0, 0.7, c.qBlock, c.kvBlock);
    ASSERT_EQ(walk.totalSteps(), static_cast<Index>(steps.size()));
    Index skipped = 0;
    for (Index s = 0; s < walk.totalSteps(); ++s) {
        const FlashTile tile = walk.tile(s);
        const FlashStep& want = steps[static_cast<std::size_t>(s)];
        EXPECT_EQ(tile.qStart, want.qStart);
        EXPECT_EQ(tile.qEnd, want.qEnd);
        EXPECT_EQ(tile.kvStart, want.kvStart);
        EXPECT_EQ(tile.kvEnd, want.kvEnd);
        EXPECT_EQ(tile.skipped, want.skipped) << "step " << s;
        EXPECT_EQ(walk.skippedAmong(s), skipped);
        skipped += want.skipped ? 1 : 0;
    }
    EXPECT_EQ(walk.skippedAmong(walk.totalSteps()), skipped);

    // The state after every step is flashStateAfter's (replayed from a checkpoint or not).
    for (Index n = 0; n <= walk.totalSteps(); ++n) {
        const FlashState got = walk.stateAfter(n);
        const FlashState want = flashStateAfter(qkv, spec, 0, 0, n);
        ASSERT_EQ(got.stepsDone, n);
        for (std::size_t i = 0; i < want.rowMax.size(); ++i) {
            ASSERT_EQ(std::isinf(got.rowMax[i]), std::isinf(want.rowMax[i])) << n << " " << i;
            if (std::isfinite(want.rowMax[i])) {
                ASSERT_NEAR(got.rowMax[i], want.rowMax[i], 1e-5);
            }
            ASSERT_NEAR(got.rowSum[i], want.rowSum[i], 1e-4) << "step " << n << " row " << i;
        }
        ASSERT_TRUE(got.accumulator.isApprox(want.accumulator, 1e-4) ||
                    (got.accumulator - want.accumulator).cwiseAbs().maxCoeff() < 1e-5)
            << "step " << n;
    }

    // A row's curve is the trace's values for that row in every computed tile covering it.
    for (Index row : {Index(0), c.sq / 2, c.sq - 1}) {
        const std::vector<FlashRowPoint> got = walk.rowHistory(row, walk.totalSteps());
        std::size_t p = 0;
        for (std::size_t s = 0; s < steps.size(); ++s) {
            const FlashStep& step = steps[s];
            if (step.skipped || row < step.qStart || row >= step.qEnd) continue;
            ASSERT_LT(p, got.size());
            const auto local = static_cast<std::size_t>(row - step.qStart);
            EXPECT_EQ(got[p].stepsDone, static_cast<Index>(s + 1));
            if (std::isfinite(step.rowMax[local])) {
                EXPECT_NEAR(got[p].rowMax, step.rowMax[local], 1e-5);
            } else {
                EXPECT_TRUE(std::isinf(got[p].rowMax));
            }
            EXPECT_NEAR(got[p].rowSum, step.rowSum[local], 1e-4);
            EXPECT_NEAR(got[p].rescale, step.rescale[local], 1e-5);
            ++p;
        }
        EXPECT_EQ(p, got.size());
    }

    // The reference is the independent double attention; the error is measured against it.
    const ref::Result reference =
        ref::attention(qkv.q.head(0, 0), qkv.k.head(0, 0), qkv.v.head(0, 0), spec.mask, 0, 0.7);
    EXPECT_MATRIX_NEAR(walk.reference(), reference.output, 1e-9);
    ASSERT_FALSE(walk.errors().empty());
    EXPECT_EQ(walk.errors().front().stepsDone, 0);
    EXPECT_EQ(walk.errors().back().stepsDone, walk.totalSteps());
    EXPECT_LT(walk.errors().back().maxError, 1e-5);
    for (const FlashErrorPoint& point : walk.errors()) {
        const FlashState state = flashStateAfter(qkv, spec, 0, 0, point.stepsDone);
        double worst = 0;
        for (Index i = 0; i < c.sq; ++i)
            for (Index d = 0; d < reference.output.cols(); ++d) {
                const float l = state.rowSum[static_cast<std::size_t>(i)];
                const double o = l > 0 ? state.accumulator(i, d) / double(l) : 0.0;
                worst = std::max(worst, std::abs(o - reference.output(i, d)));
            }
        EXPECT_NEAR(point.maxError, worst, 1e-5) << "after " << point.stepsDone << " steps";
    }
}

// 64 x 64 in 2 x 1 tiles is 2048 steps: more than the checkpoints, so stateAfter replays.
INSTANTIATE_TEST_SUITE_P(Shapes, FlashWalkCases,
                         ::testing::Values(WalkCase{"none_2x2", 7, 7, 2, 2, 0},
                                           WalkCase{"causal_3x2", 7, 7, 3, 2, 1},
                                           WalkCase{"window_1x4", 9, 9, 1, 4, 2},
                                           WalkCase{"padding_cross", 5, 9, 2, 3, 3},
                                           WalkCase{"custom_2x2", 8, 6, 2, 2, 4},
                                           WalkCase{"causal_replays", 64, 64, 2, 1, 1}),
                         [](const ::testing::TestParamInfo<WalkCase>& param) {
                             return std::string(param.param.name);
                         });

TEST(FlashWalk, ReplaysAtMostTheCheckpointSpacing) {
    const Qkv qkv = oneHead(64, 64, 4, 3);
    const FlashWalk walk(Matrix(qkv.q.head(0, 0)), Matrix(qkv.k.head(0, 0)),
                         Matrix(qkv.v.head(0, 0)), MaskSpec{}, 0, 0.5, 2, 1);
    EXPECT_EQ(walk.totalSteps(), 32 * 64);
    EXPECT_GT(walk.checkpointSpacing(), 1);
    EXPECT_LE(walk.checkpointSpacing(), walk.totalSteps() / FlashWalk::kMaxCheckpoints + 1);
    EXPECT_EQ(static_cast<Index>(walk.errors().size()), FlashWalk::kMaxErrorSamples + 1);
}

TEST(FlashWalk, MemoryDoesNotGrowWithTheNumberOfTiles) {
    // #9: 4096 tokens in 1 x 1 tiles asked for ~32 GB of trace. The walk keeps a bit per
    // tile, so one-by-one tiles cost about S^2 / 8 bytes more than one big tile, no more.
    const Index s = 512, d = 8;
    const Qkv qkv = oneHead(s, s, d, d);
    const Matrix q = qkv.q.head(0, 0), k = qkv.k.head(0, 0), v = qkv.v.head(0, 0);
    const FlashWalk small(q, k, v, MaskSpec{}, 0, 0.3, 1, 1);
    const FlashWalk big(q, k, v, MaskSpec{}, 0, 0.3, s, s);
    EXPECT_EQ(small.totalSteps(), s * s);
    const std::size_t perTileBits = static_cast<std::size_t>(s * s) / 8 * 2; // bits + counts
    EXPECT_LT(small.bytes(), big.bytes() + perTileBits + FlashWalk::kCheckpointBytes);
    // The head's tensors, reference and final state dominate: far below one float per tile
    // per row, which is what a full trace would hold.
    EXPECT_LT(small.bytes(), static_cast<std::size_t>(s * s) * sizeof(float));
    EXPECT_LT(small.errors().back().maxError, 1e-5);
}

TEST(FlashWalk, EmptyAndBadInputs) {
    const FlashWalk empty(Matrix::Zero(0, 4), Matrix::Zero(3, 4), Matrix::Zero(3, 2), MaskSpec{}, 0,
                          1.0, 2, 2);
    EXPECT_EQ(empty.totalSteps(), 0);
    EXPECT_EQ(empty.stateAfter(5).stepsDone, 0);
    EXPECT_THROW(FlashWalk(Matrix(2, 4), Matrix(3, 5), Matrix(3, 2), MaskSpec{}, 0, 1.0, 2, 2),
                 InvalidArgument);
    EXPECT_THROW(FlashWalk(Matrix(2, 4), Matrix(3, 4), Matrix(3, 2), MaskSpec{}, 0, 1.0, 0, 2),
                 InvalidArgument);
}

} // namespace
} // namespace attnlab

// The float fast path of softmax and flash attention (core/attention/src/fast_attention.h, issue 14
// item 3) against the naive double-precision reference, on shapes and masks chosen to hit
// its edges: sequence lengths that are not a multiple of a tile or a panel, D and Dv not a
// multiple of the vector width, Sq != Sk, rows with no allowed key, huge logits. And its
// vectorised 2^x against std::exp2. Every test runs on each kernel target the CPU has
// (attnlab/base/isa.h); a target it lacks is skipped.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/attention/attention.h"
#include "fast_attention.h"
#include "isa_scope.h"
#include "reference.h"

namespace attnlab {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

class FastExp : public test::OnEachIsa {};
class FastAttention : public test::OnEachIsa {};

/// Relative error of the kernels' 2^x against std::exp2 (in double) over the range where the
/// result is a normal float, and against std::exp for x = y log2 e: the bound
/// fast_attention.h states.
TEST_P(FastExp, MatchesStdExp2OverTheNormalRange) {
    std::vector<float> in;
    for (double x = -126.0; x <= 0.0; x += 0.000731)
        in.push_back(static_cast<float>(x));
    for (float x :
         {0.0f, -0.0f, -1e-8f, -0.5f, -0.49999997f, -0.50000006f, -1.5f, -125.5f, -126.0f})
        in.push_back(x);
    std::vector<float> out(in.size());
    kernels::exp2NonPositiveFast(in.data(), out.data(), static_cast<Index>(in.size()));
    double worst = 0;
    float worstAt = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const double exact = std::exp2(static_cast<double>(in[i]));
        const double error = std::abs(static_cast<double>(out[i]) - exact) / exact;
        if (error > worst) {
            worst = error;
            worstAt = in[i];
        }
    }
    EXPECT_LT(worst, 3e-7) << "worst at x = " << worstAt;
    std::ostringstream text;
    text << worst;
    RecordProperty("worst_relative_error", text.str());
}

TEST_P(FastExp, EdgesOfAMaskedOrFarRow) {
    // Thirteen inputs: the tail past the last full vector of eight goes through the same code.
    const std::vector<float> in = {-kInf,   -1e30f,  -1000.0f, -151.0f, -150.5f, 0.0f,   -0.0f,
                                   -127.0f, -140.0f, -1.0f,    -2.0f,   -64.0f,  -126.0f};
    std::vector<float> out(in.size());
    kernels::exp2NonPositiveFast(in.data(), out.data(), static_cast<Index>(in.size()));
    EXPECT_EQ(out[0], 0.0f); // a masked logit gives a weight of exactly 0
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_EQ(out[2], 0.0f);
    EXPECT_EQ(out[3], 0.0f);
    EXPECT_EQ(out[4], 0.0f);
    EXPECT_EQ(out[5], 1.0f); // the row maximum weighs exactly 1
    EXPECT_EQ(out[6], 1.0f);
    // Below the normal range: 0 or the subnormal, never more than the smallest normal.
    for (std::size_t i : {7u, 8u}) {
        EXPECT_GE(out[i], 0.0f) << in[i];
        EXPECT_LE(out[i], std::numeric_limits<float>::min()) << in[i];
    }
    EXPECT_FLOAT_EQ(out[9], 0.5f);
    EXPECT_FLOAT_EQ(out[10], 0.25f);
    EXPECT_FLOAT_EQ(out[11], std::ldexp(1.0f, -64));
    EXPECT_FLOAT_EQ(out[12], std::numeric_limits<float>::min());
}

struct Shape {
    Index sq, sk, dim, dv;
};

/// Every structured mask, with row edges: Sq > Sk leaves causal rows with no key; a padding
/// length of 0 empties every row of batch entry 1.
std::vector<std::pair<std::string, MaskSpec>> masksFor(const Shape& s) {
    std::vector<std::pair<std::string, MaskSpec>> masks;
    masks.emplace_back("none", MaskSpec{});
    MaskSpec causal;
    causal.causal = true;
    masks.emplace_back("causal", causal);
    MaskSpec padding;
    padding.validLen = {std::max<Index>(1, s.sk - 17), 0};
    masks.emplace_back("padding", padding);
    MaskSpec window;
    window.window = 5;
    masks.emplace_back("window", window);
    MaskSpec causalWindow;
    causalWindow.causalWindow = 70;
    masks.emplace_back("causal-window", causalWindow);
    MaskSpec causalPadding = causal;
    causalPadding.validLen = {s.sk / 2 + 1};
    masks.emplace_back("causal+padding", causalPadding);
    return masks;
}

/// The double reference of every (batch entry, query head), in that order (GQA: query head h
/// reads kv head h / group).
std::vector<ref::Result> referenceHeads(const Qkv& qkv, const MaskSpec& mask,
                                        std::optional<double> scale) {
    const Index group = qkv.q.heads / qkv.k.heads;
    std::vector<ref::Result> heads;
    for (Index b = 0; b < qkv.q.batch; ++b)
        for (Index h = 0; h < qkv.q.heads; ++h)
            heads.push_back(ref::attention(qkv.q.head(b, h), qkv.k.head(b, h / group),
                                           qkv.v.head(b, h / group), mask, b, scale.value_or(-1)));
    return heads;
}

/// attend() on the fast path against the double reference, head by head (GQA: 4 query heads
/// over 2 kv heads, 2 batch entries). `reference` is referenceHeads(qkv, mask, scale): one
/// reference serves every variant, thread count and weights choice checked against it.
void expectMatchesReference(const Qkv& qkv, const MaskSpec& mask,
                            const std::vector<ref::Result>& reference, Variant variant,
                            bool wantWeights, int threads, std::optional<double> scale,
                            double outputTolerance, const std::string& label) {
    AttentionSpec spec;
    spec.variant = variant;
    spec.mask = mask;
    spec.wantWeights = wantWeights;
    spec.threads = threads;
    spec.scale = scale;
    ASSERT_TRUE(kernels::fastPathServes(spec, false)) << label;
    const Attention a = attend(qkv, spec);
    const Index heads = qkv.q.heads;
    for (Index b = 0; b < qkv.q.batch; ++b)
        for (Index h = 0; h < heads; ++h) {
            SCOPED_TRACE(label + " b=" + std::to_string(b) + " h=" + std::to_string(h));
            const ref::Result& r = reference[static_cast<std::size_t>(b * heads + h)];
            ASSERT_TRUE(a.output.head(b, h).allFinite());
            EXPECT_MATRIX_NEAR(a.output.head(b, h), r.output, outputTolerance);
            if (wantWeights) {
                const ConstMatrixMap w(a.weights.data.data() +
                                           (b * heads + h) * qkv.q.seq * qkv.k.seq,
                                       qkv.q.seq, qkv.k.seq);
                EXPECT_MATRIX_NEAR(w, r.weights, 1e-6);
                // Masked cells are exactly 0, not merely small.
                for (Index i = 0; i < qkv.q.seq; ++i)
                    for (Index j = 0; j < qkv.k.seq; ++j)
                        if (!allowed(mask, b, i, j, qkv.q.seq, qkv.k.seq)) {
                            ASSERT_EQ(w(i, j), 0.0f) << "masked cell " << i << ", " << j;
                        }
            }
            const std::vector<unsigned char> flags(a.emptyRows.begin() + b * qkv.q.seq,
                                                   a.emptyRows.begin() + (b + 1) * qkv.q.seq);
            EXPECT_EQ(flags, r.emptyRow);
        }
}

TEST_P(FastAttention, MatchesTheDoubleReferenceOnAwkwardShapes) {
    const std::vector<Shape> shapes = {{1, 1, 1, 1},       {7, 5, 3, 3},       {50, 130, 64, 64},
                                       {100, 100, 80, 80}, {33, 200, 128, 40}, {129, 97, 1, 5},
                                       {200, 61, 64, 17}};
    std::uint32_t seed = 100;
    for (const Shape& s : shapes) {
        const Qkv qkv{ref::randomTensor(2, 4, s.sq, s.dim, seed++),
                      ref::randomTensor(2, 2, s.sk, s.dim, seed++),
                      ref::randomTensor(2, 2, s.sk, s.dv, seed++)};
        for (const auto& [name, mask] : masksFor(s)) {
            const std::vector<ref::Result> reference = referenceHeads(qkv, mask, std::nullopt);
            for (Variant variant : {Variant::Softmax, Variant::Flash})
                for (bool wantWeights : {false, true})
                    for (int threads : {1, 2}) {
                        const std::string label =
                            std::string(variantName(variant)) + " " + name +
                            " Sq=" + std::to_string(s.sq) + " Sk=" + std::to_string(s.sk) +
                            " D=" + std::to_string(s.dim) + " Dv=" + std::to_string(s.dv) +
                            (wantWeights ? " weights" : "") + " threads=" + std::to_string(threads);
                        expectMatchesReference(qkv, mask, reference, variant, wantWeights,
                                               threads, std::nullopt, 1e-5, label);
                    }
        }
    }
}

/// Integer Q and K with scale 1000: logits are exact multiples of 1000 in float and in
/// double, so huge logits and exp of very negative differences are checked without the
/// rounding of the logits themselves getting in the way.
TEST_P(FastAttention, HugeLogitsStayFiniteAndExact) {
    const Index sq = 70, sk = 150, dim = 8;
    Qkv qkv{Tensor4(2, 2, sq, dim), Tensor4(2, 2, sk, dim), ref::randomTensor(2, 2, sk, 8, 7)};
    std::mt19937 gen(3);
    std::uniform_int_distribution<int> pick(-3, 3);
    for (float& x : qkv.q.data)
        x = static_cast<float>(pick(gen));
    for (float& x : qkv.k.data)
        x = static_cast<float>(pick(gen));
    for (const auto& [name, mask] : masksFor({sq, sk, dim, 8})) {
        const std::vector<ref::Result> reference = referenceHeads(qkv, mask, 1000.0);
        for (Variant variant : {Variant::Softmax, Variant::Flash})
            expectMatchesReference(qkv, mask, reference, variant, true, 2, 1000.0, 1e-5,
                                   std::string(variantName(variant)) + " " + name);
    }
}

/// The flash output does not depend on whether the weights are asked for (the fast path
/// computes them by a second pass), nor on the thread count.
TEST_P(FastAttention, OutputIndependentOfWeightsAndThreads) {
    const Qkv qkv{ref::randomTensor(1, 3, 157, 64, 41), ref::randomTensor(1, 3, 157, 64, 42),
                  ref::randomTensor(1, 3, 157, 64, 43)};
    for (Variant variant : {Variant::Softmax, Variant::Flash})
        for (bool causal : {false, true}) {
            AttentionSpec spec;
            spec.variant = variant;
            spec.mask.causal = causal;
            spec.wantWeights = false;
            spec.threads = 1;
            const Attention base = attend(qkv, spec);
            spec.wantWeights = true;
            spec.threads = 2;
            EXPECT_EQ(attend(qkv, spec).output.data, base.output.data) << variantName(variant);
        }
}

/// The fast path leaves its output and weights unset before it runs (prepareResult): it must
/// write every cell, masked ones as 0. The heap is handed buffers of NaN of exactly those sizes
/// first, so a cell the kernel skipped would read as a NaN left over rather than as a fresh
/// page's zero.
TEST_P(FastAttention, WritesEveryCellOfABufferThatHeldNaN) {
    const std::vector<Shape> shapes = {{7, 5, 3, 3}, {50, 130, 64, 64}, {129, 97, 1, 5}};
    std::uint32_t seed = 300;
    for (const Shape& s : shapes) {
        const Qkv qkv{ref::randomTensor(2, 4, s.sq, s.dim, seed++),
                      ref::randomTensor(2, 2, s.sk, s.dim, seed++),
                      ref::randomTensor(2, 2, s.sk, s.dv, seed++)};
        const auto poison = [&] {
            std::vector<AlignedVector<float>> held;
            for (Index cells : {2 * 4 * s.sq * s.dv, 2 * 4 * s.sq * s.sk})
                for (int copy = 0; copy < 3; ++copy)
                    held.emplace_back(static_cast<std::size_t>(cells),
                                      std::numeric_limits<float>::quiet_NaN());
        }; // freed here, for the attention's own buffers to reuse
        for (const auto& [name, mask] : masksFor(s)) {
            const std::vector<ref::Result> reference = referenceHeads(qkv, mask, std::nullopt);
            for (Variant variant : {Variant::Softmax, Variant::Flash}) {
                poison();
                expectMatchesReference(qkv, mask, reference, variant, true, 2, std::nullopt,
                                       1e-5,
                                       std::string(variantName(variant)) + " " + name +
                                           " Sq=" + std::to_string(s.sq));
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, FastExp, ::testing::ValuesIn(kAllIsas), test::isaTestName);
INSTANTIATE_TEST_SUITE_P(Isa, FastAttention, ::testing::ValuesIn(kAllIsas), test::isaTestName);

} // namespace
} // namespace attnlab

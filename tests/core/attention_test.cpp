// attend(): seed 003's worked example, analytic cases, GQA against explicitly repeated K/V,
// threads (the same bytes at any count), validation, and properties swept over every variant.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "attnlab/attention/attention.h"
#include "reference.h"

namespace attnlab {
namespace {

/// The variants the property sweep runs over. Adding a variant is one line here.
const std::vector<Variant> kSweptVariants = {Variant::Softmax, Variant::Flash, Variant::Linear,
                                             Variant::Additive};
/// Linear attention's denominator carries a 1e-6 (docs/architecture.md), so its rows sum to 1 and a
/// single allowed key returns its value only up to 1e-6 / (phi(q) . sum phi(k)), which is not
/// tiny for one weak key.
double toleranceOf(Variant variant) {
    return variant == Variant::Linear ? 3e-3 : 1e-5;
}
/// Variants that compute exact softmax attention (compared cell by cell with the reference).
const std::vector<Variant> kExactVariants = {Variant::Softmax, Variant::Flash};

/// A few masks over [Sq, Sk] for batch size 2, covering every kind and their combination.
std::vector<std::pair<std::string, MaskSpec>> sweptMasks(Index sq, Index sk) {
    std::vector<std::pair<std::string, MaskSpec>> masks;
    masks.push_back({"none", MaskSpec{}});
    MaskSpec causal;
    causal.causal = true;
    masks.push_back({"causal", causal});
    MaskSpec window;
    window.window = 2;
    masks.push_back({"window", window});
    MaskSpec causalWindow;
    causalWindow.causalWindow = 1;
    masks.push_back({"causal-window", causalWindow});
    MaskSpec padding;
    padding.validLen = {sk - 2, 3};
    masks.push_back({"padding", padding});
    MaskSpec custom;
    custom.custom = ref::randomMask(sq, sk, 99, 0.5);
    masks.push_back({"custom", custom});
    MaskSpec combined;
    combined.causal = true;
    combined.validLen = {sk - 1};
    combined.custom = ref::randomMask(sq, sk, 7, 0.7);
    masks.push_back({"causal+padding+custom", combined});
    return masks;
}

/// The d2l example of seed 003: queries of ones [2, 1, 2], keys of ones [2, 10, 2], values
/// arange(40).view(1, 10, 4) repeated for both batch entries, valid lengths 2 and 6.
Qkv seed003Example() {
    Qkv qkv;
    qkv.q = Tensor4(2, 1, 1, 2);
    qkv.k = Tensor4(2, 1, 10, 2);
    qkv.v = Tensor4(2, 1, 10, 4);
    std::fill(qkv.q.data.begin(), qkv.q.data.end(), 1.0f);
    std::fill(qkv.k.data.begin(), qkv.k.data.end(), 1.0f);
    for (Index b = 0; b < 2; ++b)
        for (Index s = 0; s < 10; ++s)
            for (Index d = 0; d < 4; ++d)
                qkv.v(b, 0, s, d) = static_cast<float>(s * 4 + d);
    return qkv;
}

TEST(Attention, Seed003ValidLengthExample) {
    const Qkv qkv = seed003Example();
    for (Variant variant : kExactVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.mask.validLen = {2, 6};
        const Attention a = attend(qkv, spec);
        ASSERT_EQ(a.output.batch, 2);
        ASSERT_EQ(a.output.dim, 4);
        // Batch 0 averages value rows 0 and 1: [2, 3, 4, 5]; batch 1 rows 0..5: [10 .. 13].
        for (Index d = 0; d < 4; ++d) {
            EXPECT_NEAR(a.output(0, 0, 0, d), 2.0f + static_cast<float>(d), 1e-5);
            EXPECT_NEAR(a.output(1, 0, 0, d), 10.0f + static_cast<float>(d), 1e-5);
        }
        for (Index j = 0; j < 10; ++j) {
            EXPECT_NEAR(a.weights(0, 0, 0, j), j < 2 ? 0.5 : 0.0, 1e-6);
            EXPECT_NEAR(a.weights(1, 0, 0, j), j < 6 ? 1.0 / 6.0 : 0.0, 1e-6);
        }
        EXPECT_NEAR(a.scale, 1.0 / std::sqrt(2.0), 1e-12);
    }
}

TEST(Attention, WindowZeroReturnsV) {
    const Index s = 9;
    Qkv qkv{ref::randomTensor(1, 2, s, 5, 1), ref::randomTensor(1, 2, s, 5, 2),
            ref::randomTensor(1, 2, s, 3, 3)};
    for (Variant variant : kSweptVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.mask.window = 0;
        const Attention a = attend(qkv, spec);
        for (Index h = 0; h < 2; ++h)
            EXPECT_MATRIX_NEAR(a.output.head(0, h), qkv.v.head(0, h), toleranceOf(variant))
                << variantName(variant);
    }
}

TEST(Attention, CausalRowZeroReturnsFirstValue) {
    Qkv qkv{ref::randomTensor(2, 1, 6, 4, 4), ref::randomTensor(2, 1, 6, 4, 5),
            ref::randomTensor(2, 1, 6, 4, 6)};
    for (Variant variant : kSweptVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.mask.causal = true;
        const Attention a = attend(qkv, spec);
        for (Index b = 0; b < 2; ++b)
            EXPECT_MATRIX_NEAR(a.output.head(b, 0).row(0), qkv.v.head(b, 0).row(0),
                               toleranceOf(variant))
                << variantName(variant);
    }
}

TEST(Attention, ExactVariantsMatchTheReference) {
    const Index sq = 7, sk = 11;
    Qkv qkv{ref::randomTensor(2, 2, sq, 6, 10), ref::randomTensor(2, 2, sk, 6, 11),
            ref::randomTensor(2, 2, sk, 5, 12)};
    for (const auto& [name, mask] : sweptMasks(sq, sk))
        for (Variant variant : kExactVariants) {
            AttentionSpec spec;
            spec.variant = variant;
            spec.mask = mask;
            spec.qBlock = 3;
            spec.kvBlock = 4;
            spec.wantScores = true;
            const Attention a = attend(qkv, spec);
            for (Index b = 0; b < 2; ++b)
                for (Index h = 0; h < 2; ++h) {
                    const auto r = ref::attention(qkv.q.head(b, h), qkv.k.head(b, h),
                                                  qkv.v.head(b, h), mask, b);
                    SCOPED_TRACE(name + " " + variantName(variant));
                    EXPECT_MATRIX_NEAR(a.output.head(b, h), r.output, 1e-5);
                    EXPECT_MATRIX_NEAR(
                        ConstMatrixMap(a.weights.data.data() + (b * 2 + h) * sq * sk, sq, sk),
                        r.weights, 1e-6);
                    EXPECT_MATRIX_NEAR(
                        ConstMatrixMap(a.scores.data.data() + (b * 2 + h) * sq * sk, sq, sk),
                        r.scores, 1e-5);
                    for (Index i = 0; i < sq; ++i)
                        EXPECT_EQ(a.emptyRows[static_cast<std::size_t>(b * sq + i)],
                                  r.emptyRow[static_cast<std::size_t>(i)]);
                }
        }
}

/// Rows sum to 1 over the allowed keys; masked cells are exactly 0; empty rows are all 0.
TEST(Attention, WeightsAreDistributionsOverAllowedKeysForEveryVariant) {
    const Index sq = 6, sk = 8;
    Qkv qkv{ref::randomTensor(2, 2, sq, 4, 20), ref::randomTensor(2, 2, sk, 4, 21),
            ref::randomTensor(2, 2, sk, 3, 22)};
    for (Variant variant : kSweptVariants)
        for (const auto& [name, mask] : sweptMasks(sq, sk)) {
            SCOPED_TRACE(name + " " + variantName(variant));
            AttentionSpec spec;
            spec.variant = variant;
            spec.mask = mask;
            spec.qBlock = 4;
            spec.kvBlock = 3;
            const Attention a = attend(qkv, spec);
            for (Index b = 0; b < 2; ++b) {
                const ref::MaskD allowed = ref::allowedMask(ref::rulesOf(mask, b), sq, sk);
                for (Index h = 0; h < 2; ++h) {
                    const ConstMatrixMap w(a.weights.data.data() + (b * 2 + h) * sq * sk, sq, sk);
                    for (Index i = 0; i < sq; ++i) {
                        double sum = 0;
                        for (Index j = 0; j < sk; ++j) {
                            if (allowed(i, j)) {
                                EXPECT_GE(w(i, j), 0.0f);
                                sum += w(i, j);
                            } else {
                                EXPECT_EQ(w(i, j), 0.0f) << "masked cell " << i << "," << j;
                            }
                        }
                        const bool empty = !allowed.row(i).any();
                        EXPECT_NEAR(sum, empty ? 0.0 : 1.0, toleranceOf(variant)) << "row " << i;
                        EXPECT_EQ(a.emptyRows[static_cast<std::size_t>(b * sq + i)] != 0, empty);
                        for (Index d = 0; d < a.output.dim; ++d) {
                            EXPECT_TRUE(std::isfinite(a.output(b, h, i, d)));
                            if (empty) {
                                EXPECT_EQ(a.output(b, h, i, d), 0.0f);
                            }
                        }
                    }
                }
            }
        }
}

TEST(Attention, FullyMaskedRowsGiveZerosAndTheFlag) {
    Qkv qkv{ref::randomTensor(2, 1, 4, 3, 30), ref::randomTensor(2, 1, 5, 3, 31),
            ref::randomTensor(2, 1, 5, 2, 32)};
    for (Variant variant : kSweptVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.mask.validLen = {0, 5}; // batch 0: every row empty
        spec.mask.custom = BoolMatrix::Constant(4, 5, true);
        spec.mask.custom->row(2).setConstant(false); // row 2 empty in batch 1 too
        const Attention a = attend(qkv, spec);
        for (Index i = 0; i < 4; ++i) {
            EXPECT_EQ(a.emptyRows[static_cast<std::size_t>(i)], 1) << variantName(variant);
            EXPECT_EQ(a.emptyRows[static_cast<std::size_t>(4 + i)], i == 2 ? 1 : 0);
        }
        EXPECT_TRUE(a.output.head(0, 0).isZero(0));
        EXPECT_TRUE(a.output.head(1, 0).row(2).isZero(0));
        EXPECT_TRUE(ConstMatrixMap(a.weights.data.data(), 4, 5).isZero(0));
        EXPECT_FALSE(a.output.head(1, 0).row(1).isZero(0));
    }
}

TEST(Attention, LogitsNearTenThousandStayFinite) {
    // q = k = 100 in D = 1 with scale 1: every logit is 1e4, so every weight is 1/Sk.
    Qkv qkv{Tensor4(1, 1, 3, 1), Tensor4(1, 1, 5, 1), ref::randomTensor(1, 1, 5, 2, 40)};
    std::fill(qkv.q.data.begin(), qkv.q.data.end(), 100.0f);
    std::fill(qkv.k.data.begin(), qkv.k.data.end(), 100.0f);
    qkv.k(0, 0, 4, 0) = 99.99f; // the last logit ~1 below the others
    for (Variant variant : kExactVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.scale = 1.0;
        const Attention a = attend(qkv, spec);
        const auto r = ref::attention(qkv.q.head(0, 0), qkv.k.head(0, 0), qkv.v.head(0, 0),
                                      MaskSpec{}, 0, 1.0);
        for (float x : a.output.data)
            EXPECT_TRUE(std::isfinite(x));
        // float logits near 1e4 are only resolved to ~1e-3 (their ulp), hence the tolerance.
        EXPECT_MATRIX_NEAR(a.output.head(0, 0), r.output, 1e-3);
        EXPECT_MATRIX_NEAR(ConstMatrixMap(a.weights.data.data(), 3, 5), r.weights, 2e-4);
    }
}

TEST(Attention, GqaWithAsManyKvHeadsIsMultiHead) {
    Qkv qkv{ref::randomTensor(2, 4, 5, 3, 50), ref::randomTensor(2, 4, 6, 3, 51),
            ref::randomTensor(2, 4, 6, 2, 52)};
    AttentionSpec spec;
    spec.mask.causal = true;
    const Attention a = attend(qkv, spec);
    for (Index b = 0; b < 2; ++b)
        for (Index h = 0; h < 4; ++h)
            EXPECT_MATRIX_NEAR(
                a.output.head(b, h),
                ref::attention(qkv.q.head(b, h), qkv.k.head(b, h), qkv.v.head(b, h), spec.mask, b)
                    .output,
                1e-5);
}

TEST(Attention, GqaEqualsMultiHeadOnRepeatInterleavedKv) {
    const Index heads = 8, kvHeads = 2;
    Qkv gqa{ref::randomTensor(2, heads, 5, 4, 60), ref::randomTensor(2, kvHeads, 7, 4, 61),
            ref::randomTensor(2, kvHeads, 7, 3, 62)};
    // torch.repeat_interleave(k, H / Hkv, dim=1): kv head g serves query heads 4g .. 4g+3.
    Qkv mha{gqa.q, Tensor4(2, heads, 7, 4), Tensor4(2, heads, 7, 3)};
    for (Index b = 0; b < 2; ++b)
        for (Index h = 0; h < heads; ++h) {
            mha.k.head(b, h) = gqa.k.head(b, h / (heads / kvHeads));
            mha.v.head(b, h) = gqa.v.head(b, h / (heads / kvHeads));
        }
    for (Variant variant : kSweptVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.mask.window = 2;
        const Attention a = attend(gqa, spec);
        const Attention m = attend(mha, spec);
        EXPECT_MATRIX_NEAR(Eigen::Map<const Eigen::ArrayXf>(a.output.data.data(),
                                                            static_cast<Index>(a.output.size())),
                           Eigen::Map<const Eigen::ArrayXf>(m.output.data.data(),
                                                            static_cast<Index>(m.output.size())),
                           1e-6)
            << variantName(variant);
    }
    // MQA (Hkv = 1) is the reference with the single kv head for every query head.
    Qkv mqa{gqa.q, ref::randomTensor(2, 1, 7, 4, 63), ref::randomTensor(2, 1, 7, 3, 64)};
    const Attention a = attend(mqa, AttentionSpec{});
    for (Index h = 0; h < heads; ++h)
        EXPECT_MATRIX_NEAR(
            a.output.head(1, h),
            ref::attention(mqa.q.head(1, h), mqa.k.head(1, 0), mqa.v.head(1, 0), MaskSpec{}, 1)
                .output,
            1e-5);
}

TEST(Attention, ThreadsDoNotChangeOneByte) {
    Qkv qkv{ref::randomTensor(3, 4, 20, 8, 70), ref::randomTensor(3, 2, 20, 8, 71),
            ref::randomTensor(3, 2, 20, 8, 72)};
    for (Variant variant : kSweptVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.mask.causal = true;
        spec.wantFlashTrace = true;
        spec.threads = 1;
        const Attention one = attend(qkv, spec);
        for (int threads : {0, 3, 16}) {
            spec.threads = threads;
            const Attention many = attend(qkv, spec);
            // Same bytes, not merely close: a figure must not change with the machine's cores.
            EXPECT_EQ(one.output.data, many.output.data) << variantName(variant) << threads;
            EXPECT_EQ(one.weights.data, many.weights.data) << variantName(variant) << threads;
            EXPECT_EQ(one.emptyRows, many.emptyRows);
            if (variant == Variant::Flash) {
                EXPECT_EQ(flashTraceJson(*one.flashTrace), flashTraceJson(*many.flashTrace));
            }
        }
    }
}

TEST(Attention, WeightsAndScoresOnlyWhenAsked) {
    Qkv qkv{ref::randomTensor(1, 2, 4, 3, 80), ref::randomTensor(1, 2, 4, 3, 81),
            ref::randomTensor(1, 2, 4, 3, 82)};
    for (Variant variant : kSweptVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.wantWeights = false;
        const Attention a = attend(qkv, spec);
        EXPECT_TRUE(a.weights.empty());
        EXPECT_TRUE(a.scores.empty());
        EXPECT_FALSE(a.flashTrace.has_value());
        spec.wantWeights = true;
        EXPECT_EQ(attend(qkv, spec).output.data, a.output.data) << variantName(variant);
    }
}

/// attend(qkv, spec, into) reuses into's storage. One result goes through a sequence of calls
/// that differ in shape, variant, mask and what they ask for, its buffers filled with NaN
/// before each: every call must give the bytes a fresh attend() gives, so no call may read a
/// cell a kernel left unwritten, nor keep weights, scores or a trace nobody asked for.
TEST(Attention, AttendIntoAReusedResultMatchesAFreshOne) {
    const Qkv big{ref::randomTensor(2, 4, 37, 8, 90), ref::randomTensor(2, 2, 37, 8, 91),
                  ref::randomTensor(2, 2, 37, 8, 92)};
    const Qkv small{ref::randomTensor(2, 2, 9, 8, 93), ref::randomTensor(2, 1, 9, 8, 94),
                    ref::randomTensor(2, 1, 9, 5, 95)};
    const auto poison = [](Tensor4& t) {
        std::fill(t.data.begin(), t.data.end(), std::numeric_limits<float>::quiet_NaN());
    };
    Attention into;
    int step = 0;
    for (const Qkv* qkv : {&big, &small, &big})
        for (Variant variant : kSweptVariants)
            for (const auto& [name, mask] : sweptMasks(qkv->q.seq, qkv->k.seq)) {
                AttentionSpec spec;
                spec.variant = variant;
                spec.mask = mask;
                spec.wantWeights = step % 2 == 0;
                spec.wantScores = step % 3 == 0;
                spec.wantFlashTrace = variant == Variant::Flash && step % 4 == 1;
                spec.threads = 2;
                ++step;
                poison(into.output);
                poison(into.weights);
                poison(into.scores);
                attend(*qkv, spec, into);
                const Attention fresh = attend(*qkv, spec);
                const std::string label = std::string(variantName(variant)) + " " + name +
                                          " S=" + std::to_string(qkv->q.seq) + " step " +
                                          std::to_string(step);
                EXPECT_TRUE(into.output.sameShape(fresh.output)) << label;
                EXPECT_EQ(into.output.data, fresh.output.data) << label;
                EXPECT_TRUE(into.weights.sameShape(fresh.weights)) << label;
                EXPECT_EQ(into.weights.data, fresh.weights.data) << label;
                EXPECT_TRUE(into.scores.sameShape(fresh.scores)) << label;
                EXPECT_EQ(into.scores.data, fresh.scores.data) << label;
                EXPECT_EQ(into.emptyRows, fresh.emptyRows) << label;
                EXPECT_EQ(into.scale, fresh.scale) << label;
                ASSERT_EQ(into.flashTrace.has_value(), fresh.flashTrace.has_value()) << label;
                if (fresh.flashTrace) {
                    EXPECT_EQ(flashTraceJson(*into.flashTrace), flashTraceJson(*fresh.flashTrace))
                        << label;
                }
            }
}

TEST(Attention, EmptySequencesGiveEmptyOutputs) {
    for (Variant variant : kSweptVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        Qkv none{Tensor4(1, 2, 0, 4), Tensor4(1, 2, 0, 4), Tensor4(1, 2, 0, 3)};
        Attention a = attend(none, spec);
        EXPECT_EQ(a.output.seq, 0);
        EXPECT_TRUE(a.output.empty());
        EXPECT_TRUE(a.emptyRows.empty());
        // Queries but no keys: every row is empty.
        Qkv noKeys{ref::randomTensor(1, 2, 3, 4, 90), Tensor4(1, 2, 0, 4), Tensor4(1, 2, 0, 3)};
        a = attend(noKeys, spec);
        EXPECT_EQ(a.output.seq, 3);
        for (float x : a.output.data)
            EXPECT_EQ(x, 0.0f) << variantName(variant);
        EXPECT_EQ(a.emptyRows, std::vector<unsigned char>(3, 1));
    }
}

TEST(Attention, ScaleReplacesTheDefault) {
    Qkv qkv{ref::randomTensor(1, 1, 4, 3, 100), ref::randomTensor(1, 1, 6, 3, 101),
            ref::randomTensor(1, 1, 6, 2, 102)};
    for (Variant variant : kExactVariants) {
        AttentionSpec spec;
        spec.variant = variant;
        spec.scale = 2.5;
        const Attention a = attend(qkv, spec);
        EXPECT_EQ(a.scale, 2.5);
        EXPECT_MATRIX_NEAR(
            a.output.head(0, 0),
            ref::attention(qkv.q.head(0, 0), qkv.k.head(0, 0), qkv.v.head(0, 0), MaskSpec{}, 0, 2.5)
                .output,
            1e-5);
    }
}

TEST(Attention, ValidateNamesTheProblem) {
    const Qkv good{ref::randomTensor(2, 4, 5, 3, 1), ref::randomTensor(2, 2, 6, 3, 2),
                   ref::randomTensor(2, 2, 6, 2, 3)};
    EXPECT_FALSE(validate(good, AttentionSpec{}).has_value());

    auto problem = [&](Qkv qkv, AttentionSpec spec) {
        auto message = validate(qkv, spec);
        EXPECT_THROW(attend(qkv, spec), InvalidArgument);
        return message.value_or(Error{}).message;
    };
    Qkv threeKv = good;
    threeKv.k = ref::randomTensor(2, 3, 6, 3, 4);
    threeKv.v = ref::randomTensor(2, 3, 6, 2, 5);
    EXPECT_NE(problem(threeKv, {}).find("multiple"), std::string::npos);
    Qkv badDim = good;
    badDim.k = ref::randomTensor(2, 2, 6, 4, 6);
    EXPECT_NE(problem(badDim, {}).find("D"), std::string::npos);
    Qkv badSeq = good;
    badSeq.v = ref::randomTensor(2, 2, 7, 2, 7);
    EXPECT_NE(problem(badSeq, {}).find("sequence"), std::string::npos);
    Qkv badBatch = good;
    badBatch.q = ref::randomTensor(1, 4, 5, 3, 8);
    EXPECT_NE(problem(badBatch, {}).find("batch"), std::string::npos);

    AttentionSpec window;
    window.mask.window = -3;
    EXPECT_NE(problem(good, window).find("window"), std::string::npos);
    AttentionSpec block;
    block.variant = Variant::Flash;
    block.kvBlock = 0;
    EXPECT_NE(problem(good, block).find("block"), std::string::npos);
    AttentionSpec custom;
    custom.mask.custom = BoolMatrix::Constant(5, 5, true);
    EXPECT_NE(problem(good, custom).find("custom"), std::string::npos);
    AttentionSpec lengths;
    lengths.mask.validLen = {1, 2, 3};
    EXPECT_NE(problem(good, lengths).find("valid length"), std::string::npos);
}

TEST(Attention, VariantNamesRoundTrip) {
    for (Variant v : {Variant::Softmax, Variant::Flash, Variant::Linear, Variant::Additive})
        EXPECT_EQ(parseVariant(variantName(v)), v);
    EXPECT_FALSE(parseVariant("Softmax").has_value());
    EXPECT_FALSE(parseVariant("").has_value());
}

} // namespace
} // namespace attnlab

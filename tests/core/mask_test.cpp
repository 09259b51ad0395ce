// Masks: keyRange / allowed / denseMask / allowedCount against the cell-by-cell rules of
// docs/architecture.md (tests/support/reference.h), validation messages and the CLI parser.

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention/mask.h"
#include "reference.h"

namespace attnlab {
namespace {

std::vector<MaskSpec> everyMaskKind(Index sq, Index sk) {
    std::vector<MaskSpec> masks;
    for (int causal = 0; causal < 2; ++causal)
        for (Index window : {Index(-1), Index(0), Index(2)})
            for (Index causalWindow : {Index(-1), Index(0), Index(3)})
                for (int padding = 0; padding < 3; ++padding)
                    for (int custom = 0; custom < 2; ++custom) {
                        MaskSpec m;
                        m.causal = causal != 0;
                        m.window = window;
                        m.causalWindow = causalWindow;
                        if (padding == 1) m.validLen = {sk / 2};
                        if (padding == 2) m.validLen = {0, sk + 3};
                        if (custom) m.custom = ref::randomMask(sq, sk, 17, 0.6);
                        masks.push_back(m);
                    }
    return masks;
}

TEST(Mask, AgreesWithTheRulesCellByCell) {
    for (const auto& [sq, sk] :
         {std::pair<Index, Index>{6, 6}, {3, 8}, {8, 3}, {1, 5}, {5, 1}, {0, 4}, {4, 0}}) {
        for (const MaskSpec& mask : everyMaskKind(sq, sk))
            for (Index b = 0; b < 2; ++b) {
                const ref::MaskD expected = ref::allowedMask(ref::rulesOf(mask, b), sq, sk);
                const BoolMatrix dense = denseMask(mask, b, sq, sk);
                ASSERT_EQ(dense.rows(), sq);
                ASSERT_EQ(dense.cols(), sk);
                for (Index i = 0; i < sq; ++i) {
                    const KeyRange range = keyRange(mask, b, i, sq, sk);
                    EXPECT_GE(range.begin, 0);
                    EXPECT_LE(range.end, sk);
                    for (Index j = 0; j < sk; ++j) {
                        EXPECT_EQ(dense(i, j), expected(i, j)) << i << "," << j;
                        EXPECT_EQ(allowed(mask, b, i, j, sq, sk), expected(i, j));
                        // The interval part alone is a contiguous superset of the allowed cells.
                        if (expected(i, j)) {
                            EXPECT_GE(j, range.begin);
                            EXPECT_LT(j, range.end);
                        }
                    }
                    EXPECT_EQ(allowedCount(mask, b, i, sq, sk), expected.row(i).count());
                    if (!mask.custom) {
                        EXPECT_EQ(range.size(), expected.row(i).count());
                    }
                }
            }
    }
}

TEST(Mask, BottomRightAlignment) {
    // Two new queries against five keys sit at positions 3 and 4.
    MaskSpec causal;
    causal.causal = true;
    EXPECT_EQ(keyRange(causal, 0, 0, 2, 5).end, 4);
    EXPECT_EQ(keyRange(causal, 0, 1, 2, 5).end, 5);
    MaskSpec window;
    window.window = 1;
    const KeyRange r = keyRange(window, 0, 0, 2, 5);
    EXPECT_EQ(r.begin, 2);
    EXPECT_EQ(r.end, 5);
}

TEST(Mask, HugeWindowsReachEveryKeyInsteadOfWrappingAround) {
    // --window 9223372036854775807 used to overflow p + window + 1 and mask every key.
    constexpr Index kHuge = std::numeric_limits<Index>::max();
    for (const auto& [sq, sk] : {std::pair<Index, Index>{4, 4}, {2, 5}, {5, 2}}) {
        MaskSpec window;
        window.window = kHuge;
        EXPECT_TRUE(denseMask(window, 0, sq, sk).all()) << sq << " x " << sk;
        MaskSpec causal;
        causal.causal = true;
        MaskSpec causalWindow;
        causalWindow.causalWindow = kHuge;
        EXPECT_EQ(denseMask(causalWindow, 0, sq, sk), denseMask(causal, 0, sq, sk));
        for (Index i = 0; i < sq; ++i)
            EXPECT_EQ(allowedCount(window, 0, i, sq, sk), sk);
    }
    MaskSpec both;
    both.window = kHuge;
    both.causalWindow = kHuge - 1;
    both.causal = true;
    const KeyRange r = keyRange(both, 0, 2, 3, 3);
    EXPECT_EQ(r.begin, 0);
    EXPECT_EQ(r.end, 3);
}

TEST(Mask, NoneMeansEverything) {
    MaskSpec m;
    EXPECT_TRUE(m.none());
    EXPECT_TRUE(denseMask(m, 0, 3, 4).all());
    m.window = 0;
    EXPECT_FALSE(m.none());
}

TEST(Mask, ValidateNamesTheProblem) {
    MaskSpec m;
    EXPECT_FALSE(validateMask(m, 2, 3, 4).has_value());
    m.window = -2;
    EXPECT_NE(validateMask(m, 2, 3, 4).value_or(Error{}).message.find("window"), std::string::npos);
    m = {};
    m.causalWindow = -5;
    EXPECT_NE(validateMask(m, 2, 3, 4).value_or(Error{}).message.find("causal window"),
              std::string::npos);
    m = {};
    m.validLen = {1, 2, 3};
    EXPECT_NE(validateMask(m, 2, 3, 4).value_or(Error{}).message.find("valid length"),
              std::string::npos);
    m.validLen = {-1};
    EXPECT_TRUE(validateMask(m, 2, 3, 4).has_value());
    m = {};
    m.custom = BoolMatrix::Constant(4, 3, true);
    EXPECT_NE(validateMask(m, 2, 3, 4).value_or(Error{}).message.find("custom"), std::string::npos);
}

TEST(Mask, ParsesTheCliForm) {
    MaskSpec m;
    bool padding = false, window = false, causalWindow = false;
    EXPECT_FALSE(parseMaskKinds("causal,padding", m, padding, window, causalWindow));
    EXPECT_TRUE(m.causal);
    EXPECT_TRUE(padding);
    EXPECT_FALSE(window);
    MaskSpec n;
    EXPECT_FALSE(parseMaskKinds("none", n, padding, window, causalWindow));
    EXPECT_TRUE(n.none());
    EXPECT_FALSE(padding);
    EXPECT_FALSE(parseMaskKinds("window,causal-window", n, padding, window, causalWindow));
    EXPECT_TRUE(window);
    EXPECT_TRUE(causalWindow);
    const auto error = parseMaskKinds("causal,diagonal", n, padding, window, causalWindow);
    ASSERT_TRUE(error.has_value());
    EXPECT_NE(error->message.find("diagonal"), std::string::npos);
    EXPECT_TRUE(parseMaskKinds("", n, padding, window, causalWindow).has_value());
}

} // namespace
} // namespace attnlab

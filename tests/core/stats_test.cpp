// Head statistics on hand-made weight matrices whose answers are worked out by hand.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "attnlab/attention/mask.h"
#include "attnlab/lab/stats.h"

namespace attnlab {
namespace {

HeadStats statsOf(const Matrix& w, const MaskSpec& mask = {}, Index bins = 20) {
    return headStats(ConstMatrixMap(w.data(), w.rows(), w.cols()), mask, 0, bins);
}

TEST(Stats, UniformRowHasEntropyLogN) {
    const Matrix w = Matrix::Constant(3, 4, 0.25f);
    const HeadStats s = statsOf(w);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_NEAR(s.entropy[i], std::log(4.0), 1e-6);
        EXPECT_NEAR(s.normalizedEntropy[i], 1.0, 1e-6);
        EXPECT_EQ(s.allowed[i], 4);
        EXPECT_EQ(s.emptyRow[i], 0);
    }
    EXPECT_NEAR(s.meanEntropy, std::log(4.0), 1e-6);
}

TEST(Stats, OneHotRowHasZeroEntropy) {
    Matrix w = Matrix::Zero(2, 5);
    w(0, 3) = 1;
    w(1, 0) = 1;
    const HeadStats s = statsOf(w);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(s.entropy[i], 0.0); // 0 log 0 = 0, no NaN
        EXPECT_EQ(s.normalizedEntropy[i], 0.0);
    }
}

TEST(Stats, NormalisedByAllowedKeysUnderMask) {
    // Causal 3x3: row i allows i + 1 keys, uniform over them -> normalised entropy 1.
    Matrix w(3, 3);
    w << 1, 0, 0, 0.5f, 0.5f, 0, 1 / 3.f, 1 / 3.f, 1 / 3.f;
    MaskSpec causal;
    causal.causal = true;
    const HeadStats s = statsOf(w, causal);
    EXPECT_EQ(s.allowed, (std::vector<Index>{1, 2, 3}));
    EXPECT_EQ(s.normalizedEntropy[0], 0.0); // one allowed key: defined as 0
    EXPECT_NEAR(s.normalizedEntropy[1], 1.0, 1e-6);
    EXPECT_NEAR(s.normalizedEntropy[2], 1.0, 1e-6);
    EXPECT_NEAR(s.entropy[2], std::log(3.0), 1e-6);
    EXPECT_NEAR(s.meanEntropy, (0 + std::log(2.0) + std::log(3.0)) / 3, 1e-6);
}

TEST(Stats, DiagonalOffDiagonalMostAttendedDistanceFirstToken) {
    Matrix w(3, 3);
    w << 0.5f, 0.25f, 0.25f, //
        0.1f, 0.8f, 0.1f,    //
        0.3f, 0.3f, 0.4f;
    const HeadStats s = statsOf(w);
    EXPECT_NEAR(s.diagonalMean, (0.5 + 0.8 + 0.4) / 3, 1e-6);
    // The six off-diagonal cells sum to 3 - 1.7 = 1.3. Seed 002 would print 1.3 / 9.
    EXPECT_NEAR(s.offDiagonalMean, 1.3 / 6, 1e-6);
    // np.argmax over j != i, the first of ties.
    EXPECT_EQ(s.mostAttended, (std::vector<Index>{1, 0, 0}));
    EXPECT_NEAR(s.mostAttendedWeight[0], 0.25, 1e-6);
    EXPECT_NEAR(s.mostAttendedWeight[1], 0.1, 1e-6);
    EXPECT_NEAR(s.mostAttendedWeight[2], 0.3, 1e-6);
    // sum_j w_ij |i - j|
    EXPECT_NEAR(s.meanDistance[0], 0.25 * 1 + 0.25 * 2, 1e-6);
    EXPECT_NEAR(s.meanDistance[1], 0.1 + 0.1, 1e-6);
    EXPECT_NEAR(s.meanDistance[2], 0.3 * 2 + 0.3 * 1, 1e-6);
    EXPECT_NEAR(s.firstTokenWeight[0], 0.5, 1e-6);
    EXPECT_NEAR(s.firstTokenWeight[1], 0.1, 1e-6);
    EXPECT_NEAR(s.firstTokenWeight[2], 0.3, 1e-6);
}

TEST(Stats, BottomRightDiagonalWhenSqDiffersFromSk) {
    // Sq = 2, Sk = 4: query i sits at p = i + 2.
    Matrix w(2, 4);
    w << 0.1f, 0.2f, 0.6f, 0.1f, //
        0.0f, 0.5f, 0.1f, 0.4f;
    const HeadStats s = statsOf(w);
    EXPECT_NEAR(s.diagonalMean, (0.6 + 0.4) / 2, 1e-6);
    EXPECT_NEAR(s.offDiagonalMean, (2.0 - 1.0) / 6, 1e-6);
    EXPECT_EQ(s.mostAttended, (std::vector<Index>{1, 1}));
    EXPECT_NEAR(s.meanDistance[0], 0.1 * 2 + 0.2 * 1 + 0.1 * 1, 1e-6);

    // Sq = 3, Sk = 2: row 0 sits at p = -1, so it has no diagonal cell.
    Matrix tall(3, 2);
    tall << 0.5f, 0.5f, 0.9f, 0.1f, 0.2f, 0.8f;
    const HeadStats t = statsOf(tall);
    EXPECT_NEAR(t.diagonalMean, (0.9 + 0.8) / 2, 1e-6);
    EXPECT_NEAR(t.offDiagonalMean, (3.0 - 1.7) / 4, 1e-6);
    EXPECT_EQ(t.mostAttended[0], 0); // no j equals p = -1: plain argmax
}

TEST(Stats, MaskedCellsAreNotCandidatesAndEmptyRowsAreFlagged) {
    Matrix w(3, 3);
    w << 1, 0, 0, 0.7f, 0.3f, 0, 0, 0, 0;
    MaskSpec mask;
    mask.causal = true;
    mask.custom = BoolMatrix::Constant(3, 3, true);
    (*mask.custom)(2, 0) = (*mask.custom)(2, 1) = (*mask.custom)(2, 2) = false;
    const HeadStats s = statsOf(w, mask);
    EXPECT_EQ(s.mostAttended[0], -1); // only key 0 = its own position is allowed
    EXPECT_EQ(s.mostAttendedWeight[0], 0.0);
    EXPECT_EQ(s.mostAttended[1], 0);
    EXPECT_EQ(s.emptyRow, (std::vector<unsigned char>{0, 0, 1}));
    EXPECT_EQ(s.allowed[2], 0);
    EXPECT_EQ(s.mostAttended[2], -1);
    EXPECT_NEAR(s.meanEntropy, (0 + (-0.7 * std::log(0.7) - 0.3 * std::log(0.3))) / 2, 1e-6);
    // Histogram counts allowed cells only: 1 + 2 = 3 cells.
    Index total = 0;
    for (Index c : s.histogram)
        total += c;
    EXPECT_EQ(total, 3);
}

TEST(Stats, HistogramBins) {
    Matrix w(1, 6);
    w << 0.0f, 0.05f, 0.25f, 0.5f, 0.74f, 1.0f;
    const HeadStats s = statsOf(w, {}, 4);
    // [0, .25): 0, .05   [.25, .5): .25   [.5, .75): .5, .74   [.75, 1]: 1.0
    EXPECT_EQ(s.histogram, (std::vector<Index>{2, 1, 2, 1}));
    const HeadStats one = statsOf(w, {}, 1);
    EXPECT_EQ(one.histogram, (std::vector<Index>{6}));
    EXPECT_THROW(statsOf(w, {}, 0), InvalidArgument);
}

TEST(Stats, NaNWeightsFallInNoHistogramBin) {
    // A NaN weight used to be cast to an integer (undefined behaviour; UBSan stops here).
    Matrix w(1, 4);
    w << 0.1f, std::numeric_limits<float>::quiet_NaN(), 0.6f,
        std::numeric_limits<float>::quiet_NaN();
    const HeadStats s = statsOf(w, {}, 2);
    EXPECT_EQ(s.histogram, (std::vector<Index>{1, 1})); // the two finite weights only
    EXPECT_EQ(s.allowed[0], 4);
}

TEST(Stats, EmptyMatrix) {
    const Matrix w(0, 0);
    const HeadStats s = statsOf(w);
    EXPECT_TRUE(s.entropy.empty());
    EXPECT_EQ(s.meanEntropy, 0.0);
    EXPECT_EQ(s.diagonalMean, 0.0);
    EXPECT_EQ(s.offDiagonalMean, 0.0);
}

// Every statistic against its definition read cell by cell off denseMask (entropy with
// std::log in double), on random rows with zeros, negatives, values above 1 and NaNs, under
// every kind of mask: the row loop's shortcuts (intervals, lanes, a vector argmax) change
// nothing but the last bits of a sum. The last trials are long rows of a long text's kind:
// small weights, mostly in the first bin, with a few large ones and ties among them (the
// passes over chunks of the row that skip what holds nothing to count).
TEST(Stats, EqualTheirCellByCellDefinitionUnderEveryMask) {
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (int trial = 0; trial < 180; ++trial) {
        const bool longRows = trial >= 120;
        const Index sq = 1 + static_cast<Index>(gen() % (longRows ? 200 : 40));
        const Index sk = sq + (trial % 3 == 0 ? static_cast<Index>(gen() % 9) : 0);
        Matrix w(sq, sk);
        for (Index i = 0; i < sq; ++i)
            for (Index j = 0; j < sk; ++j) {
                const unsigned kind = gen() % (longRows ? 200 : 20);
                float x = unit(gen);
                if (longRows) x /= static_cast<float>(sk);
                if (kind == 0) x = 0;
                if (kind == 1) x = -x;
                if (kind == 2) x = 1.5f;
                if (kind == 3 && trial % 5 == 0) x = std::numeric_limits<float>::quiet_NaN();
                if (longRows && (kind == 4 || kind == 5)) x = 0.75f; // ties for the argmax
                w(i, j) = x;
            }
        MaskSpec mask;
        switch (trial % 6) {
        case 1: mask.causal = true; break;
        case 2: mask.window = static_cast<Index>(gen() % 5); break;
        case 3: mask.causalWindow = static_cast<Index>(gen() % 5); break;
        case 4: mask.validLen = {static_cast<Index>(gen() % (sk + 1))}; break;
        case 5: {
            BoolMatrix custom(sq, sk);
            for (Index i = 0; i < sq; ++i)
                for (Index j = 0; j < sk; ++j)
                    custom(i, j) = gen() % 3 != 0;
            mask.custom = custom;
            mask.causal = gen() % 2 == 0;
            break;
        }
        default: break;
        }
        const Index bins = 1 + static_cast<Index>(gen() % 12);
        const HeadStats s = statsOf(w, mask, bins);
        const BoolMatrix allowed = denseMask(mask, 0, sq, sk);
        std::vector<Index> histogram(static_cast<std::size_t>(bins), 0);
        for (Index i = 0; i < sq; ++i) {
            const auto r = static_cast<std::size_t>(i);
            const Index p = i + sk - sq;
            double entropy = 0, distance = 0, rowSum = 0, bestWeight = 0;
            Index count = 0, best = -1;
            for (Index j = 0; j < sk; ++j) {
                const double x = w(i, j);
                rowSum += x;
                if (!allowed(i, j)) continue;
                ++count;
                if (x > 0) entropy -= x * std::log(x);
                distance += x * std::abs(static_cast<double>(p - j));
                if (j != p && (best < 0 || x > bestWeight)) {
                    best = j;
                    bestWeight = x;
                }
                if (!std::isnan(x))
                    ++histogram[static_cast<std::size_t>(
                        std::min<Index>(bins - 1, static_cast<Index>(std::clamp(x, 0.0, 1.0) * bins)))];
            }
            const auto near = [](double a, double b) {
                return (std::isnan(a) && std::isnan(b)) || std::abs(a - b) <= 1e-6 * (1 + std::abs(b));
            };
            EXPECT_TRUE(near(s.entropy[r], entropy)) << trial << " row " << i;
            EXPECT_TRUE(near(s.meanDistance[r], distance)) << trial << " row " << i;
            EXPECT_TRUE(near(s.rowSum[r], rowSum)) << trial << " row " << i;
            EXPECT_EQ(s.allowed[r], count) << trial << " row " << i;
            EXPECT_EQ(s.mostAttended[r], best) << trial << " row " << i;
            if (best >= 0) {
                EXPECT_TRUE(near(s.mostAttendedWeight[r], bestWeight)) << trial;
            }
        }
        EXPECT_EQ(s.histogram, histogram) << trial;
    }
}

} // namespace
} // namespace attnlab

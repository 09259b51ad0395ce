// explainCell: one cell's computation against a softmax written out here in double from the
// experiment's own Q and K (the inputs, not the run's scores or weights), under a causal and a
// window mask, a temperature and GQA; a dump with no Q/K explains only its weight.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "attnlab/io/dump.h"
#include "attnlab/lab/dump_experiment.h"
#include "attnlab/lab/cell.h"

namespace attnlab {
namespace {

Session causalGqaSession() {
    Session session;
    session.text = "the cat sat on the mat and slept";
    session.dModel = 16;
    session.heads = 4;
    session.kvHeads = 2;
    session.seed = 11;
    session.temperature = 2.0;
    session.mask.causal = true;
    session.mask.window = 3;
    return session;
}

TEST(ExplainCell, EveryCellIsTheSoftmaxOfItsRowWrittenOut) {
    const Experiment ex = run(causalGqaSession());
    const Index sq = ex.sq(), sk = ex.sk();
    const double scale = 1.0 / std::sqrt(4.0) / 2.0; // d_head = 16 / 4, temperature 2
    for (Index h = 0; h < 4; ++h) {
        const Index kvHead = h / 2; // 4 query heads over 2 kv heads
        for (Index i = 0; i < sq; ++i) {
            // Allowed keys: causal (j <= i) and within the window (i - j <= 3).
            std::vector<double> s(static_cast<std::size_t>(sk));
            double m = -std::numeric_limits<double>::infinity();
            for (Index j = 0; j < sk; ++j) {
                double dot = 0;
                for (Index d = 0; d < ex.qkv.q.dim; ++d)
                    dot += double(ex.qkv.q(0, h, i, d)) * double(ex.qkv.k(0, kvHead, j, d));
                s[static_cast<std::size_t>(j)] = dot * scale;
                if (j <= i && i - j <= 3) m = std::max(m, dot * scale);
            }
            double sum = 0;
            for (Index j = 0; j <= i; ++j)
                if (i - j <= 3) sum += std::exp(s[static_cast<std::size_t>(j)] - m);
            for (Index j = 0; j < sk; ++j) {
                const auto cell = explainCell(ex, h, i, j);
                ASSERT_TRUE(cell);
                ASSERT_TRUE(cell->hasScores);
                EXPECT_EQ(cell->kvHead, kvHead);
                EXPECT_NEAR(cell->scaled, s[static_cast<std::size_t>(j)], 1e-5);
                EXPECT_NEAR(cell->dot, s[static_cast<std::size_t>(j)] / scale, 1e-4);
                const bool masked = j > i || i - j > 3;
                EXPECT_EQ(cell->masked, masked) << i << ", " << j;
                if (masked) continue;
                EXPECT_NEAR(cell->rowMax, m, 1e-5);
                EXPECT_NEAR(cell->rowSum, sum, 1e-5);
                const double expected = std::exp(s[static_cast<std::size_t>(j)] - m) / sum;
                EXPECT_NEAR(cell->weight, expected, 1e-6);
                EXPECT_NEAR(cell->storedWeight, expected, 1e-6);
            }
        }
    }
}

TEST(ExplainCell, AnyRowsScaledScoresAreTheirDotProductsWrittenOut) {
    Experiment ex = run(causalGqaSession());
    const double scale = 1.0 / std::sqrt(4.0) / 2.0;
    const Index h = 3, kvHead = 1, first = 2, count = 3;
    // The stored scores' rows, and the same rows rebuilt from Q and K, capped or not.
    const MatrixD stored = ex.scaledScores(h, first, count);
    Experiment rebuilt = ex;
    rebuilt.attention.scores = Tensor4();
    Experiment capped = rebuilt;
    capped.softcap = 0.5;
    const MatrixD plain = rebuilt.scaledScores(h, first, count);
    const MatrixD soft = capped.scaledScores(h, first, count);
    ASSERT_EQ(stored.rows(), count);
    ASSERT_EQ(plain.rows(), count);
    ASSERT_EQ(soft.rows(), count);
    ASSERT_EQ(plain.cols(), ex.sk());
    for (Index r = 0; r < count; ++r)
        for (Index j = 0; j < ex.sk(); ++j) {
            double dot = 0;
            for (Index d = 0; d < ex.qkv.q.dim; ++d)
                dot += double(ex.qkv.q(0, h, first + r, d)) * double(ex.qkv.k(0, kvHead, j, d));
            EXPECT_NEAR(stored(r, j), dot * scale, 1e-5);
            EXPECT_NEAR(plain(r, j), dot * scale, 1e-12);
            EXPECT_NEAR(soft(r, j), 0.5 * std::tanh(dot * scale / 0.5), 1e-12);
            EXPECT_NEAR(rebuilt.rawScores(h, first, count)(r, j), dot, 1e-12);
        }
    // Past the last query: the rows that are there; a head that is not: nothing.
    EXPECT_EQ(rebuilt.scaledScores(h, ex.sq() - 1, 5).rows(), 1);
    EXPECT_EQ(rebuilt.scaledScores(4).size(), 0);
}

TEST(ExplainCell, OutsideTheMapIsNothing) {
    const Experiment ex = run(causalGqaSession());
    EXPECT_FALSE(explainCell(ex, 0, ex.sq(), 0));
    EXPECT_FALSE(explainCell(ex, 0, 0, -1));
    EXPECT_FALSE(explainCell(Experiment{}, 0, 0, 0));
}

TEST(ExplainCell, ADumpExplainsOnlyItsWeight) {
    AttentionDump dump;
    dump.batch = dump.layers = dump.heads = 1;
    dump.sq = dump.sk = 2;
    dump.weights = {1.0f, 0.0f, 0.25f, 0.75f};
    const Experiment ex = dumpExperiment(dump, 0, 0);
    const auto cell = explainCell(ex, 0, 1, 1);
    ASSERT_TRUE(cell);
    EXPECT_FALSE(cell->hasScores);
    EXPECT_EQ(cell->storedWeight, 0.75);
}

} // namespace
} // namespace attnlab

// Tokenizers, deterministic embeddings, sinusoidal positions and seeded projections.

#include <gtest/gtest.h>

#include <cmath>

#include "attnlab/lab/embedding.h"
#include "reference.h"

namespace attnlab {
namespace {

using Tokens = std::vector<std::string>;

TEST(Tokenize, WhitespaceSplitsOnRunsOfSpace) {
    EXPECT_EQ(tokenize("  the cat\tsat\n on  ", Tokenizer::Whitespace),
              (Tokens{"the", "cat", "sat", "on"}));
    EXPECT_TRUE(tokenize("", Tokenizer::Whitespace).empty());
    EXPECT_TRUE(tokenize(" \t\n", Tokenizer::Whitespace).empty());
    EXPECT_EQ(tokenize("猫 坐", Tokenizer::Whitespace), (Tokens{"猫", "坐"}));
}

TEST(Tokenize, CharacterIsOneTokenPerCodePointWithoutSpaces) {
    EXPECT_EQ(tokenize("ab c", Tokenizer::Character), (Tokens{"a", "b", "c"}));
    // 2-, 3- and 4-byte UTF-8 sequences stay whole.
    EXPECT_EQ(tokenize("é猫 😀", Tokenizer::Character), (Tokens{"é", "猫", "😀"}));
    EXPECT_TRUE(tokenize("   ", Tokenizer::Character).empty());
    // A stray continuation byte is kept as a token of its own, not dropped or merged.
    EXPECT_EQ(tokenize("a\x80z", Tokenizer::Character), (Tokens{"a", "\x80", "z"}));
}

TEST(Tokenize, NamesRoundTrip) {
    for (Tokenizer t : {Tokenizer::Whitespace, Tokenizer::Character})
        EXPECT_EQ(parseTokenizer(tokenizerName(t)), t);
    EXPECT_FALSE(parseTokenizer("bpe"));
}

TEST(Embedding, SameTokenSameRowAcrossSentences) {
    const Matrix a = embedTokens({"the", "cat", "sat", "on", "the", "mat"}, 16, 7);
    const Matrix b = embedTokens({"a", "mat", "the"}, 16, 7);
    EXPECT_MATRIX_NEAR(a.row(0), a.row(4), 0.0);
    EXPECT_MATRIX_NEAR(a.row(5), b.row(1), 0.0);
    EXPECT_MATRIX_NEAR(a.row(0), b.row(2), 0.0);
    EXPECT_GT((a.row(0) - a.row(1)).norm(), 0.1f);
}

TEST(Embedding, SeedsGiveDifferentRows) {
    const Matrix a = embedTokens({"cat"}, 32, 0);
    const Matrix b = embedTokens({"cat"}, 32, 1);
    EXPECT_GT((a - b).norm(), 1.0f);
    EXPECT_MATRIX_NEAR(a, embedTokens({"cat"}, 32, 0), 0.0);
}

TEST(Embedding, PrefixOfWiderEmbedding) {
    // Entry c depends on (token, seed, c) only, so a narrower embedding is a prefix.
    const Matrix wide = embedTokens({"x", "y"}, 9, 3);
    const Matrix narrow = embedTokens({"x", "y"}, 4, 3);
    EXPECT_MATRIX_NEAR(wide.leftCols(4), narrow, 0.0);
}

TEST(Embedding, EntriesAreStandardNormal) {
    Tokens tokens;
    for (int i = 0; i < 400; ++i)
        tokens.push_back("tok" + std::to_string(i));
    const Matrix x = embedTokens(tokens, 64, 42);
    const Eigen::ArrayXd values =
        Eigen::Map<const Eigen::ArrayXf>(x.data(), x.size()).cast<double>();
    const double mean = values.mean();
    const double var = (values - mean).square().mean();
    // 25600 samples: the standard error of the mean is ~0.006, of the variance ~0.009.
    EXPECT_NEAR(mean, 0.0, 0.03);
    EXPECT_NEAR(var, 1.0, 0.05);
    const double within1 = (values.abs() < 1.0).cast<double>().mean();
    EXPECT_NEAR(within1, 0.6827, 0.015);
}

TEST(Embedding, EmptyAndZeroWidth) {
    EXPECT_EQ(embedTokens({}, 8, 0).rows(), 0);
    EXPECT_EQ(embedTokens({"a"}, 0, 0).cols(), 0);
    EXPECT_THROW(embedTokens({"a"}, -1, 0), InvalidArgument);
}

TEST(Sinusoidal, MatchesVaswaniFormula) {
    const Index d = 6;
    const Matrix pe = sinusoidalEncoding(5, d);
    for (Index p = 0; p < 5; ++p)
        for (Index i = 0; 2 * i < d; ++i) {
            const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * i / d);
            EXPECT_NEAR(pe(p, 2 * i), std::sin(angle), 1e-6);
            EXPECT_NEAR(pe(p, 2 * i + 1), std::cos(angle), 1e-6);
        }
    EXPECT_NEAR(pe(1, 0), std::sin(1.0), 1e-6);
    EXPECT_NEAR(pe(3, 1), std::cos(3.0), 1e-6);
}

TEST(Sinusoidal, OddDimensionAndOffset) {
    const Matrix odd = sinusoidalEncoding(4, 5);
    EXPECT_NEAR(odd(2, 4), std::sin(2.0 / std::pow(10000.0, 4.0 / 5.0)), 1e-6);
    const Matrix full = sinusoidalEncoding(7, 8);
    EXPECT_MATRIX_NEAR(sinusoidalEncoding(3, 8, 4), full.middleRows(4, 3), 1e-6);
}

TEST(SeededMatrix, ReproducibleBoundedXavier) {
    const Matrix a = seededMatrix(40, 60, 5, 1);
    EXPECT_MATRIX_NEAR(a, seededMatrix(40, 60, 5, 1), 0.0);
    EXPECT_GT((a - seededMatrix(40, 60, 5, 2)).norm(), 1.0f);
    EXPECT_GT((a - seededMatrix(40, 60, 6, 1)).norm(), 1.0f);
    const double limit = std::sqrt(6.0 / 100.0);
    EXPECT_LE(a.cwiseAbs().maxCoeff(), limit);
    // Uniform on [-l, l]: mean 0, variance l^2 / 3 (2400 samples).
    const Eigen::ArrayXd values =
        Eigen::Map<const Eigen::ArrayXf>(a.data(), a.size()).cast<double>();
    EXPECT_NEAR(values.mean(), 0.0, 0.02);
    EXPECT_NEAR((values - values.mean()).square().mean(), limit * limit / 3.0, 0.004);
}

TEST(Projections, ShapesWithGqa) {
    const Projections p = makeProjections(32, 8, 2, 9);
    EXPECT_EQ(p.wq.rows(), 32);
    EXPECT_EQ(p.wq.cols(), 32);
    EXPECT_EQ(p.wk.cols(), 8); // 2 kv heads x dh 4
    EXPECT_EQ(p.wv.cols(), 8);
    EXPECT_EQ(p.wo.rows(), 32);
    EXPECT_EQ(p.wo.cols(), 32);
    EXPECT_GT((p.wq - p.wo).norm(), 0.1f);
    EXPECT_THROW(makeProjections(30, 4, 1, 0), InvalidArgument);
    EXPECT_THROW(makeProjections(32, 8, 3, 0), InvalidArgument);
}

TEST(Heads, SplitTakesColumnBlocksAndMergeInverts) {
    Matrix x(3, 6);
    for (Index i = 0; i < x.size(); ++i)
        x.data()[i] = static_cast<Scalar>(i);
    const Tensor4 t = splitHeads(x, 3);
    EXPECT_EQ(t.batch, 1);
    EXPECT_EQ(t.heads, 3);
    EXPECT_EQ(t.seq, 3);
    EXPECT_EQ(t.dim, 2);
    // Head h holds columns [2h, 2h + 2), as PyTorch's view(B, S, H, dh).transpose(1, 2).
    EXPECT_EQ(t(0, 1, 2, 0), x(2, 2));
    EXPECT_EQ(t(0, 2, 0, 1), x(0, 5));
    EXPECT_MATRIX_NEAR(mergeHeads(t), x, 0.0);
    EXPECT_THROW(splitHeads(x, 4), InvalidArgument);
}

} // namespace
} // namespace attnlab

// The next-token distribution (sampling.h) against worked examples and an independent
// double-precision reference written from the definitions: softmax by log-sum-exp in long
// double, top-k as "fewer than k tokens rank above it", top-p as the smallest
// highest-probability set whose mass reaches p, checked as properties of the returned set.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "attnlab/base/check.h"
#include "attnlab/model/sampling.h"

namespace attnlab::model {
namespace {

/// softmax(logits / temperature) by log-sum-exp in long double.
std::vector<double> referenceSoftmax(const std::vector<float>& logits, double temperature) {
    long double top = -std::numeric_limits<long double>::infinity();
    for (float l : logits)
        top = std::max(top, static_cast<long double>(l) / temperature);
    long double sum = 0;
    for (float l : logits)
        sum += std::exp(static_cast<long double>(l) / temperature - top);
    const long double logSum = top + std::log(sum);
    std::vector<double> p;
    for (float l : logits)
        p.push_back(
            static_cast<double>(std::exp(static_cast<long double>(l) / temperature - logSum)));
    return p;
}

/// True when a ranks before b: higher logit, or the same logit and a lower id.
bool ranksBefore(const std::vector<float>& logits, std::size_t a, std::size_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
}

std::vector<float> logsOf(const std::vector<double>& weights) {
    std::vector<float> logits;
    for (double w : weights)
        logits.push_back(static_cast<float>(std::log(w)));
    return logits;
}

TEST(NextToken, WorkedExampleAtTemperatureOne) {
    // p = 0.1, 0.2, 0.3, 0.4.
    const auto logits = logsOf({1, 2, 3, 4});
    const auto all = nextTokenDistribution(logits, {});
    ASSERT_EQ(all.size(), 4u);
    const double expected[] = {0.4, 0.3, 0.2, 0.1};
    for (std::size_t r = 0; r < 4; ++r) {
        EXPECT_EQ(all[r].id, static_cast<std::int64_t>(3 - r));
        EXPECT_NEAR(all[r].probability, expected[r], 1e-6);
        EXPECT_NEAR(all[r].modelProbability, expected[r], 1e-6);
    }
    // top-p 0.5: 0.4 < 0.5, 0.4 + 0.3 >= 0.5 -> {3, 2}, renormalised to 4/7 and 3/7.
    const auto nucleus = nextTokenDistribution(logits, {.topP = 0.5});
    ASSERT_EQ(nucleus.size(), 2u);
    EXPECT_NEAR(nucleus[0].probability, 4.0 / 7, 1e-6);
    EXPECT_NEAR(nucleus[1].probability, 3.0 / 7, 1e-6);
    EXPECT_NEAR(nucleus[1].modelProbability, 0.3, 1e-6); // the model's own stays
    // top-k 3 then top-p 0.8 over the renormalised 4/9, 3/9, 2/9: 7/9 < 0.8 -> all three.
    EXPECT_EQ(nextTokenDistribution(logits, {.topK = 3, .topP = 0.8}).size(), 3u);
    EXPECT_EQ(nextTokenDistribution(logits, {.topK = 3, .topP = 0.75}).size(), 2u);
}

TEST(NextToken, TemperatureSharpensAndFlattens) {
    // logits ln 1, ln 4: at T = 2 the weights are 1 : 2; at T = 0.5, 1 : 16.
    const auto logits = logsOf({1, 4});
    const auto warm = nextTokenDistribution(logits, {.temperature = 2});
    ASSERT_EQ(warm.size(), 2u);
    EXPECT_NEAR(warm[0].probability, 2.0 / 3, 1e-6);
    EXPECT_NEAR(warm[0].modelProbability, 0.8, 1e-6);
    const auto cold = nextTokenDistribution(logits, {.temperature = 0.5});
    EXPECT_NEAR(cold[0].probability, 16.0 / 17, 1e-6);
}

TEST(NextToken, TemperatureZeroIsTheArgmaxWithTiesToTheLowerId) {
    const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
    const auto greedy = nextTokenDistribution(logits, {.temperature = 0, .topK = 3});
    ASSERT_EQ(greedy.size(), 1u);
    EXPECT_EQ(greedy[0].id, 1);
    EXPECT_EQ(greedy[0].probability, 1.0);
    EXPECT_NEAR(greedy[0].modelProbability, referenceSoftmax(logits, 1)[1], 1e-12);
    // A tiny temperature leaves the tie: the two best share the mass.
    const auto tiny = nextTokenDistribution(logits, {.temperature = 1e-3});
    ASSERT_EQ(tiny.size(), 2u);
    EXPECT_EQ(tiny[0].id, 1);
    EXPECT_EQ(tiny[1].id, 3);
    EXPECT_DOUBLE_EQ(tiny[0].probability, 0.5);
}

TEST(NextToken, TopPBoundaryIsInclusiveAndTiesGoToTheLowerId) {
    const std::vector<float> logits(4, 0.0f); // 0.25 each, exactly
    const auto half = nextTokenDistribution(logits, {.topP = 0.5});
    ASSERT_EQ(half.size(), 2u); // 0.25 + 0.25 >= 0.5
    EXPECT_EQ(half[0].id, 0);
    EXPECT_EQ(half[1].id, 1);
    EXPECT_EQ(nextTokenDistribution(logits, {.topP = 0.5000001}).size(), 3u);
    EXPECT_EQ(nextTokenDistribution(logits, {.topK = 2}).back().id, 1);
}

TEST(NextToken, EdgesOfTheLogitsRow) {
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(nextTokenDistribution(std::vector<float>{}, {}).empty());
    EXPECT_TRUE(nextTokenDistribution(std::vector<float>{1, std::nanf(""), 2}, {}).empty());
    EXPECT_TRUE(nextTokenDistribution(std::vector<float>{1, inf}, {}).empty());
    EXPECT_TRUE(nextTokenDistribution(std::vector<float>{-inf, -inf}, {}).empty());
    const auto masked = nextTokenDistribution(std::vector<float>{-inf, 0, -inf, 0}, {});
    ASSERT_EQ(masked.size(), 2u); // -inf tokens have probability 0 and are not kept
    EXPECT_EQ(masked[0].id, 1);
    EXPECT_DOUBLE_EQ(masked[0].probability, 0.5);
}

TEST(NextToken, RefusesBadControls) {
    const std::vector<float> logits = {0, 1};
    EXPECT_TRUE(validateSampling({}) == std::nullopt);
    for (const SamplingOptions bad :
         {SamplingOptions{.temperature = -1}, SamplingOptions{.temperature = NAN},
          SamplingOptions{.temperature = INFINITY}, SamplingOptions{.topK = -1},
          SamplingOptions{.topP = 0}, SamplingOptions{.topP = 1.5}, SamplingOptions{.topP = NAN}}) {
        EXPECT_TRUE(validateSampling(bad).has_value());
        EXPECT_THROW(nextTokenDistribution(logits, bad), InvalidArgument);
    }
    EXPECT_NE(validateSampling({.topP = 2})->message.find("top-p"), std::string::npos);
}

TEST(NextToken, MatchesTheDefinitionsOnRandomRows) {
    std::mt19937 random(11);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    const double temperatures[] = {0.3, 1.0, 2.5};
    const std::int64_t topKs[] = {0, 1, 7, 40, 100};
    const double topPs[] = {0.05, 0.5, 0.9, 1.0};
    for (int trial = 0; trial < 6; ++trial) {
        std::vector<float> logits(64);
        for (float& l : logits)
            l = std::round(normal(random) * 4) / 4; // quarter steps: some ties
        const auto model = referenceSoftmax(logits, 1);
        for (double t : temperatures) {
            const auto p = referenceSoftmax(logits, t);
            for (std::int64_t k : topKs)
                for (double topP : topPs) {
                    const auto got = nextTokenDistribution(logits, {t, k, topP});
                    ASSERT_FALSE(got.empty());
                    // Top-k set by the definition: fewer than k tokens rank above each.
                    std::vector<std::size_t> topSet;
                    for (std::size_t a = 0; a < logits.size(); ++a) {
                        std::size_t above = 0;
                        for (std::size_t b = 0; b < logits.size(); ++b)
                            above += ranksBefore(logits, b, a);
                        if (k == 0 || above < static_cast<std::size_t>(k)) topSet.push_back(a);
                    }
                    double topMass = 0;
                    for (std::size_t a : topSet)
                        topMass += p[a];
                    std::set<std::int64_t> kept;
                    double keptMass = 0, smallest = 1, sum = 0;
                    for (std::size_t r = 0; r < got.size(); ++r) {
                        const std::size_t id = static_cast<std::size_t>(got[r].id);
                        kept.insert(got[r].id);
                        EXPECT_TRUE(std::count(topSet.begin(), topSet.end(), id));
                        if (r > 0) {
                            EXPECT_TRUE(ranksBefore(logits, got[r - 1].id, id));
                        }
                        keptMass += p[id];
                        smallest = std::min(smallest, p[id]);
                        EXPECT_NEAR(got[r].modelProbability, model[id], 1e-9);
                        sum += got[r].probability;
                    }
                    EXPECT_EQ(kept.size(), got.size());
                    EXPECT_NEAR(sum, 1.0, 1e-9);
                    // Every kept token's probability is its share of the kept mass.
                    for (const auto& token : got)
                        EXPECT_NEAR(token.probability,
                                    p[static_cast<std::size_t>(token.id)] / keptMass, 1e-9);
                    // Nucleus: the kept mass reaches p of the top-k mass, and would not
                    // without its smallest member (or it is the whole top-k set).
                    EXPECT_GE(keptMass / topMass, topP - 1e-9);
                    if (got.size() < topSet.size()) {
                        EXPECT_LT((keptMass - smallest) / topMass, topP + 1e-9);
                    }
                    // Nothing left out ranks before a kept token.
                    for (std::size_t a : topSet) {
                        if (!kept.count(static_cast<std::int64_t>(a))) {
                            EXPECT_TRUE(ranksBefore(logits, got.back().id, a));
                        }
                    }
                }
        }
    }
}

TEST(SampleToken, InvertsTheCumulativeDistribution) {
    const std::vector<TokenProbability> d = {{7, 0.5, 0}, {3, 0.3, 0}, {9, 0.2, 0}};
    EXPECT_EQ(sampleToken(d, 0.0), 7);
    EXPECT_EQ(sampleToken(d, 0.49), 7);
    EXPECT_EQ(sampleToken(d, 0.5), 3);
    EXPECT_EQ(sampleToken(d, 0.79), 3);
    EXPECT_EQ(sampleToken(d, 0.81), 9);
    EXPECT_EQ(sampleToken(d, 1.0), 9); // rounding beyond the total: the last token
    EXPECT_THROW(sampleToken(std::vector<TokenProbability>{}, 0.1), InvalidArgument);
    // Drawn often, each token comes up in proportion to its probability.
    std::mt19937_64 random(5);
    std::uniform_real_distribution<double> uniform(0, 1);
    std::map<std::int64_t, int> counts;
    for (int n = 0; n < 20000; ++n)
        ++counts[sampleToken(d, uniform(random))];
    EXPECT_NEAR(counts[7] / 20000.0, 0.5, 0.02);
    EXPECT_NEAR(counts[9] / 20000.0, 0.2, 0.02);
}

} // namespace
} // namespace attnlab::model

namespace attnlab::model {
namespace {

// logits ln 1, ln 2, ln 3 are the distribution 1/6, 2/6, 3/6 whatever constant is added.
TEST(ModelProbabilities, AreTheSoftmaxOfTheLogits) {
    for (const float shift : {0.0f, 80.0f, -80.0f}) {
        const std::vector<float> logits = {std::log(1.0f) + shift, std::log(2.0f) + shift,
                                           std::log(3.0f) + shift};
        const std::vector<double> p = modelProbabilities(logits);
        ASSERT_EQ(p.size(), 3u);
        EXPECT_NEAR(p[0], 1.0 / 6, 1e-6);
        EXPECT_NEAR(p[1], 2.0 / 6, 1e-6);
        EXPECT_NEAR(p[2], 3.0 / 6, 1e-6);
    }
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(modelProbabilities(std::vector<float>{}).empty());
    EXPECT_TRUE(modelProbabilities(std::vector<float>{1.0f, inf}).empty());
    EXPECT_TRUE(modelProbabilities(std::vector<float>{-inf, -inf}).empty());
    EXPECT_EQ(modelProbabilities(std::vector<float>{-inf, 0.0f}), (std::vector<double>{0.0, 1.0}));
}

} // namespace
} // namespace attnlab::model

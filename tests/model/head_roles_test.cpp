// Head roles (head_roles.h) against attention tensors built by hand with a known answer, the
// probe's definition checked property by property, and the bundled trained model's known
// structure: a previous-token head in an earlier layer than its induction head.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attnlab/model/head_roles.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"

namespace attnlab::model {
namespace {

/// One layer [1, heads, S, S] whose head h has w[i, j] = weight(h, i, j).
Tensor4 layerOf(Index heads, Index s, const std::function<double(Index, Index, Index)>& weight) {
    Tensor4 t(1, heads, s, s);
    for (Index h = 0; h < heads; ++h)
        for (Index i = 0; i < s; ++i)
            for (Index j = 0; j < s; ++j)
                t(0, h, i, j) = static_cast<float>(weight(h, i, j));
    return t;
}

std::vector<std::int64_t> idsOf(Index s) {
    std::vector<std::int64_t> ids;
    for (Index i = 0; i < s; ++i)
        ids.push_back(100 + i); // no repeats
    return ids;
}

TEST(HeadRoles, OneHotHeadsScoreExactly) {
    constexpr Index kS = 9;
    // Head 0: previous token (query 0 on itself); head 1: itself; head 2: the first token.
    const Tensor4 layer = layerOf(3, kS, [](Index h, Index i, Index j) {
        const Index target = h == 0 ? std::max<Index>(i - 1, 0) : h == 1 ? i : 0;
        return j == target ? 1.0 : 0.0;
    });
    const auto ids = idsOf(kS);
    const auto roles = headRoles(std::vector<Tensor4>{layer}, ids);
    ASSERT_EQ(roles.size(), 3u);
    const double n = kS - 1;
    // Previous-token head: query 1's previous token is the first token.
    EXPECT_DOUBLE_EQ(roles[0].previousToken, 1.0);
    EXPECT_DOUBLE_EQ(roles[0].self, 0.0);
    EXPECT_DOUBLE_EQ(roles[0].firstToken, 1.0 / n);
    EXPECT_DOUBLE_EQ(roles[0].meanDistance, 1.0);
    // Self head.
    EXPECT_DOUBLE_EQ(roles[1].self, 1.0);
    EXPECT_DOUBLE_EQ(roles[1].previousToken, 0.0);
    EXPECT_DOUBLE_EQ(roles[1].firstToken, 0.0);
    EXPECT_DOUBLE_EQ(roles[1].meanDistance, 0.0);
    // Sink head: distance i from query i, mean of 1..S-1 = S/2.
    EXPECT_DOUBLE_EQ(roles[2].firstToken, 1.0);
    EXPECT_DOUBLE_EQ(roles[2].previousToken, 1.0 / n);
    EXPECT_DOUBLE_EQ(roles[2].meanDistance, kS / 2.0);
    for (const HeadRole& role : roles) {
        EXPECT_EQ(role.layer, 0);
        EXPECT_EQ(role.queries, kS - 1);
        EXPECT_EQ(role.inductionQueries, 0); // no token repeats
        EXPECT_EQ(role.induction, 0.0);
    }
    EXPECT_EQ(roles[2].head, 2);
}

TEST(HeadRoles, UniformCausalHeadMatchesItsClosedForm) {
    // w[i, j] = 1 / (i + 1) for j <= i: every one-key score of query i is 1 / (i + 1), and its
    // distance is sum_{d=0..i} d / (i + 1) = i / 2.
    constexpr Index kS = 12;
    const Tensor4 layer =
        layerOf(1, kS, [](Index, Index i, Index j) { return j <= i ? 1.0 / double(i + 1) : 0.0; });
    const auto role = headRoles(std::vector<Tensor4>{layer}, idsOf(kS)).at(0);
    double harmonic = 0, halfIndex = 0;
    for (Index i = 1; i < kS; ++i) {
        harmonic += 1.0 / double(i + 1);
        halfIndex += double(i) / 2.0;
    }
    const double n = kS - 1;
    EXPECT_NEAR(role.previousToken, harmonic / n, 1e-6);
    EXPECT_NEAR(role.firstToken, harmonic / n, 1e-6);
    EXPECT_NEAR(role.self, harmonic / n, 1e-6);
    EXPECT_NEAR(role.meanDistance, halfIndex / n, 1e-5);
}

TEST(HeadRoles, InductionHeadOnTheProbeScoresOneAndOthersDoNot) {
    // BOS, r, r with r = 5 distinct tokens: the second copy's query i attends to i - 5 + 1.
    constexpr Index kRun = 5;
    std::vector<std::int64_t> ids = {1};
    for (Index n = 0; n < kRun; ++n)
        ids.push_back(10 + n);
    for (Index n = 0; n < kRun; ++n)
        ids.push_back(10 + n);
    const Index s = static_cast<Index>(ids.size());
    const Tensor4 layer = layerOf(2, s, [&](Index h, Index i, Index j) {
        if (h == 1) return j == std::max<Index>(i - 1, 0) ? 1.0 : 0.0; // previous token
        const Index target = i > kRun ? i - kRun + 1 : i;              // induction, else self
        return j == target ? 1.0 : 0.0;
    });
    const auto roles = headRoles(std::vector<Tensor4>{layer, layer}, ids);
    ASSERT_EQ(roles.size(), 4u);
    EXPECT_EQ(roles[2].layer, 1);
    EXPECT_EQ(roles[3].head, 1);
    EXPECT_EQ(roles[0].inductionQueries, kRun);
    EXPECT_DOUBLE_EQ(roles[0].induction, 1.0);
    EXPECT_DOUBLE_EQ(roles[1].induction, 0.0); // previous token is never the induction target
    // The induction head is on itself for the kRun queries of the first copy.
    EXPECT_DOUBLE_EQ(roles[0].self, double(kRun) / double(s - 1));
    const auto ranked = rankHeads(roles, RoleScore::Induction);
    EXPECT_EQ(ranked.front().head, 0);
    EXPECT_DOUBLE_EQ(ranked.front().induction, 1.0);
}

TEST(HeadRoles, InductionTargetsAreEveryTokenThatFollowedAnEarlierOccurrence) {
    // ids 5 7 5 9 5 5: query 2 -> {1}; query 4 -> {1, 3}; query 5 -> {1, 3} (5 follows 4
    // directly, so key 5 itself is left out); queries 1 and 3 have no earlier occurrence.
    const std::vector<std::int64_t> ids = {5, 7, 5, 9, 5, 5};
    // Query i spreads evenly over keys 0..i (so every key weighs 1 / (i + 1)).
    const Tensor4 layer =
        layerOf(1, 6, [](Index, Index i, Index j) { return j <= i ? 1.0 / double(i + 1) : 0.0; });
    const auto role = headRoles(std::vector<Tensor4>{layer}, ids).at(0);
    EXPECT_EQ(role.inductionQueries, 3);
    EXPECT_NEAR(role.induction, (1.0 / 3 + 2.0 / 5 + 2.0 / 6) / 3, 1e-6);
}

TEST(HeadRoles, AdjacentRepeatHasNoInductionTargetAndOneTokenNoQuery) {
    const Tensor4 two = layerOf(1, 2, [](Index, Index i, Index j) { return j == i ? 1.0 : 0.0; });
    const auto role = headRoles(std::vector<Tensor4>{two}, std::vector<std::int64_t>{3, 3}).at(0);
    EXPECT_EQ(role.inductionQueries, 0);
    EXPECT_EQ(role.queries, 1);
    EXPECT_DOUBLE_EQ(role.self, 1.0);

    const Tensor4 one = layerOf(2, 1, [](Index, Index, Index) { return 1.0; });
    for (const HeadRole& r : headRoles(std::vector<Tensor4>{one}, std::vector<std::int64_t>{3})) {
        EXPECT_EQ(r.queries, 0);
        EXPECT_EQ(r.self, 0.0);
        EXPECT_EQ(r.meanDistance, 0.0);
    }
}

TEST(HeadRoles, RefusesAttentionsThatDoNotMatchTheIds) {
    const Tensor4 layer = layerOf(2, 4, [](Index, Index, Index) { return 0.25; });
    EXPECT_THROW(headRoles(std::vector<Tensor4>{layer}, idsOf(5)), InvalidArgument);
    const Tensor4 otherHeads = layerOf(3, 4, [](Index, Index, Index) { return 0.25; });
    EXPECT_THROW(headRoles(std::vector<Tensor4>{layer, otherHeads}, idsOf(4)), InvalidArgument);
}

TEST(HeadRoles, RankHeadsSortsHighestFirstAndPutsUndefinedInductionLast) {
    std::vector<HeadRole> roles(4);
    for (std::size_t i = 0; i < roles.size(); ++i) {
        roles[i].head = static_cast<Index>(i);
        roles[i].previousToken = 0.1 * double((i + 1) % 3); // 0.1 0.2 0 0.1
        roles[i].induction = 0.2 * double(i);
        roles[i].inductionQueries = i == 3 ? 0 : 4;
    }
    const auto byInduction = rankHeads(roles, RoleScore::Induction);
    std::vector<Index> order;
    for (const auto& r : byInduction)
        order.push_back(r.head);
    EXPECT_EQ(order, (std::vector<Index>{2, 1, 0, 3}));
    const auto byPrevious = rankHeads(roles, RoleScore::PreviousToken);
    order.clear();
    for (const auto& r : byPrevious)
        order.push_back(r.head);
    EXPECT_EQ(order, (std::vector<Index>{1, 0, 3, 2})); // ties keep the given order
}

ModelConfig probeConfig(Index vocab, std::optional<std::int64_t> bos,
                        std::optional<std::int64_t> eos, Index maxPositions = 1000) {
    ModelConfig config;
    config.vocab = vocab;
    config.bosTokenId = bos;
    config.eosTokenId = eos;
    config.maxPositions = maxPositions;
    return config;
}

TEST(InductionProbe, IsBosThenARunRepeatedTwice) {
    const auto probe = inductionProbe(probeConfig(50, 7, 8), 20, 42);
    ASSERT_TRUE(probe.ok()) << probe.error();
    ASSERT_EQ(probe->size(), 41u);
    EXPECT_EQ(probe->front(), 7);
    for (std::size_t n = 0; n < 20; ++n) {
        EXPECT_EQ((*probe)[1 + n], (*probe)[21 + n]);
        EXPECT_GE((*probe)[1 + n], 0);
        EXPECT_LT((*probe)[1 + n], 50);
        EXPECT_NE((*probe)[1 + n], 7);
        EXPECT_NE((*probe)[1 + n], 8);
    }
    // A fixed function of the seed.
    EXPECT_EQ(*probe, *inductionProbe(probeConfig(50, 7, 8), 20, 42));
    EXPECT_NE(*probe, *inductionProbe(probeConfig(50, 7, 8), 20, 43));
    // Without a BOS in the config, the run starts at position 0.
    const auto bare = inductionProbe(probeConfig(50, std::nullopt, std::nullopt), 3, 1);
    ASSERT_TRUE(bare.ok());
    ASSERT_EQ(bare->size(), 6u);
    EXPECT_EQ(std::vector<std::int64_t>(bare->begin(), bare->begin() + 3),
              std::vector<std::int64_t>(bare->begin() + 3, bare->end()));
}

TEST(InductionProbe, DrawsEveryOtherTokenUniformly) {
    // Vocabulary 10 without BOS 0 and EOS 9: ids 1..8, 8 equally likely cells. A chi-square
    // statistic over 40000 draws (7 degrees of freedom) stays below 24.3 (p = 0.001).
    const auto probe = inductionProbe(probeConfig(10, 0, 9, 100000), 40000, 2026);
    ASSERT_TRUE(probe.ok());
    std::map<std::int64_t, int> counts;
    for (std::size_t n = 1; n <= 40000; ++n)
        ++counts[(*probe)[n]];
    ASSERT_EQ(counts.size(), 8u);
    EXPECT_EQ(counts.begin()->first, 1);
    EXPECT_EQ(counts.rbegin()->first, 8);
    double chiSquare = 0;
    for (const auto& [id, count] : counts)
        chiSquare += std::pow(count - 5000.0, 2) / 5000.0;
    EXPECT_LT(chiSquare, 24.3);
}

TEST(InductionProbe, RefusesWhatTheModelCannotTake) {
    EXPECT_FALSE(inductionProbe(probeConfig(50, 1, 2, 129), 0, 1).ok());
    EXPECT_TRUE(inductionProbe(probeConfig(50, 1, 2, 129), 64, 1).ok()); // 1 + 128 = 129
    const auto tooLong = inductionProbe(probeConfig(50, 1, 2, 129), 65, 1);
    ASSERT_FALSE(tooLong.ok());
    EXPECT_NE(tooLong.error().find("129"), std::string::npos) << tooLong.error();
    EXPECT_TRUE(inductionProbe(probeConfig(50, std::nullopt, 2, 130), 65, 1).ok());
    EXPECT_FALSE(inductionProbe(probeConfig(2, 0, 1), 4, 1).ok()); // only specials
    EXPECT_FALSE(inductionProbe(probeConfig(50, 1, 2, 129), Index(1) << 62, 1).ok());
}

// The bundled trained model (resources/models/tiny-llama-induction, scripts/
// train_demo_model.py): trained so that a previous-token head feeds an induction head. The
// roles must find both, the induction head in a later layer than the previous-token head
// (induction composes with the previous-token head's output, so it cannot sit in layer 0).
TEST(HeadRoles, FindTheBundledModelsPreviousTokenAndInductionHeads) {
    const auto model =
        loadModel(std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction");
    ASSERT_TRUE(model.ok()) << model.error();
    double bestInduction = 0;
    std::vector<HeadRole> sum;
    constexpr int kProbes = 4;
    for (int seed = 0; seed < kProbes; ++seed) {
        const auto probe = inductionProbe(model->config, 32, static_cast<std::uint64_t>(seed));
        ASSERT_TRUE(probe.ok()) << probe.error();
        RunOptions options;
        options.threads = 1;
        const auto run = runModel(*model, *probe, options);
        ASSERT_TRUE(run.ok()) << run.error();
        const auto roles = headRoles(*model, *run);
        ASSERT_EQ(roles.size(),
                  static_cast<std::size_t>(model->config.layers * model->config.heads));
        if (sum.empty())
            sum = roles;
        else
            for (std::size_t i = 0; i < roles.size(); ++i) {
                sum[i].induction += roles[i].induction;
                sum[i].previousToken += roles[i].previousToken;
            }
    }
    const HeadRole induction = rankHeads(sum, RoleScore::Induction).front();
    const HeadRole previous = rankHeads(sum, RoleScore::PreviousToken).front();
    bestInduction = induction.induction / kProbes;
    EXPECT_GE(bestInduction, 0.4);
    EXPECT_GE(previous.previousToken / kProbes, 0.5);
    EXPECT_GT(induction.layer, previous.layer);
    // A random repeated sequence is not text: the induction head's score is not a sink's or
    // a previous-token head's in disguise.
    EXPECT_LT(induction.previousToken / kProbes, 0.5);
}

} // namespace
} // namespace attnlab::model

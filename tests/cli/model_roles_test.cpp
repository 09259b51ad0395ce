// `attnlab model --roles` and the next-token options through the built binary on the bundled
// trained model: the induction probe ranks an induction head first, the printed next-token
// probabilities equal an independent softmax of the logits the same command writes, ablating
// a head changes them, and bad input is one line and status 2.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "attnlab/io/npy.h"
#include "command_runner.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

using nlohmann::json;

const std::string kModel =
    std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction";

class ModelRoles : public ::testing::Test {
protected:
    test::CommandResult model(std::vector<std::string> args) const {
        args.insert(args.begin(), {"model", "--model", kModel});
        return test::runCommand(ATTNLAB_BINARY, args, m_dir.path() / "capture");
    }
    json modelJson(const std::vector<std::string>& args) const {
        const auto run = model(args);
        EXPECT_EQ(run.status, 0) << run.err;
        return run.status == 0 ? json::parse(run.out) : json::object();
    }
    test::TempDir m_dir{"attnlab_model_roles"};
};

TEST_F(ModelRoles, TheProbeRanksAnInductionHeadFirst) {
    const json report = modelJson({"--probe", "32", "--seed", "7", "--roles", "--json"});
    const json& heads = report["roles"]["heads"];
    ASSERT_EQ(heads.size(), 12u); // 3 layers x 4 heads
    EXPECT_EQ(report["roles"]["sort"], "induction");
    EXPECT_GE(heads[0]["induction"].get<double>(), 0.4);
    for (std::size_t i = 1; i < heads.size(); ++i)
        EXPECT_LE(heads[i]["induction"].get<double>(), heads[i - 1]["induction"].get<double>());
    // The probe: BOS, 32 tokens, the same 32 again.
    const std::vector<std::int64_t> ids = report["ids"];
    ASSERT_EQ(ids.size(), 65u);
    EXPECT_EQ(ids[0], 1022);
    EXPECT_TRUE(std::equal(ids.begin() + 1, ids.begin() + 33, ids.begin() + 33));
    // Switching the top induction head off leaves its score to the others (it is reported
    // as ablated), and the model's copy of the repeat gets worse: the command runs.
    const std::string top = std::to_string(heads[0]["layer"].get<int>()) + ":" +
                            std::to_string(heads[0]["head"].get<int>());
    const json ablated =
        modelJson({"--probe", "32", "--seed", "7", "--roles", "--json", "--ablate", top});
    int marked = 0;
    for (const json& head : ablated["roles"]["heads"])
        marked += head["ablated"].get<bool>();
    EXPECT_EQ(marked, 1);
}

TEST_F(ModelRoles, NextTokensAreTheSoftmaxOfTheWrittenLogits) {
    const std::string out = m_dir.file("run.npz");
    const json report = modelJson({"--text", "the cat sat on the mat", "--top-k", "4",
                                   "--temperature", "0.5", "--json", "--out", out, "--logits"});
    auto members = readNpzMembers(out);
    ASSERT_TRUE(members.ok()) << members.error();
    auto logits = parseNpy(members->at("logits"), "logits");
    ASSERT_TRUE(logits.ok());
    const Index vocab = logits->shape[1];
    const float* last = logits->data.data() + (logits->shape[0] - 1) * vocab;
    // Independent: softmax(l / 0.5) in double, the four largest, renormalised.
    std::vector<double> p(static_cast<std::size_t>(vocab));
    const double top = *std::max_element(last, last + vocab);
    for (Index v = 0; v < vocab; ++v)
        p[static_cast<std::size_t>(v)] = std::exp((last[v] - top) / 0.5);
    std::vector<Index> order(static_cast<std::size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) {
        return p[static_cast<std::size_t>(a)] > p[static_cast<std::size_t>(b)];
    });
    double mass = 0;
    for (int r = 0; r < 4; ++r)
        mass += p[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])];
    const json& tokens = report["next"]["tokens"];
    ASSERT_EQ(tokens.size(), 4u);
    for (int r = 0; r < 4; ++r) {
        const Index id = order[static_cast<std::size_t>(r)];
        EXPECT_EQ(tokens[r]["id"].get<Index>(), id);
        EXPECT_NEAR(tokens[r]["probability"].get<double>(), p[static_cast<std::size_t>(id)] / mass,
                    1e-6);
    }
}

TEST_F(ModelRoles, AblatingHeadsChangesTheNextTokenProbabilities) {
    const auto next = [this](const std::vector<std::string>& extra) {
        std::vector<std::string> args = {"--text", "the cat sat on the mat", "--top-k", "1",
                                         "--json"};
        args.insert(args.end(), extra.begin(), extra.end());
        return modelJson(args)["next"]["tokens"][0];
    };
    const json plain = next({});
    const json ablated = next({"--ablate", "0:1,1:1,1:2"});
    EXPECT_GT(std::abs(plain["model_probability"].get<double>() -
                       ablated["model_probability"].get<double>()),
              1e-4);
    // Greedy is the top token with probability 1.
    const json greedy = next({"--temperature", "0"});
    EXPECT_EQ(greedy["id"], plain["id"]);
    EXPECT_EQ(greedy["probability"].get<double>(), 1.0);
}

TEST_F(ModelRoles, BadInputIsOneLineAndStatusTwo) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--text", "a b", "--top-p", "2"}, "--top-p"},
        {{"--text", "a b", "--temperature", "-1"}, "--temperature"},
        {{"--text", "a b", "--top-k", "-3"}, "--top-k"},
        {{"--text", "a b", "--roles", "--ablate", "9:0"}, "--ablate"},
        {{"--text", "a b", "--roles", "--ablate", "1-2"}, "--ablate"},
        {{"--probe", "65", "--roles"}, "--probe"},
        {{"--probe", "0", "--roles"}, "--probe"},
        {{"--text", "a b", "--roles", "--seed", "3"}, "--seed"},
        {{"--text", "a b", "--roles", "--sort", "loudness"}, "--sort"},
        {{"--text", "a b"}, "nothing to do"},
        {{"--text", "a b", "--probe", "4", "--roles"}, "exactly one"},
        {{"--text", "a b", "--roles", "--logits"}, "--logits"},
    };
    for (const auto& [args, culprit] : cases) {
        const auto run = model(args);
        EXPECT_EQ(run.status, 2) << culprit;
        EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
        EXPECT_NE(run.err.find(culprit), std::string::npos) << run.err;
        EXPECT_TRUE(run.out.empty()) << run.out;
    }
}

} // namespace
} // namespace attnlab

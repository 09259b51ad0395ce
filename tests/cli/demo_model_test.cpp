// The bundled model (resources/models/tiny-llama-induction) through the built binary: its
// tokenizer gives the training script's ids, `attnlab model` reproduces the script's own torch
// forward, and its heads show the structure the model is shipped for — measured here from
// `attnlab model --roles` output on text and on seeded induction probes, not read from a
// stored score.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/io/npy.h"
#include "command_runner.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

using nlohmann::json;

const std::string kModel =
    std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction";
const std::string kFixtures = std::string(ATTNLAB_SOURCE_DIR) + "/tests/model/fixtures/demo/";

json readJson(const std::string& path) {
    return json::parse(test::readWholeFile(path));
}

std::string joinIds(const std::vector<int64_t>& ids) {
    std::string text;
    for (const int64_t id : ids)
        text += (text.empty() ? "" : ",") + std::to_string(id);
    return text;
}

NpyArray member(const std::string& npz, const std::string& name) {
    auto members = readNpzMembers(npz);
    EXPECT_TRUE(members.ok()) << (members.ok() ? "" : members.error());
    if (!members.ok() || !members->count(name)) {
        ADD_FAILURE() << npz << " has no " << name;
        return {};
    }
    auto array = parseNpy(members->at(name), name);
    EXPECT_TRUE(array.ok()) << (array.ok() ? "" : array.error());
    return array.ok() ? *array : NpyArray{};
}

class DemoModel : public ::testing::Test {
protected:
    test::CommandResult attnlab(const std::vector<std::string>& args) const {
        return test::runCommand(ATTNLAB_BINARY, args, m_dir.path() / "capture");
    }
    /// Runs `attnlab model` on ids (and --logits) and returns the written archive's path.
    std::string runModel(const std::vector<int64_t>& ids, const std::string& name) const {
        const std::string out = m_dir.file(name + ".npz");
        const auto run =
            attnlab({"model", "--model", kModel, "--ids", joinIds(ids), "--out", out, "--logits"});
        EXPECT_EQ(run.status, 0) << run.err;
        return out;
    }
    test::TempDir m_dir{"attnlab_demo_model"};
};

TEST_F(DemoModel, TokenizerGivesTheTrainingScriptsIds) {
    const json cases = readJson(kFixtures + "tokenizer_cases.json")["cases"];
    ASSERT_GE(cases.size(), 5u);
    for (const json& item : cases) {
        const std::string text = item["text"];
        for (const bool special : {true, false}) {
            std::vector<std::string> args = {"tokenize", "--tokenizer", kModel, "--text", text};
            if (!special) args.push_back("--no-special");
            const auto run = attnlab(args);
            ASSERT_EQ(run.status, 0) << run.err;
            const json got = json::parse(run.out);
            EXPECT_EQ(got["ids"], item[special ? "ids" : "ids_without_special"]) << text;
        }
        const auto run = attnlab({"tokenize", "--tokenizer", kModel, "--text", text});
        EXPECT_EQ(json::parse(run.out)["pieces"], item["tokens"]) << text;
    }
}

TEST_F(DemoModel, ReproducesTheTrainingScriptsForward) {
    // The parsed manifest lives in a variable: a range-for over readJson(...)["cases"] would
    // iterate into a temporary destroyed before the loop body runs.
    const json manifest = readJson(kFixtures + "manifest.json");
    for (const json& item : manifest["cases"]) {
        const std::string name = item["name"];
        const std::vector<int64_t> ids = item["ids"];
        const std::string out = runModel(ids, name);
        const NpyArray attentions = member(out, "attentions");
        auto expected = readNpy(kFixtures + std::string(item["attentions_npy"]));
        ASSERT_TRUE(expected.ok()) << expected.error();
        ASSERT_EQ(attentions.shape, expected->shape) << name;
        double worst = 0;
        for (std::size_t i = 0; i < attentions.data.size(); ++i)
            worst = std::max(worst, std::abs(double(attentions.data[i]) - expected->data[i]));
        EXPECT_LT(worst, 1e-4) << name << ": attentions";

        // The last position's logits, and so the model's next-token choice.
        const NpyArray logits = member(out, "logits");
        auto expectedLast = readNpy(kFixtures + std::string(item["logits_last_npy"]));
        ASSERT_TRUE(expectedLast.ok()) << expectedLast.error();
        ASSERT_EQ(logits.rank(), 2);
        const Index vocab = logits.shape[1];
        ASSERT_EQ(expectedLast->elementCount(), vocab);
        const float* last = logits.data.data() + (logits.shape[0] - 1) * vocab;
        double worstLogit = 0;
        for (Index v = 0; v < vocab; ++v)
            worstLogit = std::max(worstLogit, std::abs(double(last[v]) - expectedLast->data[v]));
        EXPECT_LT(worstLogit, 1e-3) << name << ": logits";
        EXPECT_EQ(std::max_element(last, last + vocab) - last, item["argmax_next_token"].get<int>())
            << name;
    }
    // --text runs the folder's tokenizer: the same ids as the script's encoder.
    const json& text = manifest["cases"][0];
    const std::string out = m_dir.file("text.npz");
    ASSERT_EQ(attnlab({"model", "--model", kModel, "--text", text["text"], "--out", out}).status,
              0);
    auto members = readNpzMembers(out);
    ASSERT_TRUE(members.ok());
    const std::string& idsBytes = members->at("ids");
    const std::vector<int64_t> expectedIds = text["ids"];
    ASSERT_GE(idsBytes.size(), expectedIds.size() * 8);
    std::vector<int64_t> ids(expectedIds.size());
    std::memcpy(ids.data(), idsBytes.data() + idsBytes.size() - ids.size() * 8, ids.size() * 8);
    EXPECT_EQ(ids, expectedIds);
}

TEST_F(DemoModel, HasAPreviousTokenHeadAndAnInductionHead) {
    // The scores come from `attnlab model --roles` (head_roles.h, the one definition of
    // them, checked against hand-built attention in tests/model/head_roles_test.cpp).
    const auto roles = [this](const std::vector<std::string>& input) {
        std::vector<std::string> args = {"model", "--model", kModel, "--roles", "--json"};
        args.insert(args.end(), input.begin(), input.end());
        const auto run = attnlab(args);
        EXPECT_EQ(run.status, 0) << run.err;
        return run.status == 0 ? json::parse(run.out)["roles"]["heads"] : json::array();
    };
    // Previous-token head on a plain sentence: mean weight on key i - 1 over queries 1..S-1.
    const json sentence = readJson(kFixtures + "manifest.json")["cases"][0];
    double previous = 0;
    for (const json& head : roles({"--ids", joinIds(sentence["ids"])}))
        previous = std::max(previous, head["previous_token"].get<double>());
    EXPECT_GE(previous, 0.5);

    // Induction on the standard probe (BOS, then 32 tokens drawn uniformly from the
    // vocabulary, then the same 32 again), averaged per head over four draws: a query in the
    // second run attends to the token after its earlier occurrence.
    constexpr int kProbes = 4;
    std::map<std::pair<int, int>, double> inductionMeans;
    for (int probe = 0; probe < kProbes; ++probe)
        for (const json& head : roles({"--probe", "32", "--seed", std::to_string(probe)})) {
            ASSERT_FALSE(head["induction"].is_null());
            inductionMeans[{head["layer"].get<int>(), head["head"].get<int>()}] +=
                head["induction"].get<double>() / kProbes;
        }
    ASSERT_FALSE(inductionMeans.empty());
    // The best head over all probes together (not each probe's best).
    double induction = 0;
    for (const auto& [head, mean] : inductionMeans)
        induction = std::max(induction, mean);
    EXPECT_GE(induction, 0.4);
    RecordProperty("previous_token_score", std::to_string(previous));
    RecordProperty("induction_score", std::to_string(induction));
    std::printf("demo model: previous-token %.3f, induction %.3f\n", previous, induction);
}

} // namespace
} // namespace attnlab

// The bundled model (resources/models/tiny-llama-induction) through the built binary: its
// tokenizer gives the training script's ids, `attnlab model` reproduces the script's own torch
// forward, and its heads show the structure the model is shipped for — measured here from
// `attnlab model` output on probes this test draws, not read from a stored score.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attnlab/npy.h"
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

/// attentions [L, H, S, S] as read, with the model's own numbers for one head.
struct Attentions {
    NpyArray array;
    Index layers() const { return array.shape[0]; }
    Index heads() const { return array.shape[1]; }
    Index tokens() const { return array.shape[2]; }
    float at(Index layer, Index head, Index query, Index key) const {
        const Index s = tokens();
        return array
            .data[static_cast<std::size_t>(((layer * heads() + head) * s + query) * s + key)];
    }
    /// Per head (layer-major), the mean weight on key target(query) over queries [first, S).
    template <typename Target> std::vector<double> headMeans(Index first, Target target) const {
        std::vector<double> means;
        for (Index layer = 0; layer < layers(); ++layer)
            for (Index head = 0; head < heads(); ++head) {
                double sum = 0;
                for (Index query = first; query < tokens(); ++query)
                    sum += at(layer, head, query, target(query));
                means.push_back(sum / static_cast<double>(tokens() - first));
            }
        return means;
    }
};

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
    const json config = readJson(kModel + "/config.json");
    const int64_t vocab = config["vocab_size"];
    const int64_t bos = config["bos_token_id"];
    const int64_t eos = config["eos_token_id"];

    // Previous-token head on a plain sentence: mean weight on key i - 1 over queries 1..S-1.
    const json sentence = readJson(kFixtures + "manifest.json")["cases"][0];
    const Attentions text{member(runModel(sentence["ids"], "sentence"), "attentions")};
    ASSERT_EQ(text.array.rank(), 4);
    const auto previousMeans = text.headMeans(1, [](Index query) { return query - 1; });
    const double previous = *std::max_element(previousMeans.begin(), previousMeans.end());
    EXPECT_GE(previous, 0.5);

    // Induction: BOS, then R tokens drawn uniformly from the vocabulary (specials excluded),
    // then the same R again. A query in the second run attends to the token after its earlier
    // occurrence: key i - R + 1. Averaged over several probes this test draws itself.
    constexpr Index kRun = 32;
    constexpr int kProbes = 4;
    std::mt19937_64 random(20261123);
    std::uniform_int_distribution<int64_t> draw(0, vocab - 1);
    std::vector<double> inductionMeans;
    for (int probe = 0; probe < kProbes; ++probe) {
        std::vector<int64_t> run;
        while (static_cast<Index>(run.size()) < kRun) {
            const int64_t id = draw(random);
            if (id != bos && id != eos) run.push_back(id);
        }
        std::vector<int64_t> ids = {bos};
        ids.insert(ids.end(), run.begin(), run.end());
        ids.insert(ids.end(), run.begin(), run.end());
        const Attentions probed{
            member(runModel(ids, "probe" + std::to_string(probe)), "attentions")};
        ASSERT_EQ(probed.tokens(), 2 * kRun + 1);
        const auto means = probed.headMeans(kRun + 1, [](Index query) { return query - kRun + 1; });
        inductionMeans.resize(means.size());
        for (std::size_t head = 0; head < means.size(); ++head)
            inductionMeans[head] += means[head] / kProbes;
    }
    // The best head over all probes together (not each probe's best).
    const double induction = *std::max_element(inductionMeans.begin(), inductionMeans.end());
    EXPECT_GE(induction, 0.4);
    RecordProperty("previous_token_score", std::to_string(previous));
    RecordProperty("induction_score", std::to_string(induction));
    std::printf("demo model: previous-token %.3f, induction %.3f\n", previous, induction);
}

} // namespace
} // namespace attnlab

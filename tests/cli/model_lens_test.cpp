// End-to-end tests of `attnlab model --logit-lens / --attribution / --patch`: the .npz members
// against the plain PyTorch reference (tests/model/fixtures/make_lens_reference.py) stored
// beside two checkpoints transformers saved, the sums the contract promises, the bundled
// induction model read by text, and bad input: exit 2, one line, nothing written.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "attnlab/io/npy.h"
#include "command_runner.h"
#include "reference.h"

namespace attnlab {
namespace {

std::string hf(const std::string& name) {
    return std::string(ATTNLAB_SOURCE_DIR) + "/tests/model/fixtures/hf/" + name;
}

std::string inductionModel() {
    return std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction";
}

std::map<std::string, std::string> members(const std::string& path) {
    auto read = readNpzMembers(path);
    EXPECT_TRUE(read.ok()) << (read.ok() ? "" : read.error());
    return read.ok() ? *read : std::map<std::string, std::string>{};
}

/// A member's values as doubles (float32 or float64), with its shape.
std::vector<double> values(const std::string& bytes, std::vector<Index>* shape = nullptr) {
    NpyReadOptions options;
    options.keepFloat64 = true;
    auto array = parseNpy(bytes, "member", options);
    EXPECT_TRUE(array.ok()) << (array.ok() ? "" : array.error());
    if (!array.ok()) return {};
    if (shape) *shape = array->shape;
    return array->data64.empty() ? std::vector<double>(array->data.begin(), array->data.end())
                                 : std::vector<double>(array->data64.begin(), array->data64.end());
}

std::vector<std::int64_t> int64s(const std::string& bytes) {
    auto header = parseNpyHeader(bytes, "ids");
    EXPECT_TRUE(header.ok() && header->descr == "<i8");
    if (!header.ok()) return {};
    std::vector<std::int64_t> out(static_cast<std::size_t>(header->count));
    std::memcpy(out.data(), bytes.data() + header->dataOffset, 8 * out.size());
    return out;
}

std::string joined(const std::vector<std::int64_t>& ids) {
    std::string list;
    for (std::int64_t id : ids)
        list += (list.empty() ? "" : ",") + std::to_string(id);
    return list;
}

class ModelLens : public test::CommandFolderTest {
protected:
    test::CommandResult model(const std::vector<std::string>& args) const {
        return runIn(ATTNLAB_BINARY, "model", args);
    }

    void expectRejected(const std::vector<std::string>& args, const std::string& culprit,
                        const std::string& what) const {
        const auto before = listing();
        const test::CommandResult run = model(args);
        EXPECT_EQ(run.status, 2) << run.err;
        EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
        EXPECT_NE(run.err.find(culprit), std::string::npos) << run.err;
        EXPECT_NE(run.err.find(what), std::string::npos) << run.err;
        EXPECT_TRUE(run.out.empty()) << run.out;
        EXPECT_EQ(listing(), before);
    }
};

TEST_F(ModelLens, WritesThePlainPyTorchLensAttributionAndPatching) {
    for (const std::string name : {"gpt2", "llama_gqa", "gpt_neox_pythia"}) {
        auto reference = members(hf(name) + "/lens_reference.npz");
        const std::string ids = joined(int64s(reference["ids"]));
        const auto metric = int64s(reference["metric"]);
        const std::string out = file(name + ".npz");
        const test::CommandResult run =
            model({"--model", hf(name), "--ids", ids, "--logit-lens", "--attribution",
                   "," + std::to_string(int64s(reference["contrast"])[0]), "--patch",
                   joined(int64s(reference["corrupted_ids"])), "--metric",
                   "logit-diff:" + std::to_string(metric[0]) + "," + std::to_string(metric[1]),
                   "--out", out, "--threads", "2"});
        ASSERT_EQ(run.status, 0) << run.err;
        EXPECT_TRUE(run.err.empty()) << run.err;
        auto got = members(out);

        // The lens as probabilities: the reference's logits through a softmax.
        std::vector<Index> shape;
        const auto lens = values(got["logit_lens"], &shape);
        const auto logits = values(reference["lens_logits"]);
        ASSERT_EQ(shape.size(), 3u);
        const auto vocab = static_cast<std::size_t>(shape[2]);
        std::vector<double> expected(logits.size());
        for (std::size_t row = 0; row < logits.size(); row += vocab) {
            const double top =
                *std::max_element(logits.begin() + row, logits.begin() + row + vocab);
            double sum = 0;
            for (std::size_t v = 0; v < vocab; ++v)
                sum += expected[row + v] = std::exp(logits[row + v] - top);
            for (std::size_t v = 0; v < vocab; ++v)
                expected[row + v] /= sum;
        }
        EXPECT_LT(ref::relativeDifference(lens, expected), 1e-4) << name;

        for (const std::string key :
             {"attribution_heads", "attribution_mlp", "attribution_embed", "attribution_bias",
              "attribution_logit", "patch_heads", "patch_residual"}) {
            ASSERT_TRUE(got.count(key)) << name << " lacks " << key;
            EXPECT_LT(ref::relativeDifference(values(got[key]), values(reference[key])), 1e-4)
                << name << " " << key;
        }
        const auto heads = values(got["attribution_heads"]);
        const auto mlp = values(got["attribution_mlp"]);
        const double total = std::accumulate(heads.begin(), heads.end(), 0.0) +
                             std::accumulate(mlp.begin(), mlp.end(), 0.0) +
                             values(got["attribution_embed"])[0] +
                             values(got["attribution_bias"])[0];
        EXPECT_NEAR(total, values(got["attribution_logit"])[0], 1e-4) << name;
        EXPECT_EQ(int64s(got["attribution_tokens"]),
                  (std::vector<std::int64_t>{int64s(reference["target"])[0],
                                             int64s(reference["contrast"])[0]}));
    }
}

// --attribution's value is optional, as its help says: alone at the end or before another
// option it attributes the model's own prediction, the same bytes as an empty value.
TEST_F(ModelLens, AttributionWithoutAValueAttributesThePrediction) {
    const std::string dir = hf("llama_gqa");
    const std::string ids = joined(int64s(members(dir + "/lens_reference.npz")["ids"]));
    const test::CommandResult empty = model({"--model", dir, "--ids", ids, "--attribution", "",
                                             "--json"});
    ASSERT_EQ(empty.status, 0) << empty.err;
    const test::CommandResult last = model({"--model", dir, "--ids", ids, "--json",
                                            "--attribution"});
    ASSERT_EQ(last.status, 0) << last.err;
    const test::CommandResult before = model({"--model", dir, "--ids", ids, "--attribution",
                                              "--json"});
    ASSERT_EQ(before.status, 0) << before.err;
    EXPECT_EQ(last.out, empty.out);
    EXPECT_EQ(before.out, empty.out);
    EXPECT_NE(empty.out.find("\"attribution\""), std::string::npos) << empty.out;
    // An option that needs its value still says so.
    expectRejected({"--model", dir, "--ids", ids, "--patch"}, "--patch", "needs a value");
}

TEST_F(ModelLens, TopKAndJsonDescribeTheSameCells) {
    const std::string out = file("top.npz");
    const test::CommandResult run = model({"--model", hf("gpt2"), "--ids", "5,9,13,200",
                                           "--logit-lens", "--top-k", "3", "--json", "--out", out});
    ASSERT_EQ(run.status, 0) << run.err;
    const auto report = nlohmann::json::parse(run.out);
    ASSERT_EQ(report["logit_lens"]["rows"].size(), 3u); // embed + 2 layers
    auto got = members(out);
    std::vector<Index> shape;
    const auto probs = values(got["logit_lens_top_probs"], &shape);
    EXPECT_EQ(shape, (std::vector<Index>{3, 4, 3}));
    const auto ids = int64s(got["logit_lens_top_ids"]);
    ASSERT_EQ(ids.size(), 36u);
    EXPECT_FALSE(got.count("logit_lens"));
    const auto& cell = report["logit_lens"]["rows"][2]["positions"][3];
    EXPECT_EQ(cell[0]["id"].get<std::int64_t>(), ids[33]);
    EXPECT_NEAR(cell[1]["probability"].get<double>(), probs[34], 1e-6);
    EXPECT_GE(probs[33], probs[34]);
}

TEST_F(ModelLens, TextTokensOnTheInductionModel) {
    // Repeated: the second " red" is predictable from the first occurrence; shuffled is not.
    const test::CommandResult run =
        model({"--model", inductionModel(), "--text", "blue fox red cat green owl blue fox red",
               "--attribution", "", "--patch", "blue fox red cat green owl red fox blue",
               "--metric", "logit-diff: cat, owl", "--json"});
    ASSERT_EQ(run.status, 0) << run.err;
    const auto report = nlohmann::json::parse(run.out);
    EXPECT_NEAR(report["attribution"]["total"].get<double>(),
                report["attribution"]["logit"].get<double>(), 1e-3);
    EXPECT_GT(report["patch"]["runs"].get<int>(), 0);
    EXPECT_GT(report["patch"]["reused_positions"].get<int>(), 0);
}

TEST_F(ModelLens, RefusesBadInputWithOneLineAndNothingWritten) {
    const std::string out = file("o.npz");
    const std::string g = hf("gpt2");
    expectRejected({"--model", g, "--ids", "1,2,3", "--patch", "1,2", "--metric", "logit-diff:4,5",
                    "--out", out},
                   "--patch", "same length");
    expectRejected({"--model", g, "--ids", "1,2,3", "--attribution", "256", "--out", out},
                   "--attribution", "not in the vocabulary");
    expectRejected({"--model", g, "--ids", "1,2,3", "--patch", "1,2,4", "--metric",
                    "logit-diff:4,9999", "--out", out},
                   "--metric", "not in the vocabulary");
    expectRejected({"--model", g, "--ids", "1,2,3", "--attribution", " Mary", "--out", out},
                   "--attribution", "tokenizer.json");
    expectRejected(
        {"--model", g, "--ids", "1,2,3", "--logit-lens", "--ablate", "7:0", "--out", out},
        "--ablate", "(7, 0)");
    expectRejected({"--model", g, "--ids", "1,2,3", "--patch", "1,2,4", "--out", out}, "--patch",
                   "--metric");
    expectRejected(
        {"--model", g, "--ids", "1,2,3", "--patch", "1,2,4", "--metric", "kl", "--out", out},
        "--metric", "logit-diff:A,B");
    expectRejected({"--model", g, "--ids", "1,2,3", "--patch", "1,2,3", "--metric",
                    "logit-diff:4,5", "--out", out},
                   "--patch", "nothing to restore");
    expectRejected({"--model", hf("bart"), "--ids", "1,2,3", "--logit-lens", "--out", out},
                   "--logit-lens", "encoder-decoder");
    expectRejected({"--model", hf("bert"), "--ids", "1,2,3", "--attribution", "", "--out", out},
                   "--attribution", "post-LN");
    expectRejected({"--model", inductionModel(), "--text", "red fox", "--attribution", "red fox",
                    "--out", out},
                   "--attribution", "not one");
}

TEST_F(ModelLens, Lesson17sNumbersAreWhatPatchingTheInductionModelGives) {
    // resources/lessons/17_patching_induction.json quotes this command and its numbers.
    std::ifstream file(std::string(ATTNLAB_SOURCE_DIR) +
                       "/resources/lessons/17_patching_induction.json");
    const auto lesson = nlohmann::json::parse(file);
    const std::string clean = lesson["steps"][0]["model"]["text"];
    const std::string corrupted =
        "The owl hat fox sun dog cup key red mat fox key mat owl sun red cup hat";
    const std::string intro = lesson["steps"][1]["text"]["en"];
    EXPECT_NE(intro.find("--patch \"" + corrupted + "\""), std::string::npos);
    // The step that opens the Patching tab patches the same prompts.
    EXPECT_EQ(lesson["steps"][4]["view"], "patching");
    EXPECT_EQ(lesson["steps"][4]["model"]["text"], clean);
    EXPECT_EQ(lesson["steps"][4]["model"]["corrupted"], corrupted);
    const test::CommandResult run =
        model({"--model", inductionModel(), "--text", clean, "--patch", corrupted, "--metric",
               "logit-diff: dog, fox", "--json"});
    ASSERT_EQ(run.status, 0) << run.err;
    const auto patch = nlohmann::json::parse(run.out)["patch"];
    auto rounded = [](double value) {
        char text[32];
        std::snprintf(text, sizeof text, "%.2f", value);
        return std::string(text);
    };
    const std::string heads = lesson["steps"][2]["text"]["en"];
    for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 4; ++h) {
            std::string value = rounded(patch["heads"][l][h].get<double>());
            if (value[0] == '-') value = "−" + value.substr(1);
            EXPECT_NE(heads.find(value), std::string::npos) << l << ":" << h << " " << value;
        }
    // The previous-token head and the four induction heads carry the answer.
    EXPECT_GT(patch["heads"][0][1].get<double>(), 0.5);
    for (int h = 0; h < 4; ++h)
        EXPECT_GT(patch["heads"][1][h].get<double>(), 0.25) << h;
    const std::string residual = lesson["steps"][3]["text"]["en"];
    const auto& rows = patch["residual"];
    EXPECT_NE(residual.find("position 10, " + rounded(rows[1][10].get<double>())),
              std::string::npos);
    EXPECT_NE(residual.find("(" + rounded(rows[2][18].get<double>()) + ")"), std::string::npos);
    for (int position = 0; position < 18; ++position)
        EXPECT_LT(std::abs(rows[2][position].get<double>()), 0.2) << position;
}

TEST_F(ModelLens, HelpDescribesTheLensOptions) {
    const test::CommandResult run = model({"--help"});
    ASSERT_EQ(run.status, 0);
    for (const std::string option : {"--logit-lens", "--attribution", "--patch", "--metric",
                                     "logit_lens", "patch_residual", "attribution_heads"})
        EXPECT_NE(run.out.find(option), std::string::npos) << option;
}

} // namespace
} // namespace attnlab

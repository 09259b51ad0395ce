// `attnlab render --view patching`: the Patch tab drawn with no display. Its data are the
// numbers `attnlab model --patch --json` prints for the same prompts and metric (the core's
// activation patching, checked against plain PyTorch in tests/model/lens_test.cpp), for the
// heads and the residual stream; bad input exits 2 with one line and writes nothing.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "command_runner.h"

namespace attnlab {
namespace {

const std::string kClean =
    "The fox key mat owl sun red cup hat dog fox key mat owl sun red cup hat";
const std::string kCorrupted =
    "The owl hat fox sun dog cup key red mat fox key mat owl sun red cup hat";

std::string inductionModel() {
    return std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction";
}

class RenderPatching : public test::CommandFolderTest {
protected:
    test::CommandResult run(const std::string& command,
                            const std::vector<std::string>& args) const {
        return runIn(ATTNLAB_BINARY, command, args);
    }
};

TEST_F(RenderPatching, DrawsWhatTheModelCommandComputes) {
    const test::CommandResult reference =
        run("model", {"--model", inductionModel(), "--text", kClean, "--patch", kCorrupted,
                      "--metric", "logit-diff: dog, cup", "--json"});
    ASSERT_EQ(reference.status, 0) << reference.err;
    const auto patch = nlohmann::json::parse(reference.out)["patch"];

    for (const std::string target : {"heads", "residual"}) {
        SCOPED_TRACE(target);
        const std::string data = file("patch_" + target + ".json");
        const std::string figure = file("patch_" + target + ".png");
        const test::CommandResult drawn =
            run("render", {"--model", inductionModel(), "--text", kClean, "--view", "patching",
                           "--patch", kCorrupted, "--metric", "logit-diff: dog, cup",
                           "--patch-target", target, "--out", figure, "--data", data});
        ASSERT_EQ(drawn.status, 0) << drawn.err;
        EXPECT_GT(std::filesystem::file_size(figure), 1000u);
        const auto table = nlohmann::json::parse(test::readWholeFile(data));
        EXPECT_EQ(table["patched"], target);
        EXPECT_EQ(table["metric"], patch["metric"]);
        EXPECT_NEAR(table["clean"].get<double>(), patch["clean"].get<double>(), 1e-6);
        EXPECT_NEAR(table["corrupted"].get<double>(), patch["corrupted"].get<double>(), 1e-6);
        const auto& expected = patch[target];
        const auto& values = table["values"];
        ASSERT_EQ(values.size(), expected.size());
        for (std::size_t r = 0; r < values.size(); ++r) {
            ASSERT_EQ(values[r].size(), expected[r].size());
            for (std::size_t c = 0; c < values[r].size(); ++c)
                EXPECT_NEAR(values[r][c].get<double>(), expected[r][c].get<double>(), 1e-6)
                    << r << "," << c;
        }
    }
}

TEST_F(RenderPatching, BadInputIsOneLineAndNothingWritten) {
    const std::string figure = file("patch.png");
    const auto rejected = [&](std::vector<std::string> args, const std::string& words) {
        args.insert(args.end(), {"--out", figure});
        const test::CommandResult drawn = run("render", args);
        EXPECT_EQ(drawn.status, 2) << drawn.err;
        EXPECT_EQ(std::count(drawn.err.begin(), drawn.err.end(), '\n'), 1) << drawn.err;
        EXPECT_NE(drawn.err.find(words), std::string::npos) << drawn.err;
        EXPECT_FALSE(std::filesystem::exists(figure));
    };
    const std::string model = inductionModel();
    rejected({"--model", model, "--text", kClean, "--view", "patching"}, "--patch");
    rejected({"--model", model, "--text", kClean, "--view", "heads", "--patch", kCorrupted},
             "needs --view patching and --model");
    // Patching options that are wrong, each after the same model, text and view.
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--patch", "The owl"}, "same number of tokens"},
        {{"--patch", kCorrupted, "--metric", "logit-diff: dog, dog"}, "same token"},
        {{"--patch", kCorrupted, "--metric", "dog,fox"}, "logit-diff:A,B"},
        {{"--patch", kClean, "--metric", "logit-diff: dog, fox"}, "same logit difference"},
        {{"--patch", kCorrupted, "--patch-target", "mlp"}, "--patch-target"},
    };
    for (const auto& [options, words] : cases) {
        std::vector<std::string> args = {"--model", model, "--text", kClean, "--view", "patching"};
        args.insert(args.end(), options.begin(), options.end());
        rejected(args, words);
    }
}

} // namespace
} // namespace attnlab

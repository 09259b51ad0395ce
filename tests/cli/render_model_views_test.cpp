// `attnlab render --view next-token | head-roles` on the bundled trained model: a figure of
// the requested size comes out, and without --model the view is refused with one line, status
// 2 and no file.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "command_runner.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

const std::string kModel =
    std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction";

class RenderModelViews : public ::testing::TestWithParam<std::string> {
protected:
    test::CommandResult render(const std::vector<std::string>& args) const {
        std::vector<std::string> all = {"render"};
        all.insert(all.end(), args.begin(), args.end());
        return test::runCommand(ATTNLAB_BINARY, all, m_dir.path() / "capture");
    }
    test::TempDir m_dir{"attnlab_render_model_views"};
};

/// Width and height of a PNG from its IHDR chunk.
std::pair<int, int> pngSize(const std::string& bytes) {
    if (bytes.size() < 24 || bytes.compare(1, 3, "PNG") != 0) return {0, 0};
    const auto be = [&](std::size_t at) {
        return (static_cast<unsigned char>(bytes[at]) << 24) |
               (static_cast<unsigned char>(bytes[at + 1]) << 16) |
               (static_cast<unsigned char>(bytes[at + 2]) << 8) |
               static_cast<unsigned char>(bytes[at + 3]);
    };
    return {be(16), be(20)};
}

TEST_P(RenderModelViews, DrawsTheBundledModel) {
    const std::string out = m_dir.file(GetParam() + ".png");
    for (const char* theme : {"light", "projector"}) {
        const auto run =
            render({"--model", kModel, "--text", "the cat sat on the mat", "--view", GetParam(),
                    "--out", out, "--width", "640", "--height", "360", "--theme", theme});
        ASSERT_EQ(run.status, 0) << run.err;
        EXPECT_EQ(pngSize(test::readWholeFile(out)), std::make_pair(640, 360));
    }
}

TEST_P(RenderModelViews, RefusesTheViewWithoutAModel) {
    const std::string out = m_dir.file("refused.png");
    const auto run = render({"--tokens", "a b c", "--view", GetParam(), "--out", out});
    EXPECT_EQ(run.status, 2);
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_NE(run.err.find("--model"), std::string::npos) << run.err;
    EXPECT_FALSE(std::filesystem::exists(out));
}

std::string viewTestName(const ::testing::TestParamInfo<std::string>& param) {
    std::string name = param.param;
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

INSTANTIATE_TEST_SUITE_P(Views, RenderModelViews, ::testing::Values("next-token", "head-roles"),
                         viewTestName);

} // namespace
} // namespace attnlab

// --model by Hub id in `render` and the window (a build with the window only: the CMake list
// leaves render* and window* files out without it). The model is found in a Hugging Face
// cache built by hand (tests/support/fake_hub_cache.h); a model missing from it stops the
// window's --screenshots run with one line naming the cache.

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "command_runner.h"
#include "fake_hub_cache.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

class WindowHub : public test::CommandFolderTest {
protected:
    void SetUp() override {
        test::CommandFolderTest::SetUp();
        m_cache.emplace(m_root / "hub");
        m_env.set("HF_HUB_CACHE", m_cache->root().string());
        m_env.set("QT_QPA_PLATFORM", "offscreen");
        m_cache->addSnapshot("attnlab/tiny-llama-induction", test::kCommitB,
                             std::string(ATTNLAB_SOURCE_DIR) +
                                 "/resources/models/tiny-llama-induction",
                             {"config.json", "model.safetensors", "tokenizer.json"});
        m_cache->setRef("attnlab/tiny-llama-induction", "main", test::kCommitB);
    }

    test::CommandResult attnlab(const std::vector<std::string>& args) const {
        return test::runCommand(ATTNLAB_BINARY, args, m_root / "capture");
    }

    test::EnvironmentScope m_env;
    std::optional<test::FakeHubCache> m_cache;
};

TEST_F(WindowHub, RenderTakesAnId) {
    const auto render = attnlab({"render", "--model", "attnlab/tiny-llama-induction", "--text",
                                 "the cat sat on the mat", "--layer", "1", "--view", "heatmap",
                                 "--out", file("l1.png")});
    ASSERT_EQ(render.status, 0) << render.err;
    EXPECT_GT(fs::file_size(file("l1.png")), 0u);
    const auto missing = attnlab({"render", "--model", "org/absent", "--text", "a b", "--view",
                                  "heatmap", "--out", file("x.png")});
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("attnlab render: --model: 'org/absent' is not a folder"),
              std::string::npos)
        << missing.err;
    EXPECT_FALSE(fs::exists(file("x.png")));
}

TEST_F(WindowHub, TheWindowOpensAnIdOrSaysWhyNot) {
    const std::string out = file("shots");
    const auto run =
        attnlab({"--model", "attnlab/tiny-llama-induction", "--text", "the cat sat on the mat",
                 "--size", "1280x720", "--screenshots", out});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_TRUE(fs::exists(out + "/heatmap.png"));
    const auto missing = attnlab({"--model", "org/absent", "--screenshots", file("none")});
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("attnlab: --model: 'org/absent' is not a folder, and no model "
                               "'org/absent' in the Hugging Face cache at " +
                               m_cache->root().string()),
              std::string::npos)
        << missing.err;
}

} // namespace
} // namespace attnlab

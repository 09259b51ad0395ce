// `attnlab render --model DIR --text "..."` end to end on the bundled trained model: the figure's
// title names the model, the layer and the head it was asked for (SVG keeps text as text),
// every view that applies draws, and a view that does not, a bad layer/head, a bad folder or a
// missing --text are one line on stderr, exit status 2 and no file.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "command_runner.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

const std::string kModel =
    std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction";
const std::string kText = "the cat sat on the mat. the cat sat on";

class RenderModel : public ::testing::Test {
protected:
    test::CommandResult attnlab(const std::vector<std::string>& args) const {
        return test::runCommand(ATTNLAB_BINARY, args, m_dir.path() / "capture");
    }
    static int lines(const std::string& text) {
        int count = 0;
        for (char c : text)
            count += c == '\n';
        return count;
    }
    test::TempDir m_dir{"attnlab_render_model"};
};

TEST_F(RenderModel, TitleNamesModelLayerAndHead) {
    const std::string out = m_dir.file("l1h1.svg");
    const auto run = attnlab({"render", "--model", kModel, "--text", kText, "--layer", "1",
                              "--head", "1", "--view", "heatmap", "--out", out});
    ASSERT_EQ(run.status, 0) << run.err;
    const std::string svg = test::readWholeFile(out);
    EXPECT_NE(svg.find("tiny-llama-induction, layer 1"), std::string::npos);
    EXPECT_NE(svg.find("head 1 of 4"), std::string::npos);
    // The tokens are the model's (byte-level BPE pieces shown without their markers).
    EXPECT_NE(svg.find("mat"), std::string::npos);
    EXPECT_EQ(svg.find("\xc4\xa0"), std::string::npos) << "a raw 'Ġ' marker reached the figure";
    // Fonts by CSS's names, which SVG readers know (Qt's own "Sans Serif" is not one).
    EXPECT_NE(svg.find("font-family=\"sans-serif\""), std::string::npos);
    EXPECT_EQ(svg.find("font-family=\"Sans Serif\""), std::string::npos);
    // Another layer and head give another title.
    const std::string other = m_dir.file("l2h3.svg");
    ASSERT_EQ(attnlab({"render", "--model", kModel, "--text", kText, "--layer", "2", "--head", "3",
                       "--view", "heatmap", "--out", other})
                  .status,
              0);
    const std::string otherSvg = test::readWholeFile(other);
    EXPECT_NE(otherSvg.find("tiny-llama-induction, layer 2"), std::string::npos);
    EXPECT_NE(otherSvg.find("head 3 of 4"), std::string::npos);
}

TEST_F(RenderModel, EveryViewThatAppliesDraws) {
    // The views a model's layer feeds, each as a PNG; compare (a lab session with one change)
    // is refused with one line.
    for (const std::string view :
         {"heatmap", "heads", "entropy", "statistics", "flash", "kv-cache", "rope", "lines",
          "model", "aggregate", "head-stats", "mask", "scores"}) {
        const std::string out = m_dir.file(view + ".png");
        const auto run =
            attnlab({"render", "--model", kModel, "--text", kText, "--layer", "1", "--view", view,
                     "--out", out, "--width", "480", "--height", "320"});
        EXPECT_EQ(run.status, 0) << view << ": " << run.err;
        EXPECT_TRUE(fs::exists(out)) << view;
        EXPECT_GT(fs::exists(out) ? fs::file_size(out) : 0, 1000u) << view;
    }
    const std::string out = m_dir.file("compare.png");
    const auto refused =
        attnlab({"render", "--model", kModel, "--text", kText, "--view", "compare", "--out", out});
    EXPECT_EQ(refused.status, 2);
    EXPECT_EQ(lines(refused.err), 1) << refused.err;
    EXPECT_NE(refused.err.find("--view compare"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(out));
}

// The translation view steps through the words the model writes: --all-steps gives one frame a
// word, --step N the rows written up to word N, the last of them reading the English word the
// grammar aligns it with (resources/models/tiny-marian-en-zh/README.md, layer 1 head 3).
TEST_F(RenderModel, TheTranslationViewStepsThroughTheWordsWritten) {
    const std::string marian =
        std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-marian-en-zh";
    const std::vector<std::string> base = {"render", "--model", marian, "--text",
                                           "the cat sat on the mat", "--layer", "1", "--head",
                                           "3", "--view", "translation"};
    std::vector<std::string> frames = base;
    frames.insert(frames.end(), {"--all-steps", "--out", m_dir.file("frames")});
    const auto all = attnlab(frames);
    ASSERT_EQ(all.status, 0) << all.err;
    int count = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(m_dir.file("frames")))
        ++count;
    EXPECT_EQ(count, 7) << "猫 坐 在 垫子 上 。 </s>";

    std::vector<std::string> third = base;
    third.insert(third.end(), {"--step", "3", "--data", m_dir.file("step3.csv"), "--out",
                               m_dir.file("step3.png")});
    const auto run = attnlab(third);
    ASSERT_EQ(run.status, 0) << run.err;
    const std::string csv = test::readWholeFile(m_dir.file("step3.csv"));
    // A header and the four rows written so far, the last one the fourth word.
    EXPECT_EQ(lines(csv), 5) << csv;
    const std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);
    EXPECT_EQ(last.rfind("垫子,", 0), 0u) << last;
    // Its largest weight is in the column of "mat" (the sixth of seven source tokens).
    std::vector<double> values;
    for (std::size_t at = last.find(','); at != std::string::npos; at = last.find(',', at + 1))
        values.push_back(std::stod(last.substr(at + 1)));
    ASSERT_EQ(values.size(), 7u);
    EXPECT_EQ(std::max_element(values.begin(), values.end()) - values.begin(), 5);

    // A decoder-only model cannot translate: one line, no file.
    const auto refused = attnlab({"render", "--model", kModel, "--text", kText, "--view",
                                  "translation", "--out", m_dir.file("none.png")});
    EXPECT_EQ(refused.status, 2);
    EXPECT_EQ(lines(refused.err), 1) << refused.err;
    EXPECT_FALSE(fs::exists(m_dir.file("none.png")));
}

TEST_F(RenderModel, BadInputIsOneLineAndNoFile) {
    const std::string out = m_dir.file("bad.png");
    const std::string empty = m_dir.file("empty_folder");
    fs::create_directories(empty);
    struct Case {
        std::vector<std::string> args;
        std::string culprit;
    };
    const std::vector<Case> cases = {
        {{"--model", kModel, "--text", kText, "--layer", "3"}, "--layer 3"},
        {{"--model", kModel, "--text", kText, "--head", "4"}, "--head 4"},
        {{"--model", kModel}, "--text"},
        {{"--model", empty, "--text", kText}, "empty_folder"},
        {{"--model", kModel, "--text", kText, "--tokens", "a b"}, "--tokens"},
        {{"--text", kText}, "--model"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = {"render"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        args.insert(args.end(), {"--view", "heatmap", "--out", out});
        const auto run = attnlab(args);
        EXPECT_EQ(run.status, 2) << c.culprit;
        EXPECT_EQ(lines(run.err), 1) << run.err;
        EXPECT_NE(run.err.find(c.culprit), std::string::npos) << run.err;
        EXPECT_FALSE(fs::exists(out)) << c.culprit;
    }
}

} // namespace
} // namespace attnlab

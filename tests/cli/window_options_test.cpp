// The window's command line through the built binary (offscreen): `attnlab --help` lists the
// window's options, `--lesson` (a file or a bundled lesson's name) and a lesson given where a
// session goes open the lesson, and `--screenshots` then grabs each of its steps; a lesson that
// is not there is one line on stderr, exit status 2 and no file.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "command_runner.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

class WindowOptions : public ::testing::Test {
protected:
    test::CommandResult attnlab(const std::vector<std::string>& args) const {
        return test::runCommand(ATTNLAB_BINARY, args, m_dir.path() / "capture");
    }
    static int filesIn(const std::string& directory) {
        if (!fs::is_directory(directory)) return 0;
        int count = 0;
        for ([[maybe_unused]] const auto& entry : fs::directory_iterator(directory))
            ++count;
        return count;
    }
    static int stepsOf(const std::string& lesson) {
        return static_cast<int>(
            nlohmann::json::parse(test::readWholeFile(lesson))["steps"].size());
    }
    test::TempDir m_dir{"attnlab_window_options"};
};

// The headless commands load none of the window's libraries: the dynamic loader, asked to list
// what the binary loads (LD_TRACE_LOADED_OBJECTS, what ldd sets), names no Qt library, while the
// window it runs for render and the window does (the lesson and render tests run through it).
TEST_F(WindowOptions, TheHeadlessCommandsLoadNoQt) {
    const auto loaded = [this](const std::string& binary) {
        setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
        const auto result = test::runCommand(binary, {"--version"}, m_dir.path() / "capture");
        unsetenv("LD_TRACE_LOADED_OBJECTS");
        return result;
    };
    const auto headless = loaded(ATTNLAB_BINARY);
    ASSERT_EQ(headless.status, 0) << headless.err;
    EXPECT_NE(headless.out.find("libc.so"), std::string::npos) << headless.out;
    EXPECT_EQ(headless.out.find("libQt6"), std::string::npos) << headless.out;
    const fs::path window = fs::path(ATTNLAB_BINARY).parent_path() / "attnlab-window";
    const auto full = loaded(window.string());
    ASSERT_EQ(full.status, 0) << full.err;
    EXPECT_NE(full.out.find("libQt6Widgets"), std::string::npos) << full.out;
}

TEST_F(WindowOptions, HelpListsTheWindowsOptions) {
    const auto run = attnlab({"--help"});
    ASSERT_EQ(run.status, 0) << run.err;
    for (const char* option : {"--language", "--theme", "--model", "--text", "--lesson",
                               "--example", "--screenshots", "--size"})
        EXPECT_NE(run.out.find(option), std::string::npos) << option;
}

TEST_F(WindowOptions, ALessonOpensByNameOrPathAndEachStepIsGrabbed) {
    const std::string lessons = std::string(ATTNLAB_SOURCE_DIR) + "/resources/lessons/";
    const std::string byName = m_dir.file("by_name");
    const auto named = attnlab({"--lesson", "16_translation", "--size", "1280x720",
                                "--screenshots", byName});
    ASSERT_EQ(named.status, 0) << named.err;
    EXPECT_EQ(filesIn(byName), stepsOf(lessons + "16_translation.json"));
    EXPECT_TRUE(fs::exists(byName + "/lesson_step_01.png"));

    // A lesson where a session goes is opened as the lesson it is.
    const std::string positional = m_dir.file("positional");
    const auto opened = attnlab({lessons + "03_causal_and_padding_masks.json", "--size", "1280x720",
                                 "--screenshots", positional});
    ASSERT_EQ(opened.status, 0) << opened.err;
    EXPECT_EQ(opened.err.find("not an AttnLab session"), std::string::npos) << opened.err;
    // No view is laid out with an invalid layout (QCustomPlot warns of a factor <= 0).
    EXPECT_EQ(opened.err.find("QCP"), std::string::npos) << opened.err;
    EXPECT_EQ(filesIn(positional), stepsOf(lessons + "03_causal_and_padding_masks.json"));
}

TEST_F(WindowOptions, ATextLongerThanTheModelReadsRunsInTheLab) {
    // The model opens, cannot run 300 tokens in its 129 positions, and the text is not lost:
    // the lab session runs it and the window goes on to grab its views.
    std::string text;
    for (int i = 0; i < 300; ++i)
        text += "cat ";
    const std::string out = m_dir.file("long");
    const auto run = attnlab({"--model",
                              std::string(ATTNLAB_SOURCE_DIR) +
                                  "/resources/models/tiny-llama-induction",
                              "--text", text, "--size", "1280x720", "--screenshots", out});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_TRUE(fs::exists(out + "/heatmap.png"));
}

TEST_F(WindowOptions, AMissingLessonIsOneLineAndNoFile) {
    const std::string out = m_dir.file("none");
    const auto run = attnlab({"--lesson", m_dir.file("no_such_lesson.json"), "--screenshots", out});
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.err.find("no_such_lesson.json"), std::string::npos) << run.err;
    EXPECT_EQ(filesIn(out), 0);
}

} // namespace
} // namespace attnlab

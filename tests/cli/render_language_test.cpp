// `attnlab render --language zh_CN`: the figure's own texts (title, axes, legend) come out
// in Chinese, as text in the SVG; English stays the default; an unknown language is one line
// on stderr, status 2 and no file.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "command_runner.h"

namespace {

namespace fs = std::filesystem;
using attnlab::test::readWholeFile;
using attnlab::test::runCommand;

/// Code points of the CJK Unified Ideographs block (U+4E00..U+9FFF) in UTF-8 text: lead byte
/// 0xE4..0xE9 followed by two continuation bytes.
int cjkCount(const std::string& utf8) {
    int count = 0;
    for (std::size_t i = 0; i + 2 < utf8.size(); ++i) {
        const auto lead = static_cast<unsigned char>(utf8[i]);
        const auto second = static_cast<unsigned char>(utf8[i + 1]);
        const auto third = static_cast<unsigned char>(utf8[i + 2]);
        if (lead >= 0xE4 && lead <= 0xE9 && (second & 0xC0) == 0x80 && (third & 0xC0) == 0x80) {
            ++count;
            i += 2;
        }
    }
    return count;
}

class RenderLanguage : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("attnlab_render_language_" +
                 std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }
    fs::path m_dir;
};

TEST_F(RenderLanguage, ChineseFigureHasChineseTextInTheSvg) {
    for (const char* view : {"entropy", "flash", "complexity"}) {
        const fs::path chinese = m_dir / (std::string(view) + "_zh.svg");
        const fs::path english = m_dir / (std::string(view) + "_en.svg");
        const auto zh = runCommand(ATTNLAB_BINARY,
                                   {"render", "--tokens", "the cat sat on the mat", "--view", view,
                                    "--language", "zh_CN", "--out", chinese.string()},
                                   m_dir / "zh");
        ASSERT_EQ(zh.status, 0) << zh.err;
        const auto en = runCommand(ATTNLAB_BINARY,
                                   {"render", "--tokens", "the cat sat on the mat", "--view", view,
                                    "--out", english.string()},
                                   m_dir / "en");
        ASSERT_EQ(en.status, 0) << en.err;
        const std::string zhSvg = readWholeFile(chinese);
        const std::string enSvg = readWholeFile(english);
        EXPECT_NE(zhSvg.find("<svg"), std::string::npos);
        // Chinese glyphs are written as text (a viewer can search and re-render them).
        EXPECT_GE(cjkCount(zhSvg), 2) << view;
        EXPECT_EQ(cjkCount(enSvg), 0) << view;
        // The tokens are data, not translated.
        if (std::string(view) == "entropy") {
            EXPECT_NE(zhSvg.find("cat"), std::string::npos);
        }
    }
}

TEST_F(RenderLanguage, UnknownLanguageIsOneLineAndNoFile) {
    const fs::path out = m_dir / "f.svg";
    const auto result = runCommand(ATTNLAB_BINARY,
                                   {"render", "--tokens", "a b", "--view", "heatmap", "--language",
                                    "tlh", "--out", out.string()},
                                   m_dir / "bad");
    EXPECT_EQ(result.status, 2);
    EXPECT_NE(result.err.find("--language"), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_FALSE(fs::exists(out));
}

} // namespace

// `attnlab render` end to end: every view in every figure format comes out at the requested
// size (PNG pixels from the IHDR chunk, SVG width/height, PDF MediaBox), SVG and PDF keep
// the token labels as text, steps render and export, and every bad argument exits with
// status 2, one line on stderr and no file.

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/io/npy.h"
#include "npy_image.h"

namespace {

namespace fs = std::filesystem;

struct RunResult {
    int status = -1;
    std::string out;
    std::string err;
};

std::string quote(const std::string& text) {
    std::string quoted = "'";
    for (char c : text) {
        if (c == '\'')
            quoted += "'\\''";
        else
            quoted += c;
    }
    return quoted + "'";
}

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

class Render : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("attnlab_render_test_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    RunResult run(const std::vector<std::string>& args) const {
        std::string command = "QT_QPA_PLATFORM=offscreen " + quote(ATTNLAB_BINARY) + " render";
        for (const std::string& arg : args) {
            command += ' ';
            command += quote(arg);
        }
        const fs::path out = m_dir / "stdout.txt", err = m_dir / "stderr.txt";
        command += " >";
        command += quote(out.string());
        command += " 2>";
        command += quote(err.string());
        RunResult result;
        const int raw = std::system(command.c_str());
        result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
        result.out = readFile(out);
        result.err = readFile(err);
        fs::remove(out);
        fs::remove(err);
        return result;
    }

    /// Files in the test folder (the runner's own stdout/stderr files are removed by run()).
    std::vector<fs::path> files() const {
        std::vector<fs::path> list;
        for (const auto& entry : fs::recursive_directory_iterator(m_dir))
            list.push_back(entry.path());
        return list;
    }

    fs::path m_dir;
};

const std::vector<std::string> kRequiredViews = {"heatmap", "heads",      "entropy", "mask",
                                                 "scores",  "compare",    "flash",   "kv-cache",
                                                 "rope",    "complexity", "lines"};

const std::vector<std::string> kTokenViews = {"heatmap", "mask",  "scores",   "entropy",
                                              "compare", "flash", "kv-cache", "lines"};

std::vector<std::string> listViews(const RunResult& result) {
    std::vector<std::string> names;
    std::istringstream in(result.out);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) names.push_back(line);
    return names;
}

std::uint32_t bigEndian32(const std::string& bytes, std::size_t at) {
    return (std::uint32_t(std::uint8_t(bytes[at])) << 24) |
           (std::uint32_t(std::uint8_t(bytes[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(bytes[at + 2])) << 8) |
           std::uint32_t(std::uint8_t(bytes[at + 3]));
}

/// Sum of the IDAT chunk lengths of a PNG (its compressed pixels).
std::size_t idatBytes(const std::string& png) {
    std::size_t total = 0;
    for (std::size_t at = 8; at + 8 <= png.size();) {
        const std::uint32_t length = bigEndian32(png, at);
        if (png.compare(at + 4, 4, "IDAT") == 0) total += length;
        at += 12 + length;
    }
    return total;
}

/// A minimal XML well-formedness check: every element opened is closed in order.
bool xmlBalanced(const std::string& xml, std::string* problem) {
    std::vector<std::string> open;
    for (std::size_t at = xml.find('<'); at != std::string::npos; at = xml.find('<', at + 1)) {
        if (xml.compare(at, 4, "<!--") == 0) {
            at = xml.find("-->", at);
            if (at == std::string::npos) return *problem = "unclosed comment", false;
            continue;
        }
        if (xml.compare(at, 2, "<?") == 0 || xml.compare(at, 2, "<!") == 0) continue;
        const std::size_t end = xml.find('>', at);
        if (end == std::string::npos) return *problem = "unclosed tag", false;
        std::string tag = xml.substr(at + 1, end - at - 1);
        if (tag.empty()) return *problem = "empty tag", false;
        if (tag[0] == '/') {
            const std::string name = tag.substr(1, tag.find_first_of(" \t\n") - 1);
            if (open.empty() || open.back() != name)
                return *problem =
                           "</" + name + "> closes " + (open.empty() ? "nothing" : open.back()),
                       false;
            open.pop_back();
        } else if (tag.back() != '/') {
            open.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
        }
    }
    if (!open.empty()) return *problem = "<" + open.back() + "> never closed", false;
    return true;
}

bool haveTool(const std::string& name) {
    std::string command = "command -v ";
    command += name;
    command += " >/dev/null 2>&1";
    return std::system(command.c_str()) == 0;
}

TEST_F(Render, ListViewsHasEveryRequiredView) {
    const RunResult result = run({"--list-views"});
    ASSERT_EQ(result.status, 0) << result.err;
    const std::vector<std::string> names = listViews(result);
    for (const std::string& view : kRequiredViews)
        EXPECT_NE(std::find(names.begin(), names.end(), view), names.end()) << view;
}

/// What a view draws from: the lab's session, or (for the views that probe a model's own run)
/// a bundled model of the kind the view reads.
std::vector<std::string> sourceOf(const std::string& view) {
    const std::string models = std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/";
    if (view == "next-token" || view == "head-roles" || view == "logit-lens" ||
        view == "attribution")
        return {"--model", models + "tiny-llama-induction", "--text", "the cat sat on the mat"};
    if (view == "translation")
        return {"--model", models + "tiny-marian-en-zh", "--text", "the cat sat on the mat"};
    if (view == "image-attention")
        return {"--model", models + "tiny-vit-shapes", "--image",
                std::string(ATTNLAB_SOURCE_DIR) + "/resources/images/shapes/circle.png"};
    if (view == "fill-mask")
        return {"--model", models + "tiny-bert-en", "--text", "the cat [MASK] on the mat."};
    // Patching: lesson 17's repeated sequence against the shuffled one.
    if (view == "patching")
        return {"--model",
                std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction",
                "--text", "The fox key mat owl sun red cup hat dog fox key mat owl sun red cup hat",
                "--patch",
                "The owl hat fox sun dog cup key red mat fox key mat owl sun red cup hat"};
    return {"--tokens", "the cat sat on the mat", "--heads", "2"};
}

std::vector<std::string> concat(std::vector<std::string> head,
                                const std::vector<std::string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
}

TEST_F(Render, EveryViewInEveryFormatHasTheRequestedSize) {
    const std::vector<std::string> views = listViews(run({"--list-views"}));
    ASSERT_FALSE(views.empty());
    const bool pdftotext = haveTool("pdftotext");
    for (const std::string& view : views) {
        SCOPED_TRACE(view);
        const std::vector<std::string> source = sourceOf(view);
        // PNG: width * scale x height * scale pixels, and not one flat colour.
        const fs::path png = m_dir / (view + ".png");
        RunResult result = run(concat(source, {"--view", view, "--out", png.string(), "--width",
                                               "500", "--height", "320", "--scale-factor", "1.5"}));
        ASSERT_EQ(result.status, 0) << result.err;
        EXPECT_EQ(result.err, "");
        const std::string bytes = readFile(png);
        ASSERT_GT(bytes.size(), 24u);
        EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
        EXPECT_EQ(bytes.substr(12, 4), "IHDR");
        EXPECT_EQ(bigEndian32(bytes, 16), 750u);
        EXPECT_EQ(bigEndian32(bytes, 20), 480u);
        // A flat 750 x 480 image deflates to well under 2 KB; a figure with text and plots
        // does not.
        EXPECT_GT(idatBytes(bytes), 4000u);

        // SVG: well formed, the requested size, token labels as text.
        const fs::path svg = m_dir / (view + ".svg");
        result = run(concat(
            source, {"--view", view, "--out", svg.string(), "--width", "640", "--height", "400"}));
        ASSERT_EQ(result.status, 0) << result.err;
        const std::string xml = readFile(svg);
        std::string problem;
        EXPECT_TRUE(xmlBalanced(xml, &problem)) << problem;
        EXPECT_NE(xml.find("<svg"), std::string::npos);
        std::smatch match;
        ASSERT_TRUE(std::regex_search(xml, match, std::regex(R"(viewBox="0 0 640 400")")))
            << xml.substr(0, 600);
        // Views that label every token (the cost model, tables and model dumps do not).
        const bool labelsTokens =
            std::find(kTokenViews.begin(), kTokenViews.end(), view) != kTokenViews.end();
        if (labelsTokens) {
            EXPECT_TRUE(std::regex_search(xml, std::regex(R"(<text[^>]*>[^<]*\bcat\b)")))
                << "no 'cat' text element";
        }

        // PDF: a PDF whose page is the requested size in points, with the tokens as text.
        const fs::path pdf = m_dir / (view + ".pdf");
        result = run(concat(
            source, {"--view", view, "--out", pdf.string(), "--width", "600", "--height", "380"}));
        ASSERT_EQ(result.status, 0) << result.err;
        const std::string document = readFile(pdf);
        EXPECT_EQ(document.substr(0, 5), "%PDF-");
        EXPECT_TRUE(std::regex_search(
            document, std::regex(R"(/MediaBox\s*\[\s*0\s+0\s+600(\.0+)?\s+380(\.0+)?\s*\])")));
        if (pdftotext && labelsTokens) {
            const fs::path text = m_dir / (view + ".txt");
            std::string command = "pdftotext ";
            command += quote(pdf.string());
            command += ' ';
            command += quote(text.string());
            ASSERT_EQ(std::system(command.c_str()), 0);
            EXPECT_NE(readFile(text).find("cat"), std::string::npos);
        }
    }
    if (!pdftotext)
        GTEST_SKIP() << "pdftotext (poppler-utils) is not installed: PDF text unchecked";
}

TEST_F(Render, SessionFileAndOverridesAreUsed) {
    const fs::path session =
        fs::path(ATTNLAB_SOURCE_DIR) / "resources/examples/cat_full_vs_causal.json";
    ASSERT_TRUE(fs::exists(session));
    const fs::path svg = m_dir / "session.svg";
    RunResult result = run({"--session", session.string(), "--tokens", "alpha beta gamma", "--mask",
                            "causal", "--view", "heatmap", "--out", svg.string()});
    ASSERT_EQ(result.status, 0) << result.err;
    const std::string xml = readFile(svg);
    EXPECT_NE(xml.find("gamma"), std::string::npos);
    EXPECT_EQ(xml.find(">cat<"), std::string::npos);
}

TEST_F(Render, FlashStepsDifferAndAllStepsExport) {
    const std::vector<std::string> common = {"--tokens",       "a b c d e", "--variant",    "flash",
                                             "--mask",         "causal",    "--block-size", "2",
                                             "--q-block-size", "2",         "--view",       "flash",
                                             "--width",        "400",       "--height",     "300"};
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> args = common;
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    ASSERT_EQ(run(with({"--step", "1", "--out", (m_dir / "s1.png").string()})).status, 0);
    ASSERT_EQ(run(with({"--step", "9", "--out", (m_dir / "s9.png").string()})).status, 0);
    EXPECT_NE(readFile(m_dir / "s1.png"), readFile(m_dir / "s9.png"));
    // 5 tokens in tiles of 2: 3 x 3 = 9 tiles, so steps 0..9.
    RunResult bad = run(with({"--step", "10", "--out", (m_dir / "s10.png").string()}));
    EXPECT_EQ(bad.status, 2);
    EXPECT_FALSE(fs::exists(m_dir / "s10.png"));

    const fs::path frames = m_dir / "frames";
    ASSERT_EQ(run(with({"--all-steps", "--out", frames.string()})).status, 0);
    int count = 0;
    for (const auto& entry : fs::directory_iterator(frames)) {
        (void)entry;
        ++count;
    }
    EXPECT_EQ(count, 10);
    EXPECT_TRUE(fs::exists(frames / "frame_0001.png"));
    EXPECT_TRUE(fs::exists(frames / "frame_0010.png"));

    const fs::path pdf = m_dir / "steps.pdf";
    ASSERT_EQ(run(with({"--all-steps", "--out", pdf.string()})).status, 0);
    const std::string document = readFile(pdf);
    const std::regex page(R"(/Type\s*/Page[^s])");
    const auto pages = std::distance(std::sregex_iterator(document.begin(), document.end(), page),
                                     std::sregex_iterator());
    EXPECT_EQ(pages, 10);
}

TEST_F(Render, KvCacheStepsFollowThePrefill) {
    const fs::path png = m_dir / "kv.png";
    RunResult result = run({"--tokens", "a b c d e f", "--kv-cache-prefill", "2", "--view",
                            "kv-cache", "--step", "4", "--out", png.string()});
    ASSERT_EQ(result.status, 0) << result.err;
    // Prefill 2 of 6 tokens: the prefill step and 4 decode steps, so 0..4.
    result = run({"--tokens", "a b c d e f", "--kv-cache-prefill", "2", "--view", "kv-cache",
                  "--step", "5", "--out", (m_dir / "kv5.png").string()});
    EXPECT_EQ(result.status, 2);
    EXPECT_FALSE(fs::exists(m_dir / "kv5.png"));
}

TEST_F(Render, DumpRefusesViewsThatCannotDrawIt) {
    // #9: `render --dump --view flash` drew a 0 x 0 figure. A dump of weights has no Q and K
    // to tile or rotate and no session to decode or compare: those views are refused.
    attnlab::NpyArray weights;
    weights.shape = {2, 3, 3}; // [H, S, S], rows that are distributions
    weights.data.assign(18, 1.0f / 3.0f);
    const std::string dump = (m_dir / "attn.npy").string();
    ASSERT_FALSE(attnlab::writeNpy(dump, weights, attnlab::DType::Float32));
    const std::string out = (m_dir / "figure.png").string();
    for (const std::string view : {"flash", "kv-cache", "rope", "compare"}) {
        SCOPED_TRACE(view);
        const RunResult result = run({"--dump", dump, "--view", view, "--out", out});
        EXPECT_EQ(result.status, 2);
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_NE(result.err.find("--view " + view), std::string::npos) << result.err;
        EXPECT_NE(result.err.find("attn.npy"), std::string::npos) << result.err;
        EXPECT_FALSE(fs::exists(out));
    }
    const RunResult heatmap = run({"--dump", dump, "--view", "heatmap", "--out", out});
    EXPECT_EQ(heatmap.status, 0) << heatmap.err;
    EXPECT_TRUE(fs::exists(out));
}

TEST_F(Render, ALongTextComparesOnceBsRunHasEnded) {
    // A 1 000-token session runs on the worker: B's run, asked for while A's ran, was still
    // going when render looked for it ("B cannot be computed for this session").
    std::string text;
    for (int i = 0; i < 1000; ++i)
        text += (i ? " w" : "w") + std::to_string(i % 37);
    const std::string out = (m_dir / "long_compare.png").string();
    const RunResult result =
        run({"--tokens", text, "--view", "compare", "--compare", "causal", "--out", out});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_TRUE(fs::exists(out));
}

TEST_F(Render, TheViewsThatProbeAModelNeedOne) {
    // Without --model these views have no run to draw: the window shows how to open a model,
    // which is no figure, so render says what is missing and writes nothing.
    const std::string out = (m_dir / "probe.png").string();
    for (const std::string view : {"next-token", "head-roles", "translation", "logit-lens",
                                   "attribution", "patching", "fill-mask"}) {
        SCOPED_TRACE(view);
        const RunResult result =
            run({"--tokens", "the cat sat on the mat", "--view", view, "--out", out});
        EXPECT_EQ(result.status, 2);
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_NE(result.err.find("--model DIR"), std::string::npos) << result.err;
        EXPECT_FALSE(fs::exists(out));
    }
}

struct BadCase {
    std::string name;
    std::vector<std::string> args;
};

using attnlab::test::npyImage;

TEST_F(Render, FilesFromAStrangerExitTwoWithOneLineNamingThem) {
    // #9 reproducers: each used to allocate gigabytes, abort, or draw NaN; now each is one
    // line naming the file, exit 2, and no figure.
    const std::string out = (m_dir / "figure.png").string();
    const std::string weights =
        npyImage("<f4", "(2, 2)",
                 std::string("\0\0\0\x3f", 4) + std::string("\0\0\0\x3f", 4) +
                     std::string("\0\0\0\x3f", 4) + std::string("\0\0\0\x3f", 4));
    // A stored member whose sizes claim 3.75 GB.
    const std::string lying = (m_dir / "lying.npz").string();
    ASSERT_FALSE(attnlab::writeNpzMembers(lying, {{"attentions", weights}}));
    {
        std::ifstream in(lying, std::ios::binary);
        std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::size_t central = image.find(std::string("PK\x01\x02", 4));
        ASSERT_NE(central, std::string::npos);
        for (std::size_t at : {std::size_t(22), central + 24})
            image.replace(at, 4, std::string("\0\0\0\xf0", 4));
        std::ofstream(lying, std::ios::binary) << image;
    }
    // 10^8 tokens of width 0.
    const std::string tokens = (m_dir / "tokens0.npz").string();
    ASSERT_FALSE(attnlab::writeNpzMembers(
        tokens, {{"attentions", weights}, {"tokens", npyImage("<U0", "(100000000,)", "")}}));
    // 4000 one-cell heads in one layer (16 KB): refused rather than drawn head by head.
    const std::string heads = (m_dir / "heads4000.npy").string();
    {
        std::string ones;
        for (int i = 0; i < 4000; ++i)
            ones += std::string("\0\0\x80\x3f", 4); // 1.0f
        std::ofstream(heads, std::ios::binary) << npyImage("<f4", "(1, 4000, 1, 1)", ones);
    }
    auto session = [&](const std::string& name, const std::string& attention) {
        const std::string path = (m_dir / name).string();
        std::ofstream(path) << R"({"attnlab_session": 1, "attention": {)" << attention << "}}";
        return path;
    };
    const std::string huge = session("huge.json", R"("scale": 1e400)");
    const std::string inf = session("inf.json", R"("scale": 1e308)");
    const std::string tiny = session("tiny.json", R"("temperature": 5e-324)");
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
        {"lying.npz", {"--dump", lying, "--view", "heatmap", "--out", out}},
        {"tokens0.npz", {"--dump", tokens, "--view", "heatmap", "--out", out}},
        {"heads4000.npy", {"--dump", heads, "--view", "heads", "--out", out}},
        {"attention.scale", {"--session", huge, "--view", "heatmap", "--out", out}},
        {"attention.scale", {"--session", inf, "--view", "heatmap", "--out", out}},
        {"attention.temperature", {"--session", tiny, "--view", "heatmap", "--out", out}},
    };
    for (const auto& [culprit, args] : cases) {
        SCOPED_TRACE(args[1]);
        const RunResult result = run(args);
        EXPECT_EQ(result.status, 2) << result.err;
        ASSERT_FALSE(result.err.empty());
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_NE(result.err.find(culprit), std::string::npos) << result.err;
        EXPECT_EQ(result.err.find("json.exception"), std::string::npos) << result.err;
        EXPECT_FALSE(fs::exists(out));
    }
}

// --color-range LO,HI: the heatmap's "range" scale, its colour bar naming the range; bad
// ranges exit 2 with one line naming the option, and nothing is written.
TEST_F(Render, ColorRangeSetsTheRangeScaleAndRefusesBadRanges) {
    const fs::path svg = m_dir / "range.svg";
    RunResult result = run({"--tokens", "the cat sat on the mat", "--view", "heatmap",
                            "--color-range", "0,0.01", "--out", svg.string()});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_NE(readFile(svg).find("weight (0 to 0.01)"), std::string::npos);
    // The same with the scale named too, and the range kept from a session on that scale.
    const fs::path session = m_dir / "range.json";
    std::ofstream(session) << R"({"view": {"color_scale": "range", "color_range": [0.25, 0.5]}})";
    result = run({"--session", session.string(), "--color-scale", "range", "--view", "heatmap",
                  "--out", svg.string()});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_NE(readFile(svg).find("weight (0.25 to 0.5)"), std::string::npos);
    fs::remove(svg);
    fs::remove(session);

    const std::vector<std::pair<std::string, std::string>> bad = {
        {"0.01", "--color-range: expected LO,HI (e.g. 0,0.01), got '0.01'"},
        {"0,0.01,1", "--color-range: expected LO,HI (e.g. 0,0.01), got '0,0.01,1'"},
        {"0,wide", "--color-range: 'wide' is not a number"},
        {",0.01", "--color-range: '' is not a number"},
        {"0,inf", "--color-range: 'inf' is not finite"},
        {"0.5,0.1", "--color-range: the low end 0.5 must be less than the high end 0.1"},
        {"0.1,0.1", "--color-range: the low end 0.1 must be less than the high end 0.1"},
    };
    const std::string out = (m_dir / "figure.png").string();
    for (const auto& [range, message] : bad) {
        SCOPED_TRACE(range);
        result =
            run({"--tokens", "a b", "--view", "heatmap", "--color-range", range, "--out", out});
        EXPECT_EQ(result.status, 2);
        EXPECT_EQ(result.err, "attnlab render: " + message + "\n");
        EXPECT_FALSE(fs::exists(out));
    }
    result = run({"--tokens", "a b", "--view", "heatmap", "--color-range", "0,0.01",
                  "--color-scale", "log", "--out", out});
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.err, "attnlab render: --color-range sets the range scale; it cannot go with "
                          "--color-scale log\n");
    result = run({"--tokens", "a b", "--view", "heatmap", "--color-scale", "range", "--out", out});
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.err, "attnlab render: --color-scale range needs --color-range LO,HI\n");
    EXPECT_FALSE(fs::exists(out));

    result = run({"--help"});
    EXPECT_NE(result.out.find("--color-range LO,HI"), std::string::npos) << result.out;
}

TEST_F(Render, BadArgumentsExitTwoWithOneLineAndNoFile) {
    const std::string out = (m_dir / "figure.png").string();
    const std::string badSession = (m_dir / "bad.json").string();
    { std::ofstream(badSession) << "{ not json"; }
    const std::string invalidSession = (m_dir / "invalid.json").string();
    {
        std::ofstream(invalidSession)
            << R"({"attnlab_session":1,"model":{"heads":3,"kv_heads":2}})";
    }
    const std::vector<BadCase> cases = {
        {"unknown view", {"--tokens", "a b", "--view", "nosuch", "--out", out}},
        {"unknown option", {"--tokens", "a b", "--view", "heatmap", "--out", out, "--frobnicate"}},
        {"bad number", {"--tokens", "a b", "--view", "heatmap", "--out", out, "--width", "wide"}},
        {"negative size", {"--tokens", "a b", "--view", "heatmap", "--out", out, "--height", "-3"}},
        {"bad scale",
         {"--tokens", "a b", "--view", "heatmap", "--out", out, "--scale-factor", "0"}},
        {"unreadable session",
         {"--session", (m_dir / "missing.json").string(), "--view", "heatmap", "--out", out}},
        {"malformed session", {"--session", badSession, "--view", "heatmap", "--out", out}},
        {"invalid session", {"--session", invalidSession, "--view", "heatmap", "--out", out}},
        {"invalid override",
         {"--tokens", "a b c", "--heads", "3", "--view", "heatmap", "--out", out}},
        {"unknown extension",
         {"--tokens", "a b", "--view", "heatmap", "--out", (m_dir / "figure.bmp").string()}},
        {"data extension",
         {"--tokens", "a b", "--view", "heatmap", "--out", (m_dir / "figure.csv").string()}},
        {"no input", {"--view", "heatmap", "--out", out}},
        {"no view", {"--tokens", "a b", "--out", out}},
        {"no out", {"--tokens", "a b", "--view", "heatmap"}},
        {"unknown theme",
         {"--tokens", "a b", "--view", "heatmap", "--out", out, "--theme", "neon"}},
        {"unknown colormap",
         {"--tokens", "a b", "--view", "heatmap", "--out", out, "--colormap", "jet"}},
        {"unknown variant",
         {"--tokens", "a b", "--view", "heatmap", "--out", out, "--variant", "fast"}},
        {"step on a still view",
         {"--tokens", "a b", "--view", "heatmap", "--out", out, "--step", "1"}},
        {"missing folder",
         {"--tokens", "a b", "--view", "heatmap", "--out", (m_dir / "no/such/dir/f.png").string()}},
        {"padding without length",
         {"--tokens", "a b", "--view", "heatmap", "--out", out, "--mask", "padding"}},
    };
    for (const BadCase& bad : cases) {
        SCOPED_TRACE(bad.name);
        const RunResult result = run(bad.args);
        EXPECT_EQ(result.status, 2);
        ASSERT_FALSE(result.err.empty());
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_EQ(result.err.back(), '\n');
        EXPECT_EQ(result.out, "");
        for (const fs::path& file : files())
            EXPECT_TRUE(file == badSession || file == invalidSession) << "left " << file;
    }
}

} // namespace

namespace attnlab {
namespace {

// render's image view on the tiny ViT fixture: the numbers behind the figure are the attention
// a float64 torch forward computed on Pillow's pixels of the same PNG, and numpy's rollout of
// them (tests/model/fixtures/vit/processed.npz, scripts/make_vision_fixtures.py).
TEST_F(Render, AnImageClassifiersFigureHoldsTheReferencesAttention) {
    const std::string vit = std::string(ATTNLAB_SOURCE_DIR) + "/tests/model/fixtures/vit";
    auto reference = readNpz(vit + "/processed.npz");
    ASSERT_TRUE(reference.ok()) << reference.error();
    const NpyArray& attentions = reference->at("image_attentions"); // [L, H, T, T]
    const NpyArray& rollout = reference->at("image_rollout");       // [T, T]
    const Index heads = attentions.shape[1], tokens = attentions.shape[2];
    const auto at = [&](Index l, Index h, Index q, Index k) {
        return attentions
            .data[static_cast<std::size_t>(((l * heads + h) * tokens + q) * tokens + k)];
    };
    struct Case {
        std::vector<std::string> options;
        std::function<double(Index patch)> expected;
    };
    const std::vector<Case> cases = {
        {{"--layer", "0", "--head", "1", "--query", "6"},
         [&](Index p) { return at(0, 1, 6, 1 + p); }},
        {{"--layer", "1", "--mean-heads"},
         [&](Index p) { return (at(1, 0, 0, 1 + p) + at(1, 1, 0, 1 + p)) / 2; }},
        {{"--layer", "1", "--rollout"},
         [&](Index p) { return rollout.data[static_cast<std::size_t>(1 + p)]; }},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.options.front() + " " + c.options.back());
        const fs::path data = m_dir / "grid.npy", png = m_dir / "figure.png";
        std::vector<std::string> args = {
            "--model", vit,           "--image", vit + "/image.png", "--view", "image-attention",
            "--data",  data.string(), "--out",   png.string()};
        args.insert(args.end(), c.options.begin(), c.options.end());
        const RunResult result = run(args);
        ASSERT_EQ(result.status, 0) << result.err;
        auto grid = readNpy(data.string());
        ASSERT_TRUE(grid.ok()) << grid.error();
        ASSERT_EQ(grid->shape, (std::vector<Index>{4, 4}));
        for (Index p = 0; p < 16; ++p)
            EXPECT_NEAR(grid->data[static_cast<std::size_t>(p)], c.expected(p), 1e-5) << p;
        EXPECT_TRUE(fs::exists(png));
    }
}

TEST_F(Render, AnImageClassifierRefusesWhatItCannotDrawWithoutWriting) {
    const std::string vit = std::string(ATTNLAB_SOURCE_DIR) + "/tests/model/fixtures/vit";
    const std::string image = vit + "/image.png";
    const std::string llama =
        std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction";
    const fs::path out = m_dir / "f.png";
    const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
        {{"--model", vit, "--text", "a cat", "--view", "heatmap"}, "give --image X.png"},
        {{"--model", vit, "--view", "heatmap"}, "give --image X.png"},
        {{"--model", llama, "--text", "a cat", "--image", image, "--view", "heatmap"},
         "reads text"},
        {{"--model", vit, "--image", image, "--view", "heatmap", "--rollout"},
         "--rollout needs --view image-attention"},
        {{"--model", vit, "--image", image, "--view", "image-attention", "--rollout",
          "--mean-heads"},
         "do not go together"},
        {{"--tokens", "a cat", "--view", "image-attention"}, "needs an image model"},
        {{"--model", vit, "--image", image, "--view", "next-token"}, "image model"},
        {{"--model", vit, "--image", image, "--view", "image-attention", "--query", "17"},
         "reads 17 tokens"},
        {{"--model", vit, "--image", vit + "/config.json", "--view", "image-attention"},
         "config.json: not an image"},
        {{"--model", llama, "--text", "a cat", "--view", "image-attention"}, "reads text"},
    };
    for (const auto& [options, message] : refusals) {
        std::vector<std::string> args = options;
        args.insert(args.end(), {"--out", out.string()});
        const RunResult result = run(args);
        EXPECT_EQ(result.status, 2) << message;
        EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_FALSE(fs::exists(out)) << message;
    }
}

} // namespace
} // namespace attnlab

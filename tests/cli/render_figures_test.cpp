// Figures a paper can print as they are (#13): at each --size preset the PDF page has the
// preset's size in points (its MediaBox), the text is text (pdftotext finds the tokens and the
// title), every font in the PDF is within the preset's range (pdftohtml's font table), and no
// two token labels overlap (their boxes in the SVG); --no-title, --caption and
// --show-selection do what they say; a compare render has three non-blank panels; --data
// writes exactly the core's numbers (CSV and NPY against an independent double-precision
// softmax of the same session's Q and K).

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/io/npy.h"
#include "attnlab/lab/session.h"
#include "command_runner.h"
#include "csv.h"

namespace {

namespace fs = std::filesystem;
using attnlab::test::CommandResult;
using attnlab::test::readWholeFile;

const std::string kText = "The cat sat on the mat because it was tired";

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string word; in >> word;)
        out.push_back(word);
    return out;
}

/// Output of a shell command (poppler-utils), empty when it fails.
std::string capture(const std::string& command) {
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) return out;
    std::array<char, 4096> buffer{};
    while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
        out.append(buffer.data(), n);
    ::pclose(pipe);
    return out;
}

bool havePoppler() {
    return std::system("command -v pdftotext >/dev/null 2>&1 && "
                       "command -v pdftohtml >/dev/null 2>&1") == 0;
}

/// The first page's MediaBox [x0 y0 x1 y1] as written in the PDF's page dictionary.
std::array<double, 4> mediaBox(const fs::path& pdf) {
    const std::string bytes = readWholeFile(pdf);
    static const std::regex box(
        R"re(/MediaBox\s*\[\s*([-0-9.]+)\s+([-0-9.]+)\s+([-0-9.]+)\s+([-0-9.]+)\s*\])re");
    std::smatch match;
    if (!std::regex_search(bytes, match, box)) return {0, 0, 0, 0};
    return {std::stod(match[1]), std::stod(match[2]), std::stod(match[3]), std::stod(match[4])};
}

/// Every font size used on the page, in points (pdftohtml at zoom 1 reports them).
std::vector<int> pdfFontSizes(const fs::path& pdf) {
    const std::string xml = capture("pdftohtml -xml -i -stdout -zoom 1 '" + pdf.string() + "'");
    static const std::regex spec(R"re(<fontspec[^>]*size="([0-9]+)")re");
    std::vector<int> sizes;
    for (auto it = std::sregex_iterator(xml.begin(), xml.end(), spec); it != std::sregex_iterator();
         ++it)
        sizes.push_back(std::stoi((*it)[1]));
    return sizes;
}

struct Box {
    double x0, y0, x1, y1;
    std::string text;
};

/// The boxes of the SVG's <text> elements whose text is one of `labels`, in figure units: the
/// text's own box (estimated advance 0.62 em a character, ascent 0.93 em, descent 0.24 em)
/// through its group's transform matrix.
std::vector<Box> svgLabelBoxes(const fs::path& svg, const std::set<std::string>& labels) {
    const std::string text = readWholeFile(svg);
    static const std::regex group(
        R"re(transform="matrix\(([-0-9.e]+),([-0-9.e]+),([-0-9.e]+),([-0-9.e]+),([-0-9.e]+),([-0-9.e]+)\)"[^>]*>\s*<text[^>]*x="([-0-9.e]+)" y="([-0-9.e]+)"[^>]*font-size="([0-9.e]+)"[^>]*>([^<]*)</text>)re");
    std::vector<Box> boxes;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), group);
         it != std::sregex_iterator(); ++it) {
        const std::smatch& m = *it;
        const std::string content = m[10];
        if (!labels.count(content)) continue;
        double a = std::stod(m[1]), b = std::stod(m[2]), c = std::stod(m[3]), d = std::stod(m[4]),
               e = std::stod(m[5]), f = std::stod(m[6]);
        const double x = std::stod(m[7]), y = std::stod(m[8]), size = std::stod(m[9]);
        const double width = 0.62 * size * static_cast<double>(content.size());
        const double corners[4][2] = {{x, y - 0.93 * size},
                                      {x + width, y - 0.93 * size},
                                      {x, y + 0.24 * size},
                                      {x + width, y + 0.24 * size}};
        Box box{1e9, 1e9, -1e9, -1e9, content};
        for (const auto& p : corners) {
            const double gx = a * p[0] + c * p[1] + e;
            const double gy = b * p[0] + d * p[1] + f;
            box.x0 = std::min(box.x0, gx);
            box.y0 = std::min(box.y0, gy);
            box.x1 = std::max(box.x1, gx);
            box.y1 = std::max(box.y1, gy);
        }
        boxes.push_back(box);
    }
    return boxes;
}

bool overlap(const Box& p, const Box& q) {
    const double slack = 0.5; // touching is not overlapping
    return p.x0 + slack < q.x1 && q.x0 + slack < p.x1 && p.y0 + slack < q.y1 && q.y0 + slack < p.y1;
}

class RenderFigures : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("attnlab_render_figures_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    CommandResult render(std::vector<std::string> args) const {
        args.insert(args.begin(), "render");
        return attnlab::test::runCommand(ATTNLAB_BINARY, args, m_dir / "capture");
    }
    fs::path path(const std::string& name) const { return m_dir / name; }

    fs::path m_dir;
};

struct PresetExpectation {
    std::string name;
    double width, height; ///< points, from the issue: 3.3 in, 6.9 in, 16:9, a poster panel
    int minFont, maxFont; ///< every piece of text, in points
};

const std::vector<PresetExpectation> kPresets = {
    {"column", 3.3 * 72, 0, 7, 9},
    {"page", 6.9 * 72, 0, 7, 9},
    {"slide", 960, 540, 14, 20}, // 13.33 x 7.5 in, PowerPoint's 16:9
    {"poster", 0, 0, 20, 28},
};

TEST_F(RenderFigures, EveryPresetHasItsPageSizeTextAndFontSizes) {
    if (!havePoppler()) {
        GTEST_SKIP() << "poppler-utils missing (scripts/setup.sh installs it)";
    }
    std::set<std::string> tokens;
    for (const std::string& w : words(kText))
        tokens.insert(w);
    for (const PresetExpectation& preset : kPresets) {
        SCOPED_TRACE(preset.name);
        const fs::path pdf = path(preset.name + ".pdf");
        const fs::path svg = path(preset.name + ".svg");
        for (const fs::path& out : {pdf, svg}) {
            const CommandResult result =
                render({"--tokens", kText, "--mask", "causal", "--view", "heatmap", "--size",
                        preset.name, "--out", out.string()});
            ASSERT_EQ(result.status, 0) << result.err;
        }
        const auto box = mediaBox(pdf);
        const double width = box[2] - box[0], height = box[3] - box[1];
        if (preset.width > 0) {
            EXPECT_NEAR(width, preset.width, 2.0);
        }
        if (preset.height > 0) {
            EXPECT_NEAR(height, preset.height, 2.0);
        }
        if (preset.name == "poster") {
            EXPECT_GE(width, 11 * 72.0); // bigger than a slide's width, a poster panel
            EXPECT_GT(height, 0.5 * width);
        }
        EXPECT_GT(height, 0.5 * width);
        // A column's page is as tall as its square matrix needs, at most twice its width.
        EXPECT_LE(height, preset.name == "column" ? 2 * width : width);

        // Text is text: every token and the caption come back out of the PDF.
        const std::string text = capture("pdftotext -raw '" + pdf.string() + "' -");
        for (const std::string& token : tokens)
            EXPECT_NE(text.find(token), std::string::npos) << token;
        EXPECT_NE(text.find("random projections"), std::string::npos) << text;
        EXPECT_NE(text.find("causal"), std::string::npos) << text;

        const std::vector<int> sizes = pdfFontSizes(pdf);
        ASSERT_FALSE(sizes.empty());
        for (int size : sizes) {
            EXPECT_GE(size, preset.minFont);
            EXPECT_LE(size, preset.maxFont);
        }

        const std::vector<Box> boxes = svgLabelBoxes(svg, tokens);
        EXPECT_GE(boxes.size(), tokens.size()); // every token labels at least its row
        for (std::size_t i = 0; i < boxes.size(); ++i)
            for (std::size_t j = i + 1; j < boxes.size(); ++j)
                EXPECT_FALSE(overlap(boxes[i], boxes[j]))
                    << boxes[i].text << " [" << boxes[i].x0 << "," << boxes[i].y0 << " "
                    << boxes[i].x1 << "," << boxes[i].y1 << "] overlaps " << boxes[j].text << " ["
                    << boxes[j].x0 << "," << boxes[j].y0 << " " << boxes[j].x1 << "," << boxes[j].y1
                    << "]";
    }
}

TEST_F(RenderFigures, LongTextThinsLabelsInsteadOfOverlapping) {
    // 40 tokens in one column: labels are thinned, none overlap, no value labels squeezed in.
    std::string text;
    std::set<std::string> tokens;
    for (int i = 0; i < 40; ++i) {
        const std::string word = "tok" + std::to_string(i);
        text += (i ? " " : "") + word;
        tokens.insert(word);
    }
    const fs::path svg = path("long.svg");
    const CommandResult result =
        render({"--tokens", text, "--view", "heatmap", "--size", "column", "--out", svg.string()});
    ASSERT_EQ(result.status, 0) << result.err;
    const std::vector<Box> boxes = svgLabelBoxes(svg, tokens);
    EXPECT_GE(boxes.size(), 8u);
    EXPECT_LT(boxes.size(), 80u); // thinned: not every row and column is labelled
    for (std::size_t i = 0; i < boxes.size(); ++i)
        for (std::size_t j = i + 1; j < boxes.size(); ++j)
            EXPECT_FALSE(overlap(boxes[i], boxes[j])) << boxes[i].text << " / " << boxes[j].text;
}

// `render --size column` of a nine-word sentence dropped "quick" and "lazy" and left half its
// page blank: every token labels its row and its column, no two labels overlap, and the page
// is as tall as the figure needs (a square matrix in a 3.3 in column: taller than 200 pt).
TEST_F(RenderFigures, AColumnFigureLabelsEveryTokenOfASentence) {
    const std::string sentence = "the quick brown fox jumps over the lazy dog";
    std::set<std::string> tokens;
    for (const std::string& w : words(sentence))
        tokens.insert(w);
    const fs::path svg = path("sentence.svg");
    const fs::path pdf = path("sentence.pdf");
    for (const fs::path& out : {svg, pdf}) {
        const CommandResult result = render(
            {"--tokens", sentence, "--view", "heatmap", "--size", "column", "--out", out.string()});
        ASSERT_EQ(result.status, 0) << result.err;
    }
    const std::vector<Box> boxes = svgLabelBoxes(svg, tokens);
    std::map<std::string, int> labelled;
    for (const Box& box : boxes)
        ++labelled[box.text];
    for (const std::string& w : words(sentence))
        EXPECT_GE(labelled[w], w == "the" ? 4 : 2) << w; // its row and its column
    for (std::size_t i = 0; i < boxes.size(); ++i)
        for (std::size_t j = i + 1; j < boxes.size(); ++j)
            EXPECT_FALSE(overlap(boxes[i], boxes[j])) << boxes[i].text << " / " << boxes[j].text;
    const auto box = mediaBox(pdf);
    EXPECT_NEAR(box[2] - box[0], 3.3 * 72, 2.0);
    EXPECT_GT(box[3] - box[1], 200.0);
    EXPECT_LE(box[3] - box[1], 2 * (box[2] - box[0]));
}

TEST_F(RenderFigures, CaptionNoTitleAndFontSizeOverride) {
    if (!havePoppler()) GTEST_SKIP() << "poppler-utils missing";
    const fs::path own = path("own.pdf"), bare = path("bare.pdf"), big = path("big.pdf");
    ASSERT_EQ(render({"--tokens", kText, "--view", "heatmap", "--size", "column", "--caption",
                      "Figure three head", "--out", own.string()})
                  .status,
              0);
    ASSERT_EQ(render({"--tokens", kText, "--view", "heatmap", "--size", "column", "--no-title",
                      "--out", bare.string()})
                  .status,
              0);
    ASSERT_EQ(render({"--tokens", kText, "--view", "heatmap", "--size", "page", "--font-size", "12",
                      "--out", big.string()})
                  .status,
              0);
    const std::string ownText = capture("pdftotext -raw '" + own.string() + "' -");
    EXPECT_NE(ownText.find("Figure three head"), std::string::npos) << ownText;
    EXPECT_EQ(ownText.find("random projections"), std::string::npos);
    const std::string bareText = capture("pdftotext -raw '" + bare.string() + "' -");
    EXPECT_EQ(bareText.find("random projections"), std::string::npos) << bareText;
    EXPECT_NE(bareText.find("tired"), std::string::npos);
    const std::vector<int> sizes = pdfFontSizes(big);
    ASSERT_FALSE(sizes.empty());
    EXPECT_EQ(*std::max_element(sizes.begin(), sizes.end()), 12);
}

/// Number of pixels of a PPM (P6) whose colour differs from the top-left pixel's.
long nonBackgroundPixels(const std::string& ppm, long x0, long x1, long* width) {
    std::istringstream in(ppm);
    std::string magic;
    long w = 0, h = 0, max = 0;
    in >> magic >> w >> h >> max;
    in.get();
    *width = w;
    const std::string pixels = ppm.substr(static_cast<std::size_t>(in.tellg()));
    if (magic != "P6" || static_cast<long>(pixels.size()) < w * h * 3) return -1;
    long count = 0;
    for (long y = 0; y < h; ++y)
        for (long x = std::max(0L, x0); x < std::min(w, x1); ++x) {
            const std::size_t at = static_cast<std::size_t>((y * w + x) * 3);
            if (pixels.compare(at, 3, pixels, 0, 3) != 0) ++count;
        }
    return count;
}

TEST_F(RenderFigures, CompareDrawsThreeNonBlankPanels) {
    if (std::system("command -v pdftoppm >/dev/null 2>&1") != 0) GTEST_SKIP();
    for (const std::string kind : {"causal", "rope"}) {
        SCOPED_TRACE(kind);
        const fs::path pdf = path("compare_" + kind + ".pdf");
        const CommandResult result =
            render({"--tokens", kText, "--heads", "2", "--view", "compare", "--compare", kind,
                    "--size", "page", "--out", pdf.string()});
        ASSERT_EQ(result.status, 0) << result.err;
        const std::string ppm = capture("pdftoppm -r 72 '" + pdf.string() + "'");
        long width = 0;
        nonBackgroundPixels(ppm, 0, 0, &width);
        ASSERT_GT(width, 300);
        for (int panel = 0; panel < 3; ++panel) {
            const long inked = nonBackgroundPixels(ppm, panel * width / 3 + 30,
                                                   (panel + 1) * width / 3 - 30, &width);
            // A drawn heatmap covers a good part of its panel, not just a title.
            EXPECT_GT(inked, 3000) << "panel " << panel;
        }
        const std::string text = capture("pdftotext -raw '" + pdf.string() + "' -");
        EXPECT_EQ(text.find("not computed"), std::string::npos) << text;
    }
    // B from a second session file: same tokens, another seed.
    const fs::path other = path("other.json");
    std::ofstream(other) << R"({"attnlab_session": 1, "tokens": {"text": ")" << kText
                         << R"("}, "model": {"seed": 99}})";
    const fs::path pdf = path("compare_session.pdf");
    const CommandResult result =
        render({"--tokens", kText, "--view", "compare", "--compare-session", other.string(),
                "--out", pdf.string()});
    ASSERT_EQ(result.status, 0) << result.err;
    const std::string text = capture("pdftotext -raw '" + pdf.string() + "' -");
    EXPECT_NE(text.find("other.json"), std::string::npos) << text;
}

/// Pixels of a PPM (P6) within 40 of `rgb` in every channel.
long pixelsNear(const std::string& ppm, int r, int g, int b) {
    std::istringstream in(ppm);
    std::string magic;
    long w = 0, h = 0, max = 0;
    in >> magic >> w >> h >> max;
    in.get();
    const std::string pixels = ppm.substr(static_cast<std::size_t>(in.tellg()));
    long count = 0;
    for (std::size_t at = 0; at + 2 < pixels.size() && at < static_cast<std::size_t>(w * h * 3);
         at += 3) {
        const auto near = [](unsigned char c, int want) { return std::abs(int(c) - want) < 40; };
        if (near(static_cast<unsigned char>(pixels[at]), r) &&
            near(static_cast<unsigned char>(pixels[at + 1]), g) &&
            near(static_cast<unsigned char>(pixels[at + 2]), b))
            ++count;
    }
    return count;
}

TEST_F(RenderFigures, SelectionOnlyWhenAsked) {
    if (std::system("command -v pdftoppm >/dev/null 2>&1") != 0) GTEST_SKIP();
    // The light theme's selection outline is orange (#e4571b), a colour no colour map has.
    const fs::path plain = path("plain.pdf"), selected = path("selected.pdf");
    const std::vector<std::string> base = {"--tokens", kText, "--view", "heatmap",
                                           "--query",  "3",   "--size", "page"};
    std::vector<std::string> a = base, b = base;
    a.insert(a.end(), {"--out", plain.string()});
    b.insert(b.end(), {"--show-selection", "--out", selected.string()});
    ASSERT_EQ(render(a).status, 0);
    ASSERT_EQ(render(b).status, 0);
    const long without =
        pixelsNear(capture("pdftoppm -r 72 '" + plain.string() + "'"), 0xe4, 0x57, 0x1b);
    const long with =
        pixelsNear(capture("pdftoppm -r 72 '" + selected.string() + "'"), 0xe4, 0x57, 0x1b);
    EXPECT_EQ(without, 0);
    EXPECT_GT(with, 100);
}

TEST_F(RenderFigures, CompareOptionsAreChecked) {
    const fs::path pdf = path("x.pdf");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--tokens", kText, "--view", "compare", "--compare", "sideways",
                                   "--out", pdf.string()},
          {"--tokens", kText, "--view", "heatmap", "--compare", "causal", "--out", pdf.string()},
          {"--tokens", kText, "--view", "compare", "--compare-session",
           path("missing.json").string(), "--out", pdf.string()},
          {"--tokens", kText, "--view", "heatmap", "--size", "napkin", "--out", pdf.string()},
          {"--tokens", kText, "--view", "heatmap", "--data", path("d.txt").string()}}) {
        const CommandResult result = render(args);
        EXPECT_EQ(result.status, 2) << args[3] << " " << args[4];
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_FALSE(fs::exists(pdf));
    }
}

/// Double-precision reference: softmax(Q K^T * scale) of head 0 with the causal mask, from
/// the session's own Q and K as `render --view heatmap --show q/k --data` writes them.
std::vector<std::vector<double>> referenceWeights(const attnlab::AlignedVector<double>& q,
                                                  const attnlab::AlignedVector<double>& k, long s,
                                                  long d, double scale) {
    std::vector<std::vector<double>> w(s, std::vector<double>(s, 0.0));
    for (long i = 0; i < s; ++i) {
        double rowMax = -1e300;
        std::vector<double> logits(s);
        for (long j = 0; j <= i; ++j) {
            double dot = 0;
            for (long c = 0; c < d; ++c)
                dot += q[i * d + c] * k[j * d + c];
            logits[j] = dot * scale;
            rowMax = std::max(rowMax, logits[j]);
        }
        double sum = 0;
        for (long j = 0; j <= i; ++j)
            sum += std::exp(logits[j] - rowMax);
        for (long j = 0; j <= i; ++j)
            w[i][j] = std::exp(logits[j] - rowMax) / sum;
    }
    return w;
}

using attnlab::test::splitCsvLine;

TEST_F(RenderFigures, DataExportRoundTripsTheCoresNumbers) {
    const std::vector<std::string> base = {"--tokens",  kText, "--mask",  "causal",
                                           "--d-model", "8",   "--heads", "1"};
    auto withArgs = [&](std::vector<std::string> extra) {
        std::vector<std::string> all = base;
        all.insert(all.end(), extra.begin(), extra.end());
        return all;
    };
    const fs::path qPath = path("q.npy"), kPath = path("k.npy");
    const fs::path csv = path("w.csv"), npy = path("w.npy"), json = path("w.json");
    const fs::path pdf = path("w.pdf");
    ASSERT_EQ(
        render(withArgs({"--view", "heatmap", "--show", "q", "--data", qPath.string()})).status, 0);
    ASSERT_EQ(
        render(withArgs({"--view", "heatmap", "--show", "k", "--data", kPath.string()})).status, 0);
    const CommandResult both =
        render(withArgs({"--view", "heatmap", "--data", csv.string(), "--out", pdf.string()}));
    ASSERT_EQ(both.status, 0) << both.err;
    EXPECT_TRUE(fs::exists(pdf)); // with --out: the figure too
    ASSERT_EQ(render(withArgs({"--view", "heatmap", "--data", npy.string()})).status, 0);
    ASSERT_EQ(render(withArgs({"--view", "heatmap", "--data", json.string()})).status, 0);

    attnlab::NpyReadOptions full;
    full.keepFloat64 = true;
    auto q = attnlab::readNpy(qPath.string(), full);
    auto k = attnlab::readNpy(kPath.string(), full);
    auto w = attnlab::readNpy(npy.string(), full);
    ASSERT_TRUE(q && k && w);
    const long s = static_cast<long>(words(kText).size());
    ASSERT_EQ(q->shape.size(), 2u);
    ASSERT_EQ(q->shape[0], s);
    const long d = static_cast<long>(q->shape[1]);
    ASSERT_EQ(w->shape, (std::vector<attnlab::Index>{s, s}));
    const auto reference = referenceWeights(q->data64, k->data64, s, d, 1.0 / std::sqrt(double(d)));

    // NPY: the float64 weights.
    for (long i = 0; i < s; ++i)
        for (long j = 0; j < s; ++j)
            EXPECT_NEAR(w->data64[static_cast<std::size_t>(i * s + j)], reference[i][j], 1e-6)
                << i << "," << j;

    // CSV: header row of key tokens, then each query's token and its values.
    std::ifstream in(csv);
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    const std::vector<std::string> header = splitCsvLine(line);
    const std::vector<std::string> tokens = words(kText);
    ASSERT_EQ(header.size(), tokens.size() + 1);
    for (std::size_t j = 0; j < tokens.size(); ++j)
        EXPECT_EQ(header[j + 1], tokens[j]);
    for (long i = 0; i < s; ++i) {
        ASSERT_TRUE(std::getline(in, line));
        const std::vector<std::string> row = splitCsvLine(line);
        ASSERT_EQ(row.size(), tokens.size() + 1);
        EXPECT_EQ(row[0], tokens[static_cast<std::size_t>(i)]);
        for (long j = 0; j < s; ++j)
            EXPECT_NEAR(std::stod(row[static_cast<std::size_t>(j + 1)]), reference[i][j], 1e-6);
    }
    EXPECT_FALSE(std::getline(in, line) && !line.empty());

    const std::string jsonText = readWholeFile(json);
    EXPECT_NE(jsonText.find("\"column_labels\""), std::string::npos);
    EXPECT_NE(jsonText.find("\"tired\""), std::string::npos);
}

TEST_F(RenderFigures, ByteLevelAndSentencepieceMarkersShowAsSpaces) {
    if (!havePoppler()) GTEST_SKIP();
    // A dump whose tokens carry GPT-2's and sentencepiece's markers and a newline.
    const fs::path dump = path("attn.npy"), tokens = path("tokens.json");
    attnlab::NpyArray array;
    array.shape = {4, 4};
    array.dtype = attnlab::DType::Float32;
    array.data.assign(16, 0.25);
    ASSERT_FALSE(attnlab::writeNpy(dump.string(), array, attnlab::DType::Float32));
    std::ofstream(tokens) << "[\"Hello\", \"\\u0120world\", \"\\u010a\", \"\\u2581again\"]";
    const fs::path csv = path("t.csv"), pdf = path("t.pdf");
    const CommandResult result =
        render({"--dump", dump.string(), "--tokens-file", tokens.string(), "--view", "heatmap",
                "--data", csv.string(), "--out", pdf.string(), "--size", "column"});
    ASSERT_EQ(result.status, 0) << result.err;
    std::ifstream in(csv);
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    const std::vector<std::string> header = splitCsvLine(line);
    ASSERT_EQ(header.size(), 5u);
    EXPECT_EQ(header[2], " world");
    EXPECT_EQ(header[3], "\u23ce");
    EXPECT_EQ(header[4], " again");
    const std::string text = capture("pdftotext -raw '" + pdf.string() + "' -");
    EXPECT_EQ(text.find("\u0120"), std::string::npos) << text;
    EXPECT_EQ(text.find("\u2581"), std::string::npos) << text;
    EXPECT_NE(text.find("world"), std::string::npos) << text;
}

} // namespace

namespace attnlab {
namespace {

// Same input, same bytes, for figures too: two processes render the same PDF, SVG and PNG byte
// for byte (Qt seeds its hashes per process, and the PDF engine wrote its font objects in hash
// order), and a PDF carries no time of writing (/CreationDate is 1980-01-01, as an .npz's
// members are dated). A step sequence PDF (the flash stepper) likewise.
TEST_F(RenderFigures, TheSameFigureIsTheSameBytesInAnotherProcess) {
    for (const std::string extension : {"pdf", "svg", "png"}) {
        const fs::path first = path("first." + extension), second = path("second." + extension);
        ASSERT_EQ(render({"--tokens", kText, "--view", "heatmap", "--out", first.string()}).status,
                  0);
        ASSERT_EQ(render({"--tokens", kText, "--view", "heatmap", "--out", second.string()}).status,
                  0);
        const std::string a = test::readWholeFile(first), b = test::readWholeFile(second);
        EXPECT_FALSE(a.empty());
        EXPECT_TRUE(a == b) << extension << " differs between two runs";
        if (extension == "pdf") {
            EXPECT_NE(a.find("/CreationDate (D:19800101000000"), std::string::npos);
        }
    }
    const fs::path stepsA = path("steps_a.pdf"), stepsB = path("steps_b.pdf");
    for (const fs::path& out : {stepsA, stepsB})
        ASSERT_EQ(render({"--tokens", kText, "--mask", "causal", "--view", "flash", "--all-steps",
                          "--out", out.string()})
                      .status,
                  0);
    EXPECT_TRUE(test::readWholeFile(stepsA) == test::readWholeFile(stepsB));
}

} // namespace
} // namespace attnlab

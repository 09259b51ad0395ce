// `attnlab render --data F.csv|F.npy|F.json` for every view that is not a plain heatmap (#13
// item 6): each writes the numbers it draws, and they equal numbers computed here
// independently — entropy as -sum w log w of the weights run() returns, the statistics from the
// same weights, the flash stepper's m, l and rescale as the online softmax written out from Q
// and K, the KV cache's bytes as 2 x kv heads x length x d x 4, the cost model's formulas
// written out (the sliding window's band counted cell by cell), RoPE's rotated pairs from the
// core's rotated Q, the dump views from the dump's own weights. The CSV, the NPY and the JSON of
// one view hold the same numbers; the JSON says what it is (view, source, head, columns). A view
// with nothing to export is an error: status 2, one line, no file.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "attnlab/attention/flash.h"
#include "attnlab/attention/rope.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/session.h"
#include "command_runner.h"
#include "csv.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kText = "The cat sat on the mat because it was tired";
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using attnlab::test::splitCsvLine;

/// One view's data as the three files hold it.
struct Exported {
    std::vector<std::string> header;             ///< CSV header row
    std::vector<std::vector<std::string>> cells; ///< CSV rows, labels included
    int labelColumns = 1;                        ///< 2 for grouped tables (block, row)
    std::vector<Index> shape;                    ///< NPY shape
    std::vector<double> values;                  ///< NPY values, row-major
    json meta;                                   ///< the JSON file
    int rows() const { return static_cast<int>(cells.size()); }
    int cols() const { return static_cast<int>(header.size()) - labelColumns; }
    /// The CSV value of row r, column c (NaN for an empty field).
    double csv(int r, int c) const {
        const std::string& field =
            cells[static_cast<std::size_t>(r)][static_cast<std::size_t>(c + labelColumns)];
        return field.empty() ? kNaN : std::stod(field);
    }
    double npy(int r, int c) const {
        return values[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols()) +
                      static_cast<std::size_t>(c)];
    }
    int column(const std::string& name) const {
        for (std::size_t c = static_cast<std::size_t>(labelColumns); c < header.size(); ++c)
            if (header[c] == name) return static_cast<int>(c) - labelColumns;
        ADD_FAILURE() << "no column " << name;
        return 0;
    }
    std::string label(int r) const {
        return cells[static_cast<std::size_t>(r)][static_cast<std::size_t>(labelColumns - 1)];
    }
};

class RenderData : public ::testing::Test {
protected:
    test::CommandResult render(std::vector<std::string> args) const {
        args.insert(args.begin(), "render");
        return test::runCommand(ATTNLAB_BINARY, args, m_dir.path() / "capture");
    }
    std::string file(const std::string& name) const { return m_dir.file(name); }

    std::string saveSessionFile(const Session& session, const std::string& name) const {
        const std::string path = file(name);
        EXPECT_FALSE(saveSession(path, session));
        return path;
    }

    /// Renders `args` with --data F.csv, F.npy and F.json, reads the three back and checks
    /// that they agree with each other.
    Exported exportAll(const std::vector<std::string>& args, int labelColumns = 1) const {
        Exported out;
        out.labelColumns = labelColumns;
        const std::string stem = file("data");
        for (const char* ext : {".csv", ".npy", ".json"}) {
            std::vector<std::string> all = args;
            all.insert(all.end(), {"--data", stem + ext});
            const test::CommandResult run = render(all);
            EXPECT_EQ(run.status, 0) << ext << ": " << run.err;
        }
        std::ifstream in(stem + ".csv");
        std::string line;
        if (std::getline(in, line)) out.header = splitCsvLine(line);
        while (std::getline(in, line))
            if (!line.empty()) out.cells.push_back(splitCsvLine(line));
        NpyReadOptions full;
        full.keepFloat64 = true;
        if (auto npy = readNpy(stem + ".npy", full)) {
            out.shape = npy->shape;
            out.values.assign(npy->data64.begin(), npy->data64.end());
        } else {
            ADD_FAILURE() << "NPY unreadable";
        }
        out.meta = json::parse(test::readWholeFile(stem + ".json"), nullptr, false);
        EXPECT_FALSE(out.meta.is_discarded());
        // The three files agree: rows and columns, every value, and the JSON's labels.
        EXPECT_EQ(static_cast<std::size_t>(out.rows()) * static_cast<std::size_t>(out.cols()),
                  out.values.size());
        for (const auto& row : out.cells)
            EXPECT_EQ(row.size(), out.header.size());
        const json& values = out.meta["values"];
        EXPECT_EQ(values.size(), static_cast<std::size_t>(out.rows()));
        for (int r = 0; r < out.rows() && r < static_cast<int>(values.size()); ++r)
            for (int c = 0; c < out.cols(); ++c) {
                const double csv = out.csv(r, c), npy = out.npy(r, c);
                const json& cell = values[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
                if (std::isnan(npy)) {
                    EXPECT_TRUE(std::isnan(csv)) << r << "," << c;
                    EXPECT_TRUE(cell.is_null()) << r << "," << c;
                    continue;
                }
                EXPECT_NEAR(csv, npy, 1e-7 * std::max(1.0, std::abs(npy))) << r << "," << c;
                EXPECT_DOUBLE_EQ(cell.get<double>(), npy) << r << "," << c;
            }
        for (int r = 0; r < out.rows(); ++r)
            EXPECT_EQ(out.meta["row_labels"][static_cast<std::size_t>(r)].get<std::string>(),
                      out.label(r));
        for (int c = 0; c < out.cols(); ++c)
            EXPECT_EQ(out.meta["column_labels"][static_cast<std::size_t>(c)].get<std::string>(),
                      out.header[static_cast<std::size_t>(c + labelColumns)]);
        return out;
    }

    test::TempDir m_dir{"attnlab_render_data"};
};

Session labSession() {
    Session session;
    session.text = kText;
    session.dModel = 8;
    session.heads = 2;
    session.kvHeads = 2;
    session.seed = 3;
    session.mask.causal = true;
    return session;
}

MatrixD weightsOf(const Experiment& experiment, Index head) {
    return experiment.attention.weights.head(0, head).cast<double>();
}

TEST_F(RenderData, EntropyIsMinusSumWLogWOfTheCoresWeights) {
    const Session session = labSession();
    const Experiment experiment = run(session);
    const Exported data = exportAll(
        {"--session", saveSessionFile(session, "s.json"), "--view", "entropy", "--head", "1"});
    const MatrixD w = weightsOf(experiment, 1);
    ASSERT_EQ(data.rows(), w.rows());
    EXPECT_EQ(data.meta["view"], "entropy");
    EXPECT_EQ(data.meta["head"], 1);
    EXPECT_EQ(data.header[0], "token");
    for (int i = 0; i < data.rows(); ++i) {
        double entropy = 0;
        for (Index j = 0; j < w.cols(); ++j)
            if (w(i, j) > 0) entropy -= w(i, j) * std::log(w(i, j));
        const double allowed = i + 1; // causal: keys 0..i
        EXPECT_NEAR(data.csv(i, data.column("entropy")), entropy, 1e-5) << i;
        EXPECT_NEAR(data.npy(i, data.column("log_allowed")), std::log(allowed), 1e-9) << i;
        if (i > 0) {
            EXPECT_NEAR(data.npy(i, data.column("normalized_entropy")), entropy / std::log(allowed),
                        1e-5)
                << i;
        }
    }
    EXPECT_EQ(data.label(2), "sat");
}

TEST_F(RenderData, StatisticsTableIsTheWeightsSummarised) {
    const Session session = labSession();
    const Experiment experiment = run(session);
    const Exported data =
        exportAll({"--session", saveSessionFile(session, "s.json"), "--view", "statistics"});
    const MatrixD w = weightsOf(experiment, 0);
    ASSERT_EQ(data.rows(), w.rows());
    for (int i = 0; i < data.rows(); ++i) {
        double entropy = 0, distance = 0;
        for (Index j = 0; j < w.cols(); ++j) {
            if (w(i, j) > 0) entropy -= w(i, j) * std::log(w(i, j));
            distance += w(i, j) * std::abs(double(i - j));
        }
        EXPECT_NEAR(data.npy(i, data.column("entropy")), entropy, 1e-5) << i;
        EXPECT_NEAR(data.npy(i, data.column("mean_distance")), distance, 1e-5) << i;
        EXPECT_NEAR(data.npy(i, data.column("first_token_weight")), w(i, 0), 1e-6) << i;
        const double top = data.npy(i, data.column("most_attended"));
        if (i == 0) { // only itself allowed: no other key
            EXPECT_TRUE(std::isnan(top));
            EXPECT_TRUE(std::isnan(data.npy(i, data.column("most_attended_weight"))));
            continue;
        }
        ASSERT_GE(top, 0);
        for (Index j = 0; j < w.cols(); ++j)
            if (j != i) {
                EXPECT_GE(w(i, static_cast<Index>(top)), w(i, j) - 1e-7) << i << "," << j;
            }
        ASSERT_LT(top, double(w.cols()));
        EXPECT_NEAR(data.npy(i, data.column("most_attended_weight")), w(i, static_cast<Index>(top)),
                    1e-6)
            << i;
    }
}

TEST_F(RenderData, HeadsGridIsEveryHeadAsABlockOfRows) {
    const Session session = labSession();
    const Experiment experiment = run(session);
    const Exported data =
        exportAll({"--session", saveSessionFile(session, "s.json"), "--view", "heads"}, 2);
    const Index s = experiment.sq();
    ASSERT_EQ(data.shape, (std::vector<Index>{2, s, s}));
    EXPECT_EQ(data.header[0], "head");
    EXPECT_EQ(data.header[1], "token");
    EXPECT_EQ(data.meta["groups"], json::array({"0", "1"}));
    for (Index h = 0; h < 2; ++h) {
        const MatrixD w = weightsOf(experiment, h);
        for (Index i = 0; i < s; ++i) {
            const int r = static_cast<int>(h * s + i);
            EXPECT_EQ(data.cells[static_cast<std::size_t>(r)][0], std::to_string(h));
            for (Index j = 0; j < s; ++j)
                EXPECT_NEAR(data.npy(r, static_cast<int>(j)), w(i, j), 1e-6);
        }
    }
}

TEST_F(RenderData, LinesAndOutputProjectionAreTheirMatrices) {
    const Session session = labSession();
    const Experiment experiment = run(session);
    const std::string path = saveSessionFile(session, "s.json");
    const Exported lines = exportAll({"--session", path, "--view", "lines", "--head", "1"});
    const MatrixD w = weightsOf(experiment, 1);
    ASSERT_EQ(lines.rows(), w.rows());
    ASSERT_EQ(lines.cols(), w.cols());
    for (int i = 0; i < lines.rows(); ++i)
        for (int j = 0; j < lines.cols(); ++j)
            EXPECT_NEAR(lines.npy(i, j), w(i, j), 1e-6);
    EXPECT_EQ(lines.header[3], "sat");

    const Exported output = exportAll({"--session", path, "--view", "output-projection"});
    ASSERT_EQ(output.rows(), experiment.output.rows());
    ASSERT_EQ(output.cols(), experiment.output.cols());
    for (int i = 0; i < output.rows(); ++i)
        for (int d = 0; d < output.cols(); ++d)
            EXPECT_NEAR(output.npy(i, d), experiment.output(i, d), 1e-6);
}

TEST_F(RenderData, CompareIsABAndBMinusA) {
    Session a = labSession();
    a.heads = 1;
    a.kvHeads = 1;
    a.mask.causal = false;
    Session b = a;
    b.mask.causal = true;
    const MatrixD wa = weightsOf(run(a), 0), wb = weightsOf(run(b), 0);
    const Exported data = exportAll(
        {"--session", saveSessionFile(a, "a.json"), "--view", "compare", "--compare", "causal"}, 2);
    const Index s = wa.rows();
    ASSERT_EQ(data.shape, (std::vector<Index>{3, s, s}));
    EXPECT_EQ(data.header[0], "panel");
    EXPECT_EQ(data.meta["groups"], json::array({"A", "B", "B-A"}));
    int differences = 0;
    for (Index i = 0; i < s; ++i)
        for (Index j = 0; j < s; ++j) {
            const int c = static_cast<int>(j);
            EXPECT_NEAR(data.npy(static_cast<int>(i), c), wa(i, j), 1e-6);
            EXPECT_NEAR(data.npy(static_cast<int>(s + i), c), wb(i, j), 1e-6);
            const double diff = data.npy(static_cast<int>(2 * s + i), c);
            if (std::isnan(diff)) continue; // a cell masked in B has no difference
            EXPECT_NEAR(diff, wb(i, j) - wa(i, j), 1e-6);
            ++differences;
        }
    EXPECT_GE(differences, s * (s + 1) / 2); // at least the cells B allows
}

TEST_F(RenderData, FlashStateIsTheOnlineSoftmaxOfTheTilesDone) {
    Session session = labSession();
    session.variant = Variant::Flash;
    session.qBlock = 2;
    session.kvBlock = 3;
    const Experiment experiment = run(session);
    const Index step = 7, head = 1;
    const Exported data = exportAll({"--session", saveSessionFile(session, "s.json"), "--view",
                                     "flash", "--head", "1", "--step", std::to_string(step)});
    const Index s = experiment.sq();
    const Index kvTiles = (s + 2) / 3;
    // Row i's running max and sum once its first `tiles` kv tiles of 3 keys are done, written
    // out in double from Q and K: m = max s_ij, l = sum exp(s_ij - m) over the allowed keys
    // seen so far (what the online softmax holds, whatever order it met them in).
    auto state = [&](Index i, Index tiles) {
        double m = -std::numeric_limits<double>::infinity(), l = 0;
        std::vector<double> seen;
        for (Index j = 0; j < std::min(s, tiles * 3); ++j) {
            if (!allowed(experiment.mask, 0, i, j, s, s)) continue;
            double dot = 0;
            for (Index d = 0; d < experiment.qkv.q.dim; ++d)
                dot += double(experiment.qkv.q(0, head, i, d)) *
                       double(experiment.qkv.k(0, experiment.kvHeadOf(head), j, d));
            seen.push_back(dot * experiment.scale);
            m = std::max(m, seen.back());
        }
        for (double x : seen)
            l += std::exp(x - m);
        return std::pair{m, l};
    };
    ASSERT_EQ(data.rows(), s);
    for (int i = 0; i < data.rows(); ++i) {
        const Index doneTiles = std::clamp<Index>(step - (i / 2) * kvTiles, 0, kvTiles);
        const auto [m, l] = state(i, doneTiles);
        const double mBefore = state(i, std::max<Index>(0, doneTiles - 1)).first;
        if (std::isfinite(m)) {
            EXPECT_NEAR(data.csv(i, data.column("m")), m, 1e-6) << i;
        } else {
            EXPECT_TRUE(std::isnan(data.csv(i, data.column("m")))) << i;
        }
        EXPECT_NEAR(data.csv(i, data.column("l")), l, 1e-5) << i;
        // Step 7 is q tile 1 (rows 2, 3) against kv tile 2: the rows it touched were
        // rescaled by exp(m_before - m_after); the others were left alone (1).
        const bool touched = i / 2 == (step - 1) / kvTiles;
        const double rescale = !touched || !std::isfinite(m) ? 1.0
                               : std::isfinite(mBefore)      ? std::exp(mBefore - m)
                                                             : 0.0;
        EXPECT_NEAR(data.npy(i, data.column("rescale")), rescale, 1e-6) << i;
        const Index done = std::clamp<Index>(step - (i / 2) * kvTiles, 0, kvTiles);
        EXPECT_EQ(data.npy(i, data.column("tiles_done")), double(done)) << i;
        EXPECT_EQ(data.npy(i, data.column("tiles")), double(kvTiles)) << i;
    }
    EXPECT_EQ(data.meta["step"], step);
    const json& tiles = data.meta["tiles_list"];
    ASSERT_EQ(tiles.size(), static_cast<std::size_t>(((s + 1) / 2) * kvTiles));
    for (std::size_t k = 0; k < tiles.size(); ++k) {
        EXPECT_EQ(tiles[k]["done"].get<bool>(), static_cast<Index>(k) < step) << k;
        EXPECT_EQ(tiles[k]["q_start"].get<Index>(), static_cast<Index>(k) / kvTiles * 2) << k;
        EXPECT_EQ(tiles[k]["kv_start"].get<Index>(), static_cast<Index>(k) % kvTiles * 3) << k;
    }
}

TEST_F(RenderData, KvCacheBytesAreKAndVOfEveryKvHeadInFloat32) {
    Session session = labSession();
    session.dModel = 16;
    session.heads = 4;
    session.kvHeads = 2;
    session.kvPrefill = 3;
    const Experiment experiment = run(session);
    const Index d = 16 / 4;
    const Exported data = exportAll(
        {"--session", saveSessionFile(session, "s.json"), "--view", "kv-cache", "--step", "2"});
    const Index s = experiment.sq();
    ASSERT_EQ(data.rows(), s - 3 + 1); // the prefill, then one row per decoded token
    EXPECT_EQ(data.header[0], "step");
    for (int k = 0; k < data.rows(); ++k) {
        const Index length = 3 + k;
        EXPECT_EQ(data.csv(k, data.column("cache_len")), double(length));
        EXPECT_EQ(data.csv(k, data.column("new_rows")), k == 0 ? 3.0 : 1.0);
        // K and V, float32, one batch entry: 2 x kv heads x length x d x 4 bytes, with this
        // session's 2 kv heads, and as MHA (a kv head per query head, 4), GQA (2) and MQA (1).
        EXPECT_EQ(data.csv(k, data.column("cache_bytes")), double(2 * 2 * length * d * 4));
        EXPECT_EQ(data.csv(k, data.column("mha_bytes")), double(2 * 4 * length * d * 4));
        EXPECT_EQ(data.csv(k, data.column("gqa_bytes")), double(2 * 2 * length * d * 4));
        EXPECT_EQ(data.csv(k, data.column("mqa_bytes")), double(2 * 1 * length * d * 4));
        EXPECT_EQ(data.csv(k, data.column("current")), k == 2 ? 1.0 : 0.0);
    }
    EXPECT_EQ(data.label(0), "prefill");
}

// The cost model's formulas (core/lab/src/complexity.cpp's header: a multiply-add is 2 FLOPs,
// seed 002's counts) written out here, the sliding window's band counted cell by cell.
TEST_F(RenderData, ComplexityIsTheCostModelsFormulasAtTheDrawnLengths) {
    Session session = labSession();
    session.dModel = 64;
    session.heads = 8;
    session.kvHeads = 2;
    const Exported data =
        exportAll({"--session", saveSessionFile(session, "s.json"), "--view", "complexity"});
    const double d = 64, h = 8, hkv = 2, dh = d / h, bytes = 4;
    const Index window = 128; // the view's default when the session has no window
    const double tile = double(session.qBlock) * double(session.kvBlock);
    ASSERT_EQ(data.cols(), 2 * 5 + 1);
    bool sawSession = false;
    for (int r = 0; r < data.rows(); ++r) {
        const Index seq = std::stol(data.label(r));
        const double n = double(seq);
        if (data.npy(r, data.column("current")) == 1) {
            EXPECT_EQ(seq, 10); // this session's length is drawn too
            sawSession = true;
        }
        double band = 0; // cells (i, j) with |i - j| <= W
        for (Index i = 0; i < seq; ++i)
            band += double(std::min(seq - 1, i + window) - std::max<Index>(0, i - window) + 1);
        const std::vector<std::tuple<std::string, double, double>> expected = {
            {"QKV projection", 2 * (n * d * d + 2 * n * d * hkv * dh),
             (d * d + 2 * d * hkv * dh) * bytes},
            {"Softmax attention", 2 * 2 * n * n * d, h * n * n * bytes},
            {"Sliding window", 2 * 2 * band * d, h * band * bytes},
            {"Linear attention", 2 * h * (2 * n * dh * dh + 2 * n * dh), h * dh * (dh + 1) * bytes},
            {"FlashAttention", 2 * 2 * n * n * d, (2 * h * n + tile) * bytes},
        };
        for (const auto& [name, flops, memory] : expected) {
            EXPECT_DOUBLE_EQ(data.npy(r, data.column(name + "_flops")), flops) << name << " " << n;
            EXPECT_DOUBLE_EQ(data.npy(r, data.column(name + "_bytes")), memory) << name << " " << n;
        }
    }
    EXPECT_TRUE(sawSession);
    EXPECT_EQ(data.header[0], "seq_len");
}

TEST_F(RenderData, RopePairsAreTheCoresRotatedQuery) {
    Session session = labSession();
    session.dModel = 16;
    session.positional = Positional::RopeHalf;
    const Experiment experiment = run(session);
    const Index dim = 8, head = 1;
    const Exported data = exportAll(
        {"--session", saveSessionFile(session, "s.json"), "--view", "rope", "--head", "1"});
    ASSERT_EQ(data.rows(), dim / 2);
    const Index query = data.meta["query"].get<Index>();
    EXPECT_EQ(query, experiment.sq() - 1); // no selection: the last query
    const double position = data.meta["query_position"].get<double>();
    const Matrix angles = ropeAngles(2, dim, session.ropeBase, 0);
    const Tensor4& q = experiment.qkv.q;
    for (int t = 0; t < data.rows(); ++t) {
        const auto [a, b] = ropePair(RopeStyle::Half, t, dim);
        const double theta = angles(1, t);
        EXPECT_NEAR(data.npy(t, data.column("theta")), theta, 1e-6);
        EXPECT_NEAR(theta, std::pow(session.ropeBase, -2.0 * t / double(dim)), 1e-6);
        // The session applied RoPE: the rotated pair is the core's Q at that query.
        EXPECT_NEAR(data.npy(t, data.column("q_rot_x")), q.head(0, head)(query, a), 1e-4) << t;
        EXPECT_NEAR(data.npy(t, data.column("q_rot_y")), q.head(0, head)(query, b), 1e-4) << t;
        // and the unrotated pair rotated by position x theta gives it.
        const double x = data.npy(t, data.column("q_x")), y = data.npy(t, data.column("q_y"));
        const double angle = position * theta;
        EXPECT_NEAR(data.npy(t, data.column("q_rot_x")), x * std::cos(angle) - y * std::sin(angle),
                    1e-4);
        EXPECT_NEAR(data.npy(t, data.column("q_rot_y")), x * std::sin(angle) + y * std::cos(angle),
                    1e-4);
    }
}

/// A [L, H, S, S] dump of causal row-stochastic weights drawn here.
std::vector<double> writeDump(const std::string& path, Index layers, Index heads, Index s) {
    std::mt19937 random(11);
    std::uniform_real_distribution<double> draw(0.05, 1.0);
    std::vector<double> w(static_cast<std::size_t>(layers * heads * s * s), 0.0);
    for (Index lh = 0; lh < layers * heads; ++lh)
        for (Index i = 0; i < s; ++i) {
            double sum = 0;
            const std::size_t row = static_cast<std::size_t>((lh * s + i) * s);
            for (Index j = 0; j <= i; ++j)
                sum += (w[row + static_cast<std::size_t>(j)] = draw(random));
            for (Index j = 0; j <= i; ++j)
                w[row + static_cast<std::size_t>(j)] /= sum;
        }
    NpyArray array;
    array.shape = {layers, heads, s, s};
    array.dtype = DType::Float64;
    array.data64.assign(w.begin(), w.end());
    EXPECT_FALSE(writeNpy(path, array, DType::Float64));
    return w;
}

TEST_F(RenderData, DumpViewsExportTheDumpsNumbers) {
    const Index layers = 2, heads = 3, s = 5;
    const std::string dump = file("attn.npy");
    const std::vector<double> w = writeDump(dump, layers, heads, s);
    auto at = [&](Index l, Index h, Index i, Index j) {
        return w[static_cast<std::size_t>(((l * heads + h) * s + i) * s + j)];
    };

    // Aggregates: the mean over the layer's heads.
    const Exported mean = exportAll({"--dump", dump, "--layer", "1", "--view", "aggregate"});
    ASSERT_EQ(mean.rows(), s);
    for (Index i = 0; i < s; ++i)
        for (Index j = 0; j < s; ++j)
            EXPECT_NEAR(mean.npy(int(i), int(j)),
                        (at(1, 0, i, j) + at(1, 1, i, j) + at(1, 2, i, j)) / 3, 1e-6);
    EXPECT_EQ(mean.meta["layer"], 1);

    // Difference: head 1 - head 0 of the layer.
    const Exported diff = exportAll({"--dump", dump, "--layer", "1", "--view", "dump-difference"});
    ASSERT_EQ(diff.rows(), s);
    for (Index i = 0; i < s; ++i)
        for (Index j = 0; j < s; ++j)
            EXPECT_NEAR(diff.npy(int(i), int(j)), at(1, 1, i, j) - at(1, 0, i, j), 1e-6);

    // The model view's and the head statistics' tables: per layer and head, the mean over
    // queries of the entropy, the distance and the first token's weight.
    for (const char* view : {"model", "head-stats"}) {
        const Exported table = exportAll({"--dump", dump, "--view", view});
        ASSERT_EQ(table.rows(), layers * heads) << view;
        EXPECT_EQ(table.header[0], "head");
        for (int r = 0; r < table.rows(); ++r) {
            const auto l = static_cast<Index>(table.npy(r, 0));
            const auto h = static_cast<Index>(table.npy(r, 1));
            EXPECT_EQ(table.label(r), "L" + std::to_string(l) + " H" + std::to_string(h));
            double entropy = 0, distance = 0, first = 0;
            for (Index i = 0; i < s; ++i) {
                for (Index j = 0; j <= i; ++j) {
                    entropy -= at(l, h, i, j) * std::log(at(l, h, i, j)) / double(s);
                    distance += at(l, h, i, j) * double(i - j) / double(s);
                }
                first += at(l, h, i, 0) / double(s);
            }
            EXPECT_NEAR(table.npy(r, 2), entropy, 1e-5) << view << " " << r;
            EXPECT_NEAR(table.npy(r, 3), distance, 1e-5) << view << " " << r;
            EXPECT_NEAR(table.npy(r, 4), first, 1e-5) << view << " " << r;
        }
    }
}

/// `attnlab model ... --json` on stdout: the model command's own numbers for the same text.
json modelJson(const std::vector<std::string>& args, const fs::path& capture) {
    std::vector<std::string> all = {"model"};
    all.insert(all.end(), args.begin(), args.end());
    const test::CommandResult run = test::runCommand(ATTNLAB_BINARY, all, capture);
    EXPECT_EQ(run.status, 0) << run.err;
    return json::parse(run.out, nullptr, false);
}

const std::string kModel =
    std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-llama-induction";
const std::string kModelText = "the cat sat on the mat";

TEST_F(RenderData, NextTokenIsTheModelsDistribution) {
    const Exported data =
        exportAll({"--model", kModel, "--text", kModelText, "--view", "next-token"});
    const json reference =
        modelJson({"--model", kModel, "--text", kModelText, "--top-k", "0", "--json"},
                  m_dir.path() / "model");
    ASSERT_FALSE(reference.is_discarded());
    std::map<std::int64_t, double> modelProbability;
    for (const json& token : reference["next"]["tokens"])
        modelProbability[token["id"].get<std::int64_t>()] =
            token["model_probability"].get<double>();
    ASSERT_GT(data.rows(), 0);
    double kept = 0;
    for (int r = 0; r < data.rows(); ++r)
        kept += data.npy(r, data.column("model_probability"));
    double previous = 1;
    for (int r = 0; r < data.rows(); ++r) {
        const auto id = static_cast<std::int64_t>(data.npy(r, data.column("id")));
        ASSERT_TRUE(modelProbability.count(id)) << id;
        EXPECT_NEAR(data.npy(r, data.column("model_probability")), modelProbability[id], 1e-6);
        // The probability drawn is the model's renormalised over the tokens kept.
        EXPECT_NEAR(data.npy(r, data.column("probability")), modelProbability[id] / kept, 1e-6);
        EXPECT_LE(data.npy(r, data.column("model_probability")), previous + 1e-12);
        previous = data.npy(r, data.column("model_probability"));
    }
    EXPECT_EQ(data.label(0), ".");
}

TEST_F(RenderData, HeadRolesAreTheModelCommandsRoles) {
    const Exported data =
        exportAll({"--model", kModel, "--text", kModelText, "--view", "head-roles"});
    const json reference = modelJson({"--model", kModel, "--text", kModelText, "--roles", "--json"},
                                     m_dir.path() / "model");
    ASSERT_FALSE(reference.is_discarded());
    const json& heads = reference["roles"]["heads"];
    ASSERT_EQ(data.rows(), static_cast<int>(heads.size()));
    EXPECT_EQ(data.header[0], "head");
    const std::vector<std::pair<std::string, std::string>> columns = {
        {"previous-token", "previous_token"},
        {"first-token", "first_token"},
        {"self", "self"},
        {"distance", "mean_distance"}};
    int matched = 0;
    for (int r = 0; r < data.rows(); ++r) {
        const auto layer = static_cast<Index>(data.npy(r, data.column("layer")));
        const auto head = static_cast<Index>(data.npy(r, data.column("head")));
        for (const json& role : heads) {
            if (role["layer"].get<Index>() != layer || role["head"].get<Index>() != head) continue;
            ++matched;
            for (const auto& [column, key] : columns)
                EXPECT_NEAR(data.npy(r, data.column(column)), role[key].get<double>(), 1e-6)
                    << column << " L" << layer << " H" << head;
            EXPECT_TRUE(std::isnan(data.npy(r, data.column("induction")))); // no repeat here
            EXPECT_EQ(data.npy(r, data.column("ablated")), 0.0);
        }
    }
    EXPECT_EQ(matched, data.rows());
}

TEST_F(RenderData, JsonSaysWhatItIs) {
    const Session session = labSession();
    const Exported data = exportAll(
        {"--session", saveSessionFile(session, "s.json"), "--view", "entropy", "--head", "1"});
    EXPECT_EQ(data.meta["view"], "entropy");
    EXPECT_EQ(data.meta["source"], "random projections (seed 3)");
    EXPECT_TRUE(data.meta["layer"].is_null());
    EXPECT_EQ(data.meta["head"], 1);
    EXPECT_NE(data.meta["caption"].get<std::string>().find("causal"), std::string::npos);
    EXPECT_EQ(data.meta["row_header"], "token");
    EXPECT_EQ(data.meta["column_labels"][0], "entropy");
}

TEST_F(RenderData, AViewWithNothingToExportIsRefused) {
    // A dump of weights holds no Q and K: the flash stepper has no tiles to export.
    const std::string dump = file("attn.npy");
    writeDump(dump, 1, 1, 4);
    const std::string out = file("flash.csv");
    const test::CommandResult result = render({"--dump", dump, "--view", "flash", "--data", out});
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_FALSE(fs::exists(out));
}

} // namespace
} // namespace attnlab

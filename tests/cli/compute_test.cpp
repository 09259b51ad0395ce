// End-to-end tests of `attnlab compute`: the built binary runs on .npy files written here,
// and its outputs are checked against seed 003's worked example, the naive double-precision
// reference in tests/support/reference.h, and the rules of docs/architecture.md. Bad input must exit 2
// with one line naming the culprit and leave the folder exactly as it was.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/io/npy.h"
#include "command_runner.h"
#include "reference.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using RunResult = test::CommandResult;

class CliTest : public test::CommandFolderTest {
protected:
    /// Runs `attnlab compute args...`.
    RunResult compute(const std::vector<std::string>& args) const {
        return runIn(ATTNLAB_BINARY, "compute", args);
    }

    void writeTensor(const std::string& name, const Tensor4& t, Index rank,
                     DType dtype = DType::Float32) const {
        ASSERT_FALSE(writeNpy(file(name), fromTensor4(t, rank, dtype), dtype).has_value());
    }

    void writeRaw(const std::string& name, const std::string& bytes) const {
        std::ofstream out(file(name), std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }

    NpyArray readArray(const std::string& name) const {
        NpyReadOptions options;
        options.minRank = 1;
        auto array = readNpy(file(name), options);
        EXPECT_TRUE(array.ok()) << array.error();
        return array.ok() ? *array : NpyArray{};
    }

    json readJson(const std::string& name) const {
        return json::parse(test::readWholeFile(file(name)));
    }

    /// Asserts a clean rejection: status 2, nothing on stdout, exactly one line on stderr
    /// that mentions `culprit` (and `what` when given), and no file added or changed.
    void expectRejected(const std::vector<std::string>& args, const std::string& culprit,
                        const std::string& what = "") const {
        const auto before = listing();
        std::map<std::string, std::string> contents;
        for (const auto& name : before)
            contents[name] = test::readWholeFile(file(name));
        const RunResult run = compute(args);
        EXPECT_EQ(run.status, 2) << run.err;
        EXPECT_TRUE(run.out.empty()) << run.out;
        EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
        EXPECT_FALSE(run.err.empty() || run.err.back() != '\n') << run.err;
        EXPECT_NE(run.err.find(culprit), std::string::npos)
            << "stderr does not name " << culprit << ": " << run.err;
        if (!what.empty()) {
            EXPECT_NE(run.err.find(what), std::string::npos) << run.err;
        }
        EXPECT_EQ(listing(), before) << "files were added or removed";
        for (const auto& name : before)
            EXPECT_EQ(test::readWholeFile(file(name)), contents[name]) << name << " changed";
    }
};

/// A tensor with values from the reference's seeded generator.
Tensor4 random(Index b, Index h, Index s, Index d, std::uint32_t seed) {
    return ref::randomTensor(b, h, s, d, seed);
}

/// Compares an output array with the reference, head by head (GQA: kv head h / (H / Hkv)).
/// With `weights`, checks the written weights too.
void expectMatchesReference(const NpyArray& output, const Tensor4& q, const Tensor4& k,
                            const Tensor4& v, const MaskSpec& mask, double tol,
                            const NpyArray* weights = nullptr) {
    const Tensor4 out = toTensor4(output);
    ASSERT_EQ(out.batch, q.batch);
    ASSERT_EQ(out.heads, q.heads);
    ASSERT_EQ(out.seq, q.seq);
    ASSERT_EQ(out.dim, v.dim);
    Tensor4 w;
    if (weights) w = toTensor4(*weights);
    const Index group = q.heads / k.heads;
    for (Index b = 0; b < q.batch; ++b)
        for (Index h = 0; h < q.heads; ++h) {
            const auto expected =
                ref::attention(q.head(b, h), k.head(b, h / group), v.head(b, h / group), mask, b);
            EXPECT_MATRIX_NEAR(out.head(b, h), expected.output, tol)
                << "batch " << b << " head " << h;
            if (weights) {
                EXPECT_MATRIX_NEAR(w.head(b, h), expected.weights, tol)
                    << "weights, batch " << b << " head " << h;
            }
        }
}

// ---- seed 003: d2l's masked softmax with valid lengths -----------------------------------

TEST_F(CliTest, ReproducesSeed003PaddingExample) {
    // queries ones(2,1,2), keys ones(2,10,2), values arange(40).view(1,10,4).repeat(2,1,1),
    // valid lengths [2, 6] -> [[2, 3, 4, 5]] and [[10, 11, 12, 13]].
    Tensor4 q(2, 1, 1, 2), k(2, 1, 10, 2), v(2, 1, 10, 4);
    std::fill(q.data.begin(), q.data.end(), 1.0f);
    std::fill(k.data.begin(), k.data.end(), 1.0f);
    for (Index b = 0; b < 2; ++b)
        for (Index s = 0; s < 10; ++s)
            for (Index d = 0; d < 4; ++d)
                v(b, 0, s, d) = static_cast<float>(s * 4 + d);
    writeTensor("q.npy", q, 3);
    writeTensor("k.npy", k, 3);
    writeTensor("v.npy", v, 3);
    for (const std::string variant : {"softmax", "flash"}) {
        const RunResult run =
            compute({"--q", file("q.npy"), "--k=" + file("k.npy"), "--v", file("v.npy"), "--out",
                     file("o.npy"), "--weights=" + file("w.npy"), "--mask", "padding",
                     "--valid-len", "2,6", "--variant", variant, "--block-size", "3"});
        ASSERT_EQ(run.status, 0) << run.err;
        const NpyArray out = readArray("o.npy");
        ASSERT_EQ(out.shape, (std::vector<Index>{2, 1, 4}));
        const std::vector<float> expected = {2, 3, 4, 5, 10, 11, 12, 13};
        for (std::size_t i = 0; i < expected.size(); ++i)
            EXPECT_NEAR(out.data[i], expected[i], 1e-5) << variant << " element " << i;
        const NpyArray w = readArray("w.npy");
        ASSERT_EQ(w.shape, (std::vector<Index>{2, 1, 10}));
        for (Index j = 0; j < 10; ++j) {
            EXPECT_NEAR(w.data[static_cast<std::size_t>(j)], j < 2 ? 0.5 : 0.0, 1e-6);
            EXPECT_NEAR(w.data[static_cast<std::size_t>(10 + j)], j < 6 ? 1.0 / 6 : 0.0, 1e-6);
        }
    }
    EXPECT_EQ(listing(), (std::set<std::string>{"q.npy", "k.npy", "v.npy", "o.npy", "w.npy"}));
}

// ---- against the reference ----------------------------------------------------------------

struct RankCase {
    Index rank;
    Index batch, heads, kvHeads;
};

TEST_F(CliTest, SoftmaxAndFlashMatchReferenceAtRanks2To4IncludingGqa) {
    const std::vector<RankCase> cases = {{2, 1, 1, 1}, {3, 2, 1, 1}, {4, 2, 4, 2}, {4, 1, 3, 1}};
    std::uint32_t seed = 100;
    for (const RankCase& c : cases) {
        const Index sq = 5, sk = 7, d = 4, dv = 3;
        const Tensor4 q = random(c.batch, c.heads, sq, d, ++seed);
        const Tensor4 k = random(c.batch, c.kvHeads, sk, d, ++seed);
        const Tensor4 v = random(c.batch, c.kvHeads, sk, dv, ++seed);
        writeTensor("q.npy", q, c.rank);
        writeTensor("k.npy", k, c.rank);
        writeTensor("v.npy", v, c.rank);
        for (const std::string maskKind : {"none", "causal"}) {
            MaskSpec mask;
            mask.causal = maskKind == "causal";
            for (const std::string variant : {"softmax", "flash"}) {
                SCOPED_TRACE("rank " + std::to_string(c.rank) + " H " + std::to_string(c.heads) +
                             " Hkv " + std::to_string(c.kvHeads) + " " + maskKind + " " + variant);
                const RunResult run = compute(
                    {"--q",         file("q.npy"),    "--k",         file("k.npy"), "--v",
                     file("v.npy"), "--out",          file("o.npy"), "--weights",   file("w.npy"),
                     "--variant",   variant,          "--mask",      maskKind,      "--block-size",
                     "3",           "--q-block-size", "2",           "--threads",   "2"});
                ASSERT_EQ(run.status, 0) << run.err;
                const NpyArray out = readArray("o.npy");
                const NpyArray w = readArray("w.npy");
                EXPECT_EQ(out.rank(), c.rank);
                EXPECT_EQ(out.dtype, DType::Float32);
                expectMatchesReference(out, q, k, v, mask, 2e-5, &w);
            }
        }
    }
}

TEST_F(CliTest, Float64InputsGiveFloat64Output) {
    const Tensor4 q = random(2, 1, 4, 6, 1), k = random(2, 1, 6, 6, 2), v = random(2, 1, 6, 2, 3);
    writeTensor("q.npy", q, 3, DType::Float64);
    writeTensor("k.npy", k, 3, DType::Float64);
    writeTensor("v.npy", v, 3, DType::Float64);
    const RunResult run =
        compute({"--q", file("q.npy"), "--k", file("k.npy"), "--v", file("v.npy"), "--out",
                 file("o.npy"), "--weights", file("w.npy"), "--mask", "window", "--window", "1"});
    ASSERT_EQ(run.status, 0) << run.err;
    const NpyArray out = readArray("o.npy");
    EXPECT_EQ(out.dtype, DType::Float64);
    EXPECT_EQ(out.shape, (std::vector<Index>{2, 4, 2}));
    const NpyArray w = readArray("w.npy");
    EXPECT_EQ(w.dtype, DType::Float64);
    MaskSpec mask;
    mask.window = 1;
    expectMatchesReference(out, q, k, v, mask, 2e-5, &w);
}

TEST_F(CliTest, WeightsHaveQueryRankWithSqBySk) {
    const Tensor4 q = random(2, 4, 3, 4, 11), k = random(2, 2, 5, 4, 12),
                  v = random(2, 2, 5, 6, 13);
    writeTensor("q.npy", q, 4);
    writeTensor("k.npy", k, 4);
    writeTensor("v.npy", v, 4);
    for (const std::string variant : {"softmax", "flash", "linear", "additive"}) {
        const RunResult run =
            compute({"--q", file("q.npy"), "--k", file("k.npy"), "--v", file("v.npy"), "--out",
                     file("o.npy"), "--weights", file("w.npy"), "--variant", variant});
        ASSERT_EQ(run.status, 0) << variant << ": " << run.err;
        EXPECT_EQ(readArray("o.npy").shape, (std::vector<Index>{2, 4, 3, 6})) << variant;
        const NpyArray w = readArray("w.npy");
        ASSERT_EQ(w.shape, (std::vector<Index>{2, 4, 3, 5})) << variant;
        for (Index row = 0; row < 2 * 4 * 3; ++row) { // each row is a distribution
            double sum = 0;
            for (Index j = 0; j < 5; ++j)
                sum += w.data[static_cast<std::size_t>(row * 5 + j)];
            EXPECT_NEAR(sum, 1.0, 1e-4) << variant << " row " << row;
        }
    }
}

TEST_F(CliTest, WithoutWeightsOptionNoWeightsFileIsWritten) {
    const Tensor4 q = random(1, 1, 3, 2, 1), k = random(1, 1, 3, 2, 2), v = random(1, 1, 3, 2, 3);
    writeTensor("q.npy", q, 2);
    writeTensor("k.npy", k, 2);
    writeTensor("v.npy", v, 2);
    const RunResult run = compute(
        {"--q", file("q.npy"), "--k", file("k.npy"), "--v", file("v.npy"), "--out", file("o.npy")});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(listing(), (std::set<std::string>{"q.npy", "k.npy", "v.npy", "o.npy"}));
    expectMatchesReference(readArray("o.npy"), q, k, v, MaskSpec{}, 2e-5);
}

// ---- RoPE ---------------------------------------------------------------------------------

/// docs/architecture.md's rotation, written out here: pair i of a D-vector at position pos turns by
/// pos / base^(2i/D); interleaved pairs are (2i, 2i+1), half pairs are (i, i + D/2).
Tensor4 rotate(const Tensor4& x, bool half, double base, Index offset) {
    Tensor4 y = x;
    const Index d = x.dim;
    for (Index b = 0; b < x.batch; ++b)
        for (Index h = 0; h < x.heads; ++h)
            for (Index s = 0; s < x.seq; ++s)
                for (Index i = 0; i < d / 2; ++i) {
                    const double angle = static_cast<double>(s + offset) /
                                         std::pow(base, 2.0 * static_cast<double>(i) / d);
                    const Index a = half ? i : 2 * i;
                    const Index c = half ? i + d / 2 : 2 * i + 1;
                    const double xa = x(b, h, s, a), xc = x(b, h, s, c);
                    y(b, h, s, a) = static_cast<float>(xa * std::cos(angle) - xc * std::sin(angle));
                    y(b, h, s, c) = static_cast<float>(xa * std::sin(angle) + xc * std::cos(angle));
                }
    return y;
}

TEST_F(CliTest, RopeRotatesQueriesAtOffsetPositionsAndKeysFromZero) {
    const Index sq = 3, sk = 6, d = 8;
    const Tensor4 q = random(1, 2, sq, d, 21), k = random(1, 1, sk, d, 22),
                  v = random(1, 1, sk, 3, 23);
    writeTensor("q.npy", q, 4);
    writeTensor("k.npy", k, 4);
    writeTensor("v.npy", v, 4);
    for (const bool half : {false, true}) {
        const double base = half ? 100.0 : 10000.0;
        SCOPED_TRACE(half ? "half" : "interleaved");
        std::vector<std::string> args = {"--q",    file("q.npy"),
                                         "--k",    file("k.npy"),
                                         "--v",    file("v.npy"),
                                         "--out",  file("o.npy"),
                                         "--rope", half ? "half" : "interleaved"};
        if (half) args.insert(args.end(), {"--rope-base", "100"});
        const RunResult run = compute(args);
        ASSERT_EQ(run.status, 0) << run.err;
        const NpyArray out = readArray("o.npy");
        expectMatchesReference(out, rotate(q, half, base, sk - sq), rotate(k, half, base, 0), v,
                               MaskSpec{}, 2e-5);
        // And RoPE did something: unrotated attention gives a different answer.
        const auto plain = ref::attention(q.head(0, 0), k.head(0, 0), v.head(0, 0), MaskSpec{}, 0);
        EXPECT_FALSE(ref::matrixNear(toTensor4(out).head(0, 0), plain.output, 1e-3));
    }
}

// ---- traces -------------------------------------------------------------------------------

/// Allowed by docs/architecture.md's rules for query row i (position p = i + sk - sq) and key j.
bool allowedCell(Index i, Index j, Index sq, Index sk, bool causal, Index window) {
    const Index p = i + sk - sq;
    if (causal && j > p) return false;
    if (window >= 0 && std::abs(p - j) > window) return false;
    return true;
}

void checkFlashTrace(const json& trace, const Tensor4& q, const Tensor4& k, Index qBlock,
                     Index kvBlock, bool causal, Index window) {
    ASSERT_EQ(trace.at("variant"), "flash");
    EXPECT_EQ(trace.at("q_block").get<Index>(), qBlock);
    EXPECT_EQ(trace.at("kv_block").get<Index>(), kvBlock);
    const Index sq = q.seq, sk = k.seq;
    const Index group = q.heads / k.heads;
    const json& heads = trace.at("heads");
    ASSERT_EQ(static_cast<Index>(heads.size()), q.batch * q.heads);
    std::set<std::pair<Index, Index>> seen;
    Index skippedCount = 0, nullCount = 0;
    for (const json& head : heads) {
        const Index b = head.at("batch").get<Index>(), h = head.at("head").get<Index>();
        seen.insert({b, h});
        const auto scores =
            ref::attention(q.head(b, h), k.head(b, h / group), k.head(b, h / group), MaskSpec{}, b)
                .scores;
        // Keys visited so far by each query tile, in the order of the steps.
        std::map<Index, std::vector<std::pair<Index, Index>>> visited;
        std::set<std::pair<Index, Index>> tiles;
        for (const json& step : head.at("steps")) {
            const Index q0 = step.at("q_start"), q1 = step.at("q_end");
            const Index k0 = step.at("kv_start"), k1 = step.at("kv_end");
            ASSERT_TRUE(q0 < q1 && q1 <= sq && q1 - q0 <= qBlock) << step;
            ASSERT_TRUE(k0 < k1 && k1 <= sk && k1 - k0 <= kvBlock) << step;
            tiles.insert({q0, k0});
            bool anyAllowed = false;
            for (Index i = q0; i < q1; ++i)
                for (Index j = k0; j < k1; ++j)
                    anyAllowed = anyAllowed || allowedCell(i, j, sq, sk, causal, window);
            EXPECT_EQ(step.at("skipped").get<bool>(), !anyAllowed) << step;
            visited[q0].push_back({k0, k1});
            if (!anyAllowed) {
                ++skippedCount;
                continue;
            }
            const json& rowMax = step.at("row_max");
            const json& rowSum = step.at("row_sum");
            ASSERT_EQ(static_cast<Index>(rowMax.size()), q1 - q0) << step;
            ASSERT_EQ(static_cast<Index>(rowSum.size()), q1 - q0) << step;
            ASSERT_EQ(static_cast<Index>(step.at("rescale").size()), q1 - q0) << step;
            for (Index i = q0; i < q1; ++i) {
                // The running state covers the allowed keys of every tile visited so far.
                double m = -std::numeric_limits<double>::infinity();
                for (const auto& [a, e] : visited[q0])
                    for (Index j = a; j < e; ++j)
                        if (allowedCell(i, j, sq, sk, causal, window))
                            m = std::max(m, scores(i, j));
                const json& mj = rowMax[static_cast<std::size_t>(i - q0)];
                if (std::isinf(m)) {
                    EXPECT_TRUE(mj.is_null()) << "row " << i << " has seen no key: " << step;
                    ++nullCount;
                    continue;
                }
                ASSERT_TRUE(mj.is_number()) << step;
                EXPECT_NEAR(mj.get<double>(), m * 1.0, 1e-4) << step;
                double l = 0;
                for (const auto& [a, e] : visited[q0])
                    for (Index j = a; j < e; ++j)
                        if (allowedCell(i, j, sq, sk, causal, window))
                            l += std::exp(scores(i, j) - m);
                EXPECT_NEAR(rowSum[static_cast<std::size_t>(i - q0)].get<double>(), l, 1e-4 * l)
                    << step;
            }
        }
        // Every (query tile, key tile) pair is listed once.
        const Index qTiles = (sq + qBlock - 1) / qBlock, kvTiles = (sk + kvBlock - 1) / kvBlock;
        EXPECT_EQ(static_cast<Index>(tiles.size()), qTiles * kvTiles);
        EXPECT_EQ(static_cast<Index>(head.at("steps").size()), qTiles * kvTiles);
    }
    EXPECT_EQ(static_cast<Index>(seen.size()), q.batch * q.heads);
    if (causal || window >= 0) {
        EXPECT_GT(skippedCount, 0) << "the mask should skip tiles";
    }
    if (window >= 0) {
        EXPECT_GT(nullCount, 0) << "some row should start with no key";
    }
}

TEST_F(CliTest, FlashTraceListsEveryTileAndSkipsMaskedOnes) {
    const Tensor4 q = random(1, 2, 6, 4, 31), k = random(1, 1, 6, 4, 32),
                  v = random(1, 1, 6, 2, 33);
    writeTensor("q.npy", q, 4);
    writeTensor("k.npy", k, 4);
    writeTensor("v.npy", v, 4);
    struct Case {
        std::vector<std::string> mask;
        bool causal;
        Index window;
    };
    for (const Case& c : {Case{{"--mask", "causal"}, true, -1},
                          Case{{"--mask", "window", "--window", "1"}, false, 1}}) {
        SCOPED_TRACE(c.mask[1]);
        std::vector<std::string> args = {"--q",
                                         file("q.npy"),
                                         "--k",
                                         file("k.npy"),
                                         "--v",
                                         file("v.npy"),
                                         "--out",
                                         file("o.npy"),
                                         "--trace",
                                         file("t.json"),
                                         "--variant",
                                         "flash",
                                         "--block-size",
                                         "2",
                                         "--q-block-size",
                                         "2"};
        args.insert(args.end(), c.mask.begin(), c.mask.end());
        const RunResult run = compute(args);
        ASSERT_EQ(run.status, 0) << run.err;
        checkFlashTrace(readJson("t.json"), q, k, 2, 2, c.causal, c.window);
        MaskSpec mask;
        mask.causal = c.causal;
        mask.window = c.window;
        expectMatchesReference(readArray("o.npy"), q, k, v, mask, 2e-5);
    }
}

TEST_F(CliTest, KvCacheTraceHasPrefillThenOneStepPerRow) {
    const Index b = 2, h = 2, hkv = 1, s = 5, d = 4, dv = 3, prefill = 2;
    const Tensor4 q = random(b, h, s, d, 41), k = random(b, hkv, s, d, 42),
                  v = random(b, hkv, s, dv, 43);
    for (const DType dtype : {DType::Float32, DType::Float64}) {
        SCOPED_TRACE(dtypeName(dtype));
        writeTensor("q.npy", q, 4, dtype);
        writeTensor("k.npy", k, 4, dtype);
        writeTensor("v.npy", v, 4, dtype);
        const RunResult run =
            compute({"--q", file("q.npy"), "--k", file("k.npy"), "--v", file("v.npy"), "--out",
                     file("o.npy"), "--trace", file("t.json"), "--kv-cache-prefill", "2"});
        ASSERT_EQ(run.status, 0) << run.err;
        const json trace = readJson("t.json");
        EXPECT_EQ(trace.at("prefill").get<Index>(), prefill);
        const json& steps = trace.at("steps");
        ASSERT_EQ(static_cast<Index>(steps.size()), 1 + (s - prefill));
        const Index bytes = dtype == DType::Float32 ? 4 : 8;
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const Index rows = i == 0 ? prefill : 1;
            const Index len = prefill + static_cast<Index>(i);
            EXPECT_EQ(steps[i].at("new_rows").get<Index>(), rows) << steps[i];
            EXPECT_EQ(steps[i].at("cache_len").get<Index>(), len) << steps[i];
            // K and V of every batch entry and kv head: B * Hkv * len * (D + Dv) elements.
            EXPECT_EQ(steps[i].at("cache_bytes").get<std::int64_t>(),
                      b * hkv * len * (d + dv) * bytes)
                << steps[i];
        }
        const NpyArray out = readArray("o.npy");
        EXPECT_EQ(out.dtype, dtype);
        MaskSpec causal;
        causal.causal = true;
        expectMatchesReference(out, q, k, v, causal, 2e-5);
    }
}

// ---- bad input: exit 2, one line naming the culprit, nothing written ----------------------

class CliRejects : public CliTest {
protected:
    void SetUp() override {
        CliTest::SetUp();
        writeTensor("q.npy", random(1, 4, 3, 4, 1), 4);
        writeTensor("k.npy", random(1, 2, 5, 4, 2), 4);
        writeTensor("v.npy", random(1, 2, 5, 3, 3), 4);
    }
    std::vector<std::string> baseArgs(const std::string& q = "q.npy",
                                      const std::string& k = "k.npy",
                                      const std::string& v = "v.npy") const {
        return {"--q",     file(q),        "--k",         file(k),     "--v",
                file(v),   "--out",        file("o.npy"), "--weights", file("w.npy"),
                "--trace", file("t.json"), "--variant",   "flash"};
    }
    std::vector<std::string> with(std::vector<std::string> args,
                                  const std::vector<std::string>& more) const {
        args.insert(args.end(), more.begin(), more.end());
        return args;
    }
};

TEST_F(CliRejects, ValidInputsSucceedAsAControl) {
    const RunResult run = compute(baseArgs());
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(listing(),
              (std::set<std::string>{"q.npy", "k.npy", "v.npy", "o.npy", "w.npy", "t.json"}));
}

TEST_F(CliRejects, TruncatedFile) {
    const std::string bytes = test::readWholeFile(file("k.npy"));
    writeRaw("k.npy", bytes.substr(0, bytes.size() - 3));
    expectRejected(baseArgs(), "k.npy", "truncated");
}

TEST_F(CliRejects, TruncatedHeader) {
    writeRaw("k.npy", test::readWholeFile(file("k.npy")).substr(0, 20));
    expectRejected(baseArgs(), "k.npy", "truncated header");
}

TEST_F(CliRejects, BadMagic) {
    std::string bytes = test::readWholeFile(file("v.npy"));
    bytes[0] = 'X';
    writeRaw("v.npy", bytes);
    expectRejected(baseArgs(), "v.npy", "magic");
}

/// A .npy image with a hand-written header dict and raw data.
std::string handNpy(const std::string& dict, std::size_t dataBytes) {
    std::string header = dict;
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header.push_back('\n');
    std::string out("\x93NUMPY\x01\x00", 8);
    out.push_back(static_cast<char>(header.size() & 0xff));
    out.push_back(static_cast<char>(header.size() >> 8));
    return out + header + std::string(dataBytes, '\0');
}

TEST_F(CliRejects, FortranOrder) {
    writeRaw("q.npy",
             handNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 4, 3, 4), }", 48 * 4));
    expectRejected(baseArgs(), "q.npy", "Fortran");
}

/// A float32 .npy with any shape text and raw data.
std::string shapedNpy(const std::string& shape, const std::string& data) {
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    return handNpy(dict, 0) + data;
}

TEST_F(CliRejects, ShapeProductThatWrapsAroundIsRefused) {
    // 65536^4 wraps to 0 in 64 bits: a wrapping reader would take the empty data as the
    // whole array and hand the kernels a shape of 2^32 x 2^32 (heap overflow).
    writeRaw("q.npy", shapedNpy("(65536, 65536, 65536, 65536)", ""));
    expectRejected(baseArgs(), "q.npy", "too large");
    writeRaw("q.npy", shapedNpy("(1, 4294967297, 4294967295, 4)", std::string(64, '\0')));
    expectRejected(baseArgs(), "q.npy", "too large");
}

TEST_F(CliRejects, EmptyDimensionInATinyFileIsRefused) {
    // 128 bytes claiming S = 2^20 and D = 0: no value, but 2^40 weights to compute.
    writeRaw("q.npy", shapedNpy("(1048576, 0)", ""));
    writeRaw("k.npy", shapedNpy("(1048576, 0)", ""));
    expectRejected(baseArgs(), "q.npy", "empty dimension");
}

TEST_F(CliRejects, NaNOrInfinityInAnInputIsRefused) {
    // They used to give exit 0 and silent zeros.
    for (const float bad :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity()}) {
        Tensor4 k = random(1, 2, 5, 4, 2);
        k.data[7] = bad;
        writeTensor("k.npy", k, 4);
        expectRejected(baseArgs(), "k.npy", "value 7");
    }
    writeTensor("k.npy", random(1, 2, 5, 4, 2), 4); // finite again
    Tensor4 v = random(1, 2, 5, 3, 3);
    v.data[0] = std::numeric_limits<float>::quiet_NaN();
    writeTensor("v.npy", v, 4, DType::Float64);
    expectRejected(baseArgs(), "v.npy", "NaN");
}

TEST_F(CliRejects, WindowBeyondAnyPositionIsRefusedNotWrapped) {
    // 2^63 - 1 used to overflow keyRange: every row masked, all-zero weights, exit 0.
    expectRejected(with(baseArgs(), {"--mask", "window", "--window", "9223372036854775807"}),
                   "--window", "between 0 and 2147483647");
    expectRejected(with(baseArgs(), {"--mask", "window", "--window", "99999999999999999999"}),
                   "--window", "out of range");
    expectRejected(with(baseArgs(), {"--block-size", "9223372036854775807"}), "--block-size");
    expectRejected(with(baseArgs(), {"--mask", "padding", "--valid-len", "4294967296"}),
                   "--valid-len");
    expectRejected(with(baseArgs(), {"--threads", "100000"}), "--threads");
    // The largest window accepted reaches every key: the same weights as no window.
    std::vector<std::string> args = baseArgs();
    const RunResult none = compute(args);
    ASSERT_EQ(none.status, 0) << none.err;
    const NpyArray unmasked = readArray("w.npy");
    const RunResult wide = compute(with(args, {"--mask", "window", "--window", "2147483647"}));
    ASSERT_EQ(wide.status, 0) << wide.err;
    EXPECT_EQ(readArray("w.npy").data, unmasked.data);
}

TEST_F(CliRejects, ScaleThatIsInfiniteOrZeroAsAFloatIsRefused) {
    expectRejected(with(baseArgs(), {"--scale", "1e300"}), "--scale", "float32");
    expectRejected(with(baseArgs(), {"--scale", "-1e39"}), "--scale", "float32");
    expectRejected(with(baseArgs(), {"--scale", "1e-300"}), "--scale", "float32");
    // 0 and the ends of float's normal range are fine.
    for (const char* scale : {"0", "3e38", "1.2e-38"}) {
        const RunResult run = compute(with(baseArgs(), {"--scale", scale}));
        EXPECT_EQ(run.status, 0) << scale << ": " << run.err;
    }
}

TEST_F(CliRejects, FolderAsAnOutputLeavesEveryOtherOutputUntouched) {
    // --weights DIR used to exit 2 after o.npy had already been replaced.
    writeRaw("o.npy", "previous result");
    fs::create_directories(file("weights_dir"));
    std::vector<std::string> args = baseArgs();
    args[9] = file("weights_dir");
    expectRejected(args, "weights_dir", "directory");
    EXPECT_EQ(test::readWholeFile(file("o.npy")), "previous result");
    args = baseArgs();
    args[11] = file("weights_dir"); // --trace
    expectRejected(args, "weights_dir", "directory");
    EXPECT_EQ(test::readWholeFile(file("o.npy")), "previous result");
}

TEST_F(CliRejects, IntegerDtype) {
    writeRaw("k.npy",
             handNpy("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2, 5, 4), }", 40 * 8));
    expectRejected(baseArgs(), "k.npy", "int64");
}

TEST_F(CliRejects, ShapeMismatchOfFeatureSize) {
    writeTensor("k5.npy", random(1, 2, 5, 5, 9), 4);
    expectRejected(baseArgs("q.npy", "k5.npy"), "k5.npy", "D = 5");
}

TEST_F(CliRejects, ShapeMismatchOfSequenceLength) {
    writeTensor("v6.npy", random(1, 2, 6, 3, 9), 4);
    expectRejected(baseArgs("q.npy", "k.npy", "v6.npy"), "v6.npy", "S = 6");
}

TEST_F(CliRejects, RankMismatch) {
    writeTensor("v3.npy", random(1, 1, 5, 3, 9), 3);
    expectRejected(baseArgs("q.npy", "k.npy", "v3.npy"), "v3.npy", "rank");
}

TEST_F(CliRejects, HeadsNotAMultipleOfKvHeads) {
    writeTensor("q3.npy", random(1, 3, 3, 4, 9), 4);
    expectRejected(baseArgs("q3.npy"), "q3.npy", "H % Hkv");
}

TEST_F(CliRejects, OddDimensionWithRope) {
    writeTensor("q5.npy", random(1, 4, 3, 5, 9), 4);
    writeTensor("k5.npy", random(1, 2, 5, 5, 9), 4);
    expectRejected(with(baseArgs("q5.npy", "k5.npy"), {"--rope", "half"}), "--rope", "even");
}

TEST_F(CliRejects, NegativeWindow) {
    expectRejected(with(baseArgs(), {"--mask", "window", "--window", "-1"}), "--window");
    expectRejected(with(baseArgs(), {"--mask=causal-window", "--window=-3"}), "--window");
}

TEST_F(CliRejects, UnknownFlag) {
    expectRejected(with(baseArgs(), {"--frobnicate", "3"}), "--frobnicate");
}

TEST_F(CliRejects, MissingFile) {
    expectRejected(baseArgs("nothere.npy"), "nothere.npy");
}

TEST_F(CliRejects, MissingRequiredOption) {
    expectRejected({"--q", file("q.npy"), "--k", file("k.npy"), "--v", file("v.npy")}, "--out");
}

TEST_F(CliRejects, UnknownVariantAndMask) {
    std::vector<std::string> args = baseArgs();
    args.back() = "quantum";
    expectRejected(args, "--variant", "quantum");
    expectRejected(with(baseArgs(), {"--mask", "causal,diagonal"}), "--mask", "diagonal");
}

TEST_F(CliRejects, PaddingWithoutOrWithWrongValidLengths) {
    expectRejected(with(baseArgs(), {"--mask", "padding"}), "--valid-len");
    expectRejected(with(baseArgs(), {"--mask", "padding", "--valid-len", "2,3"}), "--valid-len");
    expectRejected(with(baseArgs(), {"--mask", "padding", "--valid-len", "2,x"}), "--valid-len");
}

TEST_F(CliRejects, TraceNeedsFlashOrKvCache) {
    std::vector<std::string> args = baseArgs();
    args.back() = "softmax";
    expectRejected(args, "--trace");
}

TEST_F(CliRejects, KvCachePrefillNeedsSelfAttentionAndRange) {
    expectRejected(with(baseArgs(), {"--kv-cache-prefill", "1"}), "--kv-cache-prefill", "Sq == Sk");
    writeTensor("qs.npy", random(1, 4, 5, 4, 9), 4);
    expectRejected(with(baseArgs("qs.npy"), {"--kv-cache-prefill", "6"}), "--kv-cache-prefill");
}

TEST_F(CliRejects, BadNumbers) {
    expectRejected(with(baseArgs(), {"--block-size", "0"}), "--block-size");
    expectRejected(with(baseArgs(), {"--scale", "nan"}), "--scale");
    expectRejected(with(baseArgs(), {"--threads", "two"}), "--threads");
}

TEST_F(CliRejects, MissingValue) {
    std::vector<std::string> args = baseArgs();
    args.push_back("--scale");
    expectRejected(args, "--scale", "needs a value");
}

TEST_F(CliRejects, FailureKeepsAnExistingOutputUntouched) {
    writeRaw("o.npy", "previous result");
    expectRejected(with(baseArgs(), {"--mask", "window", "--window", "-1"}), "--window");
    EXPECT_EQ(test::readWholeFile(file("o.npy")), "previous result");
}

TEST_F(CliRejects, UnwritableOutputLeavesNoPartialFiles) {
    std::vector<std::string> args = baseArgs();
    args[9] = file("no_such_dir/w.npy"); // --weights into a missing folder
    expectRejected(args, "w.npy");       // o.npy must not appear either
}

TEST_F(CliRejects, AdditiveParamsOfWrongShape) {
    NpyArray wq;
    wq.shape = {3, 5}; // D is 4
    wq.data.assign(15, 0.1f);
    NpyArray wk;
    wk.shape = {3, 4};
    wk.data.assign(12, 0.1f);
    NpyArray vv;
    vv.shape = {3};
    vv.data.assign(3, 1.0f);
    ASSERT_FALSE(writeNpz(file("p.npz"), {{"wq", wq}, {"wk", wk}, {"v", vv}}, DType::Float32));
    std::vector<std::string> args = baseArgs();
    args.erase(args.begin() + 10, args.begin() + 12); // no --trace
    args.back() = "additive";
    expectRejected(with(args, {"--additive-params", file("p.npz")}), "p.npz[wq]");
}

TEST_F(CliTest, AdditiveParamsFromNpzAreUsed) {
    // With wq = wk = 0 every score is v^T tanh(0) = 0: uniform weights, output = mean of V.
    const Tensor4 q = random(1, 1, 2, 4, 1), k = random(1, 1, 5, 4, 2), v = random(1, 1, 5, 3, 3);
    writeTensor("q.npy", q, 2);
    writeTensor("k.npy", k, 2);
    writeTensor("v.npy", v, 2);
    NpyArray wq;
    wq.shape = {3, 4};
    wq.data.assign(12, 0.0f);
    NpyArray vv;
    vv.shape = {3};
    vv.data = {1, -2, 3};
    ASSERT_FALSE(writeNpz(file("p.npz"), {{"wq", wq}, {"wk", wq}, {"v", vv}}, DType::Float64));
    const RunResult run =
        compute({"--q", file("q.npy"), "--k", file("k.npy"), "--v", file("v.npy"), "--out",
                 file("o.npy"), "--variant", "additive", "--additive-params", file("p.npz")});
    ASSERT_EQ(run.status, 0) << run.err;
    const NpyArray out = readArray("o.npy");
    ASSERT_EQ(out.shape, (std::vector<Index>{2, 3}));
    for (Index i = 0; i < 2; ++i)
        for (Index c = 0; c < 3; ++c) {
            double mean = 0;
            for (Index j = 0; j < 5; ++j)
                mean += v(0, 0, j, c) / 5.0;
            EXPECT_NEAR(out.data[static_cast<std::size_t>(i * 3 + c)], mean, 1e-5);
        }
}

TEST_F(CliTest, HelpPrintsUsageAndExitsZero) {
    const RunResult run = compute({"--help"});
    EXPECT_EQ(run.status, 0);
    EXPECT_NE(run.out.find("--kv-cache-prefill"), std::string::npos);
    EXPECT_TRUE(listing().empty());
}

} // namespace
} // namespace attnlab

// `attnlab compute --output-projection --wo W.npy` and `--dropout P --dropout-seed N` (issue
// 14): the projected output against seed 000 §4.2's formula in double, eval mode byte for
// byte the run without the options, the train-mode pattern independent of threads and tiles
// with the output equal to the written weights times V, and every bad input rejected with
// exit status 2, one line and nothing written.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "attnlab/io/npy.h"
#include "command_runner.h"
#include "reference.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

class ComputeIssue14 : public test::CommandFolderTest {
protected:
    test::CommandResult compute(const std::vector<std::string>& args) const {
        return runIn(ATTNLAB_BINARY, "compute", args);
    }

    template <typename T>
    void write(const std::string& name, const Tensor4T<T>& t, Index rank, DType dtype) const {
        ASSERT_FALSE(writeNpy(file(name), fromTensor4(t, rank, dtype), dtype).has_value());
    }

    NpyArray read(const std::string& name) const {
        NpyReadOptions options;
        options.minRank = 1;
        options.keepFloat64 = true;
        auto array = readNpy(file(name), options);
        EXPECT_TRUE(array.ok()) << array.error();
        return array.ok() ? *array : NpyArray{};
    }

    /// Exit 2, nothing on stdout, one line on stderr naming `culprit`, no file added/changed.
    void expectRejected(const std::vector<std::string>& args, const std::string& culprit) const {
        const auto before = listing();
        std::map<std::string, std::string> contents;
        for (const auto& name : before)
            contents[name] = test::readWholeFile(file(name));
        const test::CommandResult run = compute(args);
        EXPECT_EQ(run.status, 2) << run.err;
        EXPECT_TRUE(run.out.empty()) << run.out;
        EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
        EXPECT_NE(run.err.find(culprit), std::string::npos) << culprit << ": " << run.err;
        EXPECT_EQ(listing(), before) << "files were added or removed";
        for (const auto& name : before)
            EXPECT_EQ(test::readWholeFile(file(name)), contents[name]) << name << " changed";
    }
};

/// A [1, 1, rows, cols] tensor (a matrix) of seeded N(0, 1) doubles.
Tensor4d randomMatrix(Index rows, Index cols, std::uint64_t seed) {
    return ref::randomDoubles(1, 1, rows, cols, seed);
}

TEST_F(ComputeIssue14, OutputProjectionIsSeed000FormulaInDouble) {
    // Rank 4, GQA (4 query heads, 2 kv heads), float64 throughout.
    const Tensor4d q = ref::randomDoubles(2, 4, 9, 6, 1);
    const Tensor4d k = ref::randomDoubles(2, 2, 11, 6, 2);
    const Tensor4d v = ref::randomDoubles(2, 2, 11, 5, 3);
    const Tensor4d wo = randomMatrix(4 * 5, 7, 4);
    write("q.npy", q, 4, DType::Float64);
    write("k.npy", k, 4, DType::Float64);
    write("v.npy", v, 4, DType::Float64);
    write("wo.npy", wo, 2, DType::Float64);
    const auto run = compute({"--q", file("q.npy"), "--k", file("k.npy"), "--v", file("v.npy"),
                              "--out", file("z.npy"), "--weights", file("w.npy"), "--mask",
                              "causal", "--output-projection", "--wo", file("wo.npy")});
    ASSERT_EQ(run.status, 0) << run.err;
    const NpyArray z = read("z.npy");
    EXPECT_EQ(z.dtype, DType::Float64);
    ASSERT_EQ(z.shape, (std::vector<Index>{2, 9, 7}));                 // [B, S, d_out]
    EXPECT_EQ(read("w.npy").shape, (std::vector<Index>{2, 4, 9, 11})); // still per head

    MaskSpec mask;
    mask.causal = true;
    for (Index b = 0; b < 2; ++b) {
        // Seed 000: attn_output [B, H, S, d_v] -> transpose(1, 2).contiguous() ->
        // view(B, S, H * d_v) -> @ W^O. The heads' outputs come from the naive reference.
        std::vector<ref::MatD> heads;
        for (Index h = 0; h < 4; ++h)
            heads.push_back(
                ref::attention(q.head(b, h), k.head(b, h / 2), v.head(b, h / 2), mask, b).output);
        std::vector<double> transposed; // [S, H, d_v] order
        for (Index s = 0; s < 9; ++s)
            for (Index h = 0; h < 4; ++h)
                for (Index d = 0; d < 5; ++d)
                    transposed.push_back(heads[static_cast<std::size_t>(h)](s, d));
        for (Index s = 0; s < 9; ++s)
            for (Index c = 0; c < 7; ++c) {
                double expected = 0;
                for (Index r = 0; r < 20; ++r)
                    expected += transposed[static_cast<std::size_t>(s * 20 + r)] * wo(0, 0, r, c);
                EXPECT_NEAR(z.data64[static_cast<std::size_t>((b * 9 + s) * 7 + c)], expected,
                            1e-12)
                    << b << "," << s << "," << c;
            }
    }
}

TEST_F(ComputeIssue14, OutputProjectionOfRank3And2HasOneHead) {
    const Tensor4 q = ref::randomTensor(2, 1, 5, 4, 11);
    const Tensor4 k = ref::randomTensor(2, 1, 6, 4, 12);
    const Tensor4 v = ref::randomTensor(2, 1, 6, 3, 13);
    const Tensor4 wo = ref::randomTensor(1, 1, 3, 2, 14);
    write("q.npy", q, 3, DType::Float32);
    write("k.npy", k, 3, DType::Float32);
    write("v.npy", v, 3, DType::Float32);
    write("wo.npy", wo, 2, DType::Float32);
    auto run = compute({"--q", file("q.npy"), "--k", file("k.npy"), "--v", file("v.npy"), "--out",
                        file("z.npy"), "--output-projection", "--wo", file("wo.npy")});
    ASSERT_EQ(run.status, 0) << run.err;
    const NpyArray z = read("z.npy");
    EXPECT_EQ(z.dtype, DType::Float32);
    ASSERT_EQ(z.shape, (std::vector<Index>{2, 5, 2}));
    const ConstMatrixMap woMatrix(wo.data.data(), 3, 2);
    for (Index b = 0; b < 2; ++b) {
        const ref::MatD expected =
            ref::attention(q.head(b, 0), k.head(b, 0), v.head(b, 0), MaskSpec{}, b).output *
            woMatrix.cast<double>();
        EXPECT_MATRIX_NEAR(ConstMatrixMap(z.data.data() + b * 10, 5, 2), expected, 1e-5);
    }

    const Tensor4 q2 = ref::randomTensor(1, 1, 5, 4, 21);
    write("q2.npy", q2, 2, DType::Float32);
    write("k2.npy", ref::randomTensor(1, 1, 6, 4, 22), 2, DType::Float32);
    write("v2.npy", ref::randomTensor(1, 1, 6, 3, 23), 2, DType::Float32);
    run = compute({"--q", file("q2.npy"), "--k", file("k2.npy"), "--v", file("v2.npy"), "--out",
                   file("z2.npy"), "--output-projection", "--wo", file("wo.npy")});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(read("z2.npy").shape, (std::vector<Index>{5, 2}));
}

TEST_F(ComputeIssue14, EvalModeIsByteForByteTheRunWithoutDropout) {
    write("q.npy", ref::randomTensor(2, 4, 13, 8, 31), 4, DType::Float32);
    write("k.npy", ref::randomTensor(2, 2, 17, 8, 32), 4, DType::Float32);
    write("v.npy", ref::randomTensor(2, 2, 17, 8, 33), 4, DType::Float32);
    for (const char* variant : {"softmax", "flash", "linear", "additive"}) {
        const std::vector<std::string> base = {
            "--q",       file("q.npy"), "--k",    file("k.npy"), "--v",          file("v.npy"),
            "--variant", variant,       "--mask", "causal",      "--block-size", "5"};
        auto plain = base;
        plain.insert(plain.end(), {"--out", file("plain.npy")});
        auto eval = base;
        eval.insert(eval.end(),
                    {"--out", file("eval.npy"), "--dropout", "0", "--dropout-seed", "123"});
        ASSERT_EQ(compute(plain).status, 0) << variant;
        ASSERT_EQ(compute(eval).status, 0) << variant;
        EXPECT_EQ(test::readWholeFile(file("plain.npy")), test::readWholeFile(file("eval.npy")))
            << variant;
    }
}

TEST_F(ComputeIssue14, TrainPatternIgnoresThreadsAndTilesAndOutputIsWeightsTimesV) {
    const Tensor4 v = ref::randomTensor(1, 2, 40, 6, 43);
    write("q.npy", ref::randomTensor(1, 4, 33, 8, 41), 4, DType::Float32);
    write("k.npy", ref::randomTensor(1, 2, 40, 8, 42), 4, DType::Float32);
    write("v.npy", v, 4, DType::Float32);
    struct Run {
        const char* variant;
        const char* threads;
        const char* block;
    };
    std::vector<NpyArray> weights, outputs;
    int n = 0;
    for (const Run r : {Run{"softmax", "1", "64"}, Run{"softmax", "2", "64"},
                        Run{"flash", "1", "3"}, Run{"flash", "2", "16"}}) {
        const std::string out = "o" + std::to_string(n) + ".npy";
        const std::string w = "w" + std::to_string(n++) + ".npy";
        const auto run = compute({"--q",
                                  file("q.npy"),
                                  "--k",
                                  file("k.npy"),
                                  "--v",
                                  file("v.npy"),
                                  "--out",
                                  file(out),
                                  "--weights",
                                  file(w),
                                  "--variant",
                                  r.variant,
                                  "--threads",
                                  r.threads,
                                  "--block-size",
                                  r.block,
                                  "--q-block-size",
                                  r.block,
                                  "--dropout",
                                  "0.3",
                                  "--dropout-seed",
                                  "8"});
        ASSERT_EQ(run.status, 0) << run.err;
        weights.push_back(read(w));
        outputs.push_back(read(out));
    }
    const std::size_t cells = weights[0].data.size();
    std::size_t zeros = 0;
    for (std::size_t c = 0; c < cells; ++c)
        zeros += weights[0].data[c] == 0.0f ? 1 : 0;
    EXPECT_GT(zeros, cells / 5); // about 30% of the cells dropped
    EXPECT_LT(zeros, cells * 2 / 5);
    for (std::size_t r = 1; r < weights.size(); ++r) {
        ASSERT_EQ(weights[r].data.size(), cells);
        for (std::size_t c = 0; c < cells; ++c)
            ASSERT_EQ(weights[r].data[c] == 0.0f, weights[0].data[c] == 0.0f)
                << "run " << r << " cell " << c;
    }
    // The output is the written (dropped) weights times V, for every run.
    for (std::size_t r = 0; r < weights.size(); ++r) {
        const Tensor4 w = toTensor4(weights[r]);
        const Tensor4 o = toTensor4(outputs[r]);
        for (Index h = 0; h < 4; ++h) {
            const ref::MatD expected =
                w.head(0, h).cast<double>() * v.head(0, h / 2).cast<double>();
            EXPECT_MATRIX_NEAR(o.head(0, h), expected, 2e-5) << "run " << r << " head " << h;
        }
    }
}

TEST_F(ComputeIssue14, BadDropoutAndOutputProjectionAreRejectedWithOneLine) {
    write("q.npy", ref::randomTensor(1, 4, 3, 4, 51), 4, DType::Float32);
    write("k.npy", ref::randomTensor(1, 2, 5, 4, 52), 4, DType::Float32);
    write("v.npy", ref::randomTensor(1, 2, 5, 3, 53), 4, DType::Float32);
    write("wo.npy", ref::randomTensor(1, 1, 12, 6, 54), 2, DType::Float32);   // 4 x 3 = 12: fits
    write("wo11.npy", ref::randomTensor(1, 1, 11, 6, 55), 2, DType::Float32); // does not
    write("wo3d.npy", ref::randomTensor(2, 1, 6, 6, 56), 3, DType::Float32);
    const std::vector<std::string> base = {"--q",       file("q.npy"), "--k",   file("k.npy"),
                                           "--v",       file("v.npy"), "--out", file("o.npy"),
                                           "--weights", file("w.npy")};
    auto with = [&base](const std::vector<std::string>& more) {
        auto args = base;
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    // A control: the same files and options that are fine succeed (then the outputs go).
    ASSERT_EQ(
        compute(with({"--dropout", "0.5", "--output-projection", "--wo", file("wo.npy")})).status,
        0);
    fs::remove(file("o.npy"));
    fs::remove(file("w.npy"));

    expectRejected(with({"--dropout", "1"}), "--dropout");
    expectRejected(with({"--dropout", "1.5"}), "--dropout");
    expectRejected(with({"--dropout", "-0.1"}), "--dropout");
    expectRejected(with({"--dropout", "nan"}), "--dropout");
    expectRejected(with({"--dropout", "lots"}), "--dropout");
    expectRejected(with({"--dropout", "0.2", "--variant", "linear"}), "linear");
    expectRejected(with({"--dropout-seed", "3"}), "--dropout-seed");
    expectRejected(with({"--dropout", "0.2", "--dropout-seed", "-3"}), "--dropout-seed");
    expectRejected(with({"--output-projection", "--wo", file("wo11.npy")}), "wo11.npy");
    expectRejected(with({"--output-projection", "--wo", file("wo3d.npy")}), "wo3d.npy");
    expectRejected(with({"--output-projection", "--wo", file("missing.npy")}), "missing.npy");
    expectRejected(with({"--output-projection"}), "--wo");
    expectRejected(with({"--wo", file("wo.npy")}), "--output-projection");
}

} // namespace
} // namespace attnlab

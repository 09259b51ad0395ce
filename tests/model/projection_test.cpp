// The projection every layer runs (forward.cpp's project(), through forward_seams.h) against a
// double-precision product written out here, for nn.Linear [out, in] and Conv1D [in, out]
// weights in F32, BF16 and F16: a few rows (Eigen's matrix-vector path) and many (the packed
// panels of the kernels' GEMM), widths that leave a partial panel and a partial 64-output
// block, depths past one cache block. A 16-bit weight gives the bytes of its float32 copy; the
// result does not depend on the thread count, nor on which x86 SIMD target runs.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "attnlab/base/isa.h"
#include "forward_seams.h"
#include "isa_scope.h"

namespace attnlab::model {
namespace {

/// A weight's three storages: the 16-bit patterns and the float32 values they stand for
/// (decoded here from the definition of each format, not by the reader under test).
struct TestWeight {
    std::vector<float> values;       // float32
    std::vector<std::uint16_t> bf16; // top halves of values
    std::vector<std::uint16_t> f16;  // binary16 patterns
    std::vector<float> f16Values;    // what f16 stands for
    Index rows, cols;
    bool inOut;

    TestWeight(Index r, Index c, bool transposed, std::uint32_t seed)
        : rows(r), cols(c), inOut(transposed) {
        std::mt19937 gen(seed);
        std::uniform_int_distribution<int> bits(0, 1023), exponent(9, 15), sign(0, 1);
        std::normal_distribution<float> normal(0.0f, 0.5f);
        const auto n = static_cast<std::size_t>(r * c);
        for (std::size_t i = 0; i < n; ++i) {
            std::uint32_t u;
            const float x = normal(gen);
            std::memcpy(&u, &x, sizeof u);
            bf16.push_back(static_cast<std::uint16_t>(u >> 16));
            const std::uint32_t top = u & 0xffff0000u;
            float widened;
            std::memcpy(&widened, &top, sizeof widened);
            values.push_back(widened);
            const int s = sign(gen), e = exponent(gen), m = bits(gen);
            f16.push_back(static_cast<std::uint16_t>((s << 15) | (e << 10) | m));
            f16Values.push_back((s ? -1.0f : 1.0f) * std::ldexp(1.0f + m / 1024.0f, e - 15));
        }
    }

    Weight as(WeightType type) const {
        Weight w;
        w.type = type;
        w.rows = rows;
        w.cols = cols;
        w.inOut = inOut;
        if (type == WeightType::F32)
            w.values = values;
        else
            w.halves = type == WeightType::BF16 ? bf16.data() : f16.data();
        return w;
    }
};

Matrix randomRows(Index rows, Index depth, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    Matrix x(rows, depth);
    for (Index i = 0; i < x.size(); ++i)
        x.data()[i] = normal(gen);
    return x;
}

/// y = x W^T + bias (or x W + bias) in double, from the float32 values.
MatrixD referenceProduct(const Matrix& x, const std::vector<float>& w, const TestWeight& t,
                         const std::vector<float>& bias) {
    const Index outputs = t.inOut ? t.cols : t.rows;
    MatrixD y(x.rows(), outputs);
    for (Index r = 0; r < x.rows(); ++r)
        for (Index o = 0; o < outputs; ++o) {
            double sum = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(o)];
            for (Index k = 0; k < x.cols(); ++k) {
                const float weight = t.inOut ? w[static_cast<std::size_t>(k * t.cols + o)]
                                             : w[static_cast<std::size_t>(o * t.cols + k)];
                sum += double(x(r, k)) * weight;
            }
            y(r, o) = sum;
        }
    return y;
}

struct Case {
    Index rows, outputs, depth;
    bool inOut;
};

std::vector<Case> cases() {
    std::vector<Case> all;
    for (Index rows : {1, 15, 16, 37})
        for (Index outputs : {16, 70, 200})
            for (Index depth : {3, 300})
                for (bool inOut : {false, true})
                    all.push_back({rows, outputs, depth, inOut});
    return all;
}

std::string labelOf(const Case& c, WeightType type) {
    return std::string(type == WeightType::F32    ? "F32"
                       : type == WeightType::BF16 ? "BF16"
                                                  : "F16") +
           (c.inOut ? " Conv1D" : " Linear") + " rows " + std::to_string(c.rows) + " outputs " +
           std::to_string(c.outputs) + " depth " + std::to_string(c.depth);
}

class Projection : public test::OnEachIsa {};

TEST_P(Projection, MatchesTheDoubleProductAndSixteenBitsGiveTheirFloat32Bytes) {
    std::uint32_t seed = 10;
    for (const Case& c : cases()) {
        const TestWeight t(c.inOut ? c.depth : c.outputs, c.inOut ? c.outputs : c.depth, c.inOut,
                           seed++);
        std::vector<float> bias(static_cast<std::size_t>(c.outputs));
        for (std::size_t i = 0; i < bias.size(); ++i)
            bias[i] = 0.01f * static_cast<float>(i);
        Weight biasWeight;
        biasWeight.values = bias;
        biasWeight.rows = 1;
        biasWeight.cols = c.outputs;
        const Matrix x = randomRows(c.rows, c.depth, seed++);
        for (WeightType type : {WeightType::F32, WeightType::BF16, WeightType::F16}) {
            const std::string label = labelOf(c, type);
            Matrix y;
            seams::project(x, Linear{t.as(type), biasWeight}, y, 2);
            const auto& values = type == WeightType::F16 ? t.f16Values : t.values;
            const MatrixD expected = referenceProduct(x, values, t, bias);
            ASSERT_EQ(y.rows(), c.rows) << label;
            ASSERT_EQ(y.cols(), c.outputs) << label;
            const double worst = (y.cast<double>() - expected).cwiseAbs().maxCoeff();
            EXPECT_LT(worst, 2e-5 * std::sqrt(double(c.depth)) * 4) << label;
            if (type == WeightType::BF16) {
                // Its float32 copy (t.values holds exactly those values), one thread: same bytes.
                Matrix copy;
                seams::project(x, Linear{t.as(WeightType::F32), biasWeight}, copy, 1);
                EXPECT_EQ(Eigen::Map<const Vector>(y.data(), y.size()),
                          Eigen::Map<const Vector>(copy.data(), copy.size()))
                    << label;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, Projection, ::testing::ValuesIn(kAllIsas), test::isaTestName);

TEST(ProjectionSimdTargets, GiveTheSameBytes) {
    if (!isaSupported(Isa::Avx2) || !isaSupported(Isa::Avx512))
        GTEST_SKIP() << "needs a CPU that runs both avx2 and avx512 (this one: best "
                     << isaName(bestIsa()) << ")";
    std::uint32_t seed = 900;
    for (const Case& c : cases()) {
        const TestWeight t(c.inOut ? c.depth : c.outputs, c.inOut ? c.outputs : c.depth, c.inOut,
                           seed++);
        const Matrix x = randomRows(c.rows, c.depth, seed++);
        Matrix results[2];
        for (int i = 0; i < 2; ++i) {
            test::IsaScope scope(i == 0 ? Isa::Avx2 : Isa::Avx512);
            seams::project(x, Linear{t.as(WeightType::BF16), Weight{}}, results[i], 2);
        }
        EXPECT_EQ(Eigen::Map<const Vector>(results[0].data(), results[0].size()),
                  Eigen::Map<const Vector>(results[1].data(), results[1].size()))
            << labelOf(c, WeightType::BF16);
    }
}

} // namespace
} // namespace attnlab::model

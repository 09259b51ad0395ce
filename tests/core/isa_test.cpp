// The kernel targets (core/base/include/attnlab/base/isa.h, simd_kernels.h): each one the CPU
// runs computes its GEMM within rounding of a double-precision product, and the two x86 SIMD
// targets give identical bytes for every kernel and for attention as a whole, so a user's
// output does not depend on which of them their CPU has. A target the CPU lacks is skipped.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/base/check.h"
#include "attnlab/base/isa.h"
#include "attnlab/base/simd_kernels.h"
#include "isa_scope.h"
#include "reference.h"

namespace attnlab {
namespace {

using simd::GemmStart;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> randomFloats(std::size_t count, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(count);
    for (float& x : v)
        x = dist(gen);
    return v;
}

TEST(Isa, NamesRoundTripAndTheBestIsSupported) {
    for (Isa isa : kAllIsas)
        EXPECT_EQ(isaFromName(isaName(isa)), isa);
    EXPECT_FALSE(isaFromName("sse2").has_value());
    EXPECT_TRUE(isaSupported(Isa::Generic));
    EXPECT_TRUE(isaSupported(bestIsa()));
    EXPECT_TRUE(isaSupported(activeIsa()));
    EXPECT_EQ(simd::kernelsFor(bestIsa()).isa, bestIsa());
}

TEST(Isa, ATargetTheCpuLacksIsRefused) {
    for (Isa isa : kAllIsas) {
        if (isaSupported(isa)) continue;
        EXPECT_THROW(setActiveIsa(isa), InvalidArgument) << isaName(isa);
        EXPECT_THROW((void)simd::kernelsFor(isa), InvalidArgument) << isaName(isa);
    }
    if (bestIsa() == Isa::Avx512) GTEST_SKIP() << "this CPU runs every target";
}

/// A GEMM case: C (start) A B with B as panels of a wider row-major matrix (ldb > 16), so the
/// panel stride and the row stride both matter.
struct GemmCase {
    Index rows, panels, depth;
    GemmStart start;
};

std::vector<GemmCase> gemmCases() {
    std::vector<GemmCase> cases;
    for (Index rows : {1, 2, 4, 5, 6, 7, 13, 24}) // 1, 2, 4: the few rows' wider pass
        for (Index panels : {1, 2, 3, 5, 9})
            for (Index depth : {0, 1, 64, 300, 600})
                for (GemmStart start : {GemmStart::Zero, GemmStart::Scale, GemmStart::Load})
                    cases.push_back({rows, panels, depth, start});
    return cases;
}

/// A case's seeded A, B, row scales and starting C.
struct GemmInputs {
    Index lda, ldb, ldc;
    std::vector<float> a, b, scale, c;
    explicit GemmInputs(const GemmCase& g)
        : lda(g.depth + 3), ldb(g.panels * 16 + 16), ldc(g.panels * 16 + 5),
          a(randomFloats(static_cast<std::size_t>(g.rows * lda), 1)),
          b(randomFloats(static_cast<std::size_t>(std::max<Index>(g.depth, 1) * ldb), 2)),
          scale(randomFloats(static_cast<std::size_t>(g.rows), 3)),
          c(randomFloats(static_cast<std::size_t>(g.rows * ldc), 4)) {}
};

/// C after gemm on `kernels`.
std::vector<float> runGemm(const simd::Kernels& kernels, const GemmCase& g) {
    GemmInputs in(g);
    kernels.gemm(g.start, in.a.data(), in.lda, g.rows, in.b.data(), in.ldb, 16, g.panels, g.depth,
                 in.c.data(), in.ldc, in.scale.data(), nullptr);
    return in.c;
}

/// The same product in double, straight from its definition.
std::vector<double> referenceGemm(const GemmCase& g) {
    const GemmInputs in(g);
    std::vector<double> out(in.c.begin(), in.c.end());
    for (Index r = 0; r < g.rows; ++r)
        for (Index j = 0; j < g.panels * 16; ++j) {
            const double c = in.c[static_cast<std::size_t>(r * in.ldc + j)];
            double sum = g.start == GemmStart::Zero    ? 0.0
                         : g.start == GemmStart::Scale ? c * in.scale[static_cast<std::size_t>(r)]
                                                       : c;
            for (Index k = 0; k < g.depth; ++k)
                sum += double(in.a[static_cast<std::size_t>(r * in.lda + k)]) *
                       double(in.b[static_cast<std::size_t>(k * in.ldb + j)]);
            out[static_cast<std::size_t>(r * in.ldc + j)] = sum;
        }
    return out;
}

class KernelTarget : public test::OnEachIsa {};

TEST_P(KernelTarget, GemmMatchesTheDoubleProduct) {
    const simd::Kernels& kernels = simd::kernels();
    ASSERT_EQ(kernels.isa, GetParam());
    for (const GemmCase& g : gemmCases()) {
        const auto c = runGemm(kernels, g);
        const auto expected = referenceGemm(g);
        const std::string label = "rows " + std::to_string(g.rows) + " panels " +
                                  std::to_string(g.panels) + " depth " + std::to_string(g.depth) +
                                  " start " + std::to_string(static_cast<int>(g.start));
        double worst = 0;
        for (std::size_t i = 0; i < c.size(); ++i)
            worst = std::max(worst, std::abs(double(c[i]) - expected[i]));
        // Sums of up to 600 products of unit normals: float rounding stays below 1e-4 of it.
        EXPECT_LT(worst, 1e-4 * std::sqrt(double(std::max<Index>(g.depth, 1)))) << label;
        // Columns past the panels (ldc > 16 panels) are untouched.
        const GemmInputs before(g);
        for (Index r = 0; r < g.rows; ++r)
            for (Index j = g.panels * 16; j < before.ldc; ++j)
                ASSERT_EQ(c[static_cast<std::size_t>(r * before.ldc + j)],
                          before.c[static_cast<std::size_t>(r * before.ldc + j)])
                    << label;
    }
}

TEST_P(KernelTarget, TransposeMovesEveryElementAndNothingElse) {
    const simd::Kernels& kernels = simd::kernels();
    ASSERT_EQ(kernels.isa, GetParam());
    // Whole 8 x 8 tiles, edges of every width, and strides wider than the block.
    for (const auto& [rows, cols] :
         {std::pair<Index, Index>{0, 5}, {1, 1}, {7, 9}, {8, 8}, {16, 64}, {19, 35}, {64, 256}}) {
        const Index ldIn = cols + 3;
        const Index ldOut = rows + 5;
        std::vector<float> in(static_cast<std::size_t>(std::max<Index>(rows, 1) * ldIn));
        for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = static_cast<float>(i) + 0.5f;
        std::vector<float> out(static_cast<std::size_t>(std::max<Index>(cols, 1) * ldOut), -1.0f);
        kernels.transpose(in.data(), ldIn, rows, cols, out.data(), ldOut);
        for (Index c = 0; c < cols; ++c)
            for (Index r = 0; r < ldOut; ++r)
                ASSERT_EQ(out[static_cast<std::size_t>(c * ldOut + r)],
                          r < rows ? in[static_cast<std::size_t>(r * ldIn + c)] : -1.0f)
                    << rows << " x " << cols << " at (" << r << ", " << c << ")";
    }
}

TEST_P(KernelTarget, Bfloat16WideningIsTheHighHalfOfEveryPattern) {
    const simd::Kernels& kernels = simd::kernels();
    ASSERT_EQ(kernels.isa, GetParam());
    std::vector<std::uint16_t> patterns(1 << 16);
    for (std::size_t i = 0; i < patterns.size(); ++i)
        patterns[i] = static_cast<std::uint16_t>(i);
    std::vector<float> out(patterns.size() + 3, 7.0f);
    // An odd count: the target converts a prefix in bulk and says how much.
    const Index done = kernels.widenBfloat16s(patterns.data(), out.data(), 65533);
    ASSERT_GE(done, 0);
    ASSERT_LE(done, 65533);
    for (Index i = 0; i < done; ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(out[static_cast<std::size_t>(i)]),
                  static_cast<std::uint32_t>(i) << 16)
            << i;
    for (std::size_t i = static_cast<std::size_t>(done); i < out.size(); ++i)
        ASSERT_EQ(out[i], 7.0f) << i;
}

/// The activations sigmoidGate serves, as (a, b) of x sigmoid(a x + b x^3), with their
/// definitions in double: SiLU, quick GELU and GELU's tanh form written with tanh itself.
struct Gate {
    const char* name;
    double a, b;
    double (*reference)(double);
};
const std::vector<Gate>& gates() {
    static const double c = std::sqrt(2.0 / 3.14159265358979323846);
    static const std::vector<Gate> all = {
        {"silu", 1.0, 0.0, [](double x) { return x / (1.0 + std::exp(-x)); }},
        {"quick-gelu", 1.702, 0.0, [](double x) { return x / (1.0 + std::exp(-1.702 * x)); }},
        {"gelu-tanh", 2.0 * c, 2.0 * c * 0.044715,
         [](double x) {
             // 1 + tanh u cancels to nothing in double below u = -7: there 2 e^2u / (1 + e^2u).
             const double u = c * (x + 0.044715 * x * x * x);
             const double onePlusTanh = u > -7.0
                                            ? 1.0 + std::tanh(u)
                                            : 2.0 * std::exp(2.0 * u) / (1.0 + std::exp(2.0 * u));
             return 0.5 * x * onePlusTanh;
         }},
    };
    return all;
}

/// Inputs over the range activations see, the edges where exp(-|z|) underflows, zeros and
/// infinities.
std::vector<float> gateInputs() {
    std::vector<float> in;
    for (double x = -30.0; x <= 30.0; x += 0.00731)
        in.push_back(static_cast<float>(x));
    for (float x :
         {-kInf, kInf, -1e30f, 1e30f, -200.0f, 200.0f, -88.0f, 88.0f, -0.0f, 0.0f, 1e-30f, -1e-30f})
        in.push_back(x);
    return in;
}

TEST_P(KernelTarget, SigmoidGateMatchesTheActivationsInDouble) {
    const simd::Kernels& kernels = simd::kernels();
    ASSERT_EQ(kernels.isa, GetParam());
    const std::vector<float> in = gateInputs();
    for (const Gate& g : gates()) {
        std::vector<float> out = in;
        kernels.sigmoidGate(out.data(), static_cast<Index>(out.size()), static_cast<float>(g.a),
                            static_cast<float>(g.b));
        for (std::size_t i = 0; i < in.size(); ++i) {
            const double x = in[i];
            const double y = out[i];
            if (std::isinf(x)) { // x sigmoid(+-inf): inf, and 0 (or NaN from -inf * 0)
                if (x > 0) {
                    ASSERT_EQ(y, kInf) << g.name;
                }
                continue;
            }
            const double expected = g.reference(x);
            // exp(-|z|) is off by |z| times z's own rounding (as any float exp of a float
            // argument is; z is three roundings for the cubic), the rest by a few roundings;
            // 1e-30 where the result underflows.
            const double z = g.a * x + g.b * x * x * x;
            ASSERT_NEAR(y, expected,
                        (8.0 + 3.0 * std::abs(z)) * 1.2e-7 * std::abs(expected) + 1e-30)
                << g.name << " at x = " << x;
        }
    }
}

/// Every float goes through the same operations wherever it sits: the same value in a whole
/// vector and in the short tail at any offset gives the same bits, so a row activated in column
/// blocks equals the row activated whole.
TEST_P(KernelTarget, SigmoidGateGivesEveryPositionTheSameBits) {
    const simd::Kernels& kernels = simd::kernels();
    ASSERT_EQ(kernels.isa, GetParam());
    const std::vector<float> row = randomFloats(101, 9);
    for (const Gate& g : gates()) {
        const auto a = static_cast<float>(g.a);
        const auto b = static_cast<float>(g.b);
        std::vector<float> whole = row;
        kernels.sigmoidGate(whole.data(), static_cast<Index>(whole.size()), a, b);
        for (Index block : {1, 5, 16, 23, 40}) {
            std::vector<float> blocks = row;
            for (Index at = 0; at < static_cast<Index>(blocks.size()); at += block)
                kernels.sigmoidGate(blocks.data() + at,
                                    std::min<Index>(block, static_cast<Index>(blocks.size()) - at),
                                    a, b);
            ASSERT_EQ(blocks, whole) << g.name << " in blocks of " << block;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, KernelTarget, ::testing::ValuesIn(kAllIsas), test::isaTestName);

/// Skips unless the CPU runs both x86 SIMD targets.
#define REQUIRE_BOTH_SIMD_TARGETS()                                                                \
    do {                                                                                           \
        if (!isaSupported(Isa::Avx2) || !isaSupported(Isa::Avx512))                                \
            GTEST_SKIP() << "needs a CPU that runs both avx2 and avx512 (this one: best "          \
                         << isaName(bestIsa()) << ")";                                             \
    } while (0)

TEST(SimdTargets, GemmGivesTheSameBytes) {
    REQUIRE_BOTH_SIMD_TARGETS();
    for (const GemmCase& g : gemmCases())
        ASSERT_EQ(runGemm(simd::kernelsFor(Isa::Avx2), g),
                  runGemm(simd::kernelsFor(Isa::Avx512), g))
            << "rows " << g.rows << " panels " << g.panels << " depth " << g.depth;
}

TEST(SimdTargets, ExpAndSoftmaxRowsGiveTheSameBytes) {
    REQUIRE_BOTH_SIMD_TARGETS();
    const simd::Kernels& avx2 = simd::kernelsFor(Isa::Avx2);
    const simd::Kernels& avx512 = simd::kernelsFor(Isa::Avx512);
    std::vector<float> in;
    for (double x = -160.0; x <= 0.0; x += 0.0137)
        in.push_back(static_cast<float>(x));
    for (float x : {-kInf, -1e30f, -126.0f, -126.5f, -125.99f, -0.5f, -0.0f, 0.0f})
        in.push_back(x);
    for (std::size_t n : {in.size(), std::size_t{13}}) { // a tail shorter than a vector too
        std::vector<float> out2(n), out512(n);
        avx2.exp2NonPositive(in.data(), out2.data(), static_cast<Index>(n));
        avx512.exp2NonPositive(in.data(), out512.data(), static_cast<Index>(n));
        ASSERT_EQ(out2, out512);
    }
    for (Index cols : {16, 48, 128, 512}) {
        auto row = randomFloats(static_cast<std::size_t>(cols), static_cast<std::uint32_t>(cols));
        for (Index j = 0; j < cols; j += 7)
            row[static_cast<std::size_t>(j)] = -kInf; // masked cells
        for (float startMax : {-kInf, 0.5f, 3.0f}) {
            auto s2 = row;
            auto s512 = row;
            float max2 = startMax, max512 = startMax, sum2 = 2.5f, sum512 = 2.5f;
            const float rescale2 = avx2.onlineSoftmaxRow(s2.data(), cols, max2, sum2);
            const float rescale512 = avx512.onlineSoftmaxRow(s512.data(), cols, max512, sum512);
            ASSERT_EQ(s2, s512) << cols;
            ASSERT_EQ(sum2, sum512) << cols;
            ASSERT_EQ(max2, max512) << cols;
            ASSERT_EQ(rescale2, rescale512) << cols;
            avx2.expShiftedScaled(s2.data(), cols, 0.0f, 0.75f);
            avx512.expShiftedScaled(s512.data(), cols, 0.0f, 0.75f);
            ASSERT_EQ(s2, s512) << cols;
        }
    }
}

TEST(SimdTargets, SigmoidGateGivesTheSameBytes) {
    REQUIRE_BOTH_SIMD_TARGETS();
    const std::vector<float> in = gateInputs();
    for (const Gate& g : gates())
        for (std::size_t n : {in.size(), std::size_t{13}}) {
            std::vector<float> out2(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
            std::vector<float> out512 = out2;
            const auto a = static_cast<float>(g.a);
            const auto b = static_cast<float>(g.b);
            simd::kernelsFor(Isa::Avx2).sigmoidGate(out2.data(), static_cast<Index>(n), a, b);
            simd::kernelsFor(Isa::Avx512).sigmoidGate(out512.data(), static_cast<Index>(n), a, b);
            // Bit patterns: NaN from -inf compares unequal to itself.
            std::vector<std::uint32_t> bits2(n), bits512(n);
            for (std::size_t i = 0; i < n; ++i) {
                bits2[i] = std::bit_cast<std::uint32_t>(out2[i]);
                bits512[i] = std::bit_cast<std::uint32_t>(out512[i]);
            }
            ASSERT_EQ(bits2, bits512) << g.name;
        }
}

/// attend() on each SIMD target: outputs and weights byte for byte, over masks and shapes
/// that leave tails in every direction.
TEST(SimdTargets, AttentionGivesTheSameBytes) {
    REQUIRE_BOTH_SIMD_TARGETS();
    struct Shape {
        Index sq, sk, dim, dv;
    };
    std::uint32_t seed = 500;
    for (const Shape& s : {Shape{7, 5, 3, 3}, Shape{100, 300, 64, 64}, Shape{129, 97, 80, 17}}) {
        const Qkv qkv{ref::randomTensor(2, 4, s.sq, s.dim, seed++),
                      ref::randomTensor(2, 2, s.sk, s.dim, seed++),
                      ref::randomTensor(2, 2, s.sk, s.dv, seed++)};
        for (Variant variant : {Variant::Softmax, Variant::Flash})
            for (bool causal : {false, true}) {
                AttentionSpec spec;
                spec.variant = variant;
                spec.mask.causal = causal;
                spec.mask.validLen = {s.sk, s.sk / 2};
                spec.threads = 2;
                Attention results[2];
                for (int i = 0; i < 2; ++i) {
                    test::IsaScope scope(i == 0 ? Isa::Avx2 : Isa::Avx512);
                    results[i] = attend(qkv, spec);
                }
                const std::string label = std::string(variantName(variant)) +
                                          (causal ? " causal" : "") + " Sq=" + std::to_string(s.sq);
                ASSERT_EQ(results[0].output.data, results[1].output.data) << label;
                ASSERT_EQ(results[0].weights.data, results[1].weights.data) << label;
            }
    }
}

} // namespace
} // namespace attnlab

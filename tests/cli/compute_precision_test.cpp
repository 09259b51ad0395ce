// Issue 9, item 6: float64 inputs to `attnlab compute` are computed in double precision. The
// built binary runs on float64 .npy files of random doubles (not representable in float, so
// a float computation is off by ~1e-7) and every variant and mask must come within ~1e-14
// (relative to the largest output) of naive double-precision references written here and in
// tests/support/reference.h; float32 inputs stay within the float tolerance.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/io/npy.h"
#include "command_runner.h"
#include "reference.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

using ref::MatD;
using ref::randomDoubles;

/// Relative error a float64 run must reach: a double computation gives ~1e-15 here; the
/// former float32 computation gave ~1e-7.
constexpr double kDoubleTol = 1e-13;
/// float32 inputs: the float kernels' usual tolerance.
constexpr double kFloatTol = 2e-5;

/// Runs `attnlab compute args...`; returns the exit status, stderr in `err`.
int compute(const std::vector<std::string>& args, const test::TempDir& dir, std::string* err) {
    std::vector<std::string> all = {"compute"};
    all.insert(all.end(), args.begin(), args.end());
    const test::CommandResult result =
        test::runCommand(ATTNLAB_BINARY, all, dir.path() / "capture");
    *err = result.err;
    return result.status;
}

/// max |a - b| / max |b| over two same-shape matrices (shape mismatch: infinity).
template <typename A, typename B> double relativeError(const A& a, const B& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    double worst = 0, scale = 0;
    for (Index i = 0; i < b.rows(); ++i)
        for (Index j = 0; j < b.cols(); ++j) {
            const double diff =
                std::abs(static_cast<double>(a(i, j)) - static_cast<double>(b(i, j)));
            worst =
                std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(worst, diff);
            scale = std::max(scale, std::abs(static_cast<double>(b(i, j))));
        }
    return scale > 0 ? worst / scale : worst;
}

// ---- independent double references (one head) -----------------------------------------------

using Head = Eigen::Map<const MatD>;

/// Linear attention, written out: phi(x) = elu(x) + 1, out_i = sum_j w_ij v_j with
/// w_ij = phi(q_i).phi(k_j) / (sum_{j allowed} phi(q_i).phi(k_j) + 1e-6) over allowed keys.
MatD linearReference(const Head& q, const Head& k, const Head& v, const ref::MaskD& allowed) {
    auto phi = [](double x) { return x > 0 ? x + 1 : std::exp(x); };
    MatD out = MatD::Zero(q.rows(), v.cols());
    for (Index i = 0; i < q.rows(); ++i) {
        std::vector<double> kernel(static_cast<std::size_t>(k.rows()), 0.0);
        double denominator = 0;
        bool any = false;
        for (Index j = 0; j < k.rows(); ++j) {
            if (!allowed(i, j)) continue;
            any = true;
            double dot = 0;
            for (Index c = 0; c < q.cols(); ++c)
                dot += phi(q(i, c)) * phi(k(j, c));
            kernel[static_cast<std::size_t>(j)] = dot;
            denominator += dot;
        }
        if (!any) continue;
        denominator += 1e-6;
        for (Index j = 0; j < k.rows(); ++j)
            for (Index c = 0; c < v.cols(); ++c)
                out(i, c) += kernel[static_cast<std::size_t>(j)] / denominator * v(j, c);
    }
    return out;
}

/// Additive attention, written out: s_ij = sum_u v_u tanh(sum_c Wq_uc q_ic + sum_c Wk_uc k_jc),
/// softmax over the allowed keys (no scale), out = P V.
MatD additiveReference(const Head& q, const Head& k, const Head& v, const ref::MaskD& allowed,
                       const MatD& wq, const MatD& wk, const MatD& wv) {
    MatD out = MatD::Zero(q.rows(), v.cols());
    for (Index i = 0; i < q.rows(); ++i) {
        std::vector<double> score(static_cast<std::size_t>(k.rows()),
                                  -std::numeric_limits<double>::infinity());
        double rowMax = -std::numeric_limits<double>::infinity();
        for (Index j = 0; j < k.rows(); ++j) {
            if (!allowed(i, j)) continue;
            double s = 0;
            for (Index u = 0; u < wq.rows(); ++u) {
                double hidden = 0;
                for (Index c = 0; c < q.cols(); ++c)
                    hidden += wq(u, c) * q(i, c) + wk(u, c) * k(j, c);
                s += wv(u, 0) * std::tanh(hidden);
            }
            score[static_cast<std::size_t>(j)] = s;
            rowMax = std::max(rowMax, s);
        }
        if (rowMax == -std::numeric_limits<double>::infinity()) continue;
        double sum = 0;
        for (double& s : score) {
            s = std::exp(s - rowMax); // exp(-inf) = 0 for masked keys
            sum += s;
        }
        for (Index j = 0; j < k.rows(); ++j)
            for (Index c = 0; c < v.cols(); ++c)
                out(i, c) += score[static_cast<std::size_t>(j)] / sum * v(j, c);
    }
    return out;
}

/// Rotates every head of x by RoPE in double: pair i at position offset + s turns by
/// (offset + s) / base^(2i / D); "interleaved" pairs (2i, 2i + 1), "half" pairs (i, i + D/2).
Tensor4d rotated(Tensor4d x, const std::string& style, Index offset, double base = 10000.0) {
    const Index pairs = x.dim / 2;
    for (Index b = 0; b < x.batch; ++b)
        for (Index h = 0; h < x.heads; ++h)
            for (Index s = 0; s < x.seq; ++s)
                for (Index i = 0; i < pairs; ++i) {
                    const Index a = style == "half" ? i : 2 * i;
                    const Index c = style == "half" ? i + pairs : 2 * i + 1;
                    const double angle =
                        static_cast<double>(offset + s) /
                        std::pow(base, static_cast<double>(2 * i) / static_cast<double>(x.dim));
                    const double px = x(b, h, s, a), py = x(b, h, s, c);
                    x(b, h, s, a) = px * std::cos(angle) - py * std::sin(angle);
                    x(b, h, s, c) = px * std::sin(angle) + py * std::cos(angle);
                }
    return x;
}

// ---- the cases ------------------------------------------------------------------------------

struct MaskCase {
    std::string name;
    std::vector<std::string> args; ///< compute's options for it
    MaskSpec spec;                 ///< the same rules for the reference (read by rulesOf)
};

std::vector<MaskCase> maskCases() {
    std::vector<MaskCase> cases;
    cases.push_back({"none", {"--mask", "none"}, {}});
    MaskCase causal{"causal", {"--mask", "causal"}, {}};
    causal.spec.causal = true;
    cases.push_back(causal);
    MaskCase padding{"padding", {"--mask", "padding", "--valid-len", "3,0"}, {}};
    padding.spec.validLen = {3, 0}; // batch entry 1 has only empty rows
    cases.push_back(padding);
    MaskCase window{"window", {"--mask", "window", "--window", "2"}, {}};
    window.spec.window = 2;
    cases.push_back(window);
    MaskCase causalWindow{"causal-window", {"--mask", "causal-window", "--window", "3"}, {}};
    causalWindow.spec.causalWindow = 3;
    cases.push_back(causalWindow);
    MaskCase both{"causal,padding", {"--mask", "causal,padding", "--valid-len", "5,9"}, {}};
    both.spec.causal = true;
    both.spec.validLen = {5, 9};
    cases.push_back(both);
    return cases;
}

struct VariantCase {
    std::string name;
    std::vector<std::string> args;
    enum Kind { Softmax, Linear, Additive } kind = Softmax;
};

std::vector<VariantCase> variantCases() {
    return {
        {"softmax", {"--variant", "softmax"}, VariantCase::Softmax},
        {"flash 1x1",
         {"--variant", "flash", "--q-block-size", "1", "--block-size", "1"},
         VariantCase::Softmax},
        {"flash 3x5",
         {"--variant", "flash", "--q-block-size", "3", "--block-size", "5"},
         VariantCase::Softmax},
        {"flash 64x64", {"--variant", "flash"}, VariantCase::Softmax},
        {"linear", {"--variant", "linear"}, VariantCase::Linear},
        {"additive",
         {"--variant", "additive", "--additive-params", "p.npz"},
         VariantCase::Additive},
    };
}

class ComputePrecision : public ::testing::Test {
protected:
    ComputePrecision() {
        // B = 2, H = 4 query heads over Hkv = 2 kv heads (GQA), Sq = 9 queries over Sk = 11 keys
        // (bottom-right aligned), D = 6, Dv = 5.
        m_q = randomDoubles(2, 4, 9, 6, 1);
        m_k = randomDoubles(2, 2, 11, 6, 2);
        m_v = randomDoubles(2, 2, 11, 5, 3);
        m_wq = ref::MatD(randomDoubles(1, 1, 7, 6, 4).head(0, 0));
        m_wk = ref::MatD(randomDoubles(1, 1, 7, 6, 5).head(0, 0));
        m_wv = ref::MatD(randomDoubles(1, 1, 7, 1, 6).head(0, 0));
    }

    /// Writes the inputs in `dtype` (float32: the doubles rounded) and the additive parameters.
    void writeInputs(DType dtype, const Tensor4d& q, const Tensor4d& k, const Tensor4d& v) {
        auto write = [&](const std::string& name, const Tensor4d& t, DType type) {
            const NpyArray array = type == DType::Float64 ? fromTensor4(t, 4, type)
                                                          : fromTensor4(t.cast<float>(), 4, type);
            ASSERT_FALSE(writeNpy(m_dir.file(name), array, type).has_value());
        };
        write("q.npy", q, dtype);
        write("k.npy", k, dtype);
        write("v.npy", v, dtype);
        std::map<std::string, NpyArray> params;
        for (const auto& [key, m] :
             {std::pair<std::string, const MatD*>{"wq", &m_wq}, {"wk", &m_wk}, {"v", &m_wv}}) {
            NpyArray array;
            array.dtype = DType::Float64;
            array.shape = key == "v" ? std::vector<Index>{m->rows()}
                                     : std::vector<Index>{m->rows(), m->cols()};
            array.data64.assign(m->data(), m->data() + m->size());
            params[key] = array;
        }
        ASSERT_FALSE(writeNpz(m_dir.file("p.npz"), params, DType::Float64).has_value());
    }

    /// Runs compute with `args` and returns the output as read (float64 unrounded).
    NpyArray run(std::vector<std::string> args) {
        std::vector<std::string> all = {"--q", m_dir.file("q.npy"), "--k",   m_dir.file("k.npy"),
                                        "--v", m_dir.file("v.npy"), "--out", m_dir.file("o.npy")};
        for (std::string& a : args)
            all.push_back(a == "p.npz" ? m_dir.file("p.npz") : a);
        std::string err;
        EXPECT_EQ(compute(all, m_dir, &err), 0) << err;
        NpyReadOptions options;
        options.keepFloat64 = true;
        auto out = readNpy(m_dir.file("o.npy"), options);
        EXPECT_TRUE(out.ok()) << out.error();
        return out.ok() ? *out : NpyArray{};
    }

    /// The worst relative error of `output` against the reference over every (batch, head).
    double worstError(const NpyArray& output, const Tensor4d& q, const Tensor4d& k,
                      const Tensor4d& v, const MaskSpec& mask, VariantCase::Kind kind) const {
        if (output.rank() != 4) return std::numeric_limits<double>::infinity();
        const Tensor4d out = toTensor4d(output);
        const Index group = q.heads / k.heads;
        double worst = 0;
        for (Index b = 0; b < q.batch; ++b)
            for (Index h = 0; h < q.heads; ++h) {
                const Head qh(q.head(b, h).data(), q.seq, q.dim);
                const Head kh(k.head(b, h / group).data(), k.seq, k.dim);
                const Head vh(v.head(b, h / group).data(), v.seq, v.dim);
                const ref::MaskD allowed = ref::allowedMask(ref::rulesOf(mask, b), q.seq, k.seq);
                MatD expected;
                if (kind == VariantCase::Softmax)
                    expected = ref::attention(qh, kh, vh, allowed).output;
                else if (kind == VariantCase::Linear)
                    expected = linearReference(qh, kh, vh, allowed);
                else
                    expected = additiveReference(qh, kh, vh, allowed, m_wq, m_wk, m_wv);
                worst = std::max(worst, relativeError(out.head(b, h), expected));
            }
        return worst;
    }

    test::TempDir m_dir{"attnlab_precision"};
    Tensor4d m_q, m_k, m_v;
    MatD m_wq, m_wk, m_wv;
};

TEST_F(ComputePrecision, Float64InputsAreComputedInDoubleForEveryVariantAndMask) {
    writeInputs(DType::Float64, m_q, m_k, m_v);
    for (const VariantCase& variant : variantCases())
        for (const MaskCase& mask : maskCases()) {
            SCOPED_TRACE(variant.name + ", mask " + mask.name);
            std::vector<std::string> args = variant.args;
            args.insert(args.end(), mask.args.begin(), mask.args.end());
            const NpyArray out = run(args);
            EXPECT_EQ(out.dtype, DType::Float64);
            EXPECT_FALSE(out.data64.empty()) << "float64 output not read at full precision";
            const double error = worstError(out, m_q, m_k, m_v, mask.spec, variant.kind);
            EXPECT_LE(error, kDoubleTol);
            std::ostringstream measured; // ctest --output-on-failure / the XML report show it
            measured << std::scientific << std::setprecision(2) << error;
            RecordProperty(variant.name + " " + mask.name, measured.str());
        }
}

TEST_F(ComputePrecision, Float32InputsStayWithinTheFloatTolerance) {
    // The reference sees the values the float32 files hold.
    const Tensor4d q = m_q.cast<float>().cast<double>();
    const Tensor4d k = m_k.cast<float>().cast<double>();
    const Tensor4d v = m_v.cast<float>().cast<double>();
    writeInputs(DType::Float32, q, k, v);
    for (const VariantCase& variant : variantCases())
        for (const MaskCase& mask : maskCases()) {
            SCOPED_TRACE(variant.name + ", mask " + mask.name);
            std::vector<std::string> args = variant.args;
            args.insert(args.end(), mask.args.begin(), mask.args.end());
            const NpyArray out = run(args);
            EXPECT_EQ(out.dtype, DType::Float32);
            const double error = worstError(out, q, k, v, mask.spec, variant.kind);
            EXPECT_LE(error, kFloatTol);
            // float32 is computed in float, as before: not double-exact.
            EXPECT_GT(error, kDoubleTol);
        }
}

TEST_F(ComputePrecision, Float64RopeIsRotatedAndComputedInDouble) {
    writeInputs(DType::Float64, m_q, m_k, m_v);
    for (const std::string style : {"interleaved", "half"})
        for (const VariantCase& variant : variantCases()) {
            if (variant.kind != VariantCase::Softmax) continue;
            SCOPED_TRACE(variant.name + ", rope " + style);
            std::vector<std::string> args = variant.args;
            for (const char* a :
                 {"--mask", "causal", "--rope", style.c_str(), "--rope-base", "500"})
                args.emplace_back(a);
            const NpyArray out = run(args);
            MaskSpec causal;
            causal.causal = true;
            // Keys sit at 0..Sk-1, queries at Sk-Sq.. (bottom-right).
            const double error =
                worstError(out, rotated(m_q, style, m_k.seq - m_q.seq, 500.0),
                           rotated(m_k, style, 0, 500.0), m_v, causal, VariantCase::Softmax);
            EXPECT_LE(error, kDoubleTol);
        }
}

TEST_F(ComputePrecision, Float64KvCachePrefillEqualsCausalAttentionInDouble) {
    // Self-attention: Sq == Sk.
    const Tensor4d q = randomDoubles(2, 4, 10, 6, 11);
    const Tensor4d k = randomDoubles(2, 2, 10, 6, 12);
    const Tensor4d v = randomDoubles(2, 2, 10, 5, 13);
    writeInputs(DType::Float64, q, k, v);
    MaskSpec causal;
    causal.causal = true;
    for (const VariantCase& variant : variantCases())
        for (const char* prefill : {"0", "4", "10"}) {
            SCOPED_TRACE(variant.name + ", prefill " + prefill);
            std::vector<std::string> args = variant.args;
            args.insert(args.end(),
                        {"--kv-cache-prefill", prefill, "--trace", m_dir.file("t.json")});
            const NpyArray out = run(args);
            EXPECT_LE(worstError(out, q, k, v, causal, variant.kind), kDoubleTol);
            // cache_bytes count float64 elements: the last step holds all 10 keys.
            const auto trace = nlohmann::json::parse(std::ifstream(m_dir.file("t.json")));
            EXPECT_EQ(trace["steps"].back()["cache_bytes"].get<std::int64_t>(),
                      std::int64_t(2) * 2 * 10 * (6 + 5) * 8);
        }
}

TEST_F(ComputePrecision, Float64FlashTraceHoldsTheDoubleRowMaxima) {
    writeInputs(DType::Float64, m_q, m_k, m_v);
    const std::string tracePath = m_dir.file("t.json");
    run({"--variant", "flash", "--q-block-size", "4", "--block-size", "3", "--mask", "causal",
         "--trace", tracePath});
    const auto trace = nlohmann::json::parse(std::ifstream(tracePath));
    // After its last kv tile, a query row's running max is the largest allowed scaled score.
    MaskSpec causal;
    causal.causal = true;
    const Index group = m_q.heads / m_k.heads;
    double worst = 0;
    for (const auto& head : trace["heads"]) {
        const Index b = head["batch"].get<Index>();
        const Index h = head["head"].get<Index>();
        const auto expected = ref::attention(m_q.head(b, h), m_k.head(b, h / group),
                                             m_v.head(b, h / group), causal, b);
        std::map<Index, double> lastMax; // row -> running max after its last step
        for (const auto& step : head["steps"]) {
            const Index q0 = step["q_start"].get<Index>();
            for (std::size_t r = 0; r < step["row_max"].size(); ++r)
                if (!step["row_max"][r].is_null())
                    lastMax[q0 + static_cast<Index>(r)] = step["row_max"][r].get<double>();
        }
        ASSERT_EQ(static_cast<Index>(lastMax.size()), m_q.seq);
        for (const auto& [row, value] : lastMax) {
            double rowMax = -std::numeric_limits<double>::infinity();
            for (Index j = 0; j <= row + m_k.seq - m_q.seq; ++j)
                rowMax = std::max(rowMax, expected.scores(row, j));
            worst = std::max(worst, std::abs(value - rowMax) / std::max(1.0, std::abs(rowMax)));
        }
    }
    EXPECT_LE(worst, kDoubleTol);
}

TEST_F(ComputePrecision, MixedDtypesAreComputedInDoubleAndWrittenInQsDtype) {
    // Q float32, K and V float64: nothing of K and V is rounded before the computation; the
    // output is float32 (Q's dtype), so it is the double result rounded once.
    writeInputs(DType::Float64, m_q, m_k, m_v);
    const Tensor4d q = m_q.cast<float>().cast<double>();
    ASSERT_FALSE(writeNpy(m_dir.file("q.npy"), fromTensor4(q.cast<float>(), 4, DType::Float32),
                          DType::Float32)
                     .has_value());
    const NpyArray out = run({"--variant", "softmax", "--mask", "causal"});
    EXPECT_EQ(out.dtype, DType::Float32);
    MaskSpec causal;
    causal.causal = true;
    // One rounding to float: 2^-24 relative per value, well under the float path's error.
    EXPECT_LE(worstError(out, q, m_k, m_v, causal, VariantCase::Softmax), 1e-7);
}

} // namespace
} // namespace attnlab

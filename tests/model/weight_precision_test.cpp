// Weights in the checkpoint's own precision: F16/BF16 matrices stay 16-bit in memory and are
// widened where they are used. Checked against an independent decoding of every 16-bit
// pattern, against the file's own tensor sizes (what may be copied), and against the same
// checkpoint written out in float32 by the test: a run must give the same bytes.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "attnlab/base/half.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "attnlab/model/safetensors.h"
#include "checkpoint_builder.h"
#include "isa_scope.h"
#include "reference_npz.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using test::RawTensor;
using test::TempDir;

/// binary16 decoded from its fields: (-1)^s 2^(e-15) (1 + m/1024), subnormals 2^-14 (m/1024).
double halfValue(std::uint16_t bits) {
    const int sign = bits >> 15;
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    const double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                             : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                              : std::ldexp(1024 + mantissa, exponent - 25);
    return sign ? -magnitude : magnitude;
}

/// bfloat16 decoded from its fields: 8 exponent bits (bias 127) and 7 mantissa bits.
double bfloat16Value(std::uint16_t bits) {
    const int sign = bits >> 15;
    const int exponent = (bits >> 7) & 0xff;
    const int mantissa = bits & 0x7f;
    const double magnitude = exponent == 0     ? std::ldexp(mantissa, -133)
                             : exponent == 255 ? (mantissa ? NAN : INFINITY)
                                               : std::ldexp(128 + mantissa, exponent - 134);
    return sign ? -magnitude : magnitude;
}

void expectSameValue(float widened, double expected, std::uint16_t bits, const char* type) {
    if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(widened)) << type << " 0x" << std::hex << bits;
    } else {
        EXPECT_EQ(static_cast<double>(widened), expected) << type << " 0x" << std::hex << bits;
        EXPECT_EQ(std::signbit(widened), std::signbit(expected))
            << type << " 0x" << std::hex << bits;
    }
}

class WidenHalves : public test::OnEachIsa {};

TEST_P(WidenHalves, EveryPatternIsWidenedExactly) {
    std::vector<std::uint16_t> patterns(65536 + 5);
    for (std::size_t i = 0; i < patterns.size(); ++i)
        patterns[i] = static_cast<std::uint16_t>(i);
    std::vector<float> out(patterns.size());
    // From offsets 0 and 3 (the vector path's tail and its misaligned start).
    for (std::size_t start : {std::size_t{0}, std::size_t{3}}) {
        const std::size_t count = 65536;
        widenHalves(patterns.data() + start, count, TensorDType::F16, out.data());
        for (std::size_t i = 0; i < count; ++i) {
            const auto bits = patterns[start + i];
            expectSameValue(out[i], halfValue(bits), bits, "F16");
            // The same bytes as one at a time, NaNs too: quiet, with sign and payload (as
            // F16C widens them), whichever target did the bulk.
            EXPECT_EQ(std::bit_cast<std::uint32_t>(out[i]),
                      std::bit_cast<std::uint32_t>(halfToFloat(bits)))
                << "0x" << std::hex << bits;
            if (std::isnan(halfValue(bits))) {
                const std::uint32_t quiet = (std::uint32_t{bits} & 0x8000u) << 16 | 0x7fc00000u |
                                            (std::uint32_t{bits} & 0x3ffu) << 13;
                EXPECT_EQ(std::bit_cast<std::uint32_t>(out[i]), quiet) << "0x" << std::hex << bits;
            }
        }
        widenHalves(patterns.data() + start, count, TensorDType::BF16, out.data());
        for (std::size_t i = 0; i < count; ++i)
            expectSameValue(out[i], bfloat16Value(patterns[start + i]), patterns[start + i],
                            "BF16");
    }
    EXPECT_THROW(widenHalves(patterns.data(), 1, TensorDType::F32, out.data()), InvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Isa, WidenHalves, ::testing::ValuesIn(kAllIsas), test::isaTestName);

Model load(const std::string& dir) {
    auto model = loadModel(dir);
    if (!model.ok()) throw std::runtime_error(model.error());
    return std::move(*model);
}

using test::hfDir;

std::vector<RawTensor> tensorsOf(const fs::path& dir) {
    return test::splitImage(test::readBytes((dir / "model.safetensors").string()));
}

/// The tensor's values decoded here, whatever its float type.
std::vector<float> decoded(const RawTensor& t) {
    const std::size_t width = t.dtype == "F32" ? 4 : 2;
    std::vector<float> values(t.bytes.size() / width);
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (t.dtype == "F32") {
            std::memcpy(&values[i], t.bytes.data() + 4 * i, 4);
            continue;
        }
        std::uint16_t bits = 0;
        std::memcpy(&bits, t.bytes.data() + 2 * i, 2);
        values[i] = static_cast<float>(t.dtype == "F16" ? halfValue(bits) : bfloat16Value(bits));
    }
    return values;
}

/// A copy of the fixture `name` in which every float tensor holds 16-bit values: F16/BF16 as
/// saved, F32 cut to its top half (a BF16). Stored as those 16 bits (`wide` false) or widened
/// to F32 (`wide` true, exact): both copies hold the same values.
std::string rewritten(const std::string& name, bool wide, const fs::path& into) {
    const fs::path target = into / (name + (wide ? "_f32" : "_16"));
    fs::create_directories(target);
    for (const auto& entry : fs::directory_iterator(hfDir() / name))
        if (entry.path().filename() != "model.safetensors")
            fs::copy_file(entry.path(), target / entry.path().filename());
    std::vector<RawTensor> tensors = tensorsOf(hfDir() / name);
    for (RawTensor& t : tensors) {
        if (t.dtype == "F32") {
            const std::vector<float> values = decoded(t);
            std::string bytes(values.size() * 2, '\0');
            for (std::size_t i = 0; i < values.size(); ++i) {
                const auto top =
                    static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(values[i]) >> 16);
                std::memcpy(bytes.data() + 2 * i, &top, 2);
            }
            t = RawTensor{t.name, "BF16", t.shape, bytes};
        }
        if (wide && (t.dtype == "F16" || t.dtype == "BF16"))
            t = test::floatTensor(t.name, t.shape, decoded(t));
    }
    test::writeBytes((target / "model.safetensors").string(), test::safetensorsImage(tensors));
    return target.string();
}

bool sameBytes(const Matrix& a, const Matrix& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(float)) == 0;
}

bool sameBytes(const std::vector<Tensor4>& a, const std::vector<Tensor4>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t l = 0; l < a.size(); ++l)
        if (!a[l].sameShape(b[l]) ||
            std::memcmp(a[l].data.data(), b[l].data.data(), a[l].size() * sizeof(float)) != 0)
            return false;
    return true;
}

bool sameBytes(const std::vector<HeadCache>& a, const std::vector<HeadCache>& b) {
    if (a.size() != b.size()) return false;
    std::vector<Tensor4> x, y;
    for (std::size_t l = 0; l < a.size(); ++l) {
        x.push_back(a[l].tensor());
        y.push_back(b[l].tensor());
    }
    return sameBytes(x, y);
}

/// A full run with every recording on, and the run that appends the last id to the others.
std::pair<ModelRun, ModelRun> runsOf(const Model& model) {
    const std::vector<std::int64_t> ids = {3, 17, 5, 39, 0, 22, 8};
    const std::vector<std::int64_t> source = {4, 9, 12, 7, 2};
    RunOptions options;
    options.logits = LogitRows::All;
    options.threads = 3;
    const bool twoSequences = model.config.kind == ModelKind::EncoderDecoder;
    auto run = [&](std::span<const std::int64_t> these, const ModelRun* previous) {
        auto result = twoSequences ? runTranslation(model, source, these, options, previous)
                                   : runModel(model, these, options, previous);
        if (!result.ok()) throw std::runtime_error(result.error());
        return std::move(*result);
    };
    ModelRun full = run(ids, nullptr);
    const ModelRun prefix = run(std::span(ids).first(ids.size() - 1), nullptr);
    ModelRun appended = run(ids, &prefix);
    EXPECT_TRUE(appended.extended || model.config.kind == ModelKind::Encoder);
    return {std::move(full), std::move(appended)};
}

class EverySavedArchitecture : public ::testing::TestWithParam<std::string> {};

// The 16-bit copy of each architecture's checkpoint runs to the same bytes as the float32
// copy of the same values: widening block by block inside the projections changes nothing.
TEST_P(EverySavedArchitecture, SixteenBitWeightsGiveTheBytesOfTheirFloat32Copy) {
    TempDir dir("attnlab_precision");
    const Model sixteen = load(rewritten(GetParam(), false, dir.path()));
    const Model wide = load(rewritten(GetParam(), true, dir.path()));
    EXPECT_FALSE(sixteen.tokenEmbedding.isFloat32());
    EXPECT_TRUE(wide.tokenEmbedding.isFloat32());
    const auto [sixteenFull, sixteenAppended] = runsOf(sixteen);
    const auto [wideFull, wideAppended] = runsOf(wide);
    for (const auto& [a, b] :
         {std::pair{&sixteenFull, &wideFull}, std::pair{&sixteenAppended, &wideAppended}}) {
        EXPECT_TRUE(sameBytes(a->logits, b->logits));
        EXPECT_TRUE(sameBytes(a->finalHidden, b->finalHidden));
        for (AttentionOf of : {AttentionOf::Self, AttentionOf::Encoder, AttentionOf::Cross})
            EXPECT_TRUE(sameBytes(attentionRecord(sixteen, *a, of), attentionRecord(wide, *b, of)));
        EXPECT_TRUE(sameBytes(a->q, b->q));
        EXPECT_TRUE(sameBytes(a->k, b->k));
        EXPECT_TRUE(sameBytes(a->v, b->v));
        EXPECT_TRUE(sameBytes(a->crossQ, b->crossQ));
        EXPECT_TRUE(sameBytes(a->encoderQ, b->encoderQ));
        EXPECT_TRUE(sameBytes(a->encoderK, b->encoderK));
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EverySavedArchitecture,
                         ::testing::ValuesIn(test::hfFixtureNames()),
                         [](const auto& param) { return param.param; });

// What a 16-bit checkpoint costs beyond its mapping: the float32 copies of its vectors (norms,
// biases), nothing of its matrices. A float32 one costs nothing.
TEST(LoadModel, KeepsSixteenBitMatricesInTheFilesPrecision) {
    for (const char* name : {"qwen2_bias_f16", "llama_llama3rope_bf16"}) {
        const Model model = load((hfDir() / name).string());
        std::size_t vectors = 0;
        for (const RawTensor& t : tensorsOf(hfDir() / name))
            if (t.shape.size() == 1) vectors += t.bytes.size() * 2; // 2 bytes widened to 4
        EXPECT_EQ(model.copiedBytes(), vectors) << name;
        const LayerWeights& layer = model.main.layers.front();
        EXPECT_FALSE(layer.q.weight.isFloat32()) << name;
        EXPECT_FALSE(layer.down.weight.isFloat32()) << name;
        EXPECT_FALSE(model.tokenEmbedding.isFloat32()) << name;
        EXPECT_TRUE(layer.attnNormIn.weight.isFloat32()) << name;
        EXPECT_THROW((void)layer.q.weight.matrix(), InvalidArgument) << name;
        EXPECT_EQ(layer.q.weight.bytes(),
                  static_cast<std::size_t>(layer.q.weight.rows * layer.q.weight.cols * 2));
    }
    EXPECT_EQ(load((hfDir() / "llama_gqa").string()).copiedBytes(), 0u);
}

// widen() and the row and column readers give the file's values.
TEST(Weight, WidensRowsAndColumnsToTheFilesValues) {
    const fs::path dir = hfDir() / "qwen2_bias_f16";
    const Model model = load(dir.string());
    const Weight& q = model.main.layers.front().q.weight;
    std::vector<float> expected;
    for (const RawTensor& t : tensorsOf(dir))
        if (t.name == "model.layers.0.self_attn.q_proj.weight") expected = decoded(t);
    ASSERT_EQ(expected.size(), static_cast<std::size_t>(q.rows * q.cols));
    const Matrix all = q.widen();
    Matrix columns(q.rows, 5);
    q.widenColumns(3, 5, columns.data());
    for (Index r = 0; r < q.rows; ++r)
        for (Index c = 0; c < q.cols; ++c) {
            const float value = expected[static_cast<std::size_t>(r * q.cols + c)];
            EXPECT_EQ(all(r, c), value);
            if (c >= 3 && c < 8) {
                EXPECT_EQ(columns(r, c - 3), value);
            }
        }
    EXPECT_THROW(q.widenRows(q.rows - 1, 2, columns.data()), InvalidArgument);
    EXPECT_THROW(q.widenColumns(-1, 2, columns.data()), InvalidArgument);
}

} // namespace
} // namespace attnlab::model

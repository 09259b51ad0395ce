// The forward pass against float64 plain-torch re-implementations of each architecture
// (scripts/make_model_fixtures.py), the KV-cache extension against a full run, head ablation
// against a checkpoint whose output projection lost that head, and every refusal of loadModel
// and runModel.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

#include "attnlab/base/isa.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "attnlab/model/text_run.h"
#include "attnlab/model/run_dumps.h"
#include "checkpoint_builder.h"
#include "isa_scope.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

using test::allFixtures;
using test::fixtureDir;
using test::fixtureIds;
using test::TempDir;

/// Largest |a - b| between a recorded per-layer tensor list and an expected [L, ...] array.
double maxDifference(const std::vector<Tensor4>& layers, const NpyArray& expected) {
    std::size_t at = 0;
    double worst = 0;
    for (const auto& layer : layers)
        for (float value : layer.data) {
            if (at >= expected.data.size()) return INFINITY;
            worst = std::max(worst, std::abs(static_cast<double>(value) - expected.data[at++]));
        }
    return at == expected.data.size() ? worst : INFINITY;
}

double maxDifference(const Matrix& a, const Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    return (a - b).cwiseAbs().maxCoeff();
}

double maxDifference(const std::vector<Tensor4>& a, const std::vector<Tensor4>& b) {
    if (a.size() != b.size()) return INFINITY;
    double worst = 0;
    for (std::size_t l = 0; l < a.size(); ++l) {
        if (!a[l].sameShape(b[l])) return INFINITY;
        for (std::size_t i = 0; i < a[l].data.size(); ++i)
            worst = std::max(worst, static_cast<double>(std::abs(a[l].data[i] - b[l].data[i])));
    }
    return worst;
}

/// A run's per-layer cache as tensors, for the comparisons above.
std::vector<Tensor4> tensors(const std::vector<HeadCache>& layers) {
    std::vector<Tensor4> out;
    for (const HeadCache& layer : layers)
        out.push_back(layer.tensor());
    return out;
}
double maxDifference(const std::vector<HeadCache>& layers, const NpyArray& expected) {
    return maxDifference(tensors(layers), expected);
}
double maxDifference(const std::vector<HeadCache>& a, const std::vector<HeadCache>& b) {
    return maxDifference(tensors(a), tensors(b));
}

Model load(const std::string& dir) {
    auto model = loadModel(dir);
    if (!model.ok()) throw std::runtime_error(model.error());
    return std::move(*model);
}

class EveryArchitecture : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryArchitecture, MatchesTheTorchReference) {
    const Model model = load(fixtureDir(GetParam()));
    const auto expected = test::readExpected(GetParam());
    RunOptions options;
    options.logits = LogitRows::All;
    options.threads = 2;
    auto run = runModel(model, fixtureIds(), options);
    ASSERT_TRUE(run.ok()) << run.error();
    EXPECT_LT(maxDifference(attentionRecord(model, *run), expected.at("attentions")), 2e-5);
    EXPECT_LT(maxDifference(run->q, expected.at("q")), 1e-4);
    EXPECT_LT(maxDifference(run->k, expected.at("k")), 1e-4);
    EXPECT_LT(maxDifference(run->v, expected.at("v")), 1e-4);
    const auto& logits = expected.at("logits");
    ASSERT_EQ(logits.shape, (std::vector<Index>{7, model.config.vocab}));
    Matrix reference = Eigen::Map<const Matrix>(logits.data.data(), 7, model.config.vocab);
    EXPECT_LT(maxDifference(run->logits, reference), 2e-4);

    // Only the last row when only the last is asked for, and the same values.
    options.logits = LogitRows::Last;
    auto last = runModel(model, fixtureIds(), options);
    ASSERT_TRUE(last.ok());
    EXPECT_LT(maxDifference(last->logits, run->logits.bottomRows(1)), 1e-5);
}

TEST_P(EveryArchitecture, ExtendingTheCacheEqualsAFullRun) {
    const Model model = load(fixtureDir(GetParam()));
    RunOptions options;
    options.logits = LogitRows::All;
    const auto& ids = fixtureIds();
    auto full = runModel(model, ids, options);
    ASSERT_TRUE(full.ok()) << full.error();
    auto prefix = runModel(model, std::span(ids).first(3), options);
    ASSERT_TRUE(prefix.ok());
    auto middle = runModel(model, std::span(ids).first(5), options, &*prefix);
    ASSERT_TRUE(middle.ok());
    EXPECT_TRUE(middle->extended);
    auto extended = runModel(model, ids, options, &*middle);
    ASSERT_TRUE(extended.ok());
    EXPECT_TRUE(extended->extended);
    EXPECT_EQ(extended->reusedPositions, 5);
    EXPECT_LT(maxDifference(attentionRecord(model, *extended), attentionRecord(model, *full)), 1e-6);
    EXPECT_LT(maxDifference(extended->q, full->q), 1e-5);
    EXPECT_LT(maxDifference(extended->k, full->k), 1e-5);
    EXPECT_LT(maxDifference(extended->v, full->v), 1e-5);
    EXPECT_LT(maxDifference(extended->logits, full->logits), 1e-4);

    // Not an extension: different ids, or other ablated heads, run from scratch.
    std::vector<std::int64_t> other(ids.begin(), ids.end());
    other[1] = 4;
    auto changed = runModel(model, other, options, &*middle);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(changed->extended);
    RunOptions ablated = options;
    ablated.ablatedHeads = {{0, 1}};
    auto differentHeads = runModel(model, ids, ablated, &*middle);
    ASSERT_TRUE(differentHeads.ok());
    EXPECT_FALSE(differentHeads->extended);
}

/// Twenty ids: enough rows for the packed GEMM of the projections (forward.cpp's
/// kPackedGemmRows), where a fixture has the positions for them.
std::vector<std::int64_t> twentyIds(const Model& model) {
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < 20; ++i)
        ids.push_back((i * 7 + 3) % model.config.vocab);
    return ids;
}

/// A full run of 20 tokens multiplies through the packed panels; appending them one at a
/// time multiplies each row through Eigen: two implementations of each product, one answer.
TEST_P(EveryArchitecture, PackedProjectionsAgreeWithOneTokenAtATime) {
    const Model model = load(fixtureDir(GetParam()));
    if (model.config.maxPositions < 20)
        GTEST_SKIP() << GetParam() << " has " << model.config.maxPositions << " positions";
    RunOptions options;
    options.logits = LogitRows::All;
    const auto ids = twentyIds(model);
    auto full = runModel(model, ids, options);
    ASSERT_TRUE(full.ok()) << full.error();
    auto stepped = runModel(model, std::span(ids).first(1), options);
    ASSERT_TRUE(stepped.ok());
    for (std::size_t n = 2; n <= ids.size(); ++n) {
        auto next = runModel(model, std::span(ids).first(n), options, &*stepped);
        ASSERT_TRUE(next.ok() && next->extended);
        stepped = std::move(next);
    }
    EXPECT_LT(maxDifference(attentionRecord(model, *stepped), attentionRecord(model, *full)), 1e-6);
    EXPECT_LT(maxDifference(stepped->q, full->q), 1e-5);
    EXPECT_LT(maxDifference(stepped->v, full->v), 1e-5);
    EXPECT_LT(maxDifference(stepped->logits, full->logits), 1e-4);
}

/// The whole forward gives the same bytes on both x86 SIMD targets.
TEST_P(EveryArchitecture, SimdTargetsGiveTheSameBytes) {
    if (!isaSupported(Isa::Avx2) || !isaSupported(Isa::Avx512))
        GTEST_SKIP() << "needs a CPU that runs both avx2 and avx512";
    const Model model = load(fixtureDir(GetParam()));
    RunOptions options;
    options.logits = LogitRows::All;
    options.threads = 2;
    const auto ids = model.config.maxPositions >= 20 ? twentyIds(model) : fixtureIds();
    Matrix logits[2];
    std::vector<Tensor4> attentions[2];
    for (int i = 0; i < 2; ++i) {
        test::IsaScope scope(i == 0 ? Isa::Avx2 : Isa::Avx512);
        auto run = runModel(model, ids, options);
        ASSERT_TRUE(run.ok()) << run.error();
        logits[i] = run->logits;
        attentions[i] = attentionRecord(model, *run);
    }
    EXPECT_TRUE(logits[0] == logits[1]);
    EXPECT_EQ(maxDifference(attentions[0], attentions[1]), 0.0);
}

TEST_P(EveryArchitecture, AttentionRowsAreCausalDistributions) {
    const Model model = load(fixtureDir(GetParam()));
    auto run = runModel(model, fixtureIds());
    ASSERT_TRUE(run.ok());
    const Index window = model.config.uniformWindow().value_or(-1);
    for (const auto& layer : attentionRecord(model, *run))
        for (Index h = 0; h < layer.heads; ++h)
            for (Index i = 0; i < layer.seq; ++i) {
                double sum = 0;
                for (Index j = 0; j < layer.seq; ++j) {
                    const bool allowed = j <= i && (window < 0 || j > i - window);
                    if (!allowed) {
                        EXPECT_EQ(layer(0, h, i, j), 0.0f) << i << "," << j;
                    }
                    sum += layer(0, h, i, j);
                }
                EXPECT_NEAR(sum, 1.0, 1e-5);
            }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EveryArchitecture, ::testing::ValuesIn(allFixtures()),
                         [](const ::testing::TestParamInfo<std::string>& fixture) {
                             return fixture.param; // fixture folder names: letters, digits, _
                         });

/// Ablating head h of layer l equals zeroing the output projection's inputs from that head in
/// the checkpoint itself (rows of GPT-2's Conv1D c_proj, columns of llama's o_proj).
TEST(Ablation, EqualsZeroingTheHeadsSliceOfTheOutputProjection) {
    for (const std::string name : {"gpt2_lmhead_f32", "qwen3_qknorm"}) {
        TempDir dir("attnlab_model");
        const std::string copy = test::copyFixture(name, dir.path());
        const Model original = load(fixtureDir(name)); // not the copy: it is rewritten below
        const Index layer = 0;
        const Index head = 2;
        const Index hd = original.config.headDim;
        auto tensors = test::splitImage(test::readBytes(copy + "/model.safetensors"));
        const bool gpt2 = name.rfind("gpt2", 0) == 0;
        const std::string target =
            gpt2 ? "transformer.h.0.attn.c_proj.weight" : "model.layers.0.self_attn.o_proj.weight";
        for (auto& t : tensors) {
            if (t.name != target) continue;
            auto* values = reinterpret_cast<float*>(t.bytes.data());
            const auto rows = t.shape[0];
            const auto cols = t.shape[1];
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t c = 0; c < cols; ++c) {
                    const std::int64_t input = gpt2 ? r : c; // the index that runs over heads
                    if (input >= head * hd && input < (head + 1) * hd) values[r * cols + c] = 0;
                }
        }
        test::writeBytes(copy + "/model.safetensors", test::safetensorsImage(tensors));
        const Model zeroed = load(copy);

        RunOptions ablate;
        ablate.logits = LogitRows::All;
        ablate.ablatedHeads = {{layer, head}};
        auto ablated = runModel(original, fixtureIds(), ablate);
        RunOptions plain;
        plain.logits = LogitRows::All;
        auto reference = runModel(zeroed, fixtureIds(), plain);
        auto unablated = runModel(original, fixtureIds(), plain);
        ASSERT_TRUE(ablated.ok() && reference.ok() && unablated.ok());
        EXPECT_LT(maxDifference(ablated->logits, reference->logits), 1e-5) << name;
        EXPECT_LT(maxDifference(attentionRecord(original, *ablated), attentionRecord(zeroed, *reference)), 1e-6) << name;
        // ... and it changed something: later layers and the logits.
        EXPECT_GT(maxDifference(ablated->logits, unablated->logits), 1e-3) << name;
        EXPECT_GT(maxDifference(std::vector<Tensor4>{attentionRecord(original, *ablated)[1]},
                                std::vector<Tensor4>{attentionRecord(original, *unablated)[1]}),
                  1e-4)
            << name;
    }
}

TEST(RunModel, TimingTheAttentionChangesNoBitAndTakesPartOfTheRun) {
    const Model model = load(fixtureDir("qwen3_qknorm"));
    RunOptions plain;
    plain.logits = LogitRows::All;
    auto reference = runModel(model, fixtureIds(), plain);
    double attentionSeconds = 0;
    RunOptions timed = plain;
    timed.attentionSeconds = &attentionSeconds;
    const auto start = std::chrono::steady_clock::now();
    auto run = runModel(model, fixtureIds(), timed);
    const double whole =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(reference.ok() && run.ok());
    EXPECT_EQ(maxDifference(run->logits, reference->logits), 0.0);
    // Every layer's attention is inside the run: a part of its time, not all of it.
    EXPECT_GT(attentionSeconds, 0.0);
    EXPECT_LT(attentionSeconds, whole);
}

TEST(RunModel, RefusesBadIdsAndHeads) {
    const Model model = load(fixtureDir("gpt2_lmhead_f32")); // vocab 40, 12 positions
    auto error = [&](std::vector<std::int64_t> ids, RunOptions options = {}) {
        auto run = runModel(model, ids, options);
        EXPECT_FALSE(run.ok());
        return run.ok() ? std::string() : run.error();
    };
    EXPECT_NE(error({}).find("no token ids"), std::string::npos);
    EXPECT_NE(error({1, 40}).find("token id 40 at position 1"), std::string::npos);
    EXPECT_NE(error({-1}).find("outside the vocabulary"), std::string::npos);
    EXPECT_NE(
        error(std::vector<std::int64_t>(13, 1)).find("13 tokens are more than the model's 12"),
        std::string::npos);
    RunOptions badHead;
    badHead.ablatedHeads = {{0, 4}};
    EXPECT_NE(error({1, 2}, badHead).find("ablated head (0, 4)"), std::string::npos);
    auto full = runModel(model, std::vector<std::int64_t>(12, 1));
    EXPECT_TRUE(full.ok()) << "exactly max positions is fine";
}

TEST(RunModel, StopsWhenCancelled) {
    const Model model = load(fixtureDir("llama_mqa_linear_tied"));
    std::atomic<bool> cancel{true};
    RunOptions options;
    options.cancel = &cancel;
    auto run = runModel(model, fixtureIds(), options);
    ASSERT_FALSE(run.ok());
    EXPECT_EQ(run.error(), "cancelled");
}

TEST(RunModel, ReportsEachLayerAndStopsWhereTheProgressCancels) {
    const Model model = load(fixtureDir("llama_mqa_linear_tied"));
    const auto layers = static_cast<double>(model.config.layers);
    ASSERT_GE(layers, 2);
    std::vector<double> seen;
    RunOptions options;
    options.progress = [&](double fraction) { seen.push_back(fraction); };
    const auto plain = runModel(model, fixtureIds());
    auto run = runModel(model, fixtureIds(), options);
    ASSERT_TRUE(run.ok()) << run.error();
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(layers));
    for (std::size_t l = 0; l < seen.size(); ++l)
        EXPECT_EQ(seen[l], static_cast<double>(l) / layers);
    // Watching the progress changes nothing computed.
    EXPECT_EQ(run->finalHidden, plain->finalHidden);
    // A person stopping after the first layer: the run ends at the next layer.
    std::atomic<bool> cancel{false};
    seen.clear();
    options.cancel = &cancel;
    options.progress = [&](double fraction) {
        seen.push_back(fraction);
        cancel.store(true);
    };
    auto stopped = runModel(model, fixtureIds(), options);
    ASSERT_FALSE(stopped.ok());
    EXPECT_EQ(stopped.error(), "cancelled");
    EXPECT_EQ(seen, std::vector<double>{0.0});
}

TEST(LoadModel, ReportsProgressAndHonoursCancel) {
    std::vector<double> seen;
    LoadOptions options;
    options.touchPages = true;
    options.progress = [&](double fraction) { seen.push_back(fraction); };
    auto model = loadModel(fixtureDir("qwen2_bias_tied"), options);
    ASSERT_TRUE(model.ok()) << model.error();
    ASSERT_FALSE(seen.empty());
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_EQ(seen.back(), 1.0);
    std::atomic<bool> cancel{true};
    options.cancel = &cancel;
    auto cancelled = loadModel(fixtureDir("qwen2_bias_tied"), options);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error(), "cancelled");
}

TEST(LoadModel, ReadsTheConfigsShapes) {
    const Model gqa = load(fixtureDir("llama_gqa_llama3_bf16_sharded"));
    EXPECT_EQ(gqa.config.heads, 4);
    EXPECT_EQ(gqa.config.kvHeads, 2);
    EXPECT_FALSE(gqa.config.tiedEmbeddings);
    EXPECT_NE(gqa.lmHead.weight.data(), gqa.tokenEmbedding.data());
    const Model qwen3 = load(fixtureDir("qwen3_qknorm"));
    EXPECT_EQ(qwen3.config.headDim, 8);
    EXPECT_EQ(qwen3.config.hidden, 24);
    EXPECT_EQ(qwen3.config.arch().qkNorm, QkNorm::PerHead);
    const Model tied = load(fixtureDir("llama_mqa_linear_tied"));
    EXPECT_EQ(tied.lmHead.weight.data(), tied.tokenEmbedding.data());
    EXPECT_EQ(load(fixtureDir("mistral_window3")).config.uniformWindow(), 3);
}

// ---- refusals -------------------------------------------------------------------------------

std::string loadError(const std::string& dir) {
    auto model = loadModel(dir);
    EXPECT_FALSE(model.ok());
    return model.ok() ? std::string() : model.error();
}

void editConfig(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
    auto config = nlohmann::json::parse(test::readBytes(dir + "/config.json"));
    edit(config);
    test::writeBytes(dir + "/config.json", config.dump());
}

TEST(LoadModel, RefusesAMissingTensor) {
    TempDir dir("attnlab_model");
    const std::string copy = test::copyFixture("qwen2_bias_tied", dir.path());
    auto tensors = test::splitImage(test::readBytes(copy + "/model.safetensors"));
    std::erase_if(tensors,
                  [](const auto& t) { return t.name == "model.layers.1.self_attn.k_proj.bias"; });
    test::writeBytes(copy + "/model.safetensors", test::safetensorsImage(tensors));
    const std::string error = loadError(copy);
    EXPECT_NE(error.find("'model.layers.1.self_attn.k_proj.bias' is missing"), std::string::npos)
        << error;
    EXPECT_NE(error.find("model.safetensors"), std::string::npos) << error;
}

TEST(LoadModel, RefusesAWrongShapeForTheConfig) {
    TempDir dir("attnlab_model");
    const std::string copy = test::copyFixture("mistral_window3", dir.path());
    editConfig(copy, [](auto& c) { c["intermediate_size"] = 48; });
    const std::string error = loadError(copy);
    EXPECT_NE(error.find("'model.layers.0.mlp.gate_proj.weight' has shape [32, 16] but the config "
                         "needs [48, 16]"),
              std::string::npos)
        << error;
}

TEST(LoadModel, RefusesUnsupportedArchitecturesAndSettings) {
    TempDir dir("attnlab_model");
    const std::string copy = test::copyFixture("llama_mqa_linear_tied", dir.path());
    editConfig(copy, [](auto& c) { c["model_type"] = "albert"; });
    EXPECT_NE(loadError(copy).find("model_type 'albert' is not supported"), std::string::npos);
    editConfig(copy, [](auto& c) {
        c["model_type"] = "llama";
        c["rope_scaling"] = {{"rope_type", "su"}, {"factor", 4.0}};
    });
    EXPECT_NE(loadError(copy).find("rope_type 'su' is not supported"), std::string::npos)
        << loadError(copy);
    editConfig(copy, [](auto& c) {
        c.erase("rope_scaling");
        c["num_key_value_heads"] = 3;
    });
    EXPECT_NE(loadError(copy).find("not a multiple of num_key_value_heads"), std::string::npos);
    editConfig(copy, [](auto& c) {
        c["num_key_value_heads"] = 1;
        c["hidden_act"] = "mish";
    });
    EXPECT_NE(loadError(copy).find("activation 'mish' is not supported"), std::string::npos);
    editConfig(copy, [](auto& c) { c.erase("vocab_size"); });
    EXPECT_NE(loadError(copy).find("config.json: missing 'vocab_size'"), std::string::npos);
    test::writeBytes(copy + "/config.json", "{\"model_type\": ");
    EXPECT_NE(loadError(copy).find("config.json: not valid JSON"), std::string::npos);
    // A number no double holds is refused naming its key (the core's one JSON reader).
    test::writeBytes(copy + "/config.json", "{\"model_type\": \"llama\", \"rope_theta\": 1e400}");
    const std::string overflow = loadError(copy);
    EXPECT_NE(overflow.find("config.json: rope_theta: the number 1e400 is too large"),
              std::string::npos)
        << overflow;
}

TEST(LoadModel, RefusesAnUnsupportedDtype) {
    TempDir dir("attnlab_model");
    const std::string copy = test::copyFixture("gpt2_lmhead_f32", dir.path());
    auto tensors = test::splitImage(test::readBytes(copy + "/model.safetensors"));
    for (auto& t : tensors)
        if (t.name == "transformer.ln_f.bias") {
            t.dtype = "I32"; // same byte length, integer dtype
        }
    test::writeBytes(copy + "/model.safetensors", test::safetensorsImage(tensors));
    const std::string error = loadError(copy);
    EXPECT_NE(error.find("'transformer.ln_f.bias' has dtype I32"), std::string::npos) << error;
}

TEST(LoadModel, RefusesAMissingFolderConfigOrCheckpoint) {
    TempDir dir("attnlab_model");
    EXPECT_NE(loadError(dir.file("nothing")).find("not a folder"), std::string::npos);
    EXPECT_NE(loadError(dir.path().string()).find("config.json: cannot open"), std::string::npos);
    const std::string copy = test::copyFixture("gpt2_base_f16", dir.path());
    std::filesystem::remove(copy + "/model.safetensors");
    EXPECT_NE(loadError(copy).find("neither model.safetensors"), std::string::npos);
}

TEST(LoadModel, RefusesATruncatedCheckpoint) {
    TempDir dir("attnlab_model");
    const std::string copy = test::copyFixture("gpt2_base_f16", dir.path());
    const std::string bytes = test::readBytes(copy + "/model.safetensors");
    test::writeBytes(copy + "/model.safetensors", bytes.substr(0, bytes.size() - 100));
    const std::string error = loadError(copy);
    EXPECT_NE(error.find("past the end of the data"), std::string::npos) << error;
    EXPECT_NE(error.find("model.safetensors"), std::string::npos) << error;
}

} // namespace
} // namespace attnlab::model

namespace attnlab::model {
namespace {

/// Byte-for-byte equality of two float buffers (memcmp, so that -0 and 0 or two NaNs of
/// different payloads count as different, as they would in a saved file).
bool sameBytes(const float* a, const float* b, std::size_t count) {
    return std::memcmp(a, b, count * sizeof(float)) == 0;
}

bool sameBytes(const std::vector<Tensor4>& a, const std::vector<Tensor4>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t l = 0; l < a.size(); ++l)
        if (!a[l].sameShape(b[l]) || !sameBytes(a[l].data.data(), b[l].data.data(), a[l].size()))
            return false;
    return true;
}

// Same input, same bytes at any thread count: the bundled model is wide enough (its lm head
// has hundreds of output columns) that a GEMM split by thread count changed the last bits of
// its logits.
TEST(RunModel, ThreadCountDoesNotChangeOneByte) {
    const Model model =
        load((std::filesystem::path(ATTNLAB_SOURCE_DIR) / "resources/models/tiny-llama-induction")
                 .string());
    ASSERT_GT(model.config.vocab, 128);
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < 40; ++i)
        ids.push_back((i * 37 + 11) % model.config.vocab);
    RunOptions options;
    options.logits = LogitRows::All;
    options.threads = 1;
    auto one = runModel(model, ids, options);
    ASSERT_TRUE(one.ok()) << one.error();
    for (int threads : {2, 3, 7}) {
        options.threads = threads;
        auto many = runModel(model, ids, options);
        ASSERT_TRUE(many.ok()) << many.error();
        ASSERT_EQ(one->logits.size(), many->logits.size());
        EXPECT_TRUE(sameBytes(one->logits.data(), many->logits.data(),
                              static_cast<std::size_t>(one->logits.size())))
            << threads << " threads: logits differ";
        EXPECT_TRUE(sameBytes(attentionRecord(model, *one), attentionRecord(model, *many, AttentionOf::Self, threads))) << threads << " threads";
        EXPECT_TRUE(sameBytes(tensors(one->q), tensors(many->q))) << threads << " threads";
        EXPECT_TRUE(sameBytes(tensors(one->k), tensors(many->k))) << threads << " threads";
        EXPECT_TRUE(sameBytes(tensors(one->v), tensors(many->v))) << threads << " threads";
    }
}

// transformers writes a tensor wherever 8 bytes align it, and the forward reads a float32
// Conv1D in place from the panel that starts on a cache line, the columns before it and the
// last ones in one panel of their own: wherever the file puts the weights, a run from scratch and
// an appended token give the same bytes, and every 4-byte place on a 64-byte line is tried. With
// GPT-2's GELU the activation runs in those blocks; with an exp-based one (quick_gelu), whose Eigen
// packet and scalar results differ, over the whole matrix.
TEST(RunModel, AConv1DGivesTheSameBytesWhereverTheFilePutsIt) {
    const std::string name = "gpt2_lmhead_f32";
    const auto weights = test::splitImage(test::readBytes(fixtureDir(name) + "/model.safetensors"));
    const std::string header = test::headerFor(weights).dump();
    const auto& ids = fixtureIds();
    RunOptions options;
    options.logits = LogitRows::All;
    for (const std::string activation : {"gelu_new", "quick_gelu"}) {
        std::optional<ModelRun> first, firstAppended;
        std::set<std::uintptr_t> placesOnALine;
        // Spaces after the JSON, as the library's own writer pads its header: from the first
        // that puts the tensors on a float's alignment (else they are copied), a float at a time.
        const std::size_t floatPad = (4 - (8 + header.size()) % 4) % 4;
        for (std::size_t pad = floatPad; pad < floatPad + 64; pad += 4) {
            TempDir dir("attnlab_model");
            const std::string copy = test::copyFixture(name, dir.path());
            test::writeBytes(copy + "/model.safetensors",
                             test::safetensorsImage(weights, header + std::string(pad, ' ')));
            nlohmann::json config = nlohmann::json::parse(test::readBytes(copy + "/config.json"));
            config["activation_function"] = activation;
            test::writeBytes(copy + "/config.json", config.dump());
            const Model model = load(copy);
            const Weight& fc = model.main.layers[0].up.weight;
            ASSERT_TRUE(fc.inOut && fc.isFloat32() && fc.cols % 16 == 0 && fc.cols > 16);
            ASSERT_EQ(model.copiedBytes(), 0u) << "read in place";
            placesOnALine.insert(reinterpret_cast<std::uintptr_t>(fc.values.data()) % 64);
            auto run = runModel(model, ids, options);
            auto prefix = runModel(model, std::span(ids).first(ids.size() - 1), options);
            ASSERT_TRUE(run.ok() && prefix.ok());
            auto appended = runModel(model, ids, options, &*prefix);
            ASSERT_TRUE(appended.ok() && appended->extended);
            if (!first) {
                first = std::move(*run);
                firstAppended = std::move(*appended);
                continue;
            }
            const std::string where = activation + ", header padded by " + std::to_string(pad);
            EXPECT_EQ(run->logits, first->logits) << where;
            EXPECT_EQ(appended->logits, firstAppended->logits) << where;
            EXPECT_TRUE(sameBytes(tensors(run->q), tensors(first->q))) << where;
            EXPECT_TRUE(sameBytes(tensors(run->v), tensors(first->v))) << where;
        }
        EXPECT_EQ(placesOnALine.size(), 16u) << "every float's place on a cache line";
        if (activation != "gelu_new") continue;
        // And the runs are the model's: the reference's logits of the same ids.
        const auto expected = test::readExpected(name);
        const auto& logits = expected.at("logits");
        ASSERT_EQ(logits.shape, (std::vector<Index>{7, first->logits.cols()}));
        const Matrix reference = Eigen::Map<const Matrix>(logits.data.data(), 7, logits.shape[1]);
        EXPECT_LT(maxDifference(first->logits, reference), 2e-4);
    }
}

} // namespace
} // namespace attnlab::model

namespace attnlab::model {
namespace {

// A text's run (text_run.h) is the model's forward with the logits its kind's reader asks for.
TEST_P(EveryArchitecture, ATextRunIsTheForwardItsKindReads) {
    const Model model = load(fixtureDir(GetParam()));
    const auto& ids = fixtureIds();
    TextRunOptions options;
    options.run.logits = textLogits(model.config);
    EXPECT_EQ(options.run.logits, model.config.kind == ModelKind::Encoder ? LogitRows::All
                                                                          : LogitRows::Last);
    auto text = runText(model, ids, options);
    auto forward = runModel(model, ids, options.run);
    ASSERT_TRUE(text.ok() && forward.ok()) << text.error();
    EXPECT_TRUE(text->generated.empty());
    EXPECT_EQ(text->run.logits, forward->logits);
    EXPECT_EQ(text->run.finalHidden, forward->finalHidden);
    // One more token reuses the text's run.
    std::vector<std::int64_t> longer = ids;
    longer.push_back(ids.front());
    auto appended = runText(model, longer, options, &text->run);
    ASSERT_TRUE(appended.ok());
    EXPECT_EQ(appended->run.extended, model.config.kind != ModelKind::Encoder);
}

// A run of ids that change part way (a retyped word) or end sooner (a deleted one) reuses the
// previous run up to the first id that differs, and still equals a run from scratch.
TEST_P(EveryArchitecture, ARetypedWordReusesThePrefixItShares) {
    const Model model = load(fixtureDir(GetParam()));
    RunOptions options;
    options.reuseCommonPrefix = true;
    const auto& ids = fixtureIds();
    auto full = runModel(model, ids, options);
    ASSERT_TRUE(full.ok()) << full.error();
    const bool decoder = model.config.kind != ModelKind::Encoder;

    std::vector<std::int64_t> retyped = ids;
    retyped[5] = (retyped[5] + 1) % model.config.vocab;
    EXPECT_EQ(commonPrefix(ids, retyped), 5u);
    auto reused = runModel(model, retyped, options, &*full);
    auto scratch = runModel(model, retyped, RunOptions{});
    ASSERT_TRUE(reused.ok() && scratch.ok());
    EXPECT_EQ(reused->extended, decoder);
    EXPECT_EQ(reused->reusedPositions, decoder ? 5 : 0);
    EXPECT_LT(maxDifference(attentionRecord(model, *reused), attentionRecord(model, *scratch)), 1e-6);
    EXPECT_LT(maxDifference(reused->k, scratch->k), 1e-5);
    EXPECT_LT((reused->finalHidden - scratch->finalHidden).cwiseAbs().maxCoeff(), 1e-4);

    // A deleted last word: all but the new last position come from the longer run.
    const std::span<const std::int64_t> shorter = std::span(ids).first(6);
    auto cut = runModel(model, shorter, options, &*full);
    auto alone = runModel(model, shorter, RunOptions{});
    ASSERT_TRUE(cut.ok() && alone.ok());
    EXPECT_EQ(cut->reusedPositions, decoder ? 5 : 0);
    EXPECT_LT(maxDifference(cut->v, alone->v), 1e-5);
    EXPECT_LT(maxDifference(attentionRecord(model, *cut), attentionRecord(model, *alone)), 1e-6);

    // Without the option only a proper prefix is reused; other ablated heads: nothing is.
    auto strict = runModel(model, retyped, RunOptions{}, &*full);
    ASSERT_TRUE(strict.ok());
    EXPECT_FALSE(strict->extended);
    RunOptions ablated = options;
    ablated.ablatedHeads = {{0, 0}};
    auto other = runModel(model, retyped, ablated, &*full);
    ASSERT_TRUE(other.ok());
    EXPECT_FALSE(other->extended);
}

} // namespace
} // namespace attnlab::model

namespace attnlab::model {
namespace {

/// A fixture copied into `dir` and made to take 700 positions (its config's maximum raised; its
/// weights unchanged).
Model loadWith700Positions(const std::string& name, const TempDir& dir) {
    const std::string folder = test::copyFixture(name, dir.path());
    const auto configPath = std::filesystem::path(folder) / "config.json";
    nlohmann::json config = nlohmann::json::parse(test::readBytes(configPath.string()));
    config[config.contains("n_positions") ? "n_positions" : "max_position_embeddings"] = 700;
    test::writeBytes(configPath.string(), config.dump());
    return load(folder);
}

// A long text's row-wise stages (q/k/v, the output projection, the MLP, each with its norms
// and residual) run in blocks of rows (forward.cpp's kRowBlock, 256): a decoder's rows do not
// depend on later tokens, so a text's first rows give the same bytes whether the text ends there
// (one block, or two whose last is short) or runs on through more blocks.
TEST(RunModel, ALongTextsStagesInBlocksOfRowsChangeNoBit) {
    // The stages run 600 rows in blocks of 256 + 256 + 88, and a prefix's in one
    // block of 250 or in 256 + 44. One family of each residual kind: sequential with pre-norms
    // (Qwen2), output norms (OLMo 2), pre- and post-norms (Gemma 3), a residual multiplier
    // (Granite); parallel with two norms (GPT-NeoX) and with one shared (Phi). Not Gemma 2:
    // its soft-capped attention takes the generic kernels, whose sums follow the whole shape.
    // Not GPT-2: its learned positions stop at 128.
    for (const char* name : {"qwen2_bias_tied", "hf/olmo2", "hf/gemma3_text", "hf/granite",
                             "hf/gpt_neox_pythia", "hf/phi"}) {
        SCOPED_TRACE(name);
        TempDir dir;
        const Model model = loadWith700Positions(name, dir);
        std::vector<std::int64_t> ids;
        for (std::int64_t i = 0; i < 600; ++i)
            ids.push_back((i * 7 + 3) % model.config.vocab);
        RunOptions options;
        options.logits = LogitRows::All;
        auto full = runModel(model, ids, options);
        ASSERT_TRUE(full.ok()) << full.error();
        for (std::size_t rows : {250u, 300u}) {
            auto prefix = runModel(model, std::span(ids).first(rows), options);
            ASSERT_TRUE(prefix.ok()) << prefix.error();
            const Matrix head = full->logits.topRows(static_cast<Index>(rows));
            ASSERT_EQ(head.size(), prefix->logits.size());
            EXPECT_TRUE(sameBytes(head.data(), prefix->logits.data(),
                                  static_cast<std::size_t>(head.size())))
                << rows << " rows";
        }
    }
}

// The same with an ablated head, a patched head and the lens's recording: the blocks read and
// write the patch and the record at their own rows.
TEST(RunModel, ALongTextsPatchedAndRecordedHeadsInBlocksChangeNoBit) {
    for (const char* name : {"qwen2_bias_tied", "hf/gpt_neox_pythia", "hf/phi"}) {
        SCOPED_TRACE(name);
        TempDir dir;
        const Model model = loadWith700Positions(name, dir);
        const Index hd = model.config.headDim;
        std::vector<std::int64_t> ids;
        for (std::int64_t i = 0; i < 600; ++i)
            ids.push_back((i * 5 + 1) % model.config.vocab);
        Matrix values(600, hd);
        for (Index r = 0; r < values.rows(); ++r)
            for (Index j = 0; j < hd; ++j)
                values(r, j) = static_cast<float>((r * 13 + j * 7) % 17) / 17.0f - 0.5f;
        auto runWith = [&](std::size_t rows, RunRecording& record) {
            ActivationPatch patch; // the run's own positions
            patch.heads[{model.config.layers - 1, 0}] = values.topRows(static_cast<Index>(rows));
            RunOptions options;
            options.logits = LogitRows::All;
            options.ablatedHeads = {{0, model.config.heads - 1}};
            options.patch = &patch;
            options.record = &record;
            return runModel(model, std::span(ids).first(rows), options);
        };
        RunRecording fullRecord;
        auto full = runWith(ids.size(), fullRecord);
        ASSERT_TRUE(full.ok()) << full.error();
        for (std::size_t rows : {250u, 300u}) {
            RunRecording record;
            auto prefix = runWith(rows, record);
            ASSERT_TRUE(prefix.ok()) << prefix.error();
            const auto n = static_cast<Index>(rows);
            auto same = [&](const Matrix& whole, const Matrix& part) {
                const Matrix head = whole.topRows(n);
                return head.size() == part.size() &&
                       sameBytes(head.data(), part.data(), static_cast<std::size_t>(head.size()));
            };
            EXPECT_TRUE(same(full->logits, prefix->logits)) << rows << " rows";
            ASSERT_EQ(record.headInputs.size(), fullRecord.headInputs.size());
            for (std::size_t l = 0; l < record.headInputs.size(); ++l) {
                EXPECT_TRUE(same(fullRecord.headInputs[l], record.headInputs[l]))
                    << rows << " rows, layer " << l;
                EXPECT_TRUE(same(fullRecord.mlpOutputs[l], record.mlpOutputs[l]))
                    << rows << " rows, layer " << l;
            }
        }
        // The patch and the ablation reached the heads' inputs of the later blocks.
        const Matrix& last = fullRecord.headInputs.back();
        EXPECT_TRUE(
            (last.leftCols(hd).bottomRows(100).array() == values.bottomRows(100).array()).all());
        EXPECT_TRUE(fullRecord.headInputs.front().rightCols(hd).bottomRows(100).isZero(0));
    }
}

} // namespace
} // namespace attnlab::model

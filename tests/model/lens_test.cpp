// The logit lens, direct logit attribution and activation patching (lens.h) against a plain
// PyTorch forward written apart from AttnLab (fixtures/make_lens_reference.py, float64, on three
// checkpoints transformers saved: LayerNorm, RMSNorm with GQA, a parallel residual), and their
// properties over every checkpoint of the table: the lens's last row is the model's logits, the
// attributions add up to the logit, patching a head with itself changes nothing, patching every
// head and the embedding restores the clean run.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/base/seeded.h"
#include "attnlab/io/npy.h"
#include "attnlab/model/lens.h"
#include "attnlab/model/model.h"
#include "checkpoint_builder.h"
#include "reference.h"
#include "reference_npz.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;

using test::hfDir;

Model load(const std::string& name) {
    auto model = loadModel((hfDir() / name).string());
    if (!model.ok()) throw std::runtime_error(model.error());
    return std::move(*model);
}

/// The reference's members: int64 arrays as ids, the others as doubles.
struct Reference {
    std::map<std::string, std::vector<std::int64_t>> ids;
    std::map<std::string, std::vector<double>> values;
    std::map<std::string, std::vector<Index>> shapes;

    explicit Reference(const std::string& name) {
        const std::string path = (hfDir() / name / "lens_reference.npz").string();
        auto members = readNpzMembers(path);
        if (!members.ok()) throw std::runtime_error(members.error());
        for (const auto& [key, bytes] : *members) {
            auto header = parseNpyHeader(bytes, key);
            if (!header.ok()) throw std::runtime_error(header.error());
            if (header->descr == "<i8") {
                ids[key] = test::int64s(bytes, key);
                continue;
            }
            NpyReadOptions options;
            options.keepFloat64 = true;
            auto array = parseNpy(bytes, key, options);
            if (!array.ok()) throw std::runtime_error(array.error());
            shapes[key] = array->shape;
            values[key] = array->data64.empty()
                              ? std::vector<double>(array->data.begin(), array->data.end())
                              : std::vector<double>(array->data64.begin(), array->data64.end());
        }
    }
};

std::vector<double> flat(const Eigen::MatrixXd& m) {
    std::vector<double> out;
    for (Index i = 0; i < m.rows(); ++i)
        for (Index j = 0; j < m.cols(); ++j)
            out.push_back(m(i, j));
    return out;
}

/// Decoders and encoders of the table (one sequence), by folder name.
std::vector<std::string> oneSequenceFixtures() {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(hfDir())) {
        if (!entry.is_directory()) continue;
        std::ifstream in(entry.path() / "config.json");
        const auto config = nlohmann::json::parse(in);
        if (!config.value("is_encoder_decoder", false))
            names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::int64_t> someIds(const Model& model, Index count, std::int64_t seed) {
    std::vector<std::int64_t> ids;
    for (Index i = 0; i < count; ++i)
        ids.push_back((seed * 7919 + i * 104729) % (model.config.vocab - 3) + 3);
    return ids;
}

class LensReference : public testing::TestWithParam<std::string> {};

TEST_P(LensReference, LogitLensMatchesPlainPyTorch) {
    const Model model = load(GetParam());
    const Reference ref(GetParam());
    auto lens = logitLens(model, ref.ids.at("ids"));
    ASSERT_TRUE(lens.ok()) << lens.error();
    ASSERT_EQ(lens->layers(), model.config.layers);
    std::vector<double> got;
    for (const Matrix& layer : lens->logits)
        got.insert(got.end(), layer.data(), layer.data() + layer.size());
    EXPECT_LT(ref::relativeDifference(got, ref.values.at("lens_logits")), 1e-4);
}

TEST_P(LensReference, DirectAttributionMatchesPlainPyTorch) {
    const Model model = load(GetParam());
    const Reference ref(GetParam());
    const std::int64_t target = ref.ids.at("target")[0];
    auto parts =
        directLogitAttribution(model, ref.ids.at("ids"), {.contrast = ref.ids.at("contrast")[0]});
    ASSERT_TRUE(parts.ok()) << parts.error();
    EXPECT_EQ(parts->target, target); // the default target is the model's prediction
    EXPECT_LT(ref::relativeDifference(flat(parts->heads), ref.values.at("attribution_heads")),
              1e-4);
    EXPECT_LT(ref::relativeDifference(
                  std::vector<double>(parts->mlp.data(), parts->mlp.data() + parts->mlp.size()),
                  ref.values.at("attribution_mlp")),
              1e-4);
    EXPECT_LT(ref::relativeDifference({parts->embedding}, ref.values.at("attribution_embed")),
              1e-4);
    EXPECT_LT(ref::relativeDifference({parts->bias}, ref.values.at("attribution_bias")), 1e-4);
    EXPECT_LT(ref::relativeDifference({parts->logit}, ref.values.at("attribution_logit")), 1e-4);

    auto alone = directLogitAttribution(model, ref.ids.at("ids"), {.target = target});
    ASSERT_TRUE(alone.ok()) << alone.error();
    EXPECT_LT(
        ref::relativeDifference(flat(alone->heads), ref.values.at("attribution_heads_target")),
        1e-4);
}

TEST_P(LensReference, PatchingMatchesPlainPyTorch) {
    const Model model = load(GetParam());
    const Reference ref(GetParam());
    const auto& metric = ref.ids.at("metric");
    for (bool reuse : {true, false})
        for (bool resume : {true, false}) {
            PatchingOptions options{.metric = {metric[0], metric[1]}};
            options.reusePrefix = reuse;
            options.resumeAtLayer = resume;
            auto patched =
                activationPatching(model, ref.ids.at("ids"), ref.ids.at("corrupted_ids"), options);
            ASSERT_TRUE(patched.ok()) << patched.error();
            EXPECT_LT(ref::relativeDifference(flat(patched->heads), ref.values.at("patch_heads")),
                      1e-4)
                << reuse << resume;
            EXPECT_LT(
                ref::relativeDifference(flat(patched->residual), ref.values.at("patch_residual")),
                1e-4)
                << reuse << resume;
            EXPECT_EQ(patched->sharedPrefix, 4);
            EXPECT_EQ(patched->reusedPositions > 0, reuse);
        }
}

// A patched run resumed at the layer it patches computes exactly what the whole run computes
// above it: without a prefix cache, the same bytes for every head and residual cell, with the
// model's heads switched off as well (an ablation applies below the patch too).
TEST_P(LensReference, PatchedRunsResumedAtTheirLayerGiveTheWholeRunsBytes) {
    const Model model = load(GetParam());
    const Reference ref(GetParam());
    const auto& metric = ref.ids.at("metric");
    RunOptions base;
    base.ablatedHeads = {{0, 0}};
    Patching results[2];
    for (bool resume : {true, false}) {
        PatchingOptions options{.metric = {metric[0], metric[1]}};
        options.reusePrefix = false;
        options.resumeAtLayer = resume;
        auto patched = activationPatching(model, ref.ids.at("ids"), ref.ids.at("corrupted_ids"),
                                          options, base);
        ASSERT_TRUE(patched.ok()) << patched.error();
        results[resume ? 0 : 1] = std::move(*patched);
    }
    EXPECT_EQ(results[0].heads, results[1].heads);
    EXPECT_EQ(results[0].residual, results[1].residual);
    EXPECT_EQ(results[0].runs, results[1].runs);
    EXPECT_NE(results[0].heads.cwiseAbs().maxCoeff(), 0.0); // the patches did something
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, LensReference,
                         testing::Values("gpt2", "llama_gqa", "gpt_neox_pythia"));

TEST(LogitLens, LastRowIsTheModelsOwnLogitsForEveryArchitecture) {
    for (const std::string& name : oneSequenceFixtures()) {
        const Model model = load(name);
        const auto ids = someIds(model, 7, 1);
        RunOptions all;
        all.logits = LogitRows::All;
        auto run = runModel(model, ids, all);
        ASSERT_TRUE(run.ok()) << name << ": " << run.error();
        auto lens = logitLens(model, ids);
        ASSERT_TRUE(lens.ok()) << name << ": " << lens.error();
        ASSERT_EQ(static_cast<Index>(lens->logits.size()), model.config.layers + 1) << name;
        EXPECT_EQ(lens->logits.back(), run->logits) << name;
        const Matrix p = probabilities(lens->logits.front());
        for (Index i = 0; i < p.rows(); ++i)
            EXPECT_NEAR(p.row(i).sum(), 1.0f, 1e-5f) << name;
    }
}

TEST(LogitLens, TopTokensAreTheMostProbableFirst) {
    RowVector p(5);
    p << 0.1f, 0.4f, 0.1f, 0.3f, 0.1f;
    const auto top = topTokens(p, 3);
    ASSERT_EQ(top.size(), 3u);
    EXPECT_EQ(top[0].id, 1);
    EXPECT_EQ(top[1].id, 3);
    EXPECT_EQ(top[2].id, 0); // ties: the lower id first
    EXPECT_EQ(topTokens(p, 99).size(), 5u);
}

TEST(DirectAttribution, TermsAddUpToTheLogitOrTheModelIsRefusedWithAReason) {
    Index attributed = 0;
    for (const std::string& name : oneSequenceFixtures()) {
        const Model model = load(name);
        const auto ids = someIds(model, 6, 2);
        const auto refusal = attributionRefusal(model);
        auto parts = directLogitAttribution(model, ids, {.contrast = 5});
        if (refusal) {
            ASSERT_FALSE(parts.ok()) << name;
            EXPECT_EQ(parts.error(), refusal->message);
            EXPECT_EQ(refusal->message.find('\n'), std::string::npos);
            continue;
        }
        ASSERT_TRUE(parts.ok()) << name << ": " << parts.error();
        ++attributed;
        EXPECT_NEAR(parts->total(), parts->logit, 1e-4 * std::max(1.0, std::abs(parts->logit)))
            << name;
        auto alone = directLogitAttribution(model, ids);
        ASSERT_TRUE(alone.ok()) << name;
        EXPECT_NEAR(alone->total(), alone->logit, 1e-4 * std::max(1.0, std::abs(alone->logit)))
            << name;
    }
    EXPECT_GE(attributed, 10); // most of the table (pre-norm decoders) is attributed
}

TEST(DirectAttribution, RefusesPostNormAndTokensOutsideTheVocabulary) {
    const Model bert = load("bert");
    auto refused = directLogitAttribution(bert, std::vector<std::int64_t>{3, 4, 5});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("post-LN"), std::string::npos) << refused.error();
    const Model gpt2 = load("gpt2");
    auto outside = directLogitAttribution(gpt2, std::vector<std::int64_t>{3, 4}, {.target = 256});
    ASSERT_FALSE(outside.ok());
    EXPECT_NE(outside.error().find("not in the vocabulary"), std::string::npos);
}

/// A recorded run of ids (logits of every row).
ModelRun recorded(const Model& model, const std::vector<std::int64_t>& ids, RunRecording& record,
                  const ActivationPatch* patch = nullptr) {
    RunOptions options;
    options.logits = LogitRows::All;
    options.record = &record;
    options.patch = patch;
    auto run = runModel(model, ids, options);
    if (!run.ok()) throw std::runtime_error(run.error());
    return std::move(*run);
}

TEST(ActivationPatching, PatchingAHeadWithItselfChangesNothing) {
    for (const char* name : {"gpt2", "llama_gqa", "gpt_neox_pythia"}) {
        const Model model = load(name);
        const auto ids = someIds(model, 8, 3);
        RunRecording record;
        const ModelRun plain = recorded(model, ids, record);
        const Index hd = model.config.headDim;
        for (Index l = 0; l < model.config.layers; ++l)
            for (Index h = 0; h < model.config.heads; ++h) {
                ActivationPatch patch;
                patch.heads[{l, h}] =
                    record.headInputs[static_cast<std::size_t>(l)].middleCols(h * hd, hd);
                patch.residual[{l, 2}] = record.residual[static_cast<std::size_t>(l)].row(2);
                RunRecording again;
                EXPECT_EQ(recorded(model, ids, again, &patch).logits, plain.logits)
                    << name << " " << l << ":" << h;
            }
    }
}

TEST(ActivationPatching, EveryHeadAndTheEmbeddingFromCleanRestoreTheCleanRun) {
    for (const char* name : {"gpt2", "llama_gqa", "gpt_neox_pythia"}) {
        const Model model = load(name);
        const auto clean = someIds(model, 8, 4);
        auto corrupted = clean;
        corrupted[2] = corrupted[2] % 50 + 3;
        corrupted[5] = corrupted[5] % 40 + 60;
        RunRecording record;
        const ModelRun cleanRun = recorded(model, clean, record);
        ActivationPatch patch;
        for (Index position = 0; position < static_cast<Index>(clean.size()); ++position)
            patch.residual[{0, position}] = record.residual.front().row(position);
        const Index hd = model.config.headDim;
        for (Index l = 0; l < model.config.layers; ++l)
            for (Index h = 0; h < model.config.heads; ++h)
                patch.heads[{l, h}] =
                    record.headInputs[static_cast<std::size_t>(l)].middleCols(h * hd, hd);
        RunRecording patchedRecord;
        const ModelRun patched = recorded(model, corrupted, patchedRecord, &patch);
        EXPECT_EQ(patched.logits, cleanRun.logits) << name;
        // The final residual at the last position alone restores the last logits.
        ActivationPatch last;
        last.residual[{model.config.layers, 7}] = record.residual.back().row(7);
        RunRecording lastRecord;
        EXPECT_EQ(recorded(model, corrupted, lastRecord, &last).logits.row(7),
                  cleanRun.logits.row(7))
            << name;
    }
}

TEST(ActivationPatching, RunsRefusePatchesOutsideTheModel) {
    const Model model = load("gpt2"); // 2 layers x 4 heads, hd 8, width 32
    const std::vector<std::int64_t> ids{5, 6, 7};
    for (int bad = 0; bad < 4; ++bad) {
        ActivationPatch patch;
        if (bad == 0) patch.heads[{0, 4}] = Matrix::Zero(3, 8);
        if (bad == 1) patch.heads[{0, 1}] = Matrix::Zero(2, 8);
        if (bad == 2) patch.residual[{3, 0}] = RowVector::Zero(32);
        if (bad == 3) patch.residual[{2, 3}] = RowVector::Zero(32);
        RunOptions options;
        options.patch = &patch;
        auto run = runModel(model, ids, options);
        ASSERT_FALSE(run.ok()) << bad;
        EXPECT_NE(run.error().find("patched"), std::string::npos) << run.error();
    }
}

TEST(ActivationPatching, RefusesWhatCannotBePatched) {
    const Model model = load("gpt2");
    const std::vector<std::int64_t> three{5, 6, 7}, four{5, 6, 7, 8};
    auto lengths = activationPatching(model, three, four, {.metric = {1, 2}});
    ASSERT_FALSE(lengths.ok());
    EXPECT_NE(lengths.error().find("same length"), std::string::npos) << lengths.error();
    auto vocabulary = activationPatching(model, three, three, {.metric = {1, 999}});
    ASSERT_FALSE(vocabulary.ok());
    EXPECT_NE(vocabulary.error().find("not in the vocabulary"), std::string::npos);
    auto same = activationPatching(model, three, three, {.metric = {1, 2}});
    ASSERT_FALSE(same.ok());
    EXPECT_NE(same.error().find("nothing to restore"), std::string::npos) << same.error();
}

TEST(ActivationPatching, ReportsProgressAndStopsWhenCancelled) {
    const Model model = load("llama_gqa");
    const Reference ref("llama_gqa");
    const auto& metric = ref.ids.at("metric");
    std::atomic<bool> cancel{false};
    Index calls = 0, lastDone = 0, lastTotal = 0;
    PatchingOptions options{.metric = {metric[0], metric[1]}};
    options.progress = [&](Index done, Index total) {
        ++calls;
        EXPECT_GT(done, lastDone);
        lastDone = done;
        lastTotal = total;
        if (calls == 2) cancel = true;
    };
    RunOptions base;
    base.cancel = &cancel;
    auto patched =
        activationPatching(model, ref.ids.at("ids"), ref.ids.at("corrupted_ids"), options, base);
    ASSERT_FALSE(patched.ok());
    EXPECT_EQ(patched.error(), "cancelled");
    EXPECT_EQ(calls, 2); // nothing runs after the cancel
    // 2 x 4 heads, and 3 residual rows over the 6 positions from the first differing token.
    EXPECT_EQ(lastTotal, 2 * 4 + 3 * 6);
    EXPECT_LT(lastDone, lastTotal);
}

// Patched runs batched at the layer they resume at give each run's own bytes: with and without
// the prefix cache, on every decoder fixture, at a length where some runs have rows enough for
// the packed product and some do not (runs of few rows batch only where every projection takes
// the GEMM at any row count, as GPT-2's Conv1D; on the others they run alone), and, at 48
// tokens, where a layer's residual runs (1081 rows) take two batches.
TEST(ActivationPatching, BatchedRunsGiveOneRunAtATimesBytes) {
    for (const std::string& name : oneSequenceFixtures()) {
        const Model model = load(name);
        if (model.config.kind != ModelKind::Decoder) continue;
        const auto clean = someIds(model, std::min<Index>(48, model.config.maxPositions), 3);
        auto corrupted = clean;
        // The second change within the reach of a short sliding window.
        for (std::size_t at : {std::size_t{2}, clean.size() - 4})
            corrupted[at] = (corrupted[at] + 1) % model.config.vocab;
        for (bool reuse : {true, false}) {
            Patching results[2];
            for (bool batch : {true, false}) {
                PatchingOptions options{.metric = {clean[5], clean[7]}};
                options.reusePrefix = reuse;
                options.batch = batch;
                auto patched = activationPatching(model, clean, corrupted, options);
                ASSERT_TRUE(patched.ok()) << name << ": " << patched.error();
                results[batch ? 0 : 1] = std::move(*patched);
            }
            EXPECT_EQ(results[0].heads, results[1].heads) << name << " reuse " << reuse;
            EXPECT_EQ(results[0].residual, results[1].residual) << name << " reuse " << reuse;
            EXPECT_EQ(results[0].runs, results[1].runs) << name;
            EXPECT_EQ(results[0].reusedPositions, results[1].reusedPositions) << name;
            EXPECT_NE(results[0].residual.cwiseAbs().maxCoeff(), 0.0) << name;
        }
    }
}

// A width whose rows do not start on 16-float boundaries (20: every fourth row does) puts each
// batched run's rows where a lone run's lie, padding between runs: the norms' reductions then
// sum alike, and batched runs keep their bytes. A GPT-2 of random weights written here, 2
// layers of 2 heads of 10.
TEST(ActivationPatching, BatchedRunsOfAnUnalignedWidthKeepTheirBytes) {
    const test::TempDir dir;
    const Index width = 20, layers = 2, vocab = 50, positions = 64;
    std::vector<test::RawTensor> tensors;
    std::uint64_t stream = 0;
    auto add = [&](const std::string& name, Index rows, Index cols, float scale) {
        const Matrix values = seededMatrix(rows, cols, 11, ++stream) * scale;
        std::vector<std::int64_t> shape{rows};
        if (cols > 1) shape.push_back(cols);
        tensors.push_back(test::floatTensor(
            name, shape, std::vector<float>(values.data(), values.data() + values.size())));
    };
    add("transformer.wte.weight", vocab, width, 0.5f);
    add("transformer.wpe.weight", positions, width, 0.1f);
    for (Index l = 0; l < layers; ++l) {
        const std::string at = "transformer.h." + std::to_string(l) + ".";
        for (const char* norm : {"ln_1", "ln_2"}) {
            add(at + norm + ".weight", width, 1, 1.0f);
            add(at + norm + ".bias", width, 1, 0.1f);
        }
        add(at + "attn.c_attn.weight", width, 3 * width, 0.3f);
        add(at + "attn.c_attn.bias", 3 * width, 1, 0.1f);
        add(at + "attn.c_proj.weight", width, width, 0.3f);
        add(at + "attn.c_proj.bias", width, 1, 0.1f);
        add(at + "mlp.c_fc.weight", width, 4 * width, 0.3f);
        add(at + "mlp.c_fc.bias", 4 * width, 1, 0.1f);
        add(at + "mlp.c_proj.weight", 4 * width, width, 0.3f);
        add(at + "mlp.c_proj.bias", width, 1, 0.1f);
    }
    add("transformer.ln_f.weight", width, 1, 1.0f);
    add("transformer.ln_f.bias", width, 1, 0.1f);
    test::writeBytes(dir.file("model.safetensors"), test::safetensorsImage(tensors));
    std::ofstream(dir.file("config.json")) << nlohmann::json{
        {"model_type", "gpt2"},
        {"n_embd", width},
        {"n_head", 2},
        {"n_layer", layers},
        {"n_positions", positions},
        {"vocab_size", vocab},
        {"layer_norm_epsilon", 1e-5},
        {"activation_function", "gelu_new"},
        {"tie_word_embeddings", true}}.dump();
    auto model = loadModel(dir.path().string());
    ASSERT_TRUE(model.ok()) << model.error();
    std::vector<std::int64_t> clean;
    for (Index i = 0; i < 40; ++i)
        clean.push_back((i * 17 + 3) % vocab);
    auto corrupted = clean;
    corrupted[1] = (corrupted[1] + 1) % vocab;
    Patching results[2];
    for (bool batch : {true, false}) {
        PatchingOptions options{.metric = {4, 9}};
        options.batch = batch;
        auto patched = activationPatching(*model, clean, corrupted, options);
        ASSERT_TRUE(patched.ok()) << patched.error();
        results[batch ? 0 : 1] = std::move(*patched);
    }
    EXPECT_EQ(results[0].heads, results[1].heads);
    EXPECT_EQ(results[0].residual, results[1].residual);
    EXPECT_NE(results[0].residual.cwiseAbs().maxCoeff(), 0.0);
}

TEST(ActivationPatching, SameBytesWhateverTheThreadCount) {
    const Model model = load("gpt2");
    const Reference ref("gpt2");
    const auto& metric = ref.ids.at("metric");
    std::vector<Eigen::MatrixXd> results;
    for (int threads : {1, 3}) {
        RunOptions base;
        base.threads = threads;
        auto patched = activationPatching(model, ref.ids.at("ids"), ref.ids.at("corrupted_ids"),
                                          {.metric = {metric[0], metric[1]}}, base);
        ASSERT_TRUE(patched.ok()) << patched.error();
        results.push_back(patched->heads);
    }
    EXPECT_EQ(results[0], results[1]);
}

} // namespace
} // namespace attnlab::model

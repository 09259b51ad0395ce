// The table of architectures against transformers itself: every folder in fixtures/hf/ is a
// checkpoint saved by transformers 5's save_pretrained with the attentions and logits it
// computed (fixtures/hf/README.md). Every row of the table must have one; each must give
// transformers' attentions and logits; and a config that says something AttnLab does not
// understand is refused naming the key.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <set>
#include <sstream>

#include "attnlab/io/npy.h"
#include "attnlab/lab/cell.h"
#include "attnlab/model/architecture.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "attnlab/model/run_dumps.h"
#include "checkpoint_builder.h"
#include "reference_npz.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using test::int64s;
using test::relativeDifference;
using test::worstDifference;
using Json = nlohmann::json;

using test::hfDir;

std::string readText(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// The fixture folders: all, or those of one sequence (decoders, encoders) or of two
/// (encoder-decoders).
std::vector<std::string> hfFixtures(std::optional<bool> encoderDecoder = std::nullopt) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(hfDir())) {
        if (!entry.is_directory()) continue;
        const bool twoSequences =
            Json::parse(readText(entry.path() / "config.json")).value("is_encoder_decoder", false);
        if (!encoderDecoder || *encoderDecoder == twoSequences)
            names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

/// What transformers computed: ids, attentions [L, H, S, S], logits [S, V]; an
/// encoder-decoder: source ids, decoder_ids, encoder_/decoder_/cross_attentions, logits.
struct Reference {
    std::vector<std::int64_t> ids;
    std::vector<std::int64_t> decoderIds;
    std::map<std::string, NpyArray> arrays;

    const NpyArray& at(const std::string& key) const { return arrays.at(key); }
};

Reference readReference(const std::string& name) {
    const std::string path = (hfDir() / name / "reference.npz").string();
    auto members = readNpzMembers(path);
    if (!members.ok()) throw std::runtime_error(members.error());
    Reference reference;
    for (const auto& [key, bytes] : *members) {
        if (key == "ids") {
            reference.ids = int64s(bytes, path + "[ids]");
        } else if (key == "decoder_ids") {
            reference.decoderIds = int64s(bytes, path + "[decoder_ids]");
        } else {
            auto array = parseNpy(bytes, path + "[" + key + "]");
            if (!array.ok()) throw std::runtime_error(array.error());
            reference.arrays[key] = std::move(*array);
        }
    }
    return reference;
}



Model load(const fs::path& dir) {
    auto model = loadModel(dir.string());
    if (!model.ok()) throw std::runtime_error(model.error());
    return std::move(*model);
}

/// Rows whose checkpoint saved by transformers waits for a machine that has it, each with the
/// fixture it is tested against meanwhile: an independent float64 forward in plain torch
/// written from the modeling file (its script says how).
const std::map<std::string, std::string> kAwaitingTransformers = {
    {"vit", "vit"},       // scripts/make_vision_fixtures.py, tests/model/vision_test.cpp
    {"deit", "deit"},     // the same, with and without its teacher's head (deit_plain)
    {"dinov2", "dinov2"}, // the same script, with (dinov2) and without (dinov2_base) classifier
    {"clip_vision_model", "clip_vision"}, // the same script: CLIPVisionModelWithProjection
    {"clip", "clip"},                     // the same script: CLIPModel's image tower
};

TEST(ArchitectureTable, EveryRowHasACheckpointSavedByTransformers) {
    std::set<std::string> covered;
    for (const std::string& name : hfFixtures()) {
        const Json config = Json::parse(readText(hfDir() / name / "config.json"));
        covered.insert(config.value("model_type", ""));
    }
    for (const Architecture& row : architectures()) {
        const std::string type(row.modelType);
        if (const auto waiting = kAwaitingTransformers.find(type);
            waiting != kAwaitingTransformers.end()) {
            EXPECT_FALSE(covered.count(type))
                << "the row '" << type << "' has its transformers checkpoint now: take it off "
                << "kAwaitingTransformers";
            EXPECT_TRUE(fs::exists(fs::path(test::fixtureDir(waiting->second)) / "config.json"))
                << "the row '" << type << "' has neither a transformers checkpoint nor "
                << waiting->second;
            continue;
        }
        EXPECT_TRUE(covered.count(type))
            << "the row '" << type << "' has no checkpoint in " << hfDir();
    }
    // Names are unique and every row names its tensors.
    std::set<std::string_view> types;
    for (const Architecture& row : architectures()) {
        EXPECT_TRUE(types.insert(row.modelType).second) << row.modelType;
        EXPECT_FALSE(row.names.embed.empty()) << row.modelType;
        EXPECT_FALSE(row.names.layers.empty()) << row.modelType;
        EXPECT_EQ(findArchitecture(row.modelType), &row);
    }
    EXPECT_EQ(findArchitecture("albert"), nullptr);
}

TEST(ArchitectureTable, TheDocsCarryTheTableAsItIs) {
    const std::string docs = readText(fs::path(ATTNLAB_SOURCE_DIR) / "docs/models.md");
    EXPECT_NE(docs.find(architectureMarkdown()), std::string::npos)
        << "docs/models.md is out of date: paste the output of `attnlab model --architectures`";
    const std::string readme = readText(fs::path(ATTNLAB_SOURCE_DIR) / "README.md");
    for (const Architecture& row : architectures())
        EXPECT_NE(readme.find(std::string(row.displayName)), std::string::npos)
            << "README.md does not name " << row.displayName;
}

class SavedByTransformers : public ::testing::TestWithParam<std::string> {};

TEST_P(SavedByTransformers, GivesTransformersAttentionsAndLogits) {
    const Model model = load(hfDir() / GetParam());
    const Reference reference = readReference(GetParam());
    RunOptions options;
    options.logits = LogitRows::All;
    options.threads = 2;
    auto run = runModel(model, reference.ids, options);
    ASSERT_TRUE(run.ok()) << run.error();
    EXPECT_LT(worstDifference(attentionRecord(model, *run), reference.at("attentions")), 1e-5)
        << "attention differs from transformers'";
    EXPECT_LT(relativeDifference(run->logits, reference.at("logits")), 1e-5)
        << "logits differ from transformers'";
}

// The logits of chosen ids alone (RunOptions::logitIds, what activation patching reads): the
// last row of transformers' own logits at those ids, in the order asked, through every family's
// head (BERT's transform, a bias, Granite's scaling, Gemma 2's soft-capping).
TEST_P(SavedByTransformers, TheLogitsOfChosenIdsAreTransformers) {
    const Model model = load(hfDir() / GetParam());
    const Reference reference = readReference(GetParam());
    const NpyArray& logits = reference.at("logits");
    const Index vocab = model.config.vocab;
    ASSERT_EQ(logits.shape.back(), vocab);
    const std::size_t last = logits.data.size() - static_cast<std::size_t>(vocab);
    RunOptions options;
    options.logits = LogitRows::Last;
    options.logitIds = {vocab - 1, 0, vocab / 2, 0};
    auto run = runModel(model, reference.ids, options);
    ASSERT_TRUE(run.ok()) << run.error();
    ASSERT_EQ(run->logits.rows(), 1);
    ASSERT_EQ(run->logits.cols(), 4);
    const float scale =
        Eigen::Map<const Eigen::ArrayXf>(logits.data.data() + last, vocab).abs().maxCoeff();
    for (std::size_t i = 0; i < options.logitIds.size(); ++i)
        EXPECT_NEAR(run->logits(0, static_cast<Index>(i)),
                    logits.data[last + static_cast<std::size_t>(options.logitIds[i])], 1e-5 * scale)
            << "id " << options.logitIds[i];
    options.logitIds = {vocab};
    auto outside = runModel(model, reference.ids, options);
    ASSERT_FALSE(outside.ok());
    EXPECT_NE(outside.error().find("outside the vocabulary"), std::string::npos) << outside.error();
}

TEST_P(SavedByTransformers, ExtendingTheCacheEqualsAFullRun) {
    const Model model = load(hfDir() / GetParam());
    const Reference reference = readReference(GetParam());
    RunOptions options;
    options.logits = LogitRows::All;
    const std::span<const std::int64_t> ids(reference.ids);
    auto full = runModel(model, ids, options);
    ASSERT_TRUE(full.ok()) << full.error();
    auto prefix = runModel(model, ids.first(ids.size() - 3), options);
    ASSERT_TRUE(prefix.ok());
    auto extended = runModel(model, ids, options, &*prefix);
    ASSERT_TRUE(extended.ok());
    // An encoder's two-way attention changes every position: it never extends.
    EXPECT_EQ(extended->extended, model.config.kind == ModelKind::Decoder);
    const auto fullMaps = attentionRecord(model, *full);
    const auto extendedMaps = attentionRecord(model, *extended);
    for (std::size_t l = 0; l < fullMaps.size(); ++l)
        for (std::size_t i = 0; i < fullMaps[l].data.size(); ++i)
            ASSERT_NEAR(extendedMaps[l].data[i], fullMaps[l].data[i], 1e-6);
    EXPECT_LT((extended->logits - full->logits).cwiseAbs().maxCoeff(),
              1e-5 * full->logits.cwiseAbs().maxCoeff());
}

TEST_P(SavedByTransformers, ItsQkvUnderTheNativeSpecGiveItsAttentionBack) {
    // What the window does with a model's run: each layer's recorded q/k/v re-run by the
    // core under nativeApply (the model's scale, soft-capping and per-layer windows).
    const auto shared = std::make_shared<const Model>(load(hfDir() / GetParam()));
    const Model& model = *shared;
    const Reference reference = readReference(GetParam());
    RunOptions options;
    auto run = runModel(model, reference.ids, options);
    ASSERT_TRUE(run.ok()) << run.error();
    const QkvDump dump = qkvDumpOf(shared, std::make_shared<const ModelRun>(*run), {});
    const QkvApply apply = nativeApply(model.config);
    EXPECT_TRUE(reproducesModel(apply, model.config));
    for (Index l = 0; l < model.config.layers; ++l) {
        const Experiment again = applyToQkvLayer(dump, l, apply);
        const Tensor4 recorded = attentionRecord(model, *run)[static_cast<std::size_t>(l)];
        ASSERT_TRUE(again.attention.weights.sameShape(recorded));
        for (std::size_t i = 0; i < recorded.data.size(); ++i)
            ASSERT_NEAR(again.attention.weights.data[i], recorded.data[i], 1e-6) << "layer " << l;
        // The window's layer keeps no scores and holds no maps: a head's, computed when asked,
        // is the same bytes as the whole layer's run without scores.
        QkvApply window = apply;
        window.keepScores = false;
        const Experiment held = applyToQkvLayer(dump, l, window);
        window.weightsOnDemand = true;
        const Experiment asked = applyToQkvLayer(dump, l, window);
        ASSERT_NE(asked.maps, nullptr);
        for (Index h = 0; h < recorded.heads; ++h) {
            const Matrix weights = asked.headWeights(h);
            ASSERT_TRUE(weights.cwiseEqual(held.headWeights(h)).all())
                << "layer " << l << ", head " << h;
            const Matrix ofRecord = std::as_const(recorded).head(0, h);
            ASSERT_LT((weights - ofRecord).cwiseAbs().maxCoeff(), 1e-6)
                << "layer " << l << ", head " << h;
            // A tooltip's explanation from q.k in double (soft-capped for Gemma 2) gives
            // transformers' weight of the last row's cells.
            const Index last = ofRecord.rows() - 1;
            for (Index j = 0; j <= last; ++j) {
                const auto cell = explainCell(asked, h, last, j);
                ASSERT_TRUE(cell && cell->softmax);
                if (cell->masked) continue;
                ASSERT_NEAR(cell->weight, ofRecord(last, j), 1e-5)
                    << "layer " << l << ", head " << h << ", key " << j;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SavedByTransformers, ::testing::ValuesIn(hfFixtures(false)),
                         [](const auto& param) { return param.param; });

class TranslationSavedByTransformers : public ::testing::TestWithParam<std::string> {};

TEST_P(TranslationSavedByTransformers, GivesTransformersThreeAttentionsAndLogits) {
    const Model model = load(hfDir() / GetParam());
    ASSERT_EQ(model.config.kind, ModelKind::EncoderDecoder);
    const Reference reference = readReference(GetParam());
    RunOptions options;
    options.logits = LogitRows::All;
    options.threads = 2;
    auto run = runTranslation(model, reference.ids, reference.decoderIds, options);
    ASSERT_TRUE(run.ok()) << run.error();
    EXPECT_LT(worstDifference(attentionRecord(model, *run, AttentionOf::Encoder), reference.at("encoder_attentions")), 1e-5);
    EXPECT_LT(worstDifference(attentionRecord(model, *run), reference.at("decoder_attentions")), 1e-5);
    EXPECT_LT(worstDifference(attentionRecord(model, *run, AttentionOf::Cross), reference.at("cross_attentions")), 1e-5);
    EXPECT_LT(relativeDifference(run->logits, reference.at("logits")), 1e-5);
    // One sequence is refused, naming what is missing.
    auto single = runModel(model, reference.ids, options);
    ASSERT_FALSE(single.ok());
    EXPECT_NE(single.error().find("encoder-decoder"), std::string::npos);
}

TEST_P(TranslationSavedByTransformers, DecodingTokenByTokenEqualsAFullRun) {
    // What translation does: the target grows one token at a time, the encoder and the cross
    // K/V computed once, the decoder's self-attention cache extended.
    const Model model = load(hfDir() / GetParam());
    const Reference reference = readReference(GetParam());
    RunOptions options;
    options.logits = LogitRows::All;
    const std::span<const std::int64_t> source(reference.ids);
    const std::span<const std::int64_t> target(reference.decoderIds);
    auto full = runTranslation(model, source, target, options);
    ASSERT_TRUE(full.ok()) << full.error();
    auto step = runTranslation(model, source, target.first(1), options);
    ASSERT_TRUE(step.ok());
    for (std::size_t n = 2; n <= target.size(); ++n) {
        auto next = runTranslation(model, source, target.first(n), options, &*step);
        ASSERT_TRUE(next.ok());
        EXPECT_TRUE(next->extended);
        EXPECT_EQ(next->reusedPositions, static_cast<Index>(n - 1));
        step = std::move(next);
    }
    for (AttentionOf of : {AttentionOf::Cross, AttentionOf::Self}) {
        const auto fullMaps = attentionRecord(model, *full, of);
        const auto stepMaps = attentionRecord(model, *step, of);
        for (std::size_t l = 0; l < fullMaps.size(); ++l)
            for (std::size_t i = 0; i < fullMaps[l].data.size(); ++i)
                ASSERT_NEAR(stepMaps[l].data[i], fullMaps[l].data[i], 1e-6);
    }
    EXPECT_LT((step->logits - full->logits).cwiseAbs().maxCoeff(),
              1e-5 * full->logits.cwiseAbs().maxCoeff());
    // Another source runs the encoder again.
    std::vector<std::int64_t> other(source.begin(), source.end());
    other.front() = other.front() == 5 ? 6 : 5;
    auto changed = runTranslation(model, other, target, options, &*full);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(changed->extended);
    EXPECT_GT((changed->logits - full->logits).cwiseAbs().maxCoeff(), 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TranslationSavedByTransformers,
                         ::testing::ValuesIn(hfFixtures(true)),
                         [](const auto& param) { return param.param; });

// ---- configs ------------------------------------------------------------------------------------

Json configOf(const std::string& name) {
    return Json::parse(readText(hfDir() / name / "config.json"));
}

Result<ModelConfig> parse(const Json& json) {
    return parseConfig(json.dump(), "config.json");
}

TEST(ModelConfigKeys, AKeyNobodyUnderstandsIsRefusedNamingIt) {
    Json config = configOf("llama_gqa");
    ASSERT_TRUE(parse(config).ok()) << parse(config).error();
    config["attn_temperature_tuning"] = 4;
    auto refused = parse(config);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("'attn_temperature_tuning'"), std::string::npos)
        << refused.error();
    EXPECT_EQ(refused.error().find('\n'), std::string::npos) << "one line";

    // A key of another family is as unknown here as any other: Gemma 2's soft-capping on Llama.
    config = configOf("llama_gqa");
    config["attn_logit_softcapping"] = 50.0;
    EXPECT_FALSE(parse(config).ok());
    // ... and an unknown key inside rope_parameters.
    config = configOf("llama_gqa");
    config["rope_parameters"]["mrope_section"] = Json::array({2, 2});
    ASSERT_FALSE(parse(config).ok());
    EXPECT_NE(parse(config).error().find("mrope_section"), std::string::npos);
}

TEST(ModelConfigKeys, KeysKnownToChangeNothingAreAccepted) {
    Json config = configOf("llama_gqa");
    for (std::string_view key : keysThatChangeNothing())
        config[std::string(key)] = 1;
    EXPECT_TRUE(parse(config).ok()) << parse(config).error();
    // A null value says "not set".
    config = configOf("llama_gqa");
    config["some_future_option"] = nullptr;
    EXPECT_TRUE(parse(config).ok());
}

// T5 v1.1 and Flan-T5 use a gated MLP (wi_0, wi_1) that the t5 row does not run: refused by
// name, in one line, rather than run as relu T5 on the wrong tensors.
TEST(ModelConfigKeys, GatedT5IsRefusedByName) {
    Json config = configOf("t5");
    ASSERT_TRUE(parse(config).ok()) << parse(config).error();
    config["feed_forward_proj"] = "gated-gelu";
    config["dense_act_fn"] = "gelu_new";
    config["is_gated_act"] = true;
    auto refused = parse(config);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("gated-gelu"), std::string::npos) << refused.error();
    EXPECT_NE(refused.error().find("Flan-T5"), std::string::npos) << refused.error();
    EXPECT_EQ(refused.error().find('\n'), std::string::npos) << "one line";
    // is_gated_act alone says the same.
    config = configOf("t5");
    config["is_gated_act"] = true;
    EXPECT_FALSE(parse(config).ok());
}

TEST(ModelConfigKeys, AnUnknownRopeTypeIsRefused) {
    Json config = configOf("qwen3_qknorm");
    config["rope_parameters"]["rope_type"] = "mrope";
    auto refused = parse(config);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("rope_type 'mrope'"), std::string::npos) << refused.error();
}

TEST(ModelConfigKeys, TransformersFourAndFiveSayTheSame) {
    // The same llama3-scaled RoPE as v5's rope_parameters and as v4's rope_theta + rope_scaling.
    const Json v5 = configOf("llama_llama3rope_bf16");
    Json v4 = v5;
    v4.erase("rope_parameters");
    v4.erase("dtype");
    v4["torch_dtype"] = "bfloat16";
    v4["rope_theta"] = v5["rope_parameters"]["rope_theta"];
    Json scaling = v5["rope_parameters"];
    scaling.erase("rope_theta");
    v4["rope_scaling"] = scaling;
    auto a = parse(v5);
    auto b = parse(v4);
    ASSERT_TRUE(a.ok() && b.ok()) << (a.ok() ? b.error() : a.error());
    ASSERT_EQ(a->ropes.size(), 1u);
    EXPECT_EQ(a->ropes[0].type, "llama3");
    EXPECT_EQ(a->ropes[0].inverseFrequencies, b->ropes[0].inverseFrequencies);
    // Llama 3.1's rule with original_max_position_embeddings 16, factors 1 and 4: wavelengths
    // past 16 are divided by 8, those between 4 and 16 blended, shorter ones kept.
    const Rope& rope = a->ropes[0];
    const double lowest = std::pow(10000.0, -6.0 / 8.0); // wavelength ~ 6283
    EXPECT_NEAR(rope.inverseFrequencies.back(), lowest / 8.0, 1e-9);
    const double smooth = (16.0 / (2 * std::numbers::pi) - 1.0) / 3.0; // f = 1: wavelength 2 pi
    EXPECT_NEAR(rope.inverseFrequencies.front(), (1 - smooth) / 8.0 + smooth, 1e-7);

    // rope_theta read from rope_parameters (the bug this table ended: θ silently 10000).
    auto qwen = parse(configOf("qwen2_bias_f16"));
    ASSERT_TRUE(qwen.ok());
    EXPECT_EQ(qwen->ropes[0].theta, 1e6);
}

TEST(ModelConfigKeys, EachFamilysTraitsComeFromItsRow) {
    auto gemma2 = parse(configOf("gemma2_softcap"));
    ASSERT_TRUE(gemma2.ok()) << gemma2.error();
    EXPECT_EQ(gemma2->attentionSoftcap, 50.0);
    EXPECT_EQ(gemma2->finalSoftcap, 30.0);
    EXPECT_EQ(gemma2->layerAttention[0].window, 6); // sliding, full, as layer_types says
    EXPECT_EQ(gemma2->layerAttention[1].window, -1);
    EXPECT_FALSE(gemma2->uniformWindow().has_value());
    EXPECT_DOUBLE_EQ(*gemma2->attentionScale, 0.25); // query_pre_attn_scalar 16

    auto gemma3 = parse(configOf("gemma3_text"));
    ASSERT_TRUE(gemma3.ok()) << gemma3.error();
    ASSERT_EQ(gemma3->ropes.size(), 2u); // full_attention and sliding_attention
    EXPECT_EQ(gemma3->ropes[0].theta, 1e6);
    EXPECT_EQ(gemma3->ropes[1].theta, 1e4);
    EXPECT_EQ(gemma3->layerAttention[0].rope, 1); // a sliding layer reads the local set

    auto neox = parse(configOf("gpt_neox_pythia"));
    ASSERT_TRUE(neox.ok());
    EXPECT_EQ(neox->ropes[0].dim, neox->headDim / 4); // partial_rotary_factor 0.25
    EXPECT_EQ(neox->residual, Residual::ParallelTwoNorms);

    auto smol = parse(configOf("smollm3_nope"));
    ASSERT_TRUE(smol.ok());
    EXPECT_EQ(smol->layerAttention[0].rope, 0);
    EXPECT_EQ(smol->layerAttention[1].rope, -1); // no_rope_layers [1, 0]: layer 1 has no RoPE

    auto granite = parse(configOf("granite"));
    ASSERT_TRUE(granite.ok());
    EXPECT_EQ(granite->embeddingScale, 4.0);
    EXPECT_EQ(*granite->attentionScale, 0.2);
    EXPECT_EQ(granite->residualScale, 0.5);
    EXPECT_EQ(granite->logitScale, 0.5);
}

TEST(ModelConfigKeys, GemmaTwoWithoutLayerTypesAlternatesFromTheFirstLayer) {
    Json config = configOf("gemma2_softcap");
    config.erase("layer_types");
    config.erase("attn_logit_softcapping"); // the family's defaults: 50 and 30
    config.erase("final_logit_softcapping");
    auto c = parse(config);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->layerAttention[0].window, 6);
    EXPECT_EQ(c->layerAttention[1].window, -1);
    EXPECT_EQ(c->attentionSoftcap, 50.0);
    EXPECT_EQ(c->finalSoftcap, 30.0);
}

TEST(ModelConfigKeys, LongRopeSwitchesFactorsPastThePretrainedLength) {
    Json config = configOf("phi3");
    const Index half = 4; // head_dim 8
    config["max_position_embeddings"] = 128;
    config["original_max_position_embeddings"] = 32;
    config["rope_parameters"] = {{"rope_type", "longrope"},
                                 {"rope_theta", 10000.0},
                                 {"short_factor", Json::array({1.0, 1.0, 2.0, 2.0})},
                                 {"long_factor", Json::array({1.0, 2.0, 4.0, 8.0})}};
    auto c = parse(config);
    ASSERT_TRUE(c.ok()) << c.error();
    const Rope& rope = c->ropes[0];
    ASSERT_EQ(static_cast<Index>(rope.inverseFrequencies.size()), half);
    EXPECT_EQ(rope.longAbove, 32);
    EXPECT_EQ(&rope.frequenciesFor(32), &rope.inverseFrequencies);
    EXPECT_EQ(&rope.frequenciesFor(33), &rope.longInverseFrequencies);
    EXPECT_NEAR(rope.longInverseFrequencies[3] * 8, rope.inverseFrequencies[3] * 2, 1e-7);
    // sqrt(1 + ln(128 / 32) / ln 32)
    EXPECT_NEAR(rope.attentionFactor, std::sqrt(1 + std::log(4.0) / std::log(32.0)), 1e-12);
    // A factor list of the wrong length is refused.
    config["rope_parameters"]["long_factor"] = Json::array({1.0});
    EXPECT_FALSE(parse(config).ok());
}

TEST(LoadModel, AMissingTensorOfTheFamilyIsRefusedNamingIt) {
    test::TempDir dir;
    const fs::path source = hfDir() / "gemma2_softcap";
    fs::copy_file(source / "config.json", dir.path() / "config.json");
    // The checkpoint without layer 1's post_feedforward_layernorm.
    const auto tensors = test::splitImage(readText(source / "model.safetensors"));
    std::vector<test::RawTensor> kept;
    for (const auto& tensor : tensors)
        if (tensor.name != "model.layers.1.post_feedforward_layernorm.weight")
            kept.push_back(tensor);
    ASSERT_EQ(kept.size() + 1, tensors.size());
    test::writeBytes((dir.path() / "model.safetensors").string(), test::safetensorsImage(kept));
    auto model = loadModel(dir.path().string());
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.error().find("model.layers.1.post_feedforward_layernorm.weight"),
              std::string::npos)
        << model.error();
}

} // namespace
} // namespace attnlab::model

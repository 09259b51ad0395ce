// Vision transformers: the `vit` row of the table (ViTForImageClassification) against an
// independent float64 forward written in plain torch from transformers' modeling_vit.py
// (scripts/make_vision_fixtures.py: torch's own conv2d for the patches; fixtures/vit). A
// checkpoint saved by transformers itself joins fixtures/hf/ where a machine with transformers
// is at hand (the table's test says which rows still wait for one).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "attnlab/io/npy.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/image_attention.h"
#include "attnlab/model/image_processor.h"
#include "attnlab/model/model.h"
#include "checkpoint_builder.h"
#include "reference_npz.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using test::fixtureDir;
using test::worstDifference;

struct VisionReference {
    NpyArray pixels, attentions, logits;
};

VisionReference readVisionReference() {
    auto arrays = readNpz(fixtureDir("vit") + "/expected.npz");
    if (!arrays.ok()) throw std::runtime_error(arrays.error());
    return {arrays->at("pixel_values"), arrays->at("attentions"), arrays->at("logits")};
}

TEST(Vision, ViTGivesTheReferencesAttentionsAndClasses) {
    auto model = loadModel(fixtureDir("vit"));
    ASSERT_TRUE(model.ok()) << model.error();
    const ModelConfig& c = model->config;
    EXPECT_TRUE(c.vision());
    EXPECT_EQ(c.patchGrid(), 4);
    EXPECT_EQ(c.maxPositions, 17);
    EXPECT_EQ(c.labels, (std::vector<std::string>{"circle", "square", "triangle"}));

    const VisionReference reference = readVisionReference();
    ASSERT_EQ(reference.pixels.shape, (std::vector<Index>{3, 32, 32}));
    for (const int threads : {1, 2}) {
        RunOptions options;
        options.threads = threads;
        auto run =
            runImage(*model, {reference.pixels.data.data(), reference.pixels.data.size()}, options);
        ASSERT_TRUE(run.ok()) << run.error();
        EXPECT_EQ(run->ids.size(), 17u); // the class token, then 16 patches
        EXPECT_LT(worstDifference(attentionRecord(*model, *run), reference.attentions), 1e-5)
            << threads << " threads";
        ASSERT_EQ(run->logits.rows(), 1);
        ASSERT_EQ(run->logits.cols(), 3);
        for (Index label = 0; label < 3; ++label)
            EXPECT_NEAR(run->logits(0, label), reference.logits.data[label], 1e-5) << label;
    }
}

// DeiT (modeling_deit.py): the distillation token after the class token; with its teacher's
// head the logits are the mean of both tokens' classifiers, without it the class token's alone.
TEST(Vision, DeiTGivesTheReferencesAttentionsAndClassesWithAndWithoutItsTeachersHead) {
    for (const char* name : {"deit", "deit_plain"}) {
        SCOPED_TRACE(name);
        auto model = loadModel(fixtureDir(name));
        ASSERT_TRUE(model.ok()) << model.error();
        const ModelConfig& c = model->config;
        EXPECT_EQ(c.arch().displayName, "DeiT");
        EXPECT_EQ(c.leadingTokens, 2);
        EXPECT_EQ(c.maxPositions, 18);
        EXPECT_EQ(model->distillationHead.weight.empty(), std::string(name) == "deit_plain");
        auto arrays = readNpz(fixtureDir(name) + "/expected.npz");
        ASSERT_TRUE(arrays.ok()) << arrays.error();
        const NpyArray& pixels = arrays->at("pixel_values");
        for (const int threads : {1, 2}) {
            RunOptions options;
            options.threads = threads;
            auto run = runImage(*model, {pixels.data.data(), pixels.data.size()}, options);
            ASSERT_TRUE(run.ok()) << run.error();
            EXPECT_EQ(run->ids.size(), 18u); // [CLS], [DIST], then 16 patches
            EXPECT_LT(worstDifference(attentionRecord(*model, *run), arrays->at("attentions")),
                      1e-5)
                << threads << " threads";
            for (Index label = 0; label < 3; ++label)
                EXPECT_NEAR(run->logits(0, label), arrays->at("logits").data[label], 1e-5) << label;
        }
        const std::vector<std::string> names = imageTokenNames(c);
        ASSERT_EQ(names.size(), 18u);
        EXPECT_EQ(names[0], "[CLS]");
        EXPECT_EQ(names[1], "[DIST]");
        EXPECT_EQ(names[2], "r0c0");
        EXPECT_EQ(tokenOfPatch(c, 1, 2), 8);
        EXPECT_EQ(patchOfToken(c, 1).row, -1); // the distillation token is no patch
        EXPECT_EQ(patchOfToken(c, 8).column, 2);
    }
}

TEST(Vision, AnImageOfAnotherSizeOrTokensAreRefused) {
    auto model = loadModel(fixtureDir("vit"));
    ASSERT_TRUE(model.ok()) << model.error();
    const std::vector<float> small(3 * 16 * 16, 0.0f);
    auto wrong = runImage(*model, small);
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().find("reads 3 x 32 x 32 pixel values; the image has 768"),
              std::string::npos)
        << wrong.error();
    const std::vector<std::int64_t> ids = {0, 1, 2};
    auto tokens = runModel(*model, ids);
    ASSERT_FALSE(tokens.ok());
    EXPECT_NE(tokens.error().find("it reads an image, not tokens"), std::string::npos)
        << tokens.error();
}

TEST(Vision, AConfigItDoesNotUnderstandIsRefusedNamingTheKey) {
    const std::string base = R"({"model_type": "vit", "hidden_size": 16, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 32, "image_size": 32, "patch_size": 8,
        "id2label": {"0": "a", "1": "b"})";
    EXPECT_TRUE(parseConfig(base + "}", "config.json").ok());
    const std::vector<std::pair<std::string, std::string>> refused = {
        {R"(, "interpolate_pos_encoding_mode": "x"})", "interpolate_pos_encoding_mode"},
        {R"(, "num_labels": 3})", "'num_labels' 3 but 'id2label' names 2"},
        {R"(, "is_decoder": true})", "is_decoder"},
    };
    for (const auto& [extra, named] : refused) {
        auto config = parseConfig(base + extra, "config.json");
        ASSERT_FALSE(config.ok()) << extra;
        EXPECT_NE(config.error().find(named), std::string::npos) << config.error();
    }
    auto uneven = parseConfig(R"({"model_type": "vit", "hidden_size": 16, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 32, "image_size": 30, "patch_size": 8,
        "id2label": {"0": "a"}})",
                              "config.json");
    ASSERT_FALSE(uneven.ok());
    EXPECT_NE(uneven.error().find("image_size 30 is not a multiple of patch_size 8"),
              std::string::npos)
        << uneven.error();
    auto gap = parseConfig(R"({"model_type": "vit", "hidden_size": 16, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 32, "image_size": 32, "patch_size": 8,
        "id2label": {"0": "a", "2": "c"}})",
                           "config.json");
    ASSERT_FALSE(gap.ok());
    EXPECT_NE(gap.error().find("'id2label' must map the ids 0 to 1"), std::string::npos)
        << gap.error();
}

/// Runs `name`'s expected.npz pixels through the model at 1 and 2 threads and compares its
/// attentions and, as the fixture holds them, logits or the image embedding (within 1e-5).
void expectTheReferencesRun(const Model& model, const std::string& name) {
    auto arrays = readNpz(fixtureDir(name) + "/expected.npz");
    ASSERT_TRUE(arrays.ok()) << arrays.error();
    const NpyArray& pixels = arrays->at("pixel_values");
    for (const int threads : {1, 2}) {
        SCOPED_TRACE(std::to_string(threads) + " threads");
        RunOptions options;
        options.threads = threads;
        auto run = runImage(model, {pixels.data.data(), pixels.data.size()}, options);
        ASSERT_TRUE(run.ok()) << run.error();
        EXPECT_LT(worstDifference(attentionRecord(model, *run), arrays->at("attentions")), 1e-5);
        const bool classes = arrays->count("logits") != 0;
        EXPECT_EQ(model.classifies(), classes);
        const Matrix& out = classes ? run->logits : run->imageEmbedding;
        const NpyArray& expected = arrays->at(classes ? "logits" : "image_embeds");
        ASSERT_EQ(out.rows(), 1);
        ASSERT_EQ(out.cols(), static_cast<Index>(expected.data.size()));
        for (Index i = 0; i < out.cols(); ++i)
            EXPECT_NEAR(out(0, i), expected.data[static_cast<std::size_t>(i)], 1e-5) << i;
        EXPECT_EQ(classes ? run->imageEmbedding.size() : run->logits.size(), 0);
    }
}

// DINOv2 (modeling_dinov2.py): the layer scale, the classifier on [CLS, patch mean], and the
// positions' grid (config.json's image_size) interpolated by torch's antialiased bicubic to the
// grid of the image its processor makes: down (5 -> 4 with the classifier) and up (3 -> 4, a
// bare Dinov2Model, whose output is the class token's final state).
TEST(Vision, DinoV2GivesTheReferencesWithItsPositionsInterpolatedDownAndUp) {
    for (const auto& [name, table] : {std::pair{"dinov2", 5}, std::pair{"dinov2_base", 3}}) {
        SCOPED_TRACE(name);
        auto model = loadModel(fixtureDir(name));
        ASSERT_TRUE(model.ok()) << model.error();
        const ModelConfig& c = model->config;
        EXPECT_EQ(c.arch().displayName, "DINOv2");
        EXPECT_EQ(c.positionGrid, table);
        EXPECT_EQ(c.imageSize, 32); // the processor's crop, not image_size
        EXPECT_EQ(c.patchGrid(), 4);
        EXPECT_EQ(c.maxPositions, 17);
        EXPECT_EQ(c.intermediate, 64); // hidden_size x mlp_ratio
        EXPECT_TRUE(readModelImageProcessor(fixtureDir(name), c).ok());
        expectTheReferencesRun(*model, name);
    }
    auto base = loadModel(fixtureDir("dinov2_base"));
    ASSERT_TRUE(base.ok()) << base.error();
    EXPECT_TRUE(base->config.labels.empty());
    EXPECT_EQ(base->config.vocab, 0);
}

// CLIP's image tower (modeling_clip.py): alone with its projection (clip_vision_model), and as
// the image half of CLIPModel (clip: an old full config, nested, the text tower beside).
TEST(Vision, ClipsImageTowerGivesTheReferencesImageEmbedding) {
    for (const auto& [name, projection] : {std::pair{"clip_vision", 8}, std::pair{"clip", 6}}) {
        SCOPED_TRACE(name);
        auto model = loadModel(fixtureDir(name));
        ASSERT_TRUE(model.ok()) << model.error();
        const ModelConfig& c = model->config;
        EXPECT_EQ(c.activation, Activation::QuickGelu);
        EXPECT_EQ(c.projectionDim, projection);
        EXPECT_TRUE(c.labels.empty()); // the nested config's LABEL_0/1 name no classifier
        EXPECT_TRUE(model->patchEmbedding.bias.empty());
        EXPECT_TRUE(readModelImageProcessor(fixtureDir(name), c).ok());
        expectTheReferencesRun(*model, name);
    }
}

// The part of the opened image a processor keeps, in the image's pixels, worked by hand from
// transformers' arithmetic: a 90 x 40 image to the shortest edge 32 is 72 x 32, cropped from
// (72 - 32) // 2 = 20, so x = 20 * 90 / 72 = 25 and width 32 * 90 / 72 = 40; DeiT's fixed 40 x 40
// resize of 45 x 37 crops 32 from 4: x = 4.5, y = 3.7, 36 x 29.6; a crop larger than the resized
// image starts before it (29 -> crop 32: from -2, ceil(3 / 2)).
TEST(Vision, TheRegionAProcessorKeepsIsTheCropScaledBackToTheImage) {
    const auto processor = [](const char* name) {
        auto p = readImageProcessor(fixtureDir("vit") + "/preprocessor_" + name + ".json");
        if (!p) throw std::runtime_error(p.error());
        return *p;
    };
    const auto expectRegion = [](const ImageRegion& r, double x, double y, double w, double h) {
        EXPECT_NEAR(r.x, x, 1e-12);
        EXPECT_NEAR(r.y, y, 1e-12);
        EXPECT_NEAR(r.width, w, 1e-12);
        EXPECT_NEAR(r.height, h, 1e-12);
    };
    expectRegion(processedRegion(processor("clip"), 90, 40), 25, 0, 40, 40);
    expectRegion(processedRegion(processor("clip"), 40, 90), 0, 25, 40, 40);
    expectRegion(processedRegion(processor("deit"), 45, 37), 4.5, 3.7, 36, 29.6);
    expectRegion(processedRegion(processor("pad"), 29, 29), -2, -2, 32, 32);
    auto plain = readImageProcessor(fixtureDir("vit") + "/preprocessor_config.json");
    ASSERT_TRUE(plain.ok()) << plain.error();
    expectRegion(processedRegion(*plain, 45, 37), 0, 0, 45, 37); // resized whole, no crop
}

TEST(Vision, ADinoV2OrClipConfigItCannotFollowIsRefusedNamingTheKey) {
    const std::string dinov2 = R"({"model_type": "dinov2", "hidden_size": 16,
        "num_hidden_layers": 1, "num_attention_heads": 2, "image_size": 518, "patch_size": 14)";
    auto plain = parseConfig(dinov2 + "}", "config.json");
    ASSERT_TRUE(plain.ok()) << plain.error();
    EXPECT_EQ(plain->intermediate, 64);
    EXPECT_EQ(plain->positionGrid, 37);
    const std::string clip = R"({"model_type": "clip", "projection_dim": 4, "vision_config":
        {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
         "num_attention_heads": 2, "image_size": 32, "patch_size": 8)";
    auto nested = parseConfig(clip + "}}", "config.json");
    ASSERT_TRUE(nested.ok()) << nested.error();
    EXPECT_EQ(nested->projectionDim, 4);
    const std::vector<std::pair<std::string, std::string>> refused = {
        {dinov2 + R"(, "use_swiglu_ffn": true})", "use_swiglu_ffn"},
        {dinov2 + R"(, "mlp_ratio": 0})", "mlp_ratio"},
        {dinov2 + R"(, "layerscale": 1})", "'layerscale'"},
        {clip + R"(, "model_type": "siglip_vision_model"}})", "siglip_vision_model"},
        {clip + R"(, "hidden_act": "gelu_fancy"}})", "vision_config: activation 'gelu_fancy'"},
        {clip + R"(}, "vision_config_dict": {"hidden_size": 32}})", "disagree on 'hidden_size'"},
        {clip + R"(}, "logit_bias": 1})", "'logit_bias'"},
        {R"({"model_type": "clip", "text_config": {}})", "missing 'vision_config'"},
    };
    for (const auto& [text, named] : refused) {
        auto config = parseConfig(text, "config.json");
        ASSERT_FALSE(config.ok()) << text;
        EXPECT_NE(config.error().find(named), std::string::npos) << config.error();
    }
}

/// An image stored as float32 0..255 [H, W, 3], as bytes.
std::vector<std::uint8_t> bytesOf(const NpyArray& image) {
    std::vector<std::uint8_t> bytes;
    for (const float v : image.data)
        bytes.push_back(static_cast<std::uint8_t>(v));
    return bytes;
}

/// How many of `pixels` differ from `expected` in any bit; every one when the processor failed
/// or made another count.
std::size_t differingValues(const Result<std::vector<float>>& pixels, const NpyArray& expected) {
    if (!pixels.ok() || pixels->size() != expected.data.size()) {
        ADD_FAILURE() << (pixels.ok() ? "another count of values" : pixels.error());
        return expected.data.size();
    }
    std::size_t differ = 0;
    for (std::size_t i = 0; i < pixels->size(); ++i)
        differ += (*pixels)[i] != expected.data[i];
    return differ;
}

TEST(Vision, ThePreprocessorGivesWhatPillowAndNumpyGive) {
    auto processor = readImageProcessor(fixtureDir("vit") + "/preprocessor_config.json");
    ASSERT_TRUE(processor.ok()) << processor.error();
    auto arrays = readNpz(fixtureDir("vit") + "/processed.npz");
    ASSERT_TRUE(arrays.ok()) << arrays.error();
    for (const std::string image : {"down", "up"}) {
        const NpyArray& source = arrays->at("image_" + image);
        const std::vector<std::uint8_t> rgb = bytesOf(source);
        for (const auto& [filter, resample] :
             {std::pair{"bilinear", Resample::Bilinear}, std::pair{"bicubic", Resample::Bicubic}}) {
            ImageProcessor p = *processor;
            p.resample = resample;
            // Pillow's 8-bit resampling and numpy's float32 arithmetic, reproduced: the same bits.
            EXPECT_EQ(differingValues(processImage(rgb, source.shape[1], source.shape[0], p),
                                      arrays->at(image + "_" + filter)),
                      0u)
                << image << " " << filter;
        }
    }
    // DeiT's processor (resize 40 x 40 bicubic, centre crop 32), CLIP's (shortest edge 32, crop
    // 32) and BiT's with a crop larger than the resize (the image in zeros): the same bits as
    // Pillow and numpy, for an image wider than tall and one taller than wide.
    for (const std::string kind : {"deit", "clip", "pad"}) {
        auto other = readImageProcessor(fixtureDir("vit") + "/preprocessor_" + kind + ".json");
        ASSERT_TRUE(other.ok()) << other.error();
        EXPECT_EQ(other->outputSize(), (std::pair<Index, Index>{32, 32}));
        for (const std::string image : {"down", "up"}) {
            const NpyArray& source = arrays->at("image_" + image);
            EXPECT_EQ(differingValues(
                          processImage(bytesOf(source), source.shape[1], source.shape[0], *other),
                          arrays->at(image + "_" + kind)),
                      0u)
                << image << " " << kind;
        }
    }
    // An image of the model's size is not resampled: each value is (v / 255 - 0.5) / 0.5.
    const std::vector<std::uint8_t> flat(32 * 32 * 3, 255);
    auto same = processImage(flat, 32, 32, *processor);
    ASSERT_TRUE(same.ok()) << same.error();
    EXPECT_EQ((*same)[0], 1.0f);
}

TEST(Vision, APreprocessorOrImageItCannotFollowIsRefused) {
    for (const auto& [text, named] : std::vector<std::pair<std::string, std::string>>{
             {R"({"do_pad": true})", "'do_pad' is a key AttnLab does not follow"},
             {R"({"resample": 0})", "'resample' 0 is not one AttnLab follows"},
             {R"({"size": {"longest_edge": 224}})", "'size' must be"},
             {R"({"crop_size": {"height": 0, "width": 4}})", "'crop_size.height' must be"},
             {R"({"image_processor_type": "CLIPImageProcessor",
                 "feature_extractor_type": "ViTFeatureExtractor"})",
              "name different processors"},
             {R"({"image_std": [0.5, 0, 0.5]})", "'image_std' must not be 0"},
             {R"({"image_processor_type": "SiglipImageProcessor"})", "SiglipImageProcessor"},
             {R"([1, 2])", "not a JSON object"}}) {
        auto parsed = parseImageProcessor(text, "preprocessor_config.json");
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_NE(parsed.error().find(named), std::string::npos) << parsed.error();
    }
    const ImageProcessor p;
    EXPECT_FALSE(processImage({}, 0, 0, p).ok());
    EXPECT_NE(processImage({}, 20000, 20000, p).error().find("1 to 16384 pixels a side"),
              std::string::npos);
    const std::vector<std::uint8_t> short3(10, 0);
    EXPECT_FALSE(processImage(short3, 2, 2, p).ok());
}

// What a config leaves out is its class's default, as transformers' classes have them; an
// old config's single number is a square for ViT and DeiT, the shortest edge for CLIP.
TEST(Vision, EachProcessorClassKeepsItsOwnDefaults) {
    auto clip = parseImageProcessor(R"({"image_processor_type": "CLIPImageProcessor"})", "p");
    ASSERT_TRUE(clip.ok()) << clip.error();
    EXPECT_EQ(clip->shortestEdge, 224);
    EXPECT_TRUE(clip->centerCrop);
    EXPECT_EQ(clip->resample, Resample::Bicubic);
    EXPECT_EQ(clip->mean[0], 0.48145466);
    auto deit = parseImageProcessor(R"({"image_processor_type": "DeiTImageProcessorFast"})", "p");
    ASSERT_TRUE(deit.ok()) << deit.error();
    EXPECT_EQ(deit->height, 256);
    EXPECT_EQ(deit->outputSize(), (std::pair<Index, Index>{224, 224}));
    EXPECT_EQ(deit->std[2], 0.225);
    auto vit = parseImageProcessor(R"({"size": 64, "crop_size": 48})", "p");
    ASSERT_TRUE(vit.ok()) << vit.error();
    EXPECT_EQ(vit->height, 64);
    EXPECT_EQ(vit->width, 64);
    EXPECT_FALSE(vit->centerCrop);
    EXPECT_EQ(vit->outputSize(), (std::pair<Index, Index>{64, 64}));
    auto old = parseImageProcessor(
        R"({"feature_extractor_type": "CLIPFeatureExtractor", "size": 32, "do_center_crop": false})",
        "p");
    ASSERT_TRUE(old.ok()) << old.error();
    EXPECT_EQ(old->shortestEdge, 32);
    // Without a crop a shortest-edge resize makes images of each image's own shape.
    EXPECT_EQ(old->outputSize(), (std::pair<Index, Index>{0, 0}));
    const std::vector<std::uint8_t> wide(64 * 2 * 3, 9);
    auto pixels = processImage(wide, 64, 2, *old);
    ASSERT_TRUE(pixels.ok()) << pixels.error();
    EXPECT_EQ(pixels->size(), 3u * 32 * 1024); // 2 -> 32 rows, 64 -> 1024 columns
    // A sliver whose longer side would pass the limit is refused before anything is made.
    const std::vector<std::uint8_t> sliver(16000 * 1 * 3, 9);
    EXPECT_NE(processImage(sliver, 16000, 1, *old).error().find("makes the longer over"),
              std::string::npos);
}

// Rollout against numpy's (processed.npz: image_rollout, from the float64 torch forward's
// attentions on image.png), and its defining properties: rows sum to 1, one layer is that
// layer's heads averaged with the identity, halved.
TEST(Vision, RolloutIsNumpysRolloutOfTheReferenceAttentions) {
    auto model = loadModel(fixtureDir("vit"));
    ASSERT_TRUE(model.ok()) << model.error();
    auto arrays = readNpz(fixtureDir("vit") + "/processed.npz");
    ASSERT_TRUE(arrays.ok()) << arrays.error();
    const NpyArray& pixels = arrays->at("down_bilinear");
    const NpyArray& rollout = arrays->at("image_rollout");
    auto run = runImage(*model, {pixels.data.data(), pixels.data.size()});
    ASSERT_TRUE(run.ok()) << run.error();
    const Matrix got = attentionRollout(*model, *run);
    ASSERT_EQ(got.rows(), 17);
    ASSERT_EQ(got.cols(), 17);
    double worst = 0;
    for (Index i = 0; i < 17; ++i) {
        EXPECT_NEAR(got.row(i).sum(), 1.0, 1e-6) << i;
        for (Index j = 0; j < 17; ++j)
            worst = std::max(worst, std::abs(double(got(i, j)) -
                                             rollout.data[static_cast<std::size_t>(i * 17 + j)]));
    }
    EXPECT_LT(worst, 1e-5);
    const Matrix first = attentionRollout(*model, *run, 1);
    const Matrix mean = meanHeadAttention(*model, *run, 0);
    for (Index i = 0; i < 17; ++i)
        for (Index j = 0; j < 17; ++j)
            EXPECT_NEAR(first(i, j), (mean(i, j) + (i == j ? 1.0 : 0.0)) / 2, 1e-6);
    // The heads' mean is the heads' maps averaged.
    const Matrix h0 = attentionMap(*model, *run, 1, 0), h1 = attentionMap(*model, *run, 1, 1);
    EXPECT_LT((meanHeadAttention(*model, *run, 1) - (h0 + h1) / 2).cwiseAbs().maxCoeff(), 1e-7);
}

TEST(Vision, TopLabelsAreTheSoftmaxInOrderAndTokensAreNamedByTheirPatch) {
    ModelConfig config;
    config.imageSize = 24;
    config.patchSize = 8;
    config.leadingTokens = 1;
    config.labels = {"circle", "square", "triangle"};
    Matrix logits(1, 4);
    logits << 1.0f, 3.0f, 1.0f, 0.0f;
    const auto best = topLabels(config, logits, 3);
    ASSERT_EQ(best.size(), 3u);
    const double sum = std::exp(1.0) * 2 + std::exp(3.0) + 1.0;
    EXPECT_EQ(best[0].label, "square");
    EXPECT_NEAR(best[0].probability, std::exp(3.0) / sum, 1e-12);
    // A tie goes to the lower id; a class without a name is LABEL_<id>.
    EXPECT_EQ(best[1].id, 0);
    EXPECT_EQ(best[2].id, 2);
    EXPECT_EQ(topLabels(config, logits, 9).back().label, "LABEL_3");
    const std::vector<std::string> names = imageTokenNames(config);
    EXPECT_EQ(names, (std::vector<std::string>{"[CLS]", "r0c0", "r0c1", "r0c2", "r1c0", "r1c1",
                                               "r1c2", "r2c0", "r2c1", "r2c2"}));
    EXPECT_EQ(tokenOfPatch(config, 2, 1), 8);
    EXPECT_EQ(patchOfToken(config, 8).row, 2);
    EXPECT_EQ(patchOfToken(config, 8).column, 1);
    EXPECT_EQ(patchOfToken(config, 0).row, -1);
    EXPECT_EQ(patchOfToken(config, 10).row, -1);
}

} // namespace
} // namespace attnlab::model

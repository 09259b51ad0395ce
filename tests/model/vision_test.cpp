// Vision transformers: the `vit` row of the table (ViTForImageClassification) against an
// independent float64 forward written in plain torch from transformers' modeling_vit.py
// (scripts/make_vision_fixtures.py: torch's own conv2d for the patches; fixtures/vit). A
// checkpoint saved by transformers itself joins fixtures/hf/ where a machine with transformers
// is at hand (the table's test says which rows still wait for one).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attnlab/io/npy.h"
#include "attnlab/model/attention_maps.h"
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
        {R"(, "tie_word_embeddings": true})", "tie_word_embeddings"},
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

} // namespace
} // namespace attnlab::model

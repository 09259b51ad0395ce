// The bundled image classifier (resources/models/tiny-vit-shapes, trained by
// scripts/train_shapes_vit.py): its held-out accuracy and how much of its class token's
// attention lands on the shape, re-measured here on images this test draws itself — the
// script's generator, byte for byte, from a seed training never used — through AttnLab's own
// image processor, forward, mean-of-heads attention and rollout. The figures are printed, so
// the model's README can be checked against them:
//
//     build/release/tests/attnlab_model_tests --gtest_filter='TinyVitShapes*'

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/model/image_attention.h"
#include "attnlab/model/image_processor.h"
#include "attnlab/model/model.h"

namespace attnlab::model {
namespace {

const std::string kModel = std::string(ATTNLAB_SOURCE_DIR) + "/resources/models/tiny-vit-shapes";

// The generator of scripts/train_shapes_vit.py (its docstring and the model's README define it).
constexpr int kImage = 64;
constexpr int kPatch = 8;
constexpr int kGrid = kImage / kPatch;
const std::array<const char*, 4> kClasses = {"circle", "square", "triangle", "cross"};
constexpr std::array<std::array<int, 3>, 7> kPalette = {{{220, 40, 40},
                                                         {40, 170, 60},
                                                         {40, 90, 220},
                                                         {230, 200, 30},
                                                         {200, 50, 200},
                                                         {30, 190, 210},
                                                         {240, 130, 20}}};

// The script's TEST_SEED and TEST_IMAGES (training drew from seed 1, the README's held-out
// figures from seed 7).
constexpr std::uint32_t kTestSeed = 38;
constexpr int kTestImages = 160;

// What the script measured on these same images (the model's README): accuracy 0.963; the
// class token's attention on the shape's patches, last layer (mean of heads) 0.753, rollout
// 0.613; random baseline 0.152. The floors sit a little under them.
constexpr double kAccuracyFloor = 0.9;
constexpr double kLastLayerFloor = 0.65;
constexpr double kRolloutFloor = 0.5;
// FNV-1a 64 of the images' RGB bytes, one after another, as the script computes it.
constexpr std::uint64_t kTestImagesHash = 0xe3a61779303a01c7ull;

// resources/images/shapes/: the first image of each class in the stream of seed 64 that the
// model names correctly (the script's EXAMPLE_SEED), by index and the FNV-1a 64 of its bytes.
constexpr std::uint32_t kExampleSeed = 64;
struct Example {
    const char* name;
    int index;
    std::uint64_t hash;
};
constexpr std::array<Example, 4> kExamples = {{{"square", 0, 0x35d15bf3f711a27dull},
                                               {"circle", 1, 0x8b73fe54f773462full},
                                               {"cross", 2, 0x98b80956530e8286ull},
                                               {"triangle", 13, 0x6f0e85a9d2b04d67ull}}};

/// One MT19937 stream and the generator's integer arithmetic on it: uniform(lo, hi) =
/// lo + ((u * (hi - lo + 1)) >> 32) for the next 32-bit output u, the same on every standard
/// library (no std:: distribution).
class ShapeStream {
public:
    explicit ShapeStream(std::uint32_t seed) : m_mt(seed) {}
    int uniform(int lo, int hi) {
        const std::uint64_t u = static_cast<std::uint32_t>(m_mt());
        return lo + static_cast<int>((u * static_cast<std::uint64_t>(hi - lo + 1)) >> 32);
    }

private:
    std::mt19937 m_mt;
};

struct ShapeImage {
    std::vector<std::uint8_t> rgb; ///< 64 x 64 x 3, rows top first, interleaved R, G, B
    int label = 0;
    std::vector<bool> mask; ///< 64 x 64: the shape's pixels
};

bool insideShape(int label, int s, int px, int py) {
    if (px <= 0 || px >= 2 * s || py <= 0 || py >= 2 * s) return false;
    switch (label) {
    case 0:
        return (px - s) * (px - s) + (py - s) * (py - s) <= s * s;
    case 1:
        return true;
    case 2:
        return 2 * std::abs(px - s) <= py;
    default: {
        const int t = (s + 1) / 3;
        return std::abs(px - s) < t || std::abs(py - s) < t;
    }
    }
}

ShapeImage drawShape(ShapeStream& stream) {
    ShapeImage image;
    image.label = stream.uniform(0, 3);
    const int s = stream.uniform(12, 28);
    const int x0 = stream.uniform(0, kImage - s);
    const int y0 = stream.uniform(0, kImage - s);
    const auto& colour = kPalette[static_cast<std::size_t>(stream.uniform(0, 6))];
    const int grey = stream.uniform(64, 192);
    std::array<int, 3> background{};
    for (int& b : background)
        b = grey + stream.uniform(-16, 16);
    image.rgb.resize(std::size_t{kImage} * kImage * 3);
    image.mask.resize(std::size_t{kImage} * kImage);
    std::size_t at = 0;
    for (int y = 0; y < kImage; ++y)
        for (int x = 0; x < kImage; ++x) {
            const bool on = insideShape(image.label, s, 2 * (x - x0) + 1, 2 * (y - y0) + 1);
            image.mask[static_cast<std::size_t>(y * kImage + x)] = on;
            for (std::size_t c = 0; c < 3; ++c) {
                const int value = (on ? colour[c] : background[c]) + stream.uniform(-24, 24);
                image.rgb[at++] = static_cast<std::uint8_t>(std::clamp(value, 0, 255));
            }
        }
    return image;
}

/// The patches (row by row) holding any of the shape's pixels.
std::vector<bool> patchesOnShape(const ShapeImage& image) {
    std::vector<bool> on(std::size_t{kGrid} * kGrid, false);
    for (int y = 0; y < kImage; ++y)
        for (int x = 0; x < kImage; ++x)
            if (image.mask[static_cast<std::size_t>(y * kImage + x)])
                on[static_cast<std::size_t>((y / kPatch) * kGrid + x / kPatch)] = true;
    return on;
}

std::uint64_t fnv1a64(const std::vector<std::uint8_t>& bytes,
                      std::uint64_t hash = 0xcbf29ce484222325ull) {
    for (const std::uint8_t b : bytes)
        hash = (hash ^ b) * 0x100000001b3ull;
    return hash;
}

/// Of the class token's weight on the 64 patches (row 0 of `map`, its own column left out),
/// the share on the shape's patches.
double shareOnShape(const ModelConfig& config, const Matrix& map, const std::vector<bool>& on) {
    double onShape = 0, all = 0;
    for (Index row = 0; row < kGrid; ++row)
        for (Index column = 0; column < kGrid; ++column) {
            const double w = map(0, tokenOfPatch(config, row, column));
            all += w;
            if (on[static_cast<std::size_t>(row * kGrid + column)]) onShape += w;
        }
    return onShape / all;
}

class TinyVitShapes : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        auto model = loadModel(kModel);
        ASSERT_TRUE(model.ok()) << model.error();
        s_model = new Model(std::move(*model));
        auto processor = readImageProcessor(kModel + "/preprocessor_config.json");
        ASSERT_TRUE(processor.ok()) << processor.error();
        s_processor = new ImageProcessor(*processor);
    }
    static void TearDownTestSuite() {
        delete s_model;
        delete s_processor;
        s_model = nullptr;
        s_processor = nullptr;
    }

    void SetUp() override {
        ASSERT_NE(s_model, nullptr);
        ASSERT_NE(s_processor, nullptr);
    }

    static ModelRun run(const ShapeImage& image) {
        auto pixels = processImage(image.rgb, kImage, kImage, *s_processor);
        if (!pixels.ok()) throw std::runtime_error(pixels.error());
        RunOptions options;
        options.threads = 1;
        auto result = runImage(*s_model, *pixels, options);
        if (!result.ok()) throw std::runtime_error(result.error());
        return std::move(*result);
    }
    static Index predicted(const ModelRun& run) {
        return topLabels(s_model->config, run.logits, 1).at(0).id;
    }

    static Model* s_model;
    static ImageProcessor* s_processor;
};

Model* TinyVitShapes::s_model = nullptr;
ImageProcessor* TinyVitShapes::s_processor = nullptr;

TEST_F(TinyVitShapes, IsTheShapesViT) {
    const ModelConfig& config = s_model->config;
    EXPECT_TRUE(config.vision());
    EXPECT_EQ(config.imageSize, kImage);
    EXPECT_EQ(config.patchGrid(), kGrid);
    EXPECT_EQ(config.labels, (std::vector<std::string>(kClasses.begin(), kClasses.end())));
    EXPECT_EQ(s_processor->height, kImage);
    EXPECT_EQ(s_processor->width, kImage);
}

// Held-out accuracy and attention on the object, measured from scratch.
TEST_F(TinyVitShapes, NamesTheShapeAndItsClassTokenLooksAtIt) {
    const ModelConfig& config = s_model->config;
    const Index last = config.layers - 1;
    ShapeStream stream(kTestSeed);
    int right = 0;
    double lastLayer = 0, rollout = 0, baseline = 0;
    std::uint64_t hash = 0xcbf29ce484222325ull;
    std::array<int, 4> perClass{}, rightPerClass{};
    for (int i = 0; i < kTestImages; ++i) {
        const ShapeImage image = drawShape(stream);
        hash = fnv1a64(image.rgb, hash);
        const ModelRun r = run(image);
        const bool correct = predicted(r) == image.label;
        right += correct;
        ++perClass[static_cast<std::size_t>(image.label)];
        rightPerClass[static_cast<std::size_t>(image.label)] += correct;
        const std::vector<bool> on = patchesOnShape(image);
        lastLayer += shareOnShape(config, meanHeadAttention(*s_model, r, last), on);
        rollout += shareOnShape(config, attentionRollout(*s_model, r), on);
        int count = 0;
        for (const bool b : on)
            count += b;
        baseline += count / double(kGrid * kGrid);
    }
    const double accuracy = right / double(kTestImages);
    lastLayer /= kTestImages;
    rollout /= kTestImages;
    baseline /= kTestImages;

    char line[400];
    std::snprintf(line, sizeof line,
                  "tiny-vit-shapes on %d images of seed %u: accuracy %.3f; class token's "
                  "attention on the shape: last layer, mean of heads %.3f, rollout %.3f; "
                  "random baseline %.3f; images' FNV-1a 64 0x%016llx",
                  kTestImages, unsigned(kTestSeed), accuracy, lastLayer, rollout, baseline,
                  static_cast<unsigned long long>(hash));
    std::cout << line << "\n";
    for (std::size_t c = 0; c < kClasses.size(); ++c)
        std::cout << "  " << kClasses[c] << ": " << rightPerClass[c] << " / " << perClass[c]
                  << "\n";
    RecordProperty("accuracy", std::to_string(accuracy));
    RecordProperty("last_layer_on_shape", std::to_string(lastLayer));
    RecordProperty("rollout_on_shape", std::to_string(rollout));
    RecordProperty("baseline", std::to_string(baseline));

    // The images are the script's, byte for byte (its README's figures are of these images).
    EXPECT_EQ(hash, kTestImagesHash);
    EXPECT_GE(accuracy, kAccuracyFloor);
    EXPECT_GE(lastLayer, kLastLayerFloor);
    EXPECT_GE(rollout, kRolloutFloor);
    // Well above what attending evenly to every patch would give.
    EXPECT_GE(lastLayer, 2 * baseline);
    EXPECT_GE(rollout, 1.5 * baseline);
}

// resources/images/shapes/: each example image is the generator's image the README names (the
// script wrote the PNG from those bytes and read it back equal; the model tests read no PNG),
// its class is its file's name, and the model names it so.
TEST_F(TinyVitShapes, NamesTheBundledExampleImages) {
    ShapeStream stream(kExampleSeed);
    int index = 0;
    for (const Example& example : kExamples) {
        ShapeImage image;
        while (index <= example.index) {
            image = drawShape(stream);
            ++index;
        }
        EXPECT_EQ(fnv1a64(image.rgb), example.hash) << example.name;
        EXPECT_STREQ(kClasses[static_cast<std::size_t>(image.label)], example.name);
        EXPECT_STREQ(kClasses[static_cast<std::size_t>(predicted(run(image)))], example.name);
    }
}

} // namespace
} // namespace attnlab::model

// An image classifier in the window (ui/state/model_document.h, ui/views/image_attention_view.h)
// on the tiny ViT fixture (tests/model/fixtures/vit, scripts/make_vision_fixtures.py): its image
// opened from a PNG runs the model, and the image view draws the attention a float64 torch
// forward computed on Pillow's pixels of the same PNG (processed.npz: image_attentions), the
// rollout numpy computed from them (image_rollout), and its classes. A click on a patch shows
// where that patch looks; a bad file changes nothing; undo puts the previous image back; the
// views that read text say why they do not apply.

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <cmath>

#include "attnlab/io/npy.h"
#include "ui/state/document.h"
#include "ui/state/dump_document.h"
#include "ui/state/image_file.h"
#include "ui/state/model_document.h"
#include "ui/views/image_attention_view.h"
#include "ui/views/view_registry.h"

namespace attnlab::ui {
namespace {

const QString kVit = QStringLiteral(ATTNLAB_SOURCE_DIR "/tests/model/fixtures/vit");

struct Reference {
    NpyArray attentions; ///< [L, H, T, T]
    NpyArray rollout;    ///< [T, T] through every layer
    NpyArray logits;     ///< [labels]
    Index layers = 0, heads = 0, tokens = 0;
    double attention(Index l, Index h, Index q, Index k) const {
        return attentions
            .data[static_cast<std::size_t>(((l * heads + h) * tokens + q) * tokens + k)];
    }
};

Reference readReference() {
    auto arrays = readNpz((kVit + QStringLiteral("/processed.npz")).toStdString());
    if (!arrays.ok()) throw std::runtime_error(arrays.error());
    Reference r{arrays->at("image_attentions"), arrays->at("image_rollout"),
                arrays->at("image_logits")};
    r.layers = r.attentions.shape[0];
    r.heads = r.attentions.shape[1];
    r.tokens = r.attentions.shape[2];
    return r;
}

struct ImageFixture {
    Document document;
    ModelDocument* models = ModelDocument::of(&document);
    ImageAttentionView view{&document};
    ImageFixture() {
        view.resize(900, 600);
        EXPECT_TRUE(models->openModelNow(kVit));
    }
    void settle() {
        EXPECT_TRUE(models->waitForIdle());
        QCoreApplication::processEvents();
        view.ensureFresh();
    }
};

TEST(ImageView, OpensAnImageAndDrawsTheReferencesAttention) {
    ImageFixture f;
    const Reference reference = readReference();
    ASSERT_TRUE(f.models->readsImages());
    // Before an image: the view says how to open one, and nothing runs.
    f.settle();
    EXPECT_TRUE(f.view.notApplicable().isEmpty());
    EXPECT_TRUE(f.view.placeholderText().contains(QStringLiteral("Open Image")))
        << f.view.placeholderText().toStdString();
    EXPECT_EQ(f.models->run(), nullptr);

    ASSERT_TRUE(f.models->openImage(kVit + QStringLiteral("/image.png")));
    f.settle();
    ASSERT_NE(f.models->run(), nullptr);
    ASSERT_TRUE(f.models->active());
    // The tokens: the class token, then the 4 x 4 patches row by row.
    const std::vector<std::string> labels = f.models->tokenLabels();
    ASSERT_EQ(static_cast<Index>(labels.size()), reference.tokens);
    EXPECT_EQ(labels[0], "[CLS]");
    EXPECT_EQ(labels[1], "r0c0");
    EXPECT_EQ(labels[6], "r1c1");
    // An image classifier opens on its last layer.
    EXPECT_EQ(f.models->layer(), reference.layers - 1);

    // Every head of every layer, through the view, is the reference's class-token row.
    const Index grid = 4;
    for (Index layer = 0; layer < reference.layers; ++layer) {
        for (Index head = 0; head < reference.heads; ++head) {
            f.models->focus(layer, head);
            f.settle();
            const auto& values = f.view.patchValues();
            ASSERT_EQ(static_cast<Index>(values.size()), grid * grid);
            for (Index p = 0; p < grid * grid; ++p)
                EXPECT_NEAR(values[static_cast<std::size_t>(p)],
                            reference.attention(layer, head, 0, 1 + p), 1e-5)
                    << layer << " " << head << " " << p;
        }
        // The mean of the layer's heads.
        f.view.setMode(ImageAttentionView::Mode::MeanOfHeads);
        f.settle();
        for (Index p = 0; p < grid * grid; ++p) {
            double mean = 0;
            for (Index head = 0; head < reference.heads; ++head)
                mean += reference.attention(layer, head, 0, 1 + p) / double(reference.heads);
            EXPECT_NEAR(f.view.patchValues()[static_cast<std::size_t>(p)], mean, 1e-5) << p;
        }
        f.view.setMode(ImageAttentionView::Mode::Head);
    }
    // Rollout through every layer: numpy's from the reference's attentions.
    f.models->setLayer(reference.layers - 1);
    f.view.setMode(ImageAttentionView::Mode::Rollout);
    f.settle();
    for (Index p = 0; p < grid * grid; ++p)
        EXPECT_NEAR(f.view.patchValues()[static_cast<std::size_t>(p)],
                    reference.rollout.data[static_cast<std::size_t>(1 + p)], 1e-5)
            << p;
    // The figure's data: the grid, and the classes with their softmax probabilities.
    const DataTable table = f.view.data();
    EXPECT_EQ(table.rows, 4);
    EXPECT_EQ(table.cols, 4);
    const QVariantList classes = table.extra.value(QStringLiteral("labels")).toList();
    ASSERT_EQ(classes.size(), 3);
    double top = reference.logits.data[0], sum = 0;
    Index best = 0;
    for (Index i = 0; i < 3; ++i)
        if (reference.logits.data[static_cast<std::size_t>(i)] > top)
            top = reference.logits.data[static_cast<std::size_t>(best = i)];
    for (Index i = 0; i < 3; ++i)
        sum += std::exp(reference.logits.data[static_cast<std::size_t>(i)] - top);
    const QVariantMap first = classes.front().toMap();
    EXPECT_EQ(first.value(QStringLiteral("label")).toString().toStdString(),
              f.models->model()->config.labels[static_cast<std::size_t>(best)]);
    EXPECT_NEAR(first.value(QStringLiteral("probability")).toDouble(), 1.0 / sum, 1e-5);
}

TEST(ImageView, AClickOnAPatchShowsWhereThatPatchLooks) {
    ImageFixture f;
    const Reference reference = readReference();
    ASSERT_TRUE(f.models->openImage(kVit + QStringLiteral("/image.png")));
    f.settle();
    f.models->focus(1, 1);
    f.settle();
    // The centre of patch r2c1 on the canvas.
    QWidget* canvas = f.view.canvas();
    canvas->resize(800, 520);
    Index token = -1;
    QPoint at;
    for (int y = 0; y < canvas->height() && token != 10; y += 4)
        for (int x = 0; x < canvas->width() && token != 10; x += 4)
            if (f.view.tokenAt(QPointF(x, y)) == 10) {
                token = 10;
                at = QPoint(x + 6, y + 6);
            }
    ASSERT_EQ(token, 10) << "no point of the canvas is patch r2c1";
    QTest::mouseClick(canvas, Qt::LeftButton, {}, at);
    f.settle();
    EXPECT_EQ(f.document.session().viewState.query, 10);
    EXPECT_EQ(f.view.queryToken(), 10);
    for (Index p = 0; p < 16; ++p)
        EXPECT_NEAR(f.view.patchValues()[static_cast<std::size_t>(p)],
                    reference.attention(1, 1, 10, 1 + p), 1e-5)
            << p;
    // Outside the image: the class token again.
    QTest::mouseClick(canvas, Qt::LeftButton, {},
                      QPoint(canvas->width() - 2, canvas->height() - 2));
    f.settle();
    EXPECT_EQ(f.view.queryToken(), 0);
}

TEST(ImageView, ABadImageChangesNothingAndUndoBringsThePreviousBack) {
    ImageFixture f;
    ASSERT_TRUE(f.models->openImage(kVit + QStringLiteral("/image.png")));
    f.settle();
    const auto before = f.models->image();
    const auto run = f.models->sharedRun();
    QTemporaryDir folder;
    const QString bad = folder.filePath(QStringLiteral("truncated.png"));
    {
        QFile original(kVit + QStringLiteral("/image.png"));
        ASSERT_TRUE(original.open(QIODevice::ReadOnly));
        const QByteArray bytes = original.readAll();
        QFile cut(bad);
        ASSERT_TRUE(cut.open(QIODevice::WriteOnly));
        cut.write(bytes.left(bytes.size() / 2));
    }
    QSignalSpy errors(f.models, &ModelDocument::errorOccurred);
    const int steps = f.document.undoStack()->count();
    EXPECT_FALSE(f.models->openImage(bad));
    EXPECT_FALSE(f.models->openImage(folder.filePath(QStringLiteral("missing.png"))));
    f.settle();
    ASSERT_EQ(errors.count(), 2);
    EXPECT_TRUE(errors.front().front().toString().contains(QStringLiteral("truncated.png")));
    EXPECT_EQ(f.models->image(), before);
    EXPECT_EQ(f.models->sharedRun(), run);
    EXPECT_EQ(f.document.undoStack()->count(), steps);

    // A second image (the first, flipped), then undo: the first image's run is shown again,
    // from the recent runs, without a forward.
    QImage flipped(kVit + QStringLiteral("/image.png"));
    ASSERT_FALSE(flipped.isNull());
    ASSERT_TRUE(f.models->setImage(flipped.mirrored(true, false), QStringLiteral("flipped")));
    f.settle();
    EXPECT_NE(f.models->sharedRun(), run);
    EXPECT_TRUE(f.view.caption().contains(QStringLiteral("flipped")));
    f.document.undoStack()->undo();
    f.settle();
    EXPECT_EQ(f.models->image(), before);
    EXPECT_EQ(f.models->sharedRun(), run);
}

// Another image classifier keeps the picture, made into its own pixels; the previous model's
// image steps leave the undo stack (their pixels were the other processor's).
TEST(ImageView, AnotherImageClassifierReadsThePictureWithItsOwnProcessor) {
    ImageFixture f;
    ASSERT_TRUE(f.models->openImage(kVit + QStringLiteral("/image.png")));
    f.settle();
    ASSERT_GT(f.document.undoStack()->count(), 0);
    ASSERT_TRUE(f.models->openModelNow(
        QStringLiteral(ATTNLAB_SOURCE_DIR "/resources/models/tiny-vit-shapes")));
    f.settle();
    ASSERT_NE(f.models->image(), nullptr);
    EXPECT_EQ(f.models->image()->name, QStringLiteral("image.png"));
    EXPECT_EQ(f.models->image()->pixels.size(), 3u * 64 * 64);
    ASSERT_NE(f.models->run(), nullptr);
    EXPECT_EQ(f.models->run()->ids.size(), 65u);
    EXPECT_EQ(f.document.undoStack()->count(), 0);
}

TEST(ImageView, ViewsThatReadTextSayWhyTheyDoNotApply) {
    ImageFixture f;
    ASSERT_TRUE(f.models->openImage(kVit + QStringLiteral("/image.png")));
    f.settle();
    for (const QString& id : viewIdsInGroup(QStringLiteral("probe"))) {
        std::unique_ptr<View> view(createView(id, &f.document));
        ASSERT_NE(view, nullptr);
        EXPECT_TRUE(view->notApplicable().contains(QStringLiteral("image model")))
            << id.toStdString() << ": " << view->notApplicable().toStdString();
    }
    // The views of attention read the patches as tokens.
    for (const QString& id : {QStringLiteral("heatmap"), QStringLiteral("heads"),
                              QStringLiteral("entropy"), QStringLiteral("model")}) {
        std::unique_ptr<View> view(createView(id, &f.document));
        view->resize(700, 500);
        EXPECT_TRUE(view->notApplicable().isEmpty()) << id.toStdString();
        view->ensureComplete();
        EXPECT_GT(view->data().rows, 0) << id.toStdString();
    }
    // With no model the image view says how to open an image classifier; a text model is
    // refused.
    Document other;
    ImageAttentionView view(&other);
    EXPECT_TRUE(view.notApplicable().isEmpty());
    view.ensureFresh();
    EXPECT_TRUE(view.placeholderText().contains(QStringLiteral("tiny-vit-shapes")));
    ASSERT_TRUE(ModelDocument::of(&other)->openModelNow(
        QStringLiteral(ATTNLAB_SOURCE_DIR "/resources/models/tiny-llama-induction")));
    EXPECT_TRUE(view.notApplicable().contains(QStringLiteral("reads text")))
        << view.notApplicable().toStdString();
}

} // namespace
} // namespace attnlab::ui

namespace attnlab::ui {
namespace {

/// The pixel at (x, y) of an RGB888 image.
QColor rgbAt(const QImage& image, int x, int y) {
    return QColor(image.pixel(x, y));
}

// Grey, 16-bit and CMYK pictures reach the model as 8-bit RGB, converted as Qt converts them:
// a grey value g is (g, g, g), a 16-bit value its top byte (rounded), and a CMYK JPEG (Pillow's,
// scripts/make_vision_fixtures.py: cmyk.jpg) the colours Pillow's own conversion gives.
TEST(ImageView, GreySixteenBitAndCmykImagesAreReadAsRgb) {
    QTemporaryDir folder;
    QImage grey(4, 2, QImage::Format_Grayscale8);
    grey.fill(0);
    grey.setPixel(1, 0, qRgb(200, 200, 200));
    const QString greyPath = folder.filePath(QStringLiteral("grey.png"));
    ASSERT_TRUE(grey.save(greyPath));
    QImage deep(4, 2, QImage::Format_RGBA64);
    deep.fill(QColor::fromRgba64(0, 0, 0, 65535));
    deep.setPixelColor(2, 1, QColor::fromRgba64(65535, 32896, 257, 65535));
    const QString deepPath = folder.filePath(QStringLiteral("deep.png"));
    ASSERT_TRUE(deep.save(deepPath));
    auto readGrey = readImageFile(greyPath);
    ASSERT_TRUE(readGrey.ok()) << readGrey.error();
    EXPECT_EQ(readGrey->format(), QImage::Format_RGB888);
    EXPECT_EQ(rgbAt(*readGrey, 1, 0), QColor(200, 200, 200));
    EXPECT_EQ(rgbAt(*readGrey, 0, 0), QColor(0, 0, 0));
    auto readDeep = readImageFile(deepPath);
    ASSERT_TRUE(readDeep.ok()) << readDeep.error();
    EXPECT_EQ(rgbAt(*readDeep, 2, 1), QColor(255, 128, 1));
    const std::vector<std::uint8_t> bytes = rgbBytesOf(*readDeep);
    ASSERT_EQ(bytes.size(), 4u * 2 * 3);
    EXPECT_EQ(bytes[(1 * 4 + 2) * 3 + 0], 255);
    EXPECT_EQ(bytes[(1 * 4 + 2) * 3 + 1], 128);

    auto cmyk = readImageFile(kVit + QStringLiteral("/cmyk.jpg"));
    ASSERT_TRUE(cmyk.ok()) << cmyk.error();
    // Quadrants: cyan, magenta; yellow, half black (Pillow: (0, 255, 255), (255, 0, 255),
    // (255, 255, 0), (127, 127, 127)); JPEG is lossy, so within a few levels.
    const auto near = [](QColor got, QColor want) {
        return std::abs(got.red() - want.red()) <= 6 && std::abs(got.green() - want.green()) <= 6 &&
               std::abs(got.blue() - want.blue()) <= 6;
    };
    EXPECT_TRUE(near(rgbAt(*cmyk, 2, 2), QColor(0, 255, 255)))
        << rgbAt(*cmyk, 2, 2).name().toStdString();
    EXPECT_TRUE(near(rgbAt(*cmyk, 12, 2), QColor(255, 0, 255)))
        << rgbAt(*cmyk, 12, 2).name().toStdString();
    EXPECT_TRUE(near(rgbAt(*cmyk, 2, 12), QColor(255, 255, 0)))
        << rgbAt(*cmyk, 2, 12).name().toStdString();
    EXPECT_TRUE(near(rgbAt(*cmyk, 12, 12), QColor(127, 127, 127)))
        << rgbAt(*cmyk, 12, 12).name().toStdString();
}

} // namespace
} // namespace attnlab::ui

// FlashStepperView: after N steps the drawn state is the flash kernel's trace and
// flashStateAfter on the experiment's whole tensor (not the Document's one-head walk),
// the last step's O / l is the double-precision reference, and block edits are undoable.

#include "reference.h"

#include <QCoreApplication>
#include <QDir>
#include <QFontMetricsF>
#include <QImage>
#include <QPaintEngine>
#include <QPainter>
#include <QPicture>
#include <QSpinBox>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "status_assert.h"
#include "ui/export/step_export.h"
#include "ui/state/document.h"
#include "ui/views/flash_stepper_view.h"

namespace attnlab::ui {
namespace {

Session flashSession(bool causal, Index qBlock, Index kvBlock, Index heads = 2, Index kvHeads = 1) {
    Session session;
    session.text = "the cat sat on the mat today";
    session.variant = Variant::Flash;
    session.mask.causal = causal;
    session.heads = heads;
    session.kvHeads = kvHeads;
    session.qBlock = qBlock;
    session.kvBlock = kvBlock;
    session.seed = 7;
    return session;
}

AttentionSpec specOf(const Experiment& experiment) {
    AttentionSpec spec;
    spec.variant = Variant::Flash;
    spec.mask = experiment.session.mask;
    spec.scale = experiment.scale;
    spec.qBlock = experiment.session.qBlock;
    spec.kvBlock = experiment.session.kvBlock;
    return spec;
}

void setStep(Document& document, Index step) {
    ViewState state = document.session().viewState;
    state.flashStep = step;
    document.setViewState(state);
}

class FlashStepper : public ::testing::TestWithParam<std::tuple<bool, int, int>> {};

TEST_P(FlashStepper, StateAfterEachStepIsTheCoresTrace) {
    const auto [causal, qBlock, kvBlock] = GetParam();
    Document document;
    Session session = flashSession(causal, qBlock, kvBlock);
    session.viewState.head = 1;
    document.reset(session);
    document.flush();
    const Experiment* experiment = document.experiment();
    ASSERT_NE(experiment, nullptr);
    // run() keeps no trace (#9); the flash kernel's own trace of the whole tensor is the
    // reference the view's walk must agree with.
    EXPECT_FALSE(experiment->attention.flashTrace.has_value());
    AttentionSpec traced = specOf(*experiment);
    traced.wantFlashTrace = true;
    const Attention flash = attend(experiment->qkv, traced);
    ASSERT_TRUE(flash.flashTrace.has_value());
    const FlashHeadTrace& trace = flash.flashTrace->heads.at(1);
    ASSERT_EQ(trace.head, 1);

    FlashStepperView view(&document);
    const Index sq = experiment->sq(), sk = experiment->sk();
    const Index tilesQ = (sq + qBlock - 1) / qBlock, tilesK = (sk + kvBlock - 1) / kvBlock;
    ASSERT_EQ(view.totalSteps(), tilesQ * tilesK);
    ASSERT_EQ(view.totalSteps(), static_cast<Index>(trace.steps.size()));

    for (Index n = 0; n <= view.totalSteps(); ++n) {
        setStep(document, n);
        view.ensureFresh();
        ASSERT_EQ(view.currentStep(), n);
        // The drawn state is flashStateAfter on the experiment's full Q, K, V.
        const FlashState expected = flashStateAfter(experiment->qkv, specOf(*experiment), 0, 1, n);
        const FlashState& shown = view.shownState();
        EXPECT_EQ(shown.stepsDone, n);
        ASSERT_EQ(shown.rowMax.size(), expected.rowMax.size());
        for (std::size_t i = 0; i < expected.rowMax.size(); ++i) {
            EXPECT_EQ(std::isinf(shown.rowMax[i]), std::isinf(expected.rowMax[i])) << i;
            if (std::isfinite(expected.rowMax[i])) {
                EXPECT_NEAR(shown.rowMax[i], expected.rowMax[i], 1e-6) << "row " << i;
            }
            EXPECT_NEAR(shown.rowSum[i], expected.rowSum[i], 1e-5) << "row " << i;
        }
        EXPECT_MATRIX_NEAR(shown.accumulator, expected.accumulator, 1e-5);

        // Every tracked row's curves are the trace's row max, row sum and rescale, one point
        // per computed tile containing the row, up to step n.
        ASSERT_FALSE(view.trackedRows().empty());
        for (Index row : view.trackedRows()) {
            QVector<QPointF> want[3];
            for (Index k = 0; k < n; ++k) {
                const FlashStep& tile = trace.steps[static_cast<std::size_t>(k)];
                if (tile.skipped || row < tile.qStart || row >= tile.qEnd) continue;
                const auto local = static_cast<std::size_t>(row - tile.qStart);
                const float values[3] = {tile.rowMax[local], tile.rowSum[local],
                                         tile.rescale[local]};
                for (int s = 0; s < 3; ++s)
                    if (std::isfinite(values[s])) want[s] << QPointF(double(k + 1), values[s]);
            }
            const FlashStepperView::Series series[3] = {FlashStepperView::Series::RowMax,
                                                        FlashStepperView::Series::RowSum,
                                                        FlashStepperView::Series::Rescale};
            for (int s = 0; s < 3; ++s) {
                const QVector<QPointF> got = view.plottedSeries(series[s], row);
                ASSERT_EQ(got.size(), want[s].size()) << "row " << row << " series " << s;
                for (int p = 0; p < got.size(); ++p) {
                    EXPECT_DOUBLE_EQ(got[p].x(), want[s][p].x());
                    EXPECT_NEAR(got[p].y(), want[s][p].y(), 1e-5);
                }
            }
        }
        // Rescale factors are exp(m_old - m_new) <= 1.
        for (Index row : view.trackedRows())
            for (const QPointF& p : view.plottedSeries(FlashStepperView::Series::Rescale, row))
                EXPECT_LE(p.y(), 1.0 + 1e-6);
    }

    // After the last tile O / l is standard attention (double-precision reference).
    const Index kvHead = 0; // Hkv == 1
    const ref::Result reference = ref::attention(
        experiment->qkv.q.head(0, 1), experiment->qkv.k.head(0, kvHead),
        experiment->qkv.v.head(0, kvHead), experiment->session.mask, 0, experiment->scale);
    const FlashState& last = view.shownState();
    ref::MatD normalized = ref::MatD::Zero(sq, reference.output.cols());
    for (Index i = 0; i < sq; ++i)
        if (last.rowSum[static_cast<std::size_t>(i)] > 0)
            normalized.row(i) = last.accumulator.row(i).cast<double>() / last.rowSum[i];
    EXPECT_MATRIX_NEAR(normalized, reference.output, 1e-5);
    const QVector<QPointF> error = view.plottedError();
    ASSERT_FALSE(error.isEmpty());
    EXPECT_DOUBLE_EQ(error.back().x(), static_cast<double>(view.totalSteps()));
    EXPECT_LT(error.back().y(), 1e-5);
    EXPECT_GT(error.front().y(), error.back().y()); // nothing computed at step 0
}

INSTANTIATE_TEST_SUITE_P(BlocksAndMasks, FlashStepper,
                         ::testing::Values(std::make_tuple(false, 2, 2),
                                           std::make_tuple(true, 2, 2), std::make_tuple(true, 3, 2),
                                           std::make_tuple(true, 1, 4),
                                           std::make_tuple(false, 7, 7),
                                           std::make_tuple(true, 8, 1)),
                         [](const auto& caseInfo) {
                             const auto& c = caseInfo.param;
                             return std::string(std::get<0>(c) ? "causal" : "full") + "_q" +
                                    std::to_string(std::get<1>(c)) + "_kv" +
                                    std::to_string(std::get<2>(c));
                         });

TEST(FlashStepper, CausalTilesAboveTheDiagonalAreSkipped) {
    Document document;
    document.reset(flashSession(true, 2, 2, 1, 1));
    document.flush();
    FlashStepperView view(&document);
    view.ensureFresh(); // export does this before reading data()
    // The exported tiles (data()'s JSON list: one entry per tile in visiting order).
    const QVariantList tiles = view.data().extra.value(QStringLiteral("tiles_list")).toList();
    ASSERT_EQ(tiles.size(), view.totalSteps());
    int skipped = 0;
    for (int r = 0; r < tiles.size(); ++r) {
        const QVariantMap tile = tiles[r].toMap();
        const qint64 qEnd = tile.value(QStringLiteral("q_end")).toLongLong();
        const qint64 kvStart = tile.value(QStringLiteral("kv_start")).toLongLong();
        const bool isSkipped = tile.value(QStringLiteral("skipped")).toBool();
        // Causal: the tile has an allowed cell iff its first key is <= its last query.
        EXPECT_EQ(isSkipped, kvStart > qEnd - 1) << "tile " << r;
        skipped += isSkipped ? 1 : 0;
    }
    EXPECT_EQ(skipped, 6); // 7 tokens in 4 x 4 tiles of 2: 3 + 2 + 1 above the diagonal
}

TEST(FlashStepper, ButtonsMoveTheStepThroughTheDocument) {
    Document document;
    document.reset(flashSession(false, 2, 3, 1, 1));
    document.flush();
    FlashStepperView view(&document);
    view.ensureFresh();
    EXPECT_EQ(document.session().viewState.flashStep, 0);
    view.stepForward();
    view.stepForward();
    EXPECT_EQ(document.session().viewState.flashStep, 2);
    view.stepBack();
    EXPECT_EQ(document.session().viewState.flashStep, 1);
    view.stepBack();
    view.stepBack(); // stays at 0
    EXPECT_EQ(document.session().viewState.flashStep, 0);
    for (Index i = 0; i < view.totalSteps() + 3; ++i)
        view.stepForward(); // stops at the last tile
    EXPECT_EQ(document.session().viewState.flashStep, view.totalSteps());
    view.play(); // restarts from 0 when at the end
    EXPECT_TRUE(view.playing());
    EXPECT_EQ(document.session().viewState.flashStep, 0);
    view.pause();
    EXPECT_FALSE(view.playing());
}

TEST(FlashStepper, BlockEditsAreUndoableSessionEdits) {
    Document document;
    document.reset(flashSession(true, 2, 2, 1, 1));
    document.flush();
    FlashStepperView view(&document);
    view.ensureFresh();
    EXPECT_EQ(view.totalSteps(), 16);
    view.keyBlockEditor()->setValue(4);
    document.flush();
    EXPECT_EQ(document.session().kvBlock, 4);
    EXPECT_EQ(view.totalSteps(), 4 * 2);
    EXPECT_EQ(view.tileBytes(), 2 * 4 * 4);
    EXPECT_EQ(view.fullScoreBytes(), 7 * 7 * 4);
    view.queryBlockEditor()->setValue(7);
    document.flush();
    EXPECT_EQ(view.totalSteps(), 1 * 2);
    ASSERT_TRUE(document.undoStack()->canUndo());
    document.undoStack()->undo();
    document.flush();
    EXPECT_EQ(document.session().qBlock, 2);
    EXPECT_EQ(view.queryBlockEditor()->value(), 2);
    EXPECT_EQ(view.totalSteps(), 4 * 2);
}

TEST(FlashStepper, StepExportWritesOneFramePerStep) {
    Document document;
    document.reset(flashSession(true, 4, 4, 1, 1));
    document.flush();
    FlashStepperView view(&document);
    const auto [first, last] = stepRange(view);
    EXPECT_EQ(first, 0);
    EXPECT_EQ(last, 4);
    const QString folder = QDir::temp().filePath(
        QStringLiteral("attnlab_flash_frames_%1").arg(QCoreApplication::applicationPid()));
    QDir(folder).removeRecursively();
    setStep(document, 2);
    ASSERT_TRUE(succeeded(exportSteps(view, document, folder, QSize(320, 240), 1.0)));
    const QStringList frames =
        QDir(folder).entryList({QStringLiteral("*.png")}, QDir::Files, QDir::Name);
    ASSERT_EQ(frames.size(), 5);
    EXPECT_EQ(frames.first(), QStringLiteral("frame_0001.png"));
    EXPECT_EQ(frames.last(), QStringLiteral("frame_0005.png"));
    const QImage first1(QDir(folder).filePath(frames[0])), last1(QDir(folder).filePath(frames[4]));
    EXPECT_EQ(first1.size(), QSize(320, 240));
    EXPECT_NE(first1, last1);                             // the steps differ
    EXPECT_EQ(document.session().viewState.flashStep, 2); // restored
    QDir(folder).removeRecursively();
}

/// A paint device that keeps the texts drawn on it and where their baselines start.
class TextRecorder : public QPaintDevice {
public:
    struct Text {
        QString text;
        QPointF at;
        double width = 0;
    };
    QPaintEngine* paintEngine() const override { return &m_engine; }
    const std::vector<Text>& texts() const { return m_engine.texts; }

protected:
    int metric(PaintDeviceMetric metric) const override {
        switch (metric) {
        case PdmWidth:
        case PdmHeight:
            return 2000;
        case PdmDpiX:
        case PdmDpiY:
        case PdmPhysicalDpiX:
        case PdmPhysicalDpiY:
            return 96;
        case PdmDepth:
            return 32;
        case PdmDevicePixelRatio:
            return 1;
        case PdmDevicePixelRatioScaled:
            return static_cast<int>(QPaintDevice::devicePixelRatioFScale());
        default:
            return 1;
        }
    }

private:
    struct Engine : QPaintEngine {
        Engine() : QPaintEngine(QPaintEngine::AllFeatures) {}
        bool begin(QPaintDevice*) override { return true; }
        bool end() override { return true; }
        void updateState(const QPaintEngineState& changed) override {
            if (changed.state() & QPaintEngine::DirtyTransform) transform = changed.transform();
        }
        // Only the texts are kept.
        void drawPixmap(const QRectF&, const QPixmap&, const QRectF&) override {}
        void drawImage(const QRectF&, const QImage&, const QRectF&,
                       Qt::ImageConversionFlags) override {}
        void drawTiledPixmap(const QRectF&, const QPixmap&, const QPointF&) override {}
        void drawPath(const QPainterPath&) override {}
        void drawPolygon(const QPointF*, int, PolygonDrawMode) override {}
        void drawPolygon(const QPoint*, int, PolygonDrawMode) override {}
        void drawRects(const QRectF*, int) override {}
        void drawRects(const QRect*, int) override {}
        void drawLines(const QLineF*, int) override {}
        void drawLines(const QLine*, int) override {}
        void drawEllipse(const QRectF&) override {}
        void drawEllipse(const QRect&) override {}
        void drawPoints(const QPointF*, int) override {}
        void drawPoints(const QPoint*, int) override {}
        void drawTextItem(const QPointF& at, const QTextItem& item) override {
            texts.push_back({item.text(), transform.map(at), item.width()});
        }
        Type type() const override { return QPaintEngine::User; }
        QTransform transform;
        std::vector<Text> texts;
    };
    mutable Engine m_engine;
};

// The exported figure (attnlab render --view flash, File > Export Figure) spread the four tile
// legend items over the whole width, a third of it between "done" and "current", and numbered
// the curves' steps with no title. The figure is painted and its texts read back where drawn:
// each legend item starts close after the one before it, on one line, and "step" is drawn
// under the lower curves.
TEST(FlashStepper, FigureLegendsSitTogetherAndTheCurvesNameTheirSteps) {
    Document document;
    document.reset(flashSession(true, 2, 2, 1, 1));
    document.flush();
    setStep(document, 3);
    FlashStepperView view(&document);
    view.ensureFresh();
    QPicture picture;
    {
        QCPPainter painter(&picture);
        view.paintFigure(painter, QSize(900, 600));
    }
    TextRecorder recorder;
    {
        QPainter painter(&recorder);
        picture.play(&painter);
    }
    const QStringList legend = view.tileLegendEntries();
    ASSERT_EQ(legend.size(), 4);
    std::vector<TextRecorder::Text> items;
    int steps = 0;
    for (const QString& entry : legend)
        for (const TextRecorder::Text& text : recorder.texts())
            if (text.text == entry) {
                items.push_back(text);
                break;
            }
    for (const TextRecorder::Text& text : recorder.texts())
        if (text.text == QStringLiteral("step")) ++steps;
    ASSERT_EQ(items.size(), legend.size());
    const double line = QFontMetricsF(view.font()).height();
    for (std::size_t i = 1; i < items.size(); ++i) {
        SCOPED_TRACE(items[i].text.toStdString());
        EXPECT_NEAR(items[i].at.y(), items[0].at.y(), 1); // one row
        const double gap = items[i].at.x() - (items[i - 1].at.x() + items[i - 1].width);
        EXPECT_GT(gap, 0);
        // The next item's swatch and its padding, no more.
        EXPECT_LT(gap, 5 * line) << gap << " px after " << items[i - 1].text.toStdString();
    }
    EXPECT_EQ(steps, 2); // under each of the lower two curves
    // The legends' row no longer caps the figure's width: the curves reach its right side.
    double rightmost = 0;
    for (const TextRecorder::Text& text : recorder.texts())
        rightmost = std::max(rightmost, text.at.x() + text.width);
    EXPECT_GT(rightmost, 0.85 * 900);
}

} // namespace
} // namespace attnlab::ui

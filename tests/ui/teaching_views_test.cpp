// The teaching views against outside facts: KV-cache bytes against the
// batch * Hkv * len * (D + Dv) * 4 formula and the causal reference, RoPE scores depending
// only on i - j and its rotation matching the core's, the cost curves' seed-002 formulas and
// log-log slopes, the line view's isolation, and every registered view drawing a non-blank
// figure of the requested size.

#include "reference.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QSet>

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <cmath>
#include <memory>

#include "status_assert.h"
#include "ui/export/figure_export.h"
#include "ui/export/step_export.h"
#include "ui/state/document.h"
#include "ui/state/experiment_data.h"
#include "ui/views/complexity_view.h"
#include "ui/views/kv_cache_view.h"
#include "ui/views/lines_view.h"
#include "ui/views/rope_view.h"
#include "ui/views/view_registry.h"

namespace attnlab::ui {
namespace {

Session classroom() {
    Session session;
    session.text = "the cat sat on the mat today";
    session.seed = 3;
    return session;
}

/// A session every registered view can draw: two heads, a KV-cache prefill, FlashAttention
/// tiles and RoPE.
Session everyViewApplies() {
    Session session = classroom();
    session.heads = 2;
    session.kvPrefill = 2;
    session.variant = Variant::Flash;
    session.positional = Positional::RopeHalf;
    return session;
}

void goTo(Document& document, Index kvStep) {
    ViewState state = document.session().viewState;
    state.kvStep = kvStep;
    document.setViewState(state);
}

/// Distinct colours in an image (capped), to tell a figure from a blank page.
int colourCount(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = 0; y < image.height() && colours.size() < 64; y += 3)
        for (int x = 0; x < image.width() && colours.size() < 64; x += 3)
            colours.insert(image.pixel(x, y));
    return static_cast<int>(colours.size());
}

TEST(KvCacheView, StepsBytesAndTheNewRowFollowThePrefill) {
    Document document;
    Session session = classroom();
    session.heads = 4;
    session.kvHeads = 2;
    session.kvPrefill = 3;
    document.reset(session);
    document.flush();
    const Experiment* experiment = document.experiment();
    ASSERT_NE(experiment, nullptr);
    KvCacheView view(&document);
    const Index s = experiment->sq();
    ASSERT_EQ(s, 7);
    EXPECT_EQ(view.stepCount(), s - 3 + 1); // the prefill, then one step per decoded row

    const Index dk = experiment->qkv.k.dim, dv = experiment->qkv.v.dim;
    for (Index step = 0; step < view.stepCount(); ++step) {
        goTo(document, step);
        view.ensureFresh();
        const auto [first, end] = view.newRows();
        EXPECT_EQ(end, 3 + step);
        EXPECT_EQ(first, step == 0 ? 0 : end - 1);
        // The newest row attends causally over the cache: the reference's row.
        const Index h = 0;
        const ref::Result reference = ref::attention(
            experiment->qkv.q.head(0, h), experiment->qkv.k.head(0, 0),
            experiment->qkv.v.head(0, 0),
            [] {
                MaskSpec causal;
                causal.causal = true;
                return causal;
            }(),
            0, experiment->scale);
        const QVector<QPointF> row = view.plottedRow();
        ASSERT_EQ(row.size(), s);
        double sum = 0;
        for (Index j = 0; j < s; ++j) {
            EXPECT_NEAR(row[static_cast<int>(j)].y(), reference.weights(end - 1, j), 1e-5);
            if (j >= end) {
                EXPECT_EQ(row[static_cast<int>(j)].y(), 0.0);
            }
            sum += row[static_cast<int>(j)].y();
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
    }
    // Bytes: MHA (4 kv heads), GQA (this session's 2), MQA (1), each len * (D + Dv) * 4.
    const Index kvCounts[3] = {4, 2, 1};
    for (int which = 0; which < 3; ++which) {
        const QVector<QPointF> bytes = view.plottedBytes(which);
        ASSERT_EQ(bytes.size(), view.stepCount());
        for (int k = 0; k < bytes.size(); ++k) {
            const double cacheLen = 3 + k;
            EXPECT_DOUBLE_EQ(bytes[k].y(), kvCounts[which] * cacheLen * double(dk + dv) * 4);
        }
    }
    // The session's own curve is the trace the core recorded.
    const QVector<QPointF> own = view.plottedBytes(1);
    for (int k = 0; k < own.size(); ++k)
        EXPECT_DOUBLE_EQ(
            own[k].y(), double(experiment->kvTrace->steps[static_cast<std::size_t>(k)].cacheBytes));
}

TEST(KvCacheView, WithoutAPrefillThereAreNoStepsAndTheButtonEnablesThem) {
    Document document;
    document.reset(classroom());
    document.flush();
    KvCacheView view(&document);
    view.ensureFresh();
    EXPECT_EQ(view.stepCount(), 0);
    const auto [first, last] = stepRange(view);
    EXPECT_EQ(first, 0);
    EXPECT_EQ(last, 0);
}

TEST(RopeView, ScoresDependOnlyOnRelativeDistance) {
    for (Positional positional : {Positional::RopeInterleaved, Positional::RopeHalf}) {
        Document document;
        Session session = classroom();
        session.positional = positional;
        session.dModel = 16;
        session.heads = 2;
        session.viewState.query = 4;
        document.reset(session);
        document.flush();
        RopeView view(&document);
        view.ensureFresh();
        EXPECT_EQ(view.pairPanelCount(), 4); // d_head 8: 4 pairs
        const QVector<QPointF> base = view.plottedScores(0);
        ASSERT_FALSE(base.isEmpty());
        double spread = 0;
        for (int offset = 1; offset < 3; ++offset) {
            const QVector<QPointF> shifted = view.plottedScores(offset);
            ASSERT_FALSE(shifted.isEmpty());
            for (const QPointF& p : shifted) {
                const auto it = std::find_if(base.begin(), base.end(),
                                             [&](const QPointF& b) { return b.x() == p.x(); });
                ASSERT_NE(it, base.end());
                EXPECT_NEAR(p.y(), it->y(), 1e-4 * (1 + std::abs(it->y()))) << "distance " << p.x();
            }
        }
        for (const QPointF& p : base)
            spread = std::max(spread, std::abs(p.y() - base.front().y()));
        EXPECT_GT(spread, 1e-3); // the score does change with distance

        // The rotated q of the table is the core's RoPE output for that row.
        const Experiment* experiment = document.experiment();
        const DataTable table = view.data();
        ASSERT_EQ(table.rows, 4);
        const RopeStyle style =
            positional == Positional::RopeHalf ? RopeStyle::Half : RopeStyle::Interleaved;
        for (int t = 0; t < table.rows; ++t) {
            const auto [a, b] = ropePair(style, t, 8);
            EXPECT_NEAR(table.at(t, 3), experiment->qkv.q(0, 0, 4, a), 1e-5);
            EXPECT_NEAR(table.at(t, 4), experiment->qkv.q(0, 0, 4, b), 1e-5);
            // Rotation keeps each pair's length.
            EXPECT_NEAR(std::hypot(table.at(t, 1), table.at(t, 2)),
                        std::hypot(table.at(t, 3), table.at(t, 4)), 1e-5);
            // theta_t = base^(-2t/D)
            EXPECT_NEAR(table.at(t, 0), std::pow(10000.0, -2.0 * t / 8), 1e-6);
        }
    }
}

TEST(ComplexityView, CurvesFollowTheSeedFormulasAndSlopes) {
    Document document;
    Session session = classroom();
    session.dModel = 64;
    session.heads = 4;
    session.kvHeads = 4;
    session.mask.window = 8;
    document.reset(session);
    document.flush();
    ComplexityView view(&document);
    view.ensureFresh();
    const QVector<QPointF> softmax = view.plottedFlops(CostItem::SoftmaxAttention);
    ASSERT_GT(softmax.size(), 4);
    for (const QPointF& p : softmax) // 2 n^2 d multiply-adds = 4 n^2 d FLOPs (seed 002 §2.8)
        EXPECT_DOUBLE_EQ(p.y(), 4.0 * p.x() * p.x() * 64);
    auto slope = [](const QVector<QPointF>& curve) {
        const QPointF a = curve[curve.size() - 2], b = curve.back();
        return std::log(b.y() / a.y()) / std::log(b.x() / a.x());
    };
    EXPECT_NEAR(slope(view.plottedBytes(CostItem::SoftmaxAttention)), 2.0, 1e-9);
    EXPECT_NEAR(slope(view.plottedFlops(CostItem::Linear)), 1.0, 1e-9);
    EXPECT_NEAR(slope(view.plottedFlops(CostItem::SlidingWindow)), 1.0, 0.01);
    EXPECT_NEAR(slope(view.plottedBytes(CostItem::Flash)), 1.0, 0.01);
    EXPECT_TRUE(view.plottedFlops(CostItem::Flash).isEmpty()); // same FLOPs as softmax
    EXPECT_EQ(view.costParams().seq, 7);
    EXPECT_EQ(view.costParams().window, 8);
}

// A text of a thousand tokens drew a million lines and a thousand labels on top of each
// other, off the bottom of the page: the view shows a window of queries and keys around the
// selected query, its labels carry their positions, and its lines are the window's weights.
TEST(LinesView, ALongTextShowsAWindowAroundTheSelectedQuery) {
    Document document;
    std::string text;
    const int count = 1000;
    for (int i = 0; i < count; ++i)
        text += (i ? " w" : "w") + std::to_string(i);
    document.modify(
        [&](Session& s) {
            s.text = text;
            s.mask.causal = true;
        },
        QStringLiteral("long"));
    document.flush();
    LinesView view(&document);
    view.resize(600, 400);
    view.ensureFresh();
    const Index shown = LinesView::kMaxShownTokens;
    EXPECT_EQ(view.queryLabels().size(), shown);
    EXPECT_EQ(view.keyLabels().size(), shown);
    EXPECT_EQ(view.queryLabels().front(), QStringLiteral("0 w0"));
    document.setSelectedQuery(700);
    view.ensureFresh();
    ASSERT_EQ(view.queryLabels().size(), shown);
    EXPECT_LE(view.firstQuery(), 700);
    EXPECT_GT(view.firstQuery() + shown, 700);
    EXPECT_EQ(view.firstKey(), view.firstQuery()); // self-attention: the same positions
    EXPECT_EQ(view.queryLabels()[int(700 - view.firstQuery())], QStringLiteral("700 w700"));
    // The lines drawn are the window's weights: the selected query's row, keys in the window.
    const MatrixD weights = headWeights(*document.experiment(), 0);
    int row = 0;
    for (Index j = view.firstKey(); j < view.firstKey() + shown; ++j)
        row += weights(700, j) >= LinesView::kMinWeight;
    EXPECT_EQ(view.lineCount(), row);
    EXPECT_EQ(view.data().rows, count); // the numbers exported are the whole head's
}

TEST(LinesView, HoveringATokenIsolatesItsLines) {
    Document document;
    Session session = classroom();
    session.mask.causal = true;
    document.reset(session);
    document.flush();
    LinesView view(&document);
    view.resize(600, 400);
    view.ensureFresh();
    const MatrixD weights = headWeights(*document.experiment(), 0);
    int all = 0, row3 = 0, column0 = 0;
    for (Index i = 0; i < weights.rows(); ++i)
        for (Index j = 0; j < weights.cols(); ++j)
            if (weights(i, j) >= LinesView::kMinWeight) {
                ++all;
                row3 += i == 3;
                column0 += j == 0;
            }
    EXPECT_EQ(view.lineCount(), all);
    view.isolateToken(0, 3);
    EXPECT_EQ(view.lineCount(), row3);
    EXPECT_GT(row3, 0);
    EXPECT_LE(row3, 4); // causal: query 3 sees keys 0..3 only
    view.isolateToken(1, 0);
    EXPECT_EQ(view.lineCount(), column0);
    view.isolateToken(0, -1);
    EXPECT_EQ(view.lineCount(), all);
    // The pointer finds tokens in their columns and nothing between them.
    const LinesView::Focus left = view.tokenAt(QPointF(20, view.height() - 20));
    EXPECT_EQ(left.side, 0);
    EXPECT_EQ(left.index, 6);
    const LinesView::Focus right = view.tokenAt(QPointF(view.width() - 20, view.height() - 20));
    EXPECT_EQ(right.side, 1);
    EXPECT_EQ(right.index, 6);
    EXPECT_EQ(view.tokenAt(QPointF(view.width() / 2.0, view.height() / 2.0)).index, -1);
}

TEST(TeachingViews, EveryRegisteredViewDrawsAFigureOfTheRequestedSize) {
    Document document;
    document.reset(everyViewApplies());
    document.setComparison(Comparison::FullVsCausal);
    document.flush();
    ASSERT_NE(document.experiment(), nullptr);
    for (const QString& id : viewIds()) {
        SCOPED_TRACE(id.toStdString());
        std::unique_ptr<View> view(createView(id, &document));
        ASSERT_TRUE(view);
        EXPECT_EQ(view->viewId(), id);
        if (isStepView(id)) setStep(*view, document, 2);
        const QImage image = renderFigure(*view, QSize(480, 320), 2.0);
        EXPECT_EQ(image.size(), QSize(960, 640));
        EXPECT_GT(colourCount(image), 8);
    }
}

TEST(TeachingViews, EveryLegendKeepsItsItemsTogetherInsideTheFigure) {
    // A legend given a whole layout cell spread its items over it (the KV-cache and RoPE
    // legends down the full height, the entropy legend across the full width) and its frame
    // ran past the figure's right edge.
    Document document;
    document.reset(everyViewApplies());
    document.flush();
    for (const QString& id : viewIds()) {
        SCOPED_TRACE(id.toStdString());
        std::unique_ptr<View> view(createView(id, &document));
        if (!view->notApplicable().isEmpty()) continue;
        view->resize(1000, 640);
        view->show();
        if (isStepView(id)) setStep(*view, document, 2);
        view->ensureComplete();
        QCoreApplication::processEvents();
        for (QCustomPlot* plot : view->findChildren<QCustomPlot*>()) {
            if (!plot->isVisible()) continue;
            plot->replot();
            for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
                auto* legend = qobject_cast<QCPLegend*>(element);
                if (!legend || !legend->visible() || legend->itemCount() < 2) continue;
                const QRect box = legend->outerRect();
                const QSize least = legend->minimumOuterSizeHint();
                EXPECT_LE(box.height(), least.height() + 4) << "spread down";
                // A row of items may keep a gap's worth of room after them, no more.
                if (legend->rowCount() == 1) {
                    EXPECT_LE(box.width(), least.width() + 24) << "spread across";
                }
                EXPECT_LT(box.right() + 1, plot->width()) << "frame cut at the right";
                EXPECT_LT(box.bottom() + 1, plot->height()) << "frame cut at the bottom";
            }
        }
    }
}

// The complexity view's legends sat in the top-left corner of each plot, over the curves and
// over the dash-dot line marking the session's length. No legend covers that line (a few
// pixels either side for its width) nor a point of a curve, in either theme.
TEST(ComplexityView, NoLegendCoversACurveOrTheSessionsLength) {
    for (const QString& theme : {QStringLiteral("projector"), QStringLiteral("light")}) {
        SCOPED_TRACE(theme.toStdString());
        Document document;
        Session session = classroom();
        session.dModel = 512;
        session.heads = 8;
        session.kvHeads = 8;
        document.reset(session);
        document.setTheme(theme);
        document.flush();
        ComplexityView view(&document);
        view.resize(910, 520); // what the view gets beside a lesson at 1280 x 720
        view.show();
        view.ensureComplete();
        QCustomPlot* plot = view.plot();
        for (int pass = 0; pass < 3; ++pass) {
            plot->replot(QCustomPlot::rpImmediateRefresh);
            QCoreApplication::processEvents();
        }
        const double length = static_cast<double>(view.costParams().seq);
        int legends = 0;
        for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
            auto* legend = qobject_cast<QCPLegend*>(element);
            if (!legend || !legend->visible() || legend->itemCount() == 0) continue;
            ++legends;
            const QRect box = legend->outerRect();
            for (QCPAxisRect* rect : plot->axisRects()) {
                if (!box.intersects(rect->rect())) continue;
                const double x = rect->axis(QCPAxis::atBottom)->coordToPixel(length);
                EXPECT_FALSE(box.left() <= x + 3 && x - 3 <= box.right())
                    << "the line at S = " << length << " (x = " << x << ") under a legend";
                for (QCPGraph* graph : rect->graphs())
                    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd();
                         ++it) {
                        const QPointF point = graph->coordsToPixels(it->key, it->value);
                        EXPECT_FALSE(box.contains(point.toPoint()))
                            << graph->name().toStdString() << " at S = " << it->key;
                    }
            }
        }
        EXPECT_GT(legends, 0);
    }
}

TEST(TeachingViews, KvStepExportWritesAMultiPagePdf) {
    Document document;
    Session session = classroom();
    session.kvPrefill = 4;
    document.reset(session);
    document.flush();
    KvCacheView view(&document);
    const QString path = QDir::temp().filePath(
        QStringLiteral("attnlab_kv_steps_%1.pdf").arg(QCoreApplication::applicationPid()));
    ASSERT_TRUE(succeeded(exportSteps(view, document, path, QSize(400, 300))));
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    EXPECT_TRUE(bytes.startsWith("%PDF"));
    // 7 tokens, prefill 4: the prefill page and 3 decode pages.
    EXPECT_EQ(bytes.count("/Type /Page\n") + bytes.count("/Type /Page\r") +
                  bytes.count("/Type /Page "),
              4);
    file.close();
    QFile::remove(path);
    EXPECT_FALSE(QFile::exists(path + QStringLiteral(".part")));
}

} // namespace
} // namespace attnlab::ui

// The teaching views read on their own (issue 12 item 5), checked against the core and against
// independent loops: the FlashAttention stepper's legend and its narration (the m, l and
// rescale it states are those of the flash kernel's own trace), every row drawn with the
// selected one in front; RoPE panels on equal axes whose angles are the core's m * theta_i;
// the statistics table's self weight (the weights' diagonal) and its most-attended key
// excluding the query itself (an argmax over the off-diagonal entries); the steppers' token
// labels thinned so that none overlaps another.

#include <QImage>
#include <QTableWidget>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ui/state/document.h"
#include "ui/state/experiment_data.h"
#include "ui/views/flash_stepper_view.h"
#include "ui/views/kv_cache_view.h"
#include "ui/views/rope_view.h"
#include "ui/views/statistics_view.h"

#include <qcustomplot.h>

namespace attnlab::ui {
namespace {

Session causalFlash() {
    Session session;
    session.text = "the cat sat on the mat and then it slept";
    session.variant = Variant::Flash;
    session.mask.causal = true;
    session.heads = 2;
    session.kvHeads = 2;
    session.qBlock = 3;
    session.kvBlock = 2;
    session.seed = 11;
    return session;
}

void setView(Document& document, Index step, Index query) {
    ViewState state = document.session().viewState;
    state.flashStep = step;
    state.query = query;
    document.setViewState(state);
}

TEST(FlashNarration, LegendNamesEveryKindOfTile) {
    Document document;
    document.reset(causalFlash());
    document.flush();
    FlashStepperView view(&document);
    view.ensureFresh();
    const QStringList entries = view.tileLegendEntries();
    ASSERT_EQ(entries.size(), 4);
    EXPECT_TRUE(entries[0].contains(QStringLiteral("done")));
    EXPECT_TRUE(entries[1].contains(QStringLiteral("current")));
    EXPECT_TRUE(entries[2].contains(QStringLiteral("skipped")));
    EXPECT_TRUE(entries[3].contains(QStringLiteral("to come")));
}

// For every step and a selected row, the narration states the trace's m, l and rescale of
// that row; for a skipped tile it names the causal mask.
TEST(FlashNarration, StatesTheTracesNumbersForTheSelectedRow) {
    Document document;
    document.reset(causalFlash());
    document.flush();
    const Experiment* experiment = document.experiment();
    ASSERT_NE(experiment, nullptr);
    AttentionSpec spec;
    spec.variant = Variant::Flash;
    spec.mask = experiment->mask;
    spec.scale = experiment->scale;
    spec.qBlock = experiment->session.qBlock;
    spec.kvBlock = experiment->session.kvBlock;
    spec.wantFlashTrace = true;
    const Attention traced = attend(experiment->qkv, spec);
    ASSERT_TRUE(traced.flashTrace.has_value());
    const FlashHeadTrace& trace = traced.flashTrace->heads.at(0);
    const auto steps = static_cast<Index>(trace.steps.size());
    const auto n = [](double value) { return FlashStepperView::narrationNumber(value); };

    FlashStepperView view(&document);
    int rose = 0, first = 0, stayed = 0, skipped = 0, elsewhere = 0, masked = 0;
    for (const Index row : {Index(4), Index(7)}) {
        for (Index step = 1; step <= steps; ++step) {
            setView(document, step, row);
            view.ensureFresh();
            ASSERT_EQ(view.focusRow(), row);
            const QString text = view.narration();
            const FlashStep& tile = trace.steps[static_cast<std::size_t>(step - 1)];
            SCOPED_TRACE(text.toStdString());
            EXPECT_TRUE(text.contains(QStringLiteral("Tile %1 of %2").arg(step).arg(steps)));
            if (tile.skipped) {
                EXPECT_TRUE(text.contains(QStringLiteral("skipped")));
                EXPECT_TRUE(text.contains(QStringLiteral("causal mask")));
                ++skipped;
                continue;
            }
            if (row < tile.qStart || row >= tile.qEnd) {
                EXPECT_TRUE(text.contains(QStringLiteral("does not touch row %1").arg(row)));
                ++elsewhere;
                continue;
            }
            // The row's previous state: its value in the last computed tile that covered it.
            double before = -std::numeric_limits<double>::infinity(), sumBefore = 0;
            for (Index k = 0; k + 1 < step; ++k) {
                const FlashStep& earlier = trace.steps[static_cast<std::size_t>(k)];
                if (earlier.skipped || row < earlier.qStart || row >= earlier.qEnd) continue;
                before = earlier.rowMax[static_cast<std::size_t>(row - earlier.qStart)];
                sumBefore = earlier.rowSum[static_cast<std::size_t>(row - earlier.qStart)];
            }
            const auto local = static_cast<std::size_t>(row - tile.qStart);
            const double m = tile.rowMax[local], l = tile.rowSum[local];
            const double rescale = tile.rescale[local];
            if (!std::isfinite(m)) continue; // no key yet (not reached with this mask)
            EXPECT_TRUE(text.contains(QStringLiteral("= %1").arg(n(l)))) << "l " << l;
            if (tile.kvStart > row) { // causal: every key of the tile comes after the row
                EXPECT_TRUE(text.contains(QStringLiteral("hides every key of this tile")));
                EXPECT_TRUE(text.contains(QStringLiteral("m = %1").arg(n(m))));
                EXPECT_EQ(m, before);
                EXPECT_EQ(l, sumBefore);
                ++masked;
            } else if (!std::isfinite(before)) {
                EXPECT_TRUE(text.contains(QStringLiteral("first keys: m = %1").arg(n(m))));
                ++first;
            } else if (m > before) {
                EXPECT_TRUE(text.contains(
                    QStringLiteral("max rose from %1 to %2").arg(n(before)).arg(n(m))));
                EXPECT_TRUE(text.contains(QStringLiteral("e^(%1 \u2212 %2) = %3")
                                              .arg(n(before))
                                              .arg(n(m))
                                              .arg(n(rescale))));
                EXPECT_LT(rescale, 1.0);
                EXPECT_TRUE(text.contains(
                    QStringLiteral("%1 \u00d7 %2").arg(n(rescale)).arg(n(sumBefore))));
                ++rose;
            } else {
                EXPECT_TRUE(text.contains(QStringLiteral("max stays %1").arg(n(m))));
                EXPECT_DOUBLE_EQ(rescale, 1.0);
                ++stayed;
            }
        }
    }
    // The case must exercise each kind of step (else the checks above prove nothing).
    EXPECT_GT(rose, 0);
    EXPECT_GT(first, 0);
    EXPECT_GT(stayed + rose, 1);
    EXPECT_GT(skipped, 0);
    EXPECT_GT(elsewhere, 0);
    EXPECT_GT(masked, 0);
}

TEST(FlashNarration, EveryRowIsDrawnAndTheSelectedOneLast) {
    Document document;
    document.reset(causalFlash());
    document.flush();
    FlashStepperView view(&document);
    setView(document, 5, 6);
    view.ensureFresh();
    const std::vector<Index> rows = view.trackedRows();
    ASSERT_EQ(static_cast<Index>(rows.size()), document.experiment()->sq());
    EXPECT_EQ(rows.back(), 6);
    // No query selected: the current tile's first row is narrated.
    setView(document, 5, -1);
    view.ensureFresh();
    const FlashWalk* walk = document.flashWalk();
    ASSERT_NE(walk, nullptr);
    EXPECT_EQ(view.focusRow(), walk->tile(4).qStart);
    setView(document, 0, -1);
    view.ensureFresh();
    EXPECT_TRUE(view.narration().contains(QStringLiteral("m = \u2212\u221e, l = 0")));
}

TEST(FlashNarration, SaysTheWalkIsTheEvalRecurrenceUnderTrainModeDropout) {
    Document document;
    Session session = causalFlash();
    session.train = true;
    session.dropoutRate = 0.25;
    document.reset(session);
    document.flush();
    FlashStepperView view(&document);
    setView(document, 3, 2);
    view.ensureFresh();
    EXPECT_TRUE(view.narration().contains(QStringLiteral("dropout (p = 0.25)")));
    EXPECT_TRUE(view.narration().contains(QStringLiteral("eval recurrence")));
    document.modify([](Session& s) { s.train = false; }, QStringLiteral("eval"));
    document.flush();
    view.ensureFresh();
    EXPECT_FALSE(view.narration().contains(QStringLiteral("dropout")));
}

TEST(RopePanels, EqualAxesAndTheCoresAngles) {
    Document document;
    Session session;
    session.text = "one two three four five six seven eight nine";
    session.positional = Positional::RopeInterleaved;
    session.dModel = 32;
    session.heads = 2;
    session.seed = 5;
    session.viewState.query = 7;
    document.reset(session);
    document.flush();
    const Experiment* experiment = document.experiment();
    ASSERT_NE(experiment, nullptr);
    RopeView view(&document);
    view.ensureFresh();
    ASSERT_GT(view.pairPanels().size(), 1u);
    for (const QSize size : {QSize(900, 600), QSize(1280, 500), QSize(500, 900)}) {
        QImage image(size, QImage::Format_ARGB32);
        QCPPainter painter(&image);
        view.paintFigure(painter, size);
        painter.end();
        for (const RopeView::PairPanel& panel : view.pairPanels()) {
            const QCPRange x = panel.rect->axis(QCPAxis::atBottom)->range();
            const QCPRange y = panel.rect->axis(QCPAxis::atLeft)->range();
            ASSERT_GT(panel.rect->width(), 0);
            ASSERT_GT(panel.rect->height(), 0);
            EXPECT_NEAR(panel.rect->width() / x.size(), panel.rect->height() / y.size(),
                        1e-9 * panel.rect->width() / x.size())
                << "pair " << panel.pair << " at " << size.width() << "x" << size.height();
            // The unit circle and the vectors fit.
            EXPECT_GE(std::min(x.upper, y.upper), panel.radius);
        }
    }
    // m theta_i and n theta_i: the core's angle table at the query's and the key's positions.
    const Index dim = experiment->qkv.q.dim;
    const Index query = 7;
    const MatrixD weights = headWeights(*experiment, 0);
    Index key = 0;
    weights.row(query).maxCoeff(&key);
    const Matrix angles = ropeAngles(experiment->sk(), dim, experiment->ropeBase, 0);
    for (const RopeView::PairPanel& panel : view.pairPanels()) {
        EXPECT_NEAR(panel.queryAngle, angles(query, panel.pair),
                    1e-6 * std::max(1.0, std::abs(panel.queryAngle)));
        EXPECT_NEAR(panel.keyAngle, angles(key, panel.pair),
                    1e-6 * std::max(1.0, std::abs(panel.keyAngle)));
    }
}

TEST(StatisticsTable, SelfWeightIsTheDiagonalAndMostAttendedExcludesItself) {
    Document document;
    Session session;
    session.text = "the cat sat on the mat because it was tired";
    session.identityProjections = true; // Q = K = X: every token is most similar to itself
    session.heads = 1;
    session.seed = 2;
    document.reset(session);
    document.flush();
    const Experiment* experiment = document.experiment();
    ASSERT_NE(experiment, nullptr);
    StatisticsView view(&document);
    view.ensureFresh();
    QTableWidget* table = view.table();
    const QString header = table->horizontalHeaderItem(StatisticsView::MostAttendedColumn)->text();
    EXPECT_TRUE(header.contains(QStringLiteral("not itself")));
    EXPECT_TRUE(table->horizontalHeaderItem(StatisticsView::MostAttendedColumn)
                    ->toolTip()
                    .contains(QStringLiteral("excluding itself")));
    const Tensor4& weights = experiment->attention.weights;
    const Index sq = experiment->sq(), sk = experiment->sk();
    ASSERT_EQ(table->rowCount(), sq);
    int mostlySelf = 0;
    for (Index i = 0; i < sq; ++i) {
        const int row = static_cast<int>(i);
        const double self = weights(0, 0, i, i);
        EXPECT_EQ(table->item(row, StatisticsView::SelfWeightColumn)->text(),
                  QString::number(self, 'f', 3));
        Index best = -1;
        for (Index j = 0; j < sk; ++j)
            if (j != i && (best < 0 || weights(0, 0, i, j) > weights(0, 0, i, best))) best = j;
        const QString most = table->item(row, StatisticsView::MostAttendedColumn)->text();
        EXPECT_EQ(most.section(QLatin1Char(' '), 0, 0).toLongLong(), best) << most.toStdString();
        EXPECT_EQ(table->item(row, StatisticsView::MostAttendedWeightColumn)->text(),
                  QString::number(weights(0, 0, i, best), 'f', 3));
        const bool self_larger = self > weights(0, 0, i, best);
        EXPECT_EQ(table->item(row, StatisticsView::MostlySelfColumn)->text(),
                  self_larger ? QStringLiteral("yes") : QStringLiteral("no"));
        mostlySelf += self_larger ? 1 : 0;
    }
    EXPECT_GT(mostlySelf, 0); // identity projections: the diagonal is large somewhere
    const DataTable data = view.data();
    const int selfColumn =
        static_cast<int>(data.columnLabels.indexOf(QStringLiteral("self_weight")));
    ASSERT_GE(selfColumn, 0);
    for (Index i = 0; i < sq; ++i)
        EXPECT_NEAR(data.at(static_cast<int>(i), selfColumn), weights(0, 0, i, i), 1e-7);
}

} // namespace
} // namespace attnlab::ui

namespace attnlab::ui {
namespace {

/// Pixels between neighbouring token labels of every text-ticked axis of the view's plot that
/// shows its labels, against the room one label needs there (a text line down a vertical or
/// turned axis, the wider label along a level one). Fails on the first pair that overlaps.
void expectNoLabelOverlaps(QWidget& view, const char* name) {
    auto* plot = view.findChild<QCustomPlot*>();
    ASSERT_NE(plot, nullptr) << name;
    int axesChecked = 0;
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes()) {
            const auto ticker = axis->ticker().dynamicCast<QCPAxisTickerText>();
            if (!ticker || !axis->tickLabels() || !axis->visible() || ticker->ticks().size() < 2)
                continue;
            const QFontMetrics metrics(axis->tickLabelFont());
            const bool level =
                axis->orientation() == Qt::Horizontal && axis->tickLabelRotation() == 0;
            const QList<double> keys = ticker->ticks().keys();
            for (int i = 1; i < keys.size(); ++i) {
                const double apart =
                    std::abs(axis->coordToPixel(keys[i]) - axis->coordToPixel(keys[i - 1]));
                const double needed =
                    level ? 0.5 * (metrics.horizontalAdvance(ticker->ticks().value(keys[i])) +
                                   metrics.horizontalAdvance(ticker->ticks().value(keys[i - 1])))
                          : metrics.height() * (axis->orientation() == Qt::Vertical ? 1.0 : 0.7);
                EXPECT_GE(apart, needed)
                    << name << ": labels " << keys[i - 1] << " and " << keys[i] << " overlap";
            }
            ++axesChecked;
        }
    EXPECT_GE(axesChecked, 2) << name << ": no token axis was checked";
}

// 48 tokens in a 1280 x 720 window: the stepper views' matrices are ~150 px tall, so their
// token labels must thin out rather than run into each other (seen in a classroom screenshot).
TEST(TokenLabels, TheSteppersThinTheirLabelsToTheMatrix) {
    Session session = causalFlash();
    QString text;
    for (int i = 0; i < 48; ++i)
        text += QStringLiteral("w%1 ").arg(i);
    session.text = text.trimmed().toStdString();
    session.kvPrefill = 40;
    Document document;
    document.reset(session);
    document.flush();
    ASSERT_EQ(document.experiment()->sq(), 48);
    FlashStepperView flash(&document);
    KvCacheView cache(&document);
    for (View* view : {static_cast<View*>(&flash), static_cast<View*>(&cache)}) {
        view->resize(980, 560);
        view->show();
        view->ensureFresh();
        for (int pass = 0; pass < 3; ++pass) {
            view->findChild<QCustomPlot*>()->replot(QCustomPlot::rpImmediateRefresh);
            QCoreApplication::processEvents();
        }
        expectNoLabelOverlaps(*view, view == &flash ? "flash" : "kv-cache");
    }
}

} // namespace
} // namespace attnlab::ui

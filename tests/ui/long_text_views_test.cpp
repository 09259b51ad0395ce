// Views of a long text (1 000 tokens and more): the heads grid draws each head in blocks of
// positions, each block its largest weight, and says so; a map that is one colour says why;
// thinned token labels carry their positions, so a repeated word can be placed.

#include <QCoreApplication>
#include <QFontMetrics>
#include <QLabel>
#include <qcustomplot.h>

#include <gtest/gtest.h>

#include "numbered_text.h"

#include <algorithm>
#include <cmath>
#include <vector>
#include <string>

#include "ui/state/document.h"
#include "ui/state/experiment_data.h"
#include "ui/views/compare_view.h"
#include "ui/views/entropy_view.h"
#include "ui/views/heads_grid_view.h"
#include "ui/views/statistics_view.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/teaching_plot.h"

namespace attnlab::ui {
namespace {

using test::numberedText;

void openText(Document& document, int count, bool causal, int heads, double temperature = 1) {
    document.modify(
        [&](Session& s) {
            s.text = numberedText(count);
            s.mask.causal = causal;
            s.heads = heads;
            s.kvHeads = heads;
            s.temperature = temperature;
        },
        QStringLiteral("long"));
    document.flush();
}

/// Shown at `width` x `height` and drawn until its layout settles: the first passes thin the
/// labels and give the maps their shares.
void layOut(HeadsGridView& view, int width, int height) {
    view.resize(width, height);
    view.show();
    view.ensureFresh();
    for (int i = 0; i < 3; ++i) {
        view.plot()->replot();
        QCoreApplication::processEvents();
    }
}

/// Every tick label of `axis` that names a position ("700 w700") names its own tick's.
void expectLabelsAtTheirPositions(QCPAxis* axis) {
    const auto ticker = axis->ticker().dynamicCast<QCPAxisTickerText>();
    ASSERT_TRUE(ticker);
    ASSERT_GT(ticker->ticks().size(), 1);
    for (auto it = ticker->ticks().cbegin(); it != ticker->ticks().cend(); ++it) {
        const int position = static_cast<int>(it.key());
        EXPECT_EQ(it.value(), QStringLiteral("%1 w%1").arg(position));
    }
}

TEST(LongTextViews, ThinnedLabelsOfALongListCarryTheirPositions) {
    QStringList words;
    for (int i = 0; i < 100; ++i)
        words << QStringLiteral("w%1").arg(i);
    const auto thinned = labelTicker(words, 10);
    ASSERT_EQ(thinned->ticks().size(), 10);
    EXPECT_EQ(thinned->ticks().value(30), QStringLiteral("30 w30"));
    // Every label shown, or a sentence's few words: the words alone.
    EXPECT_EQ(labelTicker(words, 100)->ticks().value(30), QStringLiteral("w30"));
    const auto sentence = labelTicker(words.mid(0, 12), 4);
    EXPECT_EQ(sentence->ticks().value(3), QStringLiteral("w3"));
}

// A thousand tokens in 4 maps of a million cells each took over a second to draw and showed
// words without positions: each map now has at most kMaxCells a side, each cell the largest
// allowed weight of its block (so a strong weight is never lost), masked where all of it is.
TEST(LongTextViews, HeadsGridDrawsALongTextInBlocksOfTheirLargestWeight) {
    Document document;
    const int count = 1000;
    openText(document, count, /*causal=*/true, /*heads=*/4);
    HeadsGridView view(&document);
    layOut(view, 1000, 700);
    const Index block = HeadsGridView::blockFor(count);
    ASSERT_EQ(block, 2);
    EXPECT_TRUE(view.heading().contains(QStringLiteral("2 \u00d7 2")))
        << view.heading().toStdString();
    ASSERT_EQ(view.plot()->plottableCount(), 4);
    for (int h : {0, 3}) {
        auto* map = qobject_cast<QCPColorMap*>(view.plot()->plottable(h));
        ASSERT_NE(map, nullptr);
        QCPColorMapData* cells = map->data();
        ASSERT_EQ(cells->keySize(), count / block);
        ASSERT_EQ(cells->valueSize(), count / block);
        // Cell centres lie at their blocks' centres, in positions.
        EXPECT_DOUBLE_EQ(cells->keyRange().lower, 0.5);
        EXPECT_DOUBLE_EQ(cells->keyRange().upper, count - 1.5);
        const MatrixD weights = headWeights(*document.experiment(), h);
        for (const auto& [row, column] : {std::pair{0, 0}, {10, 3}, {499, 250}, {321, 321}}) {
            double largest = -1;
            for (Index i = row * block; i < (row + 1) * block; ++i)
                for (Index j = column * block; j < (column + 1) * block; ++j)
                    if (j <= i) largest = std::max(largest, weights(i, j)); // causal: j <= i
            EXPECT_DOUBLE_EQ(cells->cell(column, row), largest) << row << ", " << column;
        }
        EXPECT_TRUE(std::isnan(cells->cell(400, 10))); // keys 800-801 of queries 20-21
    }
    // The left column's and bottom row's labels name their positions (a 2 x 2 grid)...
    const QList<QCPAxisRect*> rects = view.plot()->axisRects();
    ASSERT_EQ(rects.size(), 4);
    expectLabelsAtTheirPositions(rects[0]->axis(QCPAxis::atLeft));
    expectLabelsAtTheirPositions(rects[2]->axis(QCPAxis::atBottom));
    // ... and take no room from those maps: every head's map is the same size.
    for (QCPAxisRect* rect : rects) {
        EXPECT_NEAR(rect->width(), rects[3]->width(), 3);
        EXPECT_NEAR(rect->height(), rects[0]->height(), 3);
    }
}

// Eight heads in three columns leave the last row one map short: the map above the empty
// cell took its own key labels and came out a third shorter than its row. Only the last row
// carries them, and every map is the same size.
TEST(LongTextViews, HeadsGridWithAnEmptyCellKeepsEveryMapTheSameSize) {
    Document document;
    document.modify(
        [](Session& s) {
            s.text = "the quick brown fox jumps over the lazy dog";
            s.heads = 8;
            s.kvHeads = 1;
        },
        QStringLiteral("eight heads"));
    document.flush();
    HeadsGridView view(&document);
    layOut(view, 700, 600);
    const QList<QCPAxisRect*> rects = view.plot()->axisRects();
    ASSERT_EQ(rects.size(), 8);
    auto* grid = qobject_cast<QCPLayoutGrid*>(rects[0]->layout());
    ASSERT_NE(grid, nullptr);
    ASSERT_EQ(grid->columnCount(), 3);
    for (QCPAxisRect* rect : rects) {
        EXPECT_NEAR(rect->height(), rects[0]->height(), 3);
        EXPECT_NEAR(rect->width(), rects[1]->width(), 3);
    }
    // Key labels under the last row's maps (heads 6 and 7), none above the empty cell.
    EXPECT_TRUE(rects[6]->axis(QCPAxis::atBottom)->tickLabels());
    EXPECT_FALSE(rects[5]->axis(QCPAxis::atBottom)->tickLabels());
}

// One head of a long text: the grid of one column asked QCustomPlot for a second column's
// cell on every layout, which it warns of (this binary fails a test on QCustomPlot's warnings).
TEST(LongTextViews, HeadsGridOfOneHeadLaysOutWithoutWarnings) {
    Document document;
    openText(document, 1000, /*causal=*/true, /*heads=*/1);
    HeadsGridView view(&document);
    layOut(view, 800, 600);
    EXPECT_EQ(view.plot()->axisRects().size(), 1);
}

TEST(LongTextViews, HeadsGridOfAShortTextDrawsEveryCell) {
    Document document;
    openText(document, 6, /*causal=*/false, /*heads=*/1);
    HeadsGridView view(&document);
    view.ensureFresh();
    auto* map = qobject_cast<QCPColorMap*>(view.plot()->plottable(0));
    ASSERT_NE(map, nullptr);
    const MatrixD weights = headWeights(*document.experiment(), 0);
    ASSERT_EQ(map->data()->keySize(), 6);
    for (Index i = 0; i < 6; ++i)
        for (Index j = 0; j < 6; ++j)
            EXPECT_DOUBLE_EQ(map->data()->cell(int(j), int(i)), weights(i, j));
    EXPECT_FALSE(view.heading().contains(QLatin1Char('\n')));
}

// Without a mask, a long text's weights are often all near 1/S (a high temperature makes
// them so here): every map was one flat colour with no word why. The title says so, with the
// largest weight; a causal text (whose first query puts all its weight on one key) does not.
TEST(LongTextViews, HeadsGridSaysWhyItsMapsAreOneColour) {
    Document document;
    openText(document, 1000, /*causal=*/false, /*heads=*/2, /*temperature=*/100);
    double largest = 0;
    for (Index h = 0; h < 2; ++h)
        largest = std::max(largest, headWeights(*document.experiment(), h).maxCoeff());
    ASSERT_LT(largest, HeadsGridView::kFaintWeight);
    HeadsGridView view(&document);
    view.ensureFresh();
    EXPECT_TRUE(view.heading().contains(QString::number(largest, 'g', 2)))
        << view.heading().toStdString();

    Document causal;
    openText(causal, 1000, /*causal=*/true, /*heads=*/2, /*temperature=*/100);
    HeadsGridView causalView(&causal);
    causalView.ensureFresh();
    EXPECT_FALSE(causalView.heading().contains(QStringLiteral("0 to 1")))
        << causalView.heading().toStdString();
}

TEST(LongTextViews, EntropyLabelsOfALongTextCarryTheirPositions) {
    Document document;
    openText(document, 1000, /*causal=*/false, /*heads=*/1);
    EntropyView view(&document);
    view.resize(1000, 600);
    view.show();
    view.ensureFresh();
    for (int i = 0; i < 2; ++i) { // lays out, then thins the labels to what fits
        view.plot()->replot();
        QCoreApplication::processEvents();
    }
    QCPAxis* queries = nullptr;
    for (QCPAxisRect* rect : view.plot()->axisRects())
        if (rect->axis(QCPAxis::atBottom)->label() == EntropyView::tr("query"))
            queries = rect->axis(QCPAxis::atBottom);
    ASSERT_NE(queries, nullptr);
    expectLabelsAtTheirPositions(queries);
    // Turned 45 degrees, neighbouring labels stay clear of each other when their ticks lie at
    // least sqrt(2) text lines apart (forty labels at any width ran into each other).
    const auto ticks = queries->ticker().dynamicCast<QCPAxisTickerText>()->ticks().keys();
    const double line = QFontMetrics(queries->tickLabelFont()).height();
    for (int i = 1; i < ticks.size(); ++i)
        EXPECT_GE(queries->coordToPixel(ticks[i]) - queries->coordToPixel(ticks[i - 1]),
                  std::sqrt(2.0) * line)
            << ticks[i];
}

// At 4 000 tokens the summary read "Diagonal (self) mean 0.001 vs off-diagonal mean 0.000
// (ratio 2.97): it mostly attends to itself" above rows that each said "mostly itself? no".
// The means keep three significant digits, and "mostly" means more than half the weight.
TEST(LongTextViews, StatisticsSaysMostlyItselfOnlyOfMoreThanHalfItsWeight) {
    Document document;
    openText(document, 1000, /*causal=*/false, /*heads=*/1);
    StatisticsView view(&document);
    view.ensureFresh();
    const double self = headWeights(*document.experiment(), 0).diagonal().mean();
    ASSERT_LT(self, 0.5);
    const QString text = view.summary()->text();
    EXPECT_FALSE(text.contains(QStringLiteral("mostly attends to itself"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QString::number(self, 'g', 3))) << text.toStdString();

    // Q = K = X at a low temperature: each token's own score is its largest by far.
    Document sharp;
    sharp.modify(
        [](Session& s) {
            s.text = "a b c d";
            s.identityProjections = true;
            s.temperature = 0.05;
        },
        QStringLiteral("sharp"));
    sharp.flush();
    StatisticsView sharpView(&sharp);
    sharpView.ensureFresh();
    ASSERT_GT(headWeights(*sharp.experiment(), 0).diagonal().mean(), 0.5);
    EXPECT_TRUE(sharpView.summary()->text().contains(QStringLiteral("mostly attends to itself")))
        << sharpView.summary()->text().toStdString();
}

// Under the table on a projector the histogram is a few lines tall: four counts of a long
// text (0, 5·10⁶, 1·10⁷, 1.5·10⁷) were written over each other. Its count labels keep a
// text line and more apart.
TEST(LongTextViews, StatisticsHistogramCountsDoNotOverlap) {
    Document document;
    openText(document, 1000, /*causal=*/false, /*heads=*/1);
    document.modify([](Session& s) { s.viewState.theme = "projector"; }, QStringLiteral("theme"));
    document.flush();
    StatisticsView view(&document);
    view.resize(900, 420);
    view.show();
    view.ensureFresh();
    auto* plot = view.findChild<QCustomPlot*>();
    ASSERT_NE(plot, nullptr);
    for (int i = 0; i < 3; ++i) {
        plot->replot();
        QCoreApplication::processEvents();
    }
    QCPAxis* counts = plot->yAxis;
    const double line = QFontMetrics(counts->tickLabelFont()).height();
    QVector<double> ticks;
    QVector<QString> labels;
    counts->ticker()->generate(counts->range(), counts->parentPlot()->locale(),
                               counts->numberFormat().at(0), counts->numberPrecision(), ticks,
                               nullptr, &labels);
    ASSERT_GE(ticks.size(), 2); // 0 and a count to read the bars by
    for (int i = 1; i < ticks.size(); ++i)
        EXPECT_GE(std::abs(counts->coordToPixel(ticks[i]) - counts->coordToPixel(ticks[i - 1])),
                  1.5 * line)
            << ticks[i] << " in " << counts->axisRect()->height() << " px";
}

} // namespace
} // namespace attnlab::ui

namespace attnlab::ui {
namespace {

/// B - A of head 0, from A's and B's own weights (the compare view's panels are not asked).
MatrixD differenceOfWeights(const Document& document) {
    const Tensor4& a = document.experiment()->attention.weights;
    const Tensor4& b = document.comparisonExperiment()->attention.weights;
    MatrixD difference(a.seq, a.dim);
    for (Index i = 0; i < a.seq; ++i)
        for (Index j = 0; j < a.dim; ++j)
            difference(i, j) = double(b(0, 0, i, j)) - double(a(0, 0, i, j));
    return difference;
}

/// The median over rows of each row's largest |value|.
double medianRowPeak(const MatrixD& values) {
    std::vector<double> peaks;
    for (Index i = 0; i < values.rows(); ++i)
        peaks.push_back(values.row(i).cwiseAbs().maxCoeff());
    std::nth_element(peaks.begin(), peaks.begin() + std::ptrdiff_t(peaks.size() / 2), peaks.end());
    return peaks[peaks.size() / 2];
}

struct LongCompare {
    Document document;
    CompareView view{&document};
    explicit LongCompare(int count) {
        openText(document, count, /*causal=*/false, /*heads=*/1);
        view.resize(1200, 600);
        view.compareWith(Comparison::FullVsCausal);
        settle();
    }
    void setScale(const char* scale) {
        ViewState state = document.session().viewState;
        state.colorScale = scale;
        document.setViewState(state);
        settle();
    }
    void settle() {
        document.flush();
        document.flush();
        view.refresh();
    }
    double cell(Index i, Index j) const {
        return view.differenceView()->colorMap()->data()->cell(int(j), int(i));
    }
};

// At 300 tokens and more B - A was blank: the first rows differ by ~1 and set its +-scale, the
// rest by ~1/S. The per-row and log scales now apply to it as to the weights.
TEST(LongTextViews, CompareDrawsBMinusAOnTheRowAndLogScales) {
    LongCompare f(300);
    ASSERT_NE(f.document.comparisonExperiment(), nullptr);
    const MatrixD difference = differenceOfWeights(f.document);
    const QString plain = f.view.differenceView()->colorScale()->axis()->label();

    f.setScale("row");
    for (Index i = 0; i < difference.rows(); i += 7) {
        const double top = difference.row(i).cwiseAbs().maxCoeff();
        for (Index j = 0; j < difference.cols(); j += 5)
            EXPECT_NEAR(f.cell(i, j), difference(i, j) / top, 1e-5) << i << "," << j;
    }
    EXPECT_NEAR(f.view.differenceView()->colorMap()->dataRange().upper, 1.0, 1e-9);
    EXPECT_NE(f.view.differenceView()->colorScale()->axis()->label(), plain);

    f.setScale("log");
    for (Index i = 0; i < difference.rows(); i += 7)
        for (Index j = 0; j < difference.cols(); j += 5) {
            const double d = difference(i, j);
            if (std::abs(d) < 2e-6) continue; // at the floor rounding decides
            EXPECT_NEAR(f.cell(i, j), (d < 0 ? -1 : 1) * (6 + std::log10(std::abs(d))), 1e-4)
                << i << "," << j;
        }
    // The bar names the differences, not their logarithms.
    const auto ticks = f.view.differenceView()->colorScale()->axis()->ticker()
                           .dynamicCast<QCPAxisTickerText>();
    ASSERT_TRUE(ticks);
    EXPECT_EQ(ticks->ticks().value(4), QStringLiteral("10\u207b\u00b2"));
    EXPECT_EQ(ticks->ticks().value(-4), QStringLiteral("\u221210\u207b\u00b2"));
    EXPECT_EQ(ticks->ticks().value(0), QStringLiteral("0"));

    f.setScale("fixed"); // back to numbers
    EXPECT_FALSE(f.view.differenceView()->colorScale()->axis()->ticker()
                     .dynamicCast<QCPAxisTickerText>());
    EXPECT_EQ(f.view.differenceView()->colorScale()->axis()->label(), plain);
}

// On the 0-to-1 scale a long text's A, B and B - A are each nearly one colour: one line above
// the panels says how flat (the numbers a person can check) and one click shows each row.
TEST(LongTextViews, CompareSaysWhenItsMapsAreNearlyOneColour) {
    LongCompare f(300);
    ASSERT_NE(f.document.comparisonExperiment(), nullptr);
    QLabel* note = f.view.flatNote();
    ASSERT_FALSE(note->isHidden());
    const Tensor4& weights = f.document.experiment()->attention.weights;
    MatrixD a(weights.seq, weights.dim);
    for (Index i = 0; i < weights.seq; ++i)
        for (Index j = 0; j < weights.dim; ++j)
            a(i, j) = weights(0, 0, i, j);
    const QString text = note->text();
    EXPECT_TRUE(text.contains(QString::number(medianRowPeak(a), 'g', 2))) << text.toStdString();
    EXPECT_TRUE(text.contains(QString::number(medianRowPeak(differenceOfWeights(f.document)), 'g', 2)))
        << text.toStdString();

    emit note->linkActivated(QStringLiteral("row"));
    f.settle();
    EXPECT_EQ(f.document.session().viewState.colorScale, "row");
    EXPECT_TRUE(note->isHidden());

    LongCompare sentence(6); // a sentence's maps have their colours
    EXPECT_TRUE(sentence.view.flatNote()->isHidden());
}

} // namespace
} // namespace attnlab::ui

// HeatmapView: the plot's cells are the experiment's weights; edits from the inputs panel
// (tokens, variant, mask) reach it; masked cells are NaN (drawn grey with an 'x'); undo restores.
#include "ui/views/heatmap_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTest>
#include <QUndoStack>
#include <qcustomplot.h>

#include <gtest/gtest.h>

#include "numbered_text.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "ui/export/figure_export.h"
#include "ui/views/compare_view.h"
#include "ui/window/inputs_panel.h"

namespace attnlab::ui {
namespace {

/// Compares every cell of the color map with the experiment's weights tensor (head h).
void expectCellsEqualWeights(const HeatmapView& view, const Experiment& experiment, Index head) {
    const Tensor4& weights = experiment.attention.weights;
    QCPColorMapData* cells = view.colorMap()->data();
    ASSERT_EQ(cells->keySize(), weights.dim);
    ASSERT_EQ(cells->valueSize(), weights.seq);
    const BoolMatrix allowedCells =
        denseMask(experiment.session.mask, 0, experiment.sq(), experiment.sk());
    for (Index i = 0; i < weights.seq; ++i) {
        for (Index j = 0; j < weights.dim; ++j) {
            const double cell = cells->cell(static_cast<int>(j), static_cast<int>(i));
            if (!allowedCells(i, j)) {
                EXPECT_TRUE(std::isnan(cell)) << i << "," << j;
                EXPECT_EQ(weights(0, head, i, j), 0.0f);
            } else {
                EXPECT_FLOAT_EQ(static_cast<float>(cell), weights(0, head, i, j)) << i << "," << j;
            }
        }
    }
}

struct Fixture {
    Document document;
    InputsPanel panel{&document};
    HeatmapView view{&document};
    Fixture() {
        document.flush();
        view.resize(600, 500);
        view.ensureFresh();
    }
    void settle() {
        document.flush();
        view.ensureFresh();
    }
};

TEST(HeatmapView, CellsEqualTheExperimentWeights) {
    Fixture f;
    ASSERT_NE(f.document.experiment(), nullptr);
    expectCellsEqualWeights(f.view, *f.document.experiment(), 0);
    // Token labels on both axes.
    auto* ticker = dynamic_cast<QCPAxisTickerText*>(
        f.view.plot()->axisRect()->axis(QCPAxis::atBottom)->ticker().data());
    ASSERT_NE(ticker, nullptr);
    EXPECT_EQ(ticker->ticks().value(1), QStringLiteral("cat"));
}

TEST(HeatmapView, TypedTokensReachTheHeatmap) {
    Fixture f;
    f.panel.textEdit()->setFocus();
    f.panel.textEdit()->end(false);
    QTest::keyClicks(f.panel.textEdit(), QStringLiteral(" today"));
    f.settle();
    EXPECT_EQ(f.document.session().text, "the cat sat on the mat today");
    EXPECT_EQ(f.view.colorMap()->data()->keySize(), 7);
    expectCellsEqualWeights(f.view, *f.document.experiment(), 0);
    // One undo step for the whole word, and it restores the previous heatmap.
    f.document.undoStack()->undo();
    f.settle();
    EXPECT_EQ(f.view.colorMap()->data()->keySize(), 6);
    EXPECT_EQ(f.panel.textEdit()->text(), QStringLiteral("the cat sat on the mat"));
}

TEST(HeatmapView, CausalMaskFromThePanelDrawsMaskedCellsAsNaN) {
    Fixture f;
    f.panel.causalCheck()->setChecked(true);
    f.settle();
    ASSERT_TRUE(f.document.session().mask.causal);
    EXPECT_TRUE(std::isnan(f.view.colorMap()->data()->cell(3, 0))); // key 3 after query 0
    EXPECT_FALSE(std::isnan(f.view.colorMap()->data()->cell(0, 3)));
    expectCellsEqualWeights(f.view, *f.document.experiment(), 0);
    f.document.undoStack()->undo();
    f.settle();
    EXPECT_FALSE(f.panel.causalCheck()->isChecked());
    EXPECT_FALSE(std::isnan(f.view.colorMap()->data()->cell(3, 0)));
}

TEST(HeatmapView, VariantPickerReachesTheDocumentAndTheHeatmap) {
    Fixture f;
    QComboBox* variant = f.panel.variantCombo();
    const int linear = variant->findData(int(VariantPreset::Linear));
    ASSERT_GE(linear, 0);
    variant->setCurrentIndex(linear);
    emit variant->activated(linear);
    f.settle();
    EXPECT_EQ(f.document.session().variant, Variant::Linear);
    EXPECT_EQ(f.document.experiment()->session.variant, Variant::Linear);
    expectCellsEqualWeights(f.view, *f.document.experiment(), 0);

    const int gqa = variant->findData(int(VariantPreset::Gqa));
    variant->setCurrentIndex(gqa);
    emit variant->activated(gqa);
    f.settle();
    EXPECT_EQ(f.document.experiment()->headCount(), 4);
    EXPECT_EQ(f.document.experiment()->kvHeadCount(), 2);
    f.document.setFocusedHead(3);
    f.view.ensureFresh();
    expectCellsEqualWeights(f.view, *f.document.experiment(), 3);
}

TEST(HeatmapView, NegativeWindowInThePanelShowsAMessage) {
    Fixture f;
    const AlignedVector<float> before = f.document.experiment()->attention.weights.data;
    f.panel.windowCheck()->setChecked(true);
    f.panel.windowSpin()->setValue(-2);
    f.settle();
    EXPECT_FALSE(f.panel.problemLabel()->isHidden());
    EXPECT_TRUE(f.panel.problemLabel()->text().contains(QStringLiteral("window")));
    EXPECT_FALSE(f.document.problems().isEmpty());
}

TEST(HeatmapView, ValueLabelsOnlyForShortSequences) {
    Fixture f;
    EXPECT_EQ(f.view.valueLabelCount(), 36);
    std::string text;
    for (int i = 0; i < HeatmapView::kMaxLabelledTokens + 1; ++i)
        text += "w ";
    f.document.modify([&](Session& s) { s.text = text; }, QStringLiteral("long"));
    f.settle();
    EXPECT_EQ(f.view.valueLabelCount(), 0);
}

TEST(HeatmapView, TooltipSpellsOutTheSoftmax) {
    Fixture f;
    f.document.modify([](Session& s) { s.mask.causal = true; }, QStringLiteral("causal"));
    f.settle();
    const Experiment& experiment = *f.document.experiment();
    // The weight of (2, 1) written out: causal row 2 sees keys 0..2; one head, d = d_model.
    double s[3];
    for (Index j = 0; j < 3; ++j) {
        double dot = 0;
        for (Index d = 0; d < experiment.qkv.q.dim; ++d)
            dot += double(experiment.qkv.q(0, 0, 2, d)) * double(experiment.qkv.k(0, 0, j, d));
        s[j] = dot / std::sqrt(double(experiment.qkv.q.dim));
    }
    const double top = std::max({s[0], s[1], s[2]});
    const double weight =
        std::exp(s[1] - top) / (std::exp(s[0] - top) + std::exp(s[1] - top) + std::exp(s[2] - top));
    ASSERT_EQ(experiment.headCount(), 1);
    const QString allowed = f.view.explainCell(2, 1);
    EXPECT_TRUE(allowed.contains(QStringLiteral("q\u00b7k"))) << allowed.toStdString();
    EXPECT_TRUE(allowed.contains(QStringLiteral("masked: no")));
    EXPECT_TRUE(allowed.contains(QStringLiteral("exp(s")));
    EXPECT_TRUE(allowed.contains(QStringLiteral("row sum")));
    EXPECT_TRUE(allowed.contains(QStringLiteral("weight %1").arg(QString::number(weight, 'g', 4))))
        << allowed.toStdString() << " lacks " << weight;
    EXPECT_TRUE(f.view.explainCell(1, 4).contains(QStringLiteral("masked: yes")));
    EXPECT_TRUE(f.view.explainCell(99, 0).isEmpty());
}

TEST(HeatmapView, ShowsScoresMaskOutputAndQkv) {
    Fixture f;
    for (const char* show : {"scores", "scaled", "mask", "output", "q", "k", "v"}) {
        ViewState state = f.document.session().viewState;
        state.show = show;
        f.document.setViewState(state);
        f.view.ensureFresh();
        const HeatmapData heat = f.view.heatmapData();
        EXPECT_GT(heat.values.size(), 0) << show;
        EXPECT_EQ(f.view.colorMap()->data()->keySize(), heat.values.cols()) << show;
    }
    // Raw scores are q.k: check one cell against Q and K directly.
    ViewState state = f.document.session().viewState;
    state.show = "scores";
    f.document.setViewState(state);
    f.view.ensureFresh();
    const Experiment& e = *f.document.experiment();
    double dot = 0;
    for (Index d = 0; d < e.qkv.q.dim; ++d)
        dot += double(e.qkv.q(0, 0, 1, d)) * e.qkv.k(0, 0, 2, d);
    EXPECT_NEAR(f.view.colorMap()->data()->cell(2, 1), dot, 1e-4);
}

// A long text's weights are all near 1/S: one flat colour on 0..1. The colour scales map them
// (each row over its own largest, log10, the data's range) and the colour bar says which; the
// cells' numbers stay the weights.
TEST(HeatmapView, ColourScalesFitTheDataTheRowOrTheLog) {
    Fixture f;
    f.document.modify([](Session& s) { s.mask.causal = true; }, QStringLiteral("causal"));
    f.settle();
    const Experiment& experiment = *f.document.experiment();
    const Tensor4& w = experiment.attention.weights;
    auto setScale = [&f](const char* scale) {
        ViewState state = f.document.session().viewState;
        state.colorScale = scale;
        f.document.setViewState(state);
        f.settle();
    };
    QCPColorMapData* cells = f.view.colorMap()->data();
    auto cell = [cells](Index i, Index j) {
        return cells->cell(static_cast<int>(j), static_cast<int>(i));
    };
    const QString quantity = f.view.colorScale()->axis()->label();

    setScale("row");
    for (Index i = 0; i < w.seq; ++i) {
        double top = 0;
        for (Index j = 0; j <= i; ++j)
            top = std::max(top, double(w(0, 0, i, j)));
        for (Index j = 0; j <= i; ++j)
            EXPECT_NEAR(cell(i, j), w(0, 0, i, j) / top, 1e-6) << i << "," << j;
    }
    EXPECT_EQ(f.view.colorMap()->dataRange(), QCPRange(0, 1));
    EXPECT_NE(f.view.colorScale()->axis()->label(), quantity);

    setScale("log");
    for (Index i = 0; i < w.seq; ++i)
        for (Index j = 0; j <= i; ++j)
            EXPECT_NEAR(cell(i, j), std::log10(double(w(0, 0, i, j))), 1e-5) << i << "," << j;
    EXPECT_LE(f.view.colorMap()->dataRange().upper, 0.0);

    setScale("data");
    double lowest = 1, highest = 0;
    for (Index i = 0; i < w.seq; ++i)
        for (Index j = 0; j <= i; ++j) {
            lowest = std::min(lowest, double(w(0, 0, i, j)));
            highest = std::max(highest, double(w(0, 0, i, j)));
        }
    EXPECT_NEAR(f.view.colorMap()->dataRange().lower, lowest, 1e-6);
    EXPECT_NEAR(f.view.colorMap()->dataRange().upper, highest, 1e-6);

    setScale("fixed");
    expectCellsEqualWeights(f.view, experiment, 0);
    EXPECT_EQ(f.view.colorScale()->axis()->label(), quantity);
}

/// The colour drawn at the centre of cell (row, column), from the plot as it renders.
QColor cellColour(const HeatmapView& view, Index row, Index column) {
    QCustomPlot* plot = view.plot();
    const QImage image = plot->toPixmap().toImage();
    const double x = plot->axisRect()->axis(QCPAxis::atBottom)->coordToPixel(double(column));
    const double y = plot->axisRect()->axis(QCPAxis::atLeft)->coordToPixel(double(row));
    return image.pixelColor(static_cast<int>(std::lround(x)), static_cast<int>(std::lround(y)));
}

/// Within one of the colour map's 256 levels (at most 3 of 255 per channel at viridis' ends):
/// a cell exactly at an end may fall one level inside it by rounding, as QCustomPlot truncates
/// (value - low) x 255 / (high - low) to a level.
bool nearColour(const QColor& a, const QColor& b) {
    return std::abs(a.red() - b.red()) <= 3 && std::abs(a.green() - b.green()) <= 3 &&
           std::abs(a.blue() - b.blue()) <= 3;
}

// The chosen range (view.color_range): its ends span viridis, from #440154 to #fde725
// (matplotlib's own ends), weights outside take the end colours, the cells keep the weights,
// and the colour bar names the range.
TEST(HeatmapView, ChosenColourRangeSpansTheMapAndClampsOutside) {
    Fixture f;
    // Eight different words: eight different keys, eight different weights in a row.
    f.document.modify([](Session& s) { s.text = "a quick brown fox jumps over lazy dogs"; },
                      QStringLiteral("text"));
    f.settle();
    const Tensor4& w = f.document.experiment()->attention.weights;
    // Row 0's weights in order: the range runs from its second smallest to its second largest.
    std::vector<std::pair<float, Index>> row;
    for (Index j = 0; j < w.dim; ++j)
        row.emplace_back(w(0, 0, 0, j), j);
    std::sort(row.begin(), row.end());
    ASSERT_GE(row.size(), 4u);
    ASSERT_LT(row[0].first, row[1].first);
    ASSERT_LT(row[row.size() - 2].first, row.back().first);
    const double low = row[1].first, high = row[row.size() - 2].first;
    const QString quantity = f.view.colorScale()->axis()->label();
    ViewState state = f.document.session().viewState;
    state.cellValues = false; // no number over the colour sampled
    state.colorScale = "range";
    state.colorLow = low;
    state.colorHigh = high;
    f.document.setViewState(state);
    f.view.show(); // laid out at its size, as the colours are sampled from the plot
    f.settle();
    f.view.plot()->replot(QCustomPlot::rpImmediateRefresh);

    EXPECT_EQ(f.view.colorMap()->dataRange(), QCPRange(low, high));
    expectCellsEqualWeights(f.view, *f.document.experiment(), 0);
    const QString label = f.view.colorScale()->axis()->label();
    EXPECT_TRUE(label.startsWith(quantity)) << label.toStdString();
    EXPECT_TRUE(label.contains(QString::number(high, 'g', 4))) << label.toStdString();
    const QColor top(0xfd, 0xe7, 0x25), bottom(0x44, 0x01, 0x54);
    auto colourOf = [&f](Index column) { return cellColour(f.view, 0, column); };
    EXPECT_TRUE(nearColour(colourOf(row[row.size() - 2].second), top))
        << colourOf(row[row.size() - 2].second).name().toStdString();
    EXPECT_TRUE(nearColour(colourOf(row.back().second), top)); // above: the top colour
    EXPECT_TRUE(nearColour(colourOf(row[1].second), bottom));
    EXPECT_TRUE(nearColour(colourOf(row[0].second), bottom)); // below: the bottom colour
    // The hover breakdown says why a larger weight has the same colour.
    EXPECT_TRUE(f.view.explainCell(0, row.back().second).contains(QStringLiteral("above")));
    EXPECT_FALSE(f.view.explainCell(0, row[2].second).contains(QStringLiteral("above")));

    // Scores have their own range: the chosen one is for weights only.
    state.show = "scaled";
    f.document.setViewState(state);
    f.settle();
    EXPECT_NE(f.view.colorMap()->dataRange(), QCPRange(low, high));
    EXPECT_FALSE(f.view.colorScale()->axis()->label().contains(QString::number(high, 'g', 4)));
}

// Compare's A and B share one colour scale: on the chosen range it is that range, as 0 to 1
// stays 0 to 1, not the span of both matrices' values.
TEST(HeatmapView, CompareKeepsTheChosenColourRangeForAAndB) {
    Document document;
    Session session;
    session.viewState.colorScale = "range";
    session.viewState.colorLow = 0.05;
    session.viewState.colorHigh = 0.3;
    document.reset(session);
    CompareView compare(&document);
    compare.resize(1200, 500);
    compare.compareWith(Comparison::FullVsCausal);
    document.flush();
    document.flush();
    compare.ensureFresh();
    ASSERT_NE(document.comparisonExperiment(), nullptr);
    for (HeatmapView* panel : {compare.primaryView(), compare.comparisonView()})
        EXPECT_EQ(panel->colorMap()->dataRange(), QCPRange(0.05, 0.3));
    EXPECT_TRUE(compare.comparisonView()->colorScale()->axis()->label().contains(
        QStringLiteral("0.05 to 0.3")))
        << compare.comparisonView()->colorScale()->axis()->label().toStdString();
}

/// The labels an axis draws, in order.
QStringList tickLabels(const HeatmapView& view, QCPAxis::AxisType side) {
    auto* ticker =
        dynamic_cast<QCPAxisTickerText*>(view.plot()->axisRect()->axis(side)->ticker().data());
    return ticker ? QStringList(ticker->ticks().values()) : QStringList();
}

QStringList wordsOf(const std::string& text) {
    std::istringstream in(text);
    QStringList out;
    for (std::string word; in >> word;)
        out << QString::fromStdString(word);
    return out;
}

// A one-column figure of a sentence left its matrix a third of the page wide with half the page
// blank below it, and labelled 5 of 18 rows: every token keeps its label (the labels shrink to
// the preset's least size first), the matrix takes most of the width, and the page is as tall
// as the square cells need.
TEST(HeatmapView, AOneColumnFigureLabelsEveryTokenAndFillsItsPage) {
    const FigureOptions column = figureOptionsOf(*figurePresetNamed(QStringLiteral("column")));
    ASSERT_TRUE(column.fitHeight);
    for (const std::string text :
         {"the quick brown fox jumps over the lazy dog",
          "a teacher shows the class how each word of this sentence looks at the others when "
          "the model reads it"}) {
        SCOPED_TRACE(text);
        Document document;
        document.modify([&](Session& s) { s.text = text; }, QStringLiteral("text"));
        document.flush();
        const QStringList tokens = wordsOf(text);
        ASSERT_LE(tokens.size(), 20);
        HeatmapView view(&document);
        view.resize(900, 600);
        FigureStyle style = column.style;
        style.wrapWidth = column.size.width();
        view.setFigureStyle(style);
        const int width = column.size.width();
        const int height = view.fittedFigureHeight(width);
        ASSERT_GT(height, 0);
        const QImage image = renderFigure(view, QSize(width, height));
        ASSERT_EQ(image.height(), height);
        EXPECT_EQ(tickLabels(view, QCPAxis::atLeft), tokens);
        EXPECT_EQ(tickLabels(view, QCPAxis::atBottom), tokens);
        EXPECT_GE(view.labelPoints(), column.style.minFontPoints);
        const QRect matrix = view.plot()->axisRect()->rect();
        EXPECT_GE(matrix.width(), 0.6 * width);
        EXPECT_GE(matrix.height(), 0.45 * height);
        // Square cells, or rows a little taller where a row needs a label's line.
        const double cellWidth = matrix.width() / double(tokens.size());
        const double cellHeight = matrix.height() / double(tokens.size());
        EXPECT_GE(cellHeight, 0.9 * cellWidth);
        EXPECT_LE(cellHeight, 1.4 * cellWidth);
    }
}

// The model's heatmap showed 7 of 14 query labels at 1280 x 720 in the projector theme: labels
// shrink to the theme's least size before any is dropped, and only beyond that are they thinned.
TEST(HeatmapView, LabelsShrinkToTheThemesLeastSizeBeforeThinning) {
    for (const int count : {14, 60}) {
        SCOPED_TRACE(count);
        Document document;
        std::string text;
        for (int i = 0; i < count; ++i)
            text += (i ? " w" : "w") + std::to_string(i);
        document.modify([&](Session& s) { s.text = text; }, QStringLiteral("text"));
        document.setTheme(QStringLiteral("projector"));
        document.flush();
        const Theme projector = themeNamed(QStringLiteral("projector"));
        HeatmapView view(&document);
        view.resize(760, 420); // the heatmap's room in the window at 1280 x 720
        view.show();
        view.ensureFresh();
        for (int i = 0; i < 4; ++i)
            view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        EXPECT_GE(view.labelPoints(), projector.minimumFontPointSize);
        EXPECT_LE(view.labelPoints(), projector.fontPointSize);
        const QStringList rows = tickLabels(view, QCPAxis::atLeft);
        if (count == 14) {
            EXPECT_EQ(rows.size(), 14);
            EXPECT_LT(view.labelPoints(), projector.fontPointSize); // 14 rows at 16 pt do not fit
        } else {
            EXPECT_LT(rows.size(), count);
            EXPECT_EQ(view.labelPoints(), projector.minimumFontPointSize);
        }
    }
}

TEST(HeatmapView, OneWideLabelAmongNarrowOnesKeepsTheLabelsLevel) {
    // "<pad>" before Chinese characters turned every key label upright (characters on their
    // side) though each column had room for it beside its narrow neighbours.
    const auto rotation = [](const std::string& text) {
        Document document;
        document.modify([&](Session& s) { s.text = text; }, QStringLiteral("text"));
        document.flush();
        HeatmapView view(&document);
        view.resize(760, 420);
        view.show();
        view.ensureFresh();
        for (int i = 0; i < 3; ++i)
            view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QCPAxis* keys = view.plot()->axisRect()->axis(QCPAxis::atBottom);
        const double cell = view.plot()->axisRect()->width() / keys->range().size();
        const QFontMetricsF metrics(keys->tickLabelFont());
        return std::pair{keys->tickLabelRotation(),
                         metrics.horizontalAdvance(QStringLiteral("<|endoftext|>")) > cell};
    };
    const auto [mixed, wideLabelOverflows] = rotation("<|endoftext|> a b c d e f g h");
    EXPECT_TRUE(wideLabelOverflows); // the case: the wide label alone is wider than its column
    EXPECT_EQ(mixed, 0);
    // Neighbours that are all wide still turn upright.
    const auto [wide, overflows] = rotation("<|endoftext|> <|endoftext|> <|endoftext|> "
                                            "<|endoftext|> <|endoftext|> <|endoftext|> "
                                            "<|endoftext|> <|endoftext|> <|endoftext|>");
    EXPECT_TRUE(overflows);
    EXPECT_EQ(wide, -90);
}

} // namespace
} // namespace attnlab::ui

namespace attnlab::ui {
namespace {

TEST(HeatmapView, LongSequencesThinLabelsAndZoomBringsThemBack) {
    Document document;
    std::string text;
    for (int i = 0; i < 200; ++i) {
        text += 't';
        text += std::to_string(i);
        text += ' ';
    }
    document.modify([&](Session& s) { s.text = text; }, QStringLiteral("long"));
    document.flush();
    HeatmapView view(&document);
    view.resize(600, 500);
    view.ensureFresh();
    view.plot()->replot();
    QCPAxis* x = view.plot()->axisRect()->axis(QCPAxis::atBottom);
    auto ticks = [x] { return dynamic_cast<QCPAxisTickerText*>(x->ticker().data())->ticks(); };
    EXPECT_LT(ticks().size(), 60); // thinned: 200 labels do not fit in 600 px
    EXPECT_GT(ticks().size(), 3);
    // Thinned labels of a long text carry their positions, so a repeated word can be placed.
    for (auto it = ticks().cbegin(); it != ticks().cend(); ++it)
        EXPECT_TRUE(it.value().startsWith(QString::number(static_cast<int>(it.key())) + ' '))
            << it.value().toStdString();
    x->setRange(10, 14); // zoom in: every visible token is labelled, still with its position
    EXPECT_EQ(ticks().value(11), QStringLiteral("11 t11"));
    EXPECT_EQ(ticks().value(12), QStringLiteral("12 t12"));
    x->setRange(-50, 400); // zooming out stops at the matrix
    EXPECT_DOUBLE_EQ(x->range().lower, -0.5);
    EXPECT_DOUBLE_EQ(x->range().upper, 199.5);
}

} // namespace
} // namespace attnlab::ui

namespace attnlab::ui {
namespace {

/// "t0 t1 ... t<count-1>": every token names its position.
std::string numberedText(int count) {
    return test::numberedText(count, "t");
}

struct LongHeatmap {
    Document document;
    HeatmapView view{&document};
    explicit LongHeatmap(int count) {
        document.modify([&](Session& s) { s.text = numberedText(count); }, QStringLiteral("text"));
        document.flush();
        EXPECT_TRUE(document.waitForIdle());
        view.resize(900, 520);
        view.show();
        view.ensureFresh();
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    }
    QCPAxis* keys() const { return view.plot()->axisRect()->axis(QCPAxis::atBottom); }
    QCPAxis* queries() const { return view.plot()->axisRect()->axis(QCPAxis::atLeft); }
};

// A long text's heatmap is a map: beside the detail, the whole matrix with a rectangle on the
// part shown; a click there moves the detail, keeping its size, and stops at the matrix's
// edges. A sentence, or a panel of the compare view, has none.
TEST(HeatmapView, ALongMatrixHasAnOverviewThatMovesTheDetail) {
    {
        Document document;
        document.flush();
        HeatmapView sentence(&document);
        sentence.show();
        sentence.ensureFresh();
        ASSERT_GT(sentence.colorMap()->data()->keySize(), 1);
        EXPECT_FALSE(sentence.overviewShown());
    }
    {
        LongHeatmap panel(200);
        panel.view.setPanel(true);
        panel.view.ensureFresh();
        EXPECT_FALSE(panel.view.overviewShown());
    }
    LongHeatmap f(200);
    ASSERT_TRUE(f.view.overviewShown());
    const QRectF whole = f.view.overviewFrame();
    ASSERT_GT(whole.width(), 50);
    EXPECT_NEAR(whole.width(), whole.height(), 1); // 200 x 200: a square

    // Zoom to keys 50..79 and queries 100..139: the rectangle is 30 by 40 cells of 200, there.
    f.keys()->setRange(49.5, 79.5);
    f.queries()->setRange(99.5, 139.5);
    const QRectF frame = f.view.overviewFrame();
    const double cell = whole.width() / 200;
    EXPECT_NEAR(frame.width(), 30 * cell, 0.5);
    EXPECT_NEAR(frame.height(), 40 * cell, 0.5);
    EXPECT_NEAR(frame.left() - whole.left(), 50 * cell, 0.5);
    EXPECT_NEAR(frame.top() - whole.top(), 100 * cell, 0.5);

    // A click a rectangle's width to the right of its centre moves the detail 30 keys on.
    const QPoint right = (frame.center() + QPointF(frame.width(), 0)).toPoint();
    QTest::mouseClick(f.view.overview(), Qt::LeftButton, {}, right);
    EXPECT_NEAR(f.keys()->range().lower, 79.5, 200 / whole.width() + 0.01);
    EXPECT_NEAR(f.keys()->range().size(), 30, 1e-9);
    EXPECT_NEAR(f.queries()->range().lower, 99.5, 200 / whole.width() + 0.01);
    EXPECT_NEAR(f.view.overviewFrame().left(), frame.left() + frame.width(), 1.5);

    // A click in the corner stops at the matrix's first cells.
    QTest::mouseClick(f.view.overview(), Qt::LeftButton, {}, whole.topLeft().toPoint());
    EXPECT_DOUBLE_EQ(f.keys()->range().lower, -0.5);
    EXPECT_DOUBLE_EQ(f.queries()->range().lower, -0.5);
    EXPECT_NEAR(f.keys()->range().size(), 30, 1e-9);

    // With the whole matrix shown, a click zooms in there.
    f.view.resetZoom();
    EXPECT_EQ(f.view.overviewFrame(), whole);
    QTest::mouseClick(f.view.overview(), Qt::LeftButton, {}, whole.center().toPoint());
    EXPECT_NEAR(f.keys()->range().size(), HeatmapView::kOverviewFrom, 1e-9);
    EXPECT_NEAR(f.keys()->range().center(), 99.5, 200 / whole.width() + 0.01);
}

// Zoomed in, the axes' titles say which part is shown, and a long text's labels keep their
// positions even where every label shows, so a repeated word can be placed. The keyboard
// zooms about the centre and shows the whole again.
TEST(HeatmapView, ZoomedInTheTitlesNameThePartShown) {
    LongHeatmap f(200);
    const QString keys = f.keys()->label();
    const QString queries = f.queries()->label();
    EXPECT_FALSE(keys.contains(QStringLiteral("200")));
    f.keys()->setRange(49.5, 79.5);
    f.queries()->setRange(99.5, 139.5);
    EXPECT_EQ(f.keys()->label(), keys + QStringLiteral(" 50\u201379 of 200"));
    EXPECT_EQ(f.queries()->label(), queries + QStringLiteral(" 100\u2013139 of 200"));
    f.keys()->setRange(59.5, 63.5);
    const QStringList zoomed = tickLabels(f.view, QCPAxis::atBottom);
    for (const char* label : {"60 t60", "61 t61", "62 t62", "63 t63"})
        EXPECT_TRUE(zoomed.contains(QLatin1String(label))) << label;

    f.view.resetZoom();
    EXPECT_EQ(f.keys()->label(), keys);
    f.view.plot()->setFocus();
    QTest::keyClick(f.view.plot(), Qt::Key_Plus);
    EXPECT_NEAR(f.keys()->range().size(), 200 / 1.5, 1e-9);
    EXPECT_NEAR(f.keys()->range().center(), 99.5, 1e-9);
    QTest::keyClick(f.view.plot(), Qt::Key_Minus);
    QTest::keyClick(f.view.plot(), Qt::Key_Plus);
    QTest::keyClick(f.view.plot(), Qt::Key_Plus);
    EXPECT_LT(f.queries()->range().size(), 100);
    QTest::keyClick(f.view.plot(), Qt::Key_0);
    EXPECT_DOUBLE_EQ(f.queries()->range().lower, -0.5);
    EXPECT_DOUBLE_EQ(f.queries()->range().upper, 199.5);
    EXPECT_FALSE(f.view.whatsThis().isEmpty());
}

/// The title's text as drawn in the window.
QString titleText(const HeatmapView& view) {
    auto* title = qobject_cast<QCPTextElement*>(view.plot()->plotLayout()->element(0, 0));
    return title ? title->text() : QString();
}

/// The median over the rows of each row's largest weight (head 0).
double typicalRowPeak(const Experiment& experiment) {
    const Tensor4& w = experiment.attention.weights;
    std::vector<double> peaks;

    for (Index i = 0; i < w.seq; ++i) {
        double peak = 0;
        for (Index j = 0; j < w.dim; ++j)
            peak = std::max(peak, double(w(0, 0, i, j)));
        peaks.push_back(peak);
    }
    std::sort(peaks.begin(), peaks.end());
    return peaks[peaks.size() / 2];
}

// On the fixed 0-to-1 scale a 1000-token head's weights are one flat colour: the window says
// so under the title, with a typical row's largest weight and the scales that show the pattern. A
// sentence (weights up to near 1) and the per-row scale need no hint.
TEST(HeatmapView, AFlatMapSaysSoUnderItsTitle) {
    LongHeatmap f(1000);
    const double typical = typicalRowPeak(*f.document.experiment());
    ASSERT_LT(typical, HeatmapView::kFlatWeight);
    EXPECT_TRUE(f.view.flatHint().contains(QString::number(typical, 'g', 2)))
        << f.view.flatHint().toStdString();
    EXPECT_TRUE(titleText(f.view).contains(QString::number(typical, 'g', 2)));

    // A click on that line switches to the per-row scale, and the line goes.
    for (int pass = 0; pass < 3; ++pass)
        f.view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    auto* title = qobject_cast<QCPTextElement*>(f.view.plot()->plotLayout()->element(0, 0));
    ASSERT_TRUE(title);
    const QRect drawn = title->outerRect();
    QTest::mouseClick(f.view.plot(), Qt::LeftButton, {},
                      QPoint(drawn.center().x(), drawn.top() + 3));
    EXPECT_EQ(f.document.session().viewState.colorScale, "fixed"); // the heading's first line
    QTest::mouseClick(f.view.plot(), Qt::LeftButton, {},
                      QPoint(drawn.center().x(), drawn.bottom() - 4));
    EXPECT_EQ(f.document.session().viewState.colorScale, "row");
    f.view.ensureFresh();
    EXPECT_TRUE(f.view.flatHint().isEmpty());

    Document document;
    document.flush();
    HeatmapView sentence(&document);
    sentence.show();
    sentence.ensureFresh();
    ASSERT_GE(typicalRowPeak(*document.experiment()), HeatmapView::kFlatWeight);
    EXPECT_TRUE(sentence.flatHint().isEmpty());
}

} // namespace
} // namespace attnlab::ui

namespace attnlab::ui {
namespace {

// A long matrix is drawn in the window at the screen's resolution, the cells in view only:
// each cell's pixels have the colour its weight maps to, zoomed out (a pixel samples its cell)
// or in. A figure of the zoomed heatmap holds the part in view, its titles naming it.
TEST(HeatmapView, ALongMatrixDrawsTheCellsInViewInTheirColours) {
    LongHeatmap f(300); // 90 000 cells: drawn at the screen's resolution
    QCPColorMap* map = f.view.colorMap();
    QCPColorGradient gradient = map->gradient();
    auto expectCellColours = [&](int stride) {
        for (int pass = 0; pass < 3; ++pass) // layout settles (label sizes, margins)
            f.view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QImage shot = f.view.plot()->grab().toImage();
        const QRect area = f.view.plot()->axisRect()->rect();
        int checked = 0;
        for (int y = area.top() + 2; y < area.bottom() - 2; y += stride)
            for (int x = area.left() + 2; x < area.right() - 2; x += stride) {
                const auto j = static_cast<int>(std::lround(f.keys()->pixelToCoord(x + 0.5)));
                const auto i = static_cast<int>(std::lround(f.queries()->pixelToCoord(y + 0.5)));
                const QRgb expected = gradient.color(map->data()->cell(j, i), map->dataRange());
                ASSERT_EQ(shot.pixel(x, y) & 0xffffff, expected & 0xffffff)
                    << "pixel " << x << "," << y << " cell " << i << "," << j;
                ++checked;
            }
        EXPECT_GT(checked, 100);
    };
    ViewState state = f.document.session().viewState;
    state.colorScale = "log"; // colours that vary from cell to cell
    f.document.setViewState(state);
    f.view.ensureFresh();
    f.view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    expectCellColours(7);
    f.keys()->setRange(119.5, 131.5);
    f.queries()->setRange(199.5, 209.5);
    f.view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    expectCellColours(5);

    const QString keys = f.keys()->label();
    const QImage figure = renderFigure(f.view, QSize(640, 480));
    EXPECT_FALSE(figure.isNull());
    EXPECT_EQ(f.keys()->range(), QCPRange(119.5, 131.5));
    EXPECT_TRUE(keys.endsWith(QStringLiteral("120\u2013131 of 300"))) << keys.toStdString();
    EXPECT_EQ(f.keys()->label(), keys);
}

} // namespace
} // namespace attnlab::ui

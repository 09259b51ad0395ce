#include "ui/views/compare_view.h"

#include <QComboBox>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>

#include "ui/state/experiment_data.h"
#include "ui/views/flow_layout.h"
#include "ui/views/heatmap_view.h"

namespace attnlab::ui {

CompareView::CompareView(Document* document, QWidget* parent) : View(document, parent) {
    auto* layout = new QVBoxLayout(this);
    // The choice wraps under its label rather than widen the window (a 1024-pixel projector).
    auto* topRow = new QWidget(this);
    auto* top = new FlowLayout(topRow);
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(new QLabel(tr("Compare A (the session) with B ="), this));
    m_combo = new QComboBox(this);
    for (Comparison c : {Comparison::FullVsCausal, Comparison::SoftmaxVsLinear,
                         Comparison::MhaVsGqa, Comparison::MhaVsMqa, Comparison::NoneVsRope})
        m_combo->addItem(comparisonName(c), int(c));
    m_combo->setToolTip(tr("The one change that turns configuration A into B."));
    top->addWidget(m_combo);
    layout->addWidget(topRow);
    m_flatNote = new QLabel(this);
    m_flatNote->setWordWrap(true);
    m_flatNote->setTextFormat(Qt::RichText);
    m_flatNote->setVisible(false);
    connect(m_flatNote, &QLabel::linkActivated, this, [this](const QString&) {
        HeatmapView::colourEachRowOverItsLargest(*this->document());
    });
    layout->addWidget(m_flatNote);
    auto* splitter = m_splitter = new QSplitter(Qt::Horizontal, this);
    m_a = new HeatmapView(document, HeatmapSource::Primary, splitter);
    m_b = new HeatmapView(document, HeatmapSource::Comparison, splitter);
    m_difference = new HeatmapView(document, HeatmapSource::Difference, splitter);
    m_a->setPanel(true);
    m_b->setPanel(false);
    m_difference->setPanel(false);
    // Equal room for the three matrices: B - A was a thin strip beside its colour bar.
    for (int i = 0; i < 3; ++i)
        splitter->setStretchFactor(i, 1);
    layout->addWidget(splitter, 1);
    connect(m_combo, &QComboBox::activated, this, [this](int) {
        if (isVisible()) this->document()->setComparison(selected());
        refresh();
    });
}

Comparison CompareView::selected() const {
    return static_cast<Comparison>(m_combo->currentData().toInt());
}

void CompareView::setComparison(Comparison comparison) {
    m_combo->setCurrentIndex(std::max(0, m_combo->findData(int(comparison))));
    // The document computes B only while this view is shown (showEvent asks then).
    if (isVisible()) document()->setComparison(comparison);
    refresh();
}

void CompareView::compareWith(Comparison comparison) {
    m_combo->setCurrentIndex(std::max(0, m_combo->findData(int(comparison))));
    document()->setComparison(comparison);
    refresh();
}

void CompareView::compareWithSession(const Session& other, const QString& name) {
    if (m_combo->findData(int(Comparison::OtherSession)) < 0)
        m_combo->addItem(comparisonName(Comparison::OtherSession), int(Comparison::OtherSession));
    m_combo->setItemText(m_combo->findData(int(Comparison::OtherSession)), name);
    m_combo->setCurrentIndex(m_combo->findData(int(Comparison::OtherSession)));
    document()->setComparisonSession(other, name);
    refresh();
}

void CompareView::setFigureStyle(const FigureStyle& style) {
    FigureStyle panels = style;
    panels.caption.clear();
    panels.wrapWidth = style.wrapWidth > 0 ? style.wrapWidth / 3 : 0;
    for (HeatmapView* view : {m_a, m_b, m_difference})
        view->setFigureStyle(panels);
    View::setFigureStyle(style);
}

QString CompareView::notApplicable() const {
    const Experiment* experiment = document()->experiment();
    if (experiment && !experiment->source.isSession())
        return tr("%1 is not a lab session: B is the session with one change.")
            .arg(describeSource(experiment->source));
    return {};
}

void CompareView::showEvent(QShowEvent* event) {
    document()->setComparison(selected());
    View::showEvent(event);
}

void CompareView::resizeEvent(QResizeEvent* event) {
    View::resizeEvent(event);
    // The splitter shares out what is left after each panel's size hint, so a long text's
    // labels (or their absence) made one panel twice as wide as another.
    const int third = std::max(1, (m_splitter->width() - 2 * m_splitter->handleWidth()) / 3);
    m_splitter->setSizes({third, third, third});
}

void CompareView::hideEvent(QHideEvent* event) {
    document()->setComparison(Comparison::None);
    View::hideEvent(event);
}

/// Below this everywhere, B - A is rounding: A and B are the same computation.
constexpr double kSameWithin = 1e-6;

void CompareView::refresh() {
    // Each panel draws its cells once per refresh (16 M of them a head at 4 000 tokens); the
    // captions, the shared colour range and the title padding are applied to what is drawn.
    m_a->setCaption(tr("A: %1").arg(tr("session")));
    // B is named after what the document computed it for, never after the combo alone: the
    // caption and the figure cannot disagree.
    const Comparison shown = document()->shownComparison();
    const QString bName = shown == Comparison::OtherSession ? document()->comparisonSessionName()
                                                            : comparisonName(shown);
    m_b->setCaption(shown == Comparison::None
                        ? tr("B: %1 (not computed yet)").arg(m_combo->currentText())
                        : tr("B: %1").arg(bName));
    m_difference->setCaption(tr("B \u2212 A"));
    m_a->setColorBarShown(false);
    for (HeatmapView* view : {m_a, m_b, m_difference}) {
        view->setMinimumTitleLines(0);
        view->refreshNow();
    }
    // B the same as A (B = causal on a causal session): a blank B - A on a scale of 1e-12
    // said nothing; the caption says it.
    const auto difference = m_difference->drawnRange();
    const bool same = shown != Comparison::None && difference &&
                      std::max(std::abs(difference->first), std::abs(difference->second)) <
                          kSameWithin;
    if (same) m_difference->setCaption(tr("B \u2212 A = 0 everywhere: A and B are the same"));
    showFlatNote(same);
    // A and B on one colour scale, shown once (B's bar); B - A keeps its diverging one.
    const auto a = m_a->drawnRange(), b = m_b->drawnRange();
    std::optional<std::pair<double, double>> shared;
    // One fixed range (0 to 1, or the chosen range) stays; the values' own ranges join.
    if (const auto fixed = m_a->fixedColorRange(); fixed && (!b || m_b->fixedColorRange() == fixed))
        shared = fixed;
    else if (a || b)
        shared = std::make_pair(std::min(a ? a->first : b->first, b ? b->first : a->first),
                                std::max(a ? a->second : b->second, b ? b->second : a->second));
    // The label names the scale too ("weight (0 to 0.01)"): A and B are drawn on it.
    const QString label =
        m_a->colorBarLabel().isEmpty() ? m_b->colorBarLabel() : m_a->colorBarLabel();
    m_a->setSharedColorRange(shared);
    m_b->setSharedColorRange(shared, tr("A and B: %1").arg(label));
    // Titles of one height, so A, B and B - A start level (a caption that wraps pushed its
    // matrix down).
    int lines = 1;
    for (HeatmapView* view : {m_a, m_b, m_difference})
        lines = std::max(lines, view->titleLines());
    for (HeatmapView* view : {m_a, m_b, m_difference})
        view->setMinimumTitleLines(lines);
    levelMatrixTops();
}

void CompareView::showFlatNote(bool same) {
    // A long text: A and B on 0..1, and B - A on +-its largest, are one flat colour each. The
    // panels are too narrow for the heatmap's own hint; one line above them says it.
    QStringList flat;
    const HeatmapView* weights = m_a->flatMap() ? m_a : m_b;
    if (const auto a = weights->flatMap())
        flat << tr("a typical row\u2019s largest weight is %1")
                    .arg(QString::number(a->typicalRowPeak, 'g', 2));
    if (const auto d = m_difference->flatMap(); d && !same)
        flat << tr("a typical row\u2019s largest |B \u2212 A| is %1 on a \u00b1%2 scale")
                    .arg(QString::number(d->typicalRowPeak, 'g', 2),
                         QString::number(d->scaleEnd, 'g', 2));
    m_flatNote->setVisible(!flat.isEmpty());
    if (flat.isEmpty()) {
        m_flatNote->clear();
        return;
    }
    m_flatNote->setText(
        tr("Nearly one colour: %1. <a href=\"row\">Colour each row over its own largest</a>, "
           "or choose \u201clog scale\u201d under Colours.")
            .arg(flat.join(tr("; ")).toHtmlEscaped()));
}

void CompareView::levelMatrixTops() {
    // Laid out with no padding first, then each matrix's top margin grows by what it lacks.
    const HeatmapView* panels[3] = {m_a, m_b, m_difference};
    int tops[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
        QCustomPlot* plot = panels[i]->plot();
        plot->axisRect()->setMinimumMargins(QMargins());
        plot->replot(QCustomPlot::rpImmediateRefresh);
        tops[i] = plot->mapTo(this, QPoint(0, 0)).y() + plot->axisRect()->top();
    }
    const int lowest = *std::max_element(std::begin(tops), std::end(tops));
    for (int i = 0; i < 3; ++i) {
        if (tops[i] == lowest) continue;
        QCPAxisRect* rect = panels[i]->plot()->axisRect();
        rect->setMinimumMargins(QMargins(0, rect->margins().top() + lowest - tops[i], 0, 0));
        panels[i]->plot()->replot(QCustomPlot::rpQueuedReplot);
    }
}

QString CompareView::figureTitle() const {
    if (!figureStyle().caption.isEmpty()) return figureStyle().caption;
    const Experiment* experiment = document()->experiment();
    if (!experiment) return title();
    const Comparison shown = document()->shownComparison();
    const QString bName = shown == Comparison::OtherSession ? document()->comparisonSessionName()
                                                            : comparisonName(shown);
    return tr("A: %1; B: %2")
        .arg(figureCaption(*experiment, document()->session().viewState.head), bName);
}

void CompareView::paintFigure(QCPPainter& painter, const QSize& size) {
    // The whole figure's title (what A is, what B changes), wrapped to the width, then the
    // three panels side by side.
    int top = 0;
    if (figureStyle().showTitle) {
        const Theme look = theme();
        QFont font = painter.font();
        setFontSize(font, look, look.fontPointSize);
        font.setBold(true);
        painter.save();
        painter.setFont(font);
        painter.setPen(look.foreground);
        const int margin = std::max(2, look.fontPointSize / 2);
        const QRect room(margin, margin, size.width() - 2 * margin, size.height() / 3);
        const QRect used =
            painter.boundingRect(room, Qt::AlignHCenter | Qt::TextWordWrap, figureTitle());
        painter.drawText(room, Qt::AlignHCenter | Qt::TextWordWrap, figureTitle());
        painter.restore();
        top = used.bottom() + margin;
    }
    const int third = size.width() / 3;
    const QSize panel(third, size.height() - top);
    // A dry pass lays each panel out at the figure's size with no padding; the real one pads
    // each matrix's top to the lowest one's, as on screen.
    HeatmapView* const panels[3] = {m_a, m_b, m_difference};
    int tops[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
        panels[i]->refreshNow();
        panels[i]->plot()->axisRect()->setMinimumMargins(QMargins());
        panels[i]->layOutFigure(panel);
        tops[i] = panels[i]->plot()->axisRect()->top();
    }
    const int lowest = *std::max_element(std::begin(tops), std::end(tops));
    int x = 0;
    for (int i = 0; i < 3; ++i) {
        QCPAxisRect* rect = panels[i]->plot()->axisRect();
        rect->setMinimumMargins(QMargins(0, rect->margins().top() + lowest - tops[i], 0, 0));
        painter.save();
        painter.translate(x, top);
        panels[i]->paintFigure(painter, panel);
        painter.restore();
        x += third;
    }
    // The panels' padding for the window again.
    if (isVisible()) levelMatrixTops();
}

DataTable CompareView::data() const {
    // The three panels as drawn, one block of rows each: A, B and B - A.
    const DataTable panels[3] = {m_a->data(), m_b->data(), m_difference->data()};
    DataTable table;
    for (const DataTable& panel : panels)
        if (panel.rows == 0 || panel.cols != panels[0].cols || panel.rows != panels[0].rows) {
            table.unavailable = tr("B is not computed yet: nothing to compare");
            return table;
        }
    table = panels[0];
    table.groupHeader = QStringLiteral("panel");
    table.groupLabels = {QStringLiteral("A"), QStringLiteral("B"), QStringLiteral("B-A")};
    for (int p = 1; p < 3; ++p) {
        table.rowLabels << panels[p].rowLabels;
        table.values.insert(table.values.end(), panels[p].values.begin(), panels[p].values.end());
        table.rows += panels[p].rows;
    }
    table.extra.insert(QStringLiteral("compared"), figureTitle());
    return table;
}

} // namespace attnlab::ui

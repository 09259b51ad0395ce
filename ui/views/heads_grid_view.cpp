#include "ui/views/heads_grid_view.h"

#include <QMouseEvent>
#include <qcustomplot.h>

#include <cmath>
#include <limits>

#include "ui/state/experiment_data.h"
#include "ui/views/colormap.h"
#include "ui/views/teaching_plot.h"
#include "ui/views/token_tooltips.h"

namespace attnlab::ui {

namespace {
/// Qualitative, colour-blind-safe group colours (Okabe-Ito).
const QColor kGroupColors[] = {QColor(0xe6, 0x9f, 0x00), QColor(0x56, 0xb4, 0xe9),
                               QColor(0x00, 0x9e, 0x73), QColor(0xcc, 0x79, 0xa7),
                               QColor(0x00, 0x72, 0xb2), QColor(0xd5, 0x5e, 0x00),
                               QColor(0xf0, 0xe4, 0x42), QColor(0x99, 0x99, 0x99)};
/// The stretch of the one labelled row or column (the last row, the first column) that makes
/// its maps as large as the others: its labels (a long text's are numbered, so wide) take
/// `extra` pixels more of its `count` shares of `length`.
double labelledStretch(double length, double extra, int count) {
    if (count < 2 || extra <= 0 || length <= extra) return 1.0;
    return (length + extra * (count - 1)) / (length - extra);
}

bool setStretch(QList<double> factors, double labelled, bool last, QCPLayoutGrid* grid, bool rows) {
    if (factors.size() < 2) return false;
    factors.fill(1.0);
    factors[last ? factors.size() - 1 : 0] = labelled;
    const QList<double> now = rows ? grid->rowStretchFactors() : grid->columnStretchFactors();
    bool same = now.size() == factors.size();
    for (int i = 0; same && i < factors.size(); ++i)
        same = std::abs(now[i] - factors[i]) < 0.01 * factors[i];
    if (same) return false;
    if (rows)
        grid->setRowStretchFactors(factors);
    else
        grid->setColumnStretchFactors(factors);
    return true;
}

/// Every head's map the same size: the last row's and the first column's tick labels take room
/// the other maps keep, so those get a larger share. True when the shares changed.
bool balanceGrid(QCPLayoutGrid* grid) {
    auto* first = qobject_cast<QCPAxisRect*>(grid->element(0, 0));
    if (!first) return false;
    bool changed = false;
    const int rows = grid->rowCount(), columns = grid->columnCount();
    // Asked only for cells that exist: QCustomPlot warns of any other.
    if (auto* last = rows > 1 ? qobject_cast<QCPAxisRect*>(grid->element(rows - 1, 0)) : nullptr) {
        const double length = grid->rect().height() - (rows - 1) * grid->rowSpacing();
        const double extra = last->margins().bottom() - first->margins().bottom();
        changed =
            setStretch(QList<double>(rows), labelledStretch(length, extra, rows), true, grid, true);
    }
    if (auto* second = columns > 1 ? qobject_cast<QCPAxisRect*>(grid->element(0, 1)) : nullptr) {
        const double length = grid->rect().width() - (columns - 1) * grid->columnSpacing();
        const double extra = first->margins().left() - second->margins().left();
        changed = setStretch(QList<double>(columns), labelledStretch(length, extra, columns), false,
                             grid, false) ||
                  changed;
    }
    return changed;
}

} // namespace

HeadsGridView::HeadsGridView(Document* document, QWidget* parent)
    : PlotView(document, parent), m_labelledEdges(new QCPMarginGroup(m_plot)) {
    setToolTip(tr("Every head's weights; frames of one colour share keys and values (a kv "
                  "group). Click a head to focus it, double-click to open it in the heatmap."));
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
        const int head = headAt(event->pos());
        if (head >= 0) this->document()->setFocusedHead(head);
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent* event) {
        const int head = headAt(event->pos());
        if (head >= 0) emit headActivated(head);
    });
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        bool changed = false;
        for (QCPAxisRect* rect : m_plot->axisRects())
            for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)})
                if (axis && axis->tickLabels()) changed = fitTokenLabels(axis) || changed;
        QCPLayoutGrid* layout = m_plot->plotLayout();
        if (auto* grid = layout->rowCount() > 1
                             ? qobject_cast<QCPLayoutGrid*>(layout->element(1, 0))
                             : nullptr)
            changed = balanceGrid(grid) || changed;
        if (changed) m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
}

Index HeadsGridView::blockFor(Index positions) {
    return overviewBlock(positions);
}

MatrixD HeadsGridView::binnedWeights(const Experiment& experiment, Index head, Index block) {
    if (head < 0 || head >= experiment.weightHeads()) return MatrixD(0, 0);
    // A model's layer took its overviews while it ran (block overviewBlock, its own mask).
    const auto at = static_cast<std::size_t>(head);
    if (at < experiment.overviews.size() &&
        block == blockFor(std::max(experiment.sq(), experiment.sk())))
        return experiment.overviews[at];
    if (experiment.maps) {
        const Matrix weights = experiment.headWeights(head);
        return blockMax(ConstMatrixMap(weights.data(), weights.rows(), weights.cols()),
                        experiment.mask, block);
    }
    return blockMax(std::as_const(experiment.attention.weights).head(0, head), experiment.mask,
                    block);
}

int HeadsGridView::columnsFor(int heads, int kvHeads) {
    const int group = heads / std::max(1, kvHeads);
    if (kvHeads > 1 && group > 1 && group <= 8) return group;
    return std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(heads)))));
}

int HeadsGridView::headAt(const QPoint& position) const {
    const QList<QCPAxisRect*> rects = m_plot->axisRects();
    for (int h = 0; h < rects.size() && h < m_heads; ++h)
        if (rects[h]->outerRect().contains(position)) return h;
    return -1;
}

void HeadsGridView::refresh() {
    const Theme look = theme();
    m_plot->clearPlottables();
    m_plot->clearItems();
    m_plot->plotLayout()->clear();
    TokenTooltips::of(m_plot)->clear();
    m_heads = 0;
    const Experiment* experiment = document()->experiment();
    const ViewState& state = document()->session().viewState;
    if (!experiment || !experiment->hasWeights()) {
        m_plot->replot();
        return;
    }
    const int heads = static_cast<int>(experiment->headCount());
    const int kvHeads = static_cast<int>(experiment->kvHeadCount());
    const int columns = columnsFor(heads, kvHeads);
    const QString gradientName = QString::fromStdString(state.colormap);
    const QString mapName = isDiverging(gradientName) ? QStringLiteral("viridis") : gradientName;
    const QCPColorGradient gradient = makeGradient(mapName, maskedColor(look, mapName));
    const Index focused = clampedHead(*experiment, state.head);
    // An attention dump holds weights only: how its heads shared K and V is not recorded, so
    // it is not called MHA (it may well be GQA).
    const bool sharingKnown = experiment->source.kind != ExperimentSource::Kind::AttentionDump;
    const QString heading = sharingKnown
                                ? tr("%1 heads, %2 kv heads (%3)")
                                      .arg(heads)
                                      .arg(kvHeads)
                                      .arg(kvHeads == heads ? tr("MHA")
                                           : kvHeads == 1   ? tr("MQA")
                                                            : tr("GQA"))
                                : tr("%1 heads of %2 (key/value sharing not recorded in the dump)")
                                      .arg(heads)
                                      .arg(describeSource(experiment->source));
    // A long text: each cell drawn is the largest weight of a block of positions, so that no
    // map holds more cells than a screen has pixels and a strong weight is never dropped.
    const Index block = blockFor(std::max(experiment->sq(), experiment->sk()));
    double largest = 0;
    QString subtitle;
    if (block > 1)
        subtitle =
            tr("each cell: the largest weight of %1 \u00d7 %2 positions").arg(block).arg(block);
    auto* title = new QCPTextElement(m_plot, heading);
    m_plot->plotLayout()->addElement(0, 0, title);
    auto* grid = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, grid);
    grid->setColumnSpacing(8);
    grid->setRowSpacing(8);
    for (int h = 0; h < heads; ++h) {
        auto* rect = new QCPAxisRect(m_plot);
        grid->addElement(h / columns, h % columns, rect);
        rect->setupFullAxesBox(false);
        const int group = static_cast<int>(experiment->kvHeadOf(h));
        for (QCPAxis* axis : rect->axes()) {
            axis->setTicks(false);
            axis->setTickLabels(false);
            axis->grid()->setVisible(false);
        }
        QCPAxis* x = rect->axis(QCPAxis::atBottom);
        QCPAxis* y = rect->axis(QCPAxis::atLeft);
        y->setRangeReversed(true);
        // Tokens along the grid's left column and bottom row (thinned to what fits after
        // layout), as in the heatmap: each small map is read against its words.
        const bool firstColumn = h % columns == 0;
        // The grid's last row only: a map above an empty cell (8 heads in 3 columns) that took
        // its own labels came out shorter than the rest of its row.
        const bool lastRow = h / columns == (heads - 1) / columns;
        if (firstColumn) {
            y->setTicks(true);
            y->setTickLabels(true);
            y->setSubTicks(false);
            setTokenLabels(y, displayTokens(experiment->queryTokens));
        }
        // The labelled maps' edges level with each other (their labels differ in length).
        rect->setMarginGroup((firstColumn ? QCP::msLeft : QCP::msNone) |
                                 (lastRow ? QCP::msBottom : QCP::msNone),
                             m_labelledEdges);
        if (lastRow) {
            x->setTicks(true);
            x->setTickLabels(true);
            x->setSubTicks(false);
            x->setTickLabelRotation(-90);
            setTokenLabels(x, displayTokens(experiment->keyTokens));
        }
        rect->axis(QCPAxis::atTop)
            ->setLabel(kvHeads == heads || !sharingKnown
                           ? tr("head %1").arg(h)
                           : tr("head %1 \u00b7 kv %2").arg(h).arg(group));
        TokenTooltips::of(m_plot)->setTokens(x, experiment->keyTokens, {}, tr("key"));
        TokenTooltips::of(m_plot)->setTokens(y, experiment->queryTokens, {}, tr("query"));
        auto* map = new QCPColorMap(x, y);
        map->setInterpolate(false);
        map->setGradient(gradient);
        map->setDataRange(QCPRange(0, 1));
        const int rows = static_cast<int>(experiment->sq());
        const int cols = static_cast<int>(experiment->sk());
        const MatrixD cells = binnedWeights(*experiment, h, block);
        fillColorMap(map, cells, nullptr);
        if (block > 1) { // cell i covers positions i·block … (i + 1)·block − 1
            const double half = (block - 1) / 2.0;
            map->data()->setRange(QCPRange(half, (cells.cols() - 1) * block + half),
                                  QCPRange(half, (cells.rows() - 1) * block + half));
        }
        largest = std::max(largest, cells.array().isNaN().select(0.0, cells).maxCoeff());
        x->setRange(-0.5, std::max(cols, 1) - 0.5);
        y->setRange(-0.5, std::max(rows, 1) - 0.5);
        if (figureStyle().showSelection && state.query >= 0 && state.query < rows) {
            auto* row = new QCPItemRect(m_plot);
            row->setClipAxisRect(rect);
            row->topLeft->setAxes(x, y);
            row->bottomRight->setAxes(x, y);
            row->topLeft->setCoords(-0.5, static_cast<double>(state.query) - 0.5);
            row->bottomRight->setCoords(cols - 0.5, static_cast<double>(state.query) + 0.5);
            row->setPen(QPen(look.accent, 2 * look.lineWidth));
        }
    }
    // Weights of a long text are about 1/S: on 0..1 every map is one dark colour. Say so.
    if (largest < kFaintWeight)
        subtitle += (subtitle.isEmpty() ? QString() : QStringLiteral("\n")) +
                    tr("largest weight %1: nearly one colour on 0 to 1").arg(largest, 0, 'g', 2);
    m_heading = subtitle.isEmpty() ? heading : heading + QLatin1Char('\n') + subtitle;
    title->setText(m_heading);
    // One colour bar for all heads: they share the 0..1 scale.
    auto* scale = new QCPColorScale(m_plot);
    m_plot->plotLayout()->addElement(1, 1, scale);
    scale->setGradient(gradient);
    scale->setDataRange(QCPRange(0, 1));
    scale->setBarWidth(10);
    scale->axis()->setLabel(tr("weight"));
    scale->axis()->ticker()->setTickCount(3);
    m_heads = heads;
    stylePlot(*m_plot, look);
    // stylePlot resets axis pens; restore group frames.
    const QList<QCPAxisRect*> rects = m_plot->axisRects();
    for (int h = 0; h < rects.size() && h < heads; ++h) {
        const int group = static_cast<int>(experiment->kvHeadOf(h));
        const QColor frame = kGroupColors[group % std::size(kGroupColors)];
        const double frameWidth = (h == focused ? 5.0 : 3.0) * look.lineWidth;
        for (QCPAxis* axis : rects[h]->axes())
            axis->setBasePen(QPen(frame, frameWidth));
        if (h != focused) continue;
        QCPAxis* top = rects[h]->axis(QCPAxis::atTop);
        QFont bold = top->labelFont();
        bold.setBold(true);
        top->setLabelFont(bold);
        top->setLabelColor(look.accent);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

DataTable HeadsGridView::data() const {
    DataTable table;
    const Experiment* experiment = document()->experiment();
    if (!experiment) return table;
    // One row per (head, query), one column per key.
    const Index heads = experiment->headCount();
    const Index sq = experiment->sq();
    const Index sk = experiment->sk();
    table.rows = static_cast<int>(heads * sq);
    table.cols = static_cast<int>(sk);
    table.columnLabels = displayTokens(experiment->keyTokens);
    const QStringList queries = displayTokens(experiment->queryTokens);
    table.values.reserve(static_cast<std::size_t>(table.rows) * table.cols);
    table.groupHeader = QStringLiteral("head");
    for (Index h = 0; h < heads; ++h) {
        table.groupLabels << QString::number(h);
        const MatrixD weights = headWeights(*experiment, h);
        for (Index i = 0; i < sq; ++i) {
            table.rowLabels << queries.value(static_cast<int>(i));
            for (Index j = 0; j < sk; ++j)
                table.values.push_back(weights(i, j));
        }
    }
    return table;
}

} // namespace attnlab::ui

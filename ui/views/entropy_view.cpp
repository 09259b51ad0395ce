#include "ui/views/entropy_view.h"

#include <QMouseEvent>
#include <qcustomplot.h>

#include <cmath>

#include "ui/state/experiment_data.h"
#include "ui/views/teaching_plot.h"
#include "ui/views/token_tooltips.h"

namespace attnlab::ui {

EntropyView::EntropyView(Document* document, QWidget* parent) : PlotView(document, parent) {
    QCustomPlot& plot = *m_plot;
    plot.plotLayout()->clear();
    auto* title = new QCPTextElement(&plot, tr("Entropy per query (nats)"));
    plot.plotLayout()->addElement(0, 0, title);
    auto* row = new QCPLayoutGrid;
    plot.plotLayout()->addElement(1, 0, row);
    m_queryRect = new QCPAxisRect(&plot);
    m_headRect = new QCPAxisRect(&plot);
    // The legend gets its own row above the bars: an inset legend covered the tallest ones.
    QCPLegend* legend = legendAbove(row, 0, 0, m_queryRect);
    row->addElement(0, 1, m_headRect);
    row->setColumnStretchFactors({3.0, 1.0});

    QCPAxis* qx = m_queryRect->axis(QCPAxis::atBottom);
    QCPAxis* qy = m_queryRect->axis(QCPAxis::atLeft);
    qx->setLabel(tr("query"));
    qy->setLabel(tr("entropy (nats)"));
    m_bars = new QCPBars(qx, qy);
    m_bars->setName(tr("entropy"));
    m_bars->setWidth(0.7);
    m_selectedBar = new QCPBars(qx, qy);
    m_selectedBar->setWidth(0.7);
    m_ceiling = new QCPGraph(qx, qy);
    m_ceiling->setName(tr("log(allowed keys): uniform attention"));
    m_ceiling->setLineStyle(QCPGraph::lsStepCenter);

    QCPAxis* hx = m_headRect->axis(QCPAxis::atBottom);
    QCPAxis* hy = m_headRect->axis(QCPAxis::atLeft);
    hx->setLabel(tr("head"));
    hy->setLabel(tr("mean entropy"));
    m_headBars = new QCPBars(hx, hy);
    m_headBars->setWidth(0.7);
    m_focusedHeadBar = new QCPBars(hx, hy);
    m_focusedHeadBar->setWidth(0.7);

    m_legend = legend;
    legend->addItem(new QCPPlottableLegendItem(legend, m_bars));
    legend->addItem(new QCPPlottableLegendItem(legend, m_ceiling));

    setToolTip(tr("Bars: how spread each query's attention is. Line: the most it can be "
                  "(uniform over the allowed keys). Click a bar to select the query; click a "
                  "head on the right to focus it."));
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        if (fitTokenLabels(m_queryRect->axis(QCPAxis::atBottom)))
            m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
        const Experiment* experiment = this->document()->experiment();
        if (!experiment) return;
        if (m_queryRect->rect().contains(event->pos())) {
            const auto i = static_cast<Index>(
                std::lround(m_queryRect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
            if (i >= 0 && i < experiment->sq())
                this->document()->setSelectedQuery(
                    this->document()->session().viewState.query == i ? -1 : i);
        } else if (m_headRect->rect().contains(event->pos())) {
            const auto h = static_cast<Index>(
                std::lround(m_headRect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
            if (h >= 0 && h < experiment->headCount()) this->document()->setFocusedHead(h);
        }
    });
}

void EntropyView::refresh() {
    const Theme look = theme();
    const Experiment* experiment = document()->experiment();
    const ViewState& state = document()->session().viewState;
    QVector<double> x, entropy, ceilingX, ceiling, selectedX, selectedY, hx, hy, fx, fy;
    QStringList tokens;
    Index head = 0;
    if (experiment && !experiment->stats.empty()) {
        head = std::min<Index>(clampedHead(*experiment, state.head),
                               static_cast<Index>(experiment->stats.size()) - 1);
        const HeadStats& stats = experiment->stats[static_cast<std::size_t>(head)];
        tokens = displayTokens(experiment->queryTokens);
        for (std::size_t i = 0; i < stats.entropy.size(); ++i) {
            x << static_cast<double>(i);
            entropy << stats.entropy[i];
            const Index allowed = i < stats.allowed.size() ? stats.allowed[i] : 0;
            ceilingX << static_cast<double>(i);
            ceiling << (allowed > 0 ? std::log(static_cast<double>(allowed)) : 0.0);
            if (figureStyle().showSelection && static_cast<Index>(i) == state.query) {
                selectedX << static_cast<double>(i);
                selectedY << stats.entropy[i];
            }
        }
        for (std::size_t h = 0; h < experiment->stats.size(); ++h) {
            (static_cast<Index>(h) == head ? fx : hx) << static_cast<double>(h);
            (static_cast<Index>(h) == head ? fy : hy) << experiment->stats[h].meanEntropy;
        }
    }
    m_bars->setData(x, entropy, true);
    m_selectedBar->setData(selectedX, selectedY, true);
    // The step line spans each bar's whole cell: pad half a cell at both ends.
    if (!ceiling.isEmpty()) {
        ceilingX.prepend(-0.5);
        ceiling.prepend(ceiling.front());
        ceilingX.append(static_cast<double>(ceiling.size() - 1) - 0.5);
        ceiling.append(ceiling.back());
    }
    m_ceiling->setData(ceilingX, ceiling, true);
    m_headBars->setData(hx, hy, true);
    m_focusedHeadBar->setData(fx, fy, true);

    QColor barColor =
        look.name == QLatin1String("dark") ? QColor(0x56, 0xb4, 0xe9) : QColor(0x00, 0x72, 0xb2);
    m_bars->setBrush(barColor);
    m_bars->setPen(Qt::NoPen);
    m_selectedBar->setBrush(look.accent);
    m_selectedBar->setPen(Qt::NoPen);
    m_headBars->setBrush(barColor);
    m_headBars->setPen(Qt::NoPen);
    m_focusedHeadBar->setBrush(look.accent);
    m_focusedHeadBar->setPen(Qt::NoPen);
    m_ceiling->setPen(QPen(look.foreground, 2 * look.lineWidth, Qt::DashLine));

    QCPAxis* qx = m_queryRect->axis(QCPAxis::atBottom);
    TokenTooltips::of(m_plot)->setTokens(
        qx, experiment ? experiment->queryTokens : std::vector<std::string>(), {}, tr("query"));
    setTokenLabels(qx, tokens); // thinned to what fits once laid out
    qx->setTickLabelRotation(tokens.size() > 6 ? -45 : 0);
    qx->setSubTicks(false);
    qx->setRange(-0.7, std::max<double>(1, tokens.size()) - 0.3);
    double top = 0.1;
    for (double c : ceiling)
        top = std::max(top, c);
    for (double e : entropy)
        top = std::max(top, e);
    m_queryRect->axis(QCPAxis::atLeft)->setRange(0, top * 1.12);

    auto headTicker = QSharedPointer<QCPAxisTickerFixed>::create();
    headTicker->setTickStep(1);
    headTicker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    QCPAxis* headAxis = m_headRect->axis(QCPAxis::atBottom);
    headAxis->setTicker(headTicker);
    headAxis->setSubTicks(false);
    const double heads = experiment ? static_cast<double>(experiment->stats.size()) : 1.0;
    headAxis->setRange(-0.7, std::max(1.0, heads) - 0.3);
    m_headRect->axis(QCPAxis::atLeft)->setRange(0, top * 1.12);

    if (auto* title = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0)))
        title->setText(tr("Entropy per query, head %1 (nats)").arg(head));
    stylePlot(*m_plot, look);
    styleLegend(m_legend, look);
    fitLegend(m_plot->width());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void EntropyView::fitLegend(int width) {
    QCPAbstractLegendItem* ceilingItem = m_legend->itemWithPlottable(m_ceiling);
    const QFontMetrics metrics(ceilingItem ? ceilingItem->font() : m_legend->font());
    // The ceiling's full name, or its short one where even a line of its own is too narrow.
    const QString full = tr("log(allowed keys): uniform attention");
    // The legend's column is the bars' 3/4 of the row less the heads plot's labels.
    const int room =
        width * 2 / 3 - m_legend->iconSize().width() - m_legend->iconTextPadding() - 24;
    m_ceiling->setName(metrics.horizontalAdvance(full) > room ? tr("log(allowed keys)") : full);
    int wanted = 0;
    for (int i = 0; i < m_legend->itemCount(); ++i) {
        auto* item = qobject_cast<QCPPlottableLegendItem*>(m_legend->item(i));
        if (!item) continue;
        wanted += m_legend->iconSize().width() + m_legend->iconTextPadding() +
                  metrics.horizontalAdvance(item->plottable()->name()) + 12;
    }
    // The bars take 3 of the 4 stretch units of the row (the heads' plot the last one).
    const bool stack = wanted > width * 2 / 3;
    if (m_legend->wrap() == (stack ? 1 : 0)) return;
    m_legend->setWrap(stack ? 1 : 0);
    m_legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
}

void EntropyView::paintFigure(QCPPainter& painter, const QSize& size) {
    fitLegend(size.width());
    PlotView::paintFigure(painter, size);
    fitLegend(m_plot->width());
}

DataTable EntropyView::data() const {
    DataTable table;
    const Experiment* experiment = document()->experiment();
    if (!experiment || experiment->stats.empty()) return table;
    const Index head =
        std::min<Index>(clampedHead(*experiment, document()->session().viewState.head),
                        static_cast<Index>(experiment->stats.size()) - 1);
    const HeadStats& stats = experiment->stats[static_cast<std::size_t>(head)];
    table.columnLabels = {tr("entropy"), tr("log_allowed"), tr("normalized_entropy")};
    table.rowLabels = displayTokens(experiment->queryTokens);
    table.rows = static_cast<int>(stats.entropy.size());
    table.cols = 3;
    for (std::size_t i = 0; i < stats.entropy.size(); ++i) {
        const Index allowed = i < stats.allowed.size() ? stats.allowed[i] : 0;
        table.values.push_back(stats.entropy[i]);
        table.values.push_back(allowed > 0 ? std::log(static_cast<double>(allowed)) : 0.0);
        table.values.push_back(i < stats.normalizedEntropy.size() ? stats.normalizedEntropy[i]
                                                                  : 0.0);
    }
    return table;
}

} // namespace attnlab::ui

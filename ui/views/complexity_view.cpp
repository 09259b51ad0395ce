#include "ui/views/complexity_view.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/views/teaching_plot.h"

namespace attnlab::ui {

namespace {

constexpr Index kDefaultWindow = 128;

struct Curve {
    CostItem item;
    QColor color;
    Qt::PenStyle style;
};

const Curve kCurves[] = {
    {CostItem::QkvProjection, QColor(0x99, 0x99, 0x99), Qt::SolidLine},
    {CostItem::SoftmaxAttention, QColor(0xd5, 0x5e, 0x00), Qt::SolidLine},
    {CostItem::SlidingWindow, QColor(0x00, 0x9e, 0x73), Qt::SolidLine},
    {CostItem::Linear, QColor(0x00, 0x72, 0xb2), Qt::SolidLine},
    {CostItem::Flash, QColor(0xcc, 0x79, 0xa7), Qt::DashLine},
};

QString itemLabel(CostItem item) {
    switch (item) {
    case CostItem::QkvProjection:
        return QObject::tr("QKV projection");
    case CostItem::SoftmaxAttention:
        return QObject::tr("softmax attention");
    case CostItem::SlidingWindow:
        return QObject::tr("sliding window");
    case CostItem::Linear:
        return QObject::tr("linear attention");
    case CostItem::Flash:
        return QObject::tr("FlashAttention");
    case CostItem::KvCacheDecode:
        return QObject::tr("KV-cache decode step");
    }
    return {};
}

void logAxis(QCPAxis* axis) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
    ticker->setLogBase(10);
    axis->setTicker(ticker);
    axis->setNumberFormat(QStringLiteral("eb"));
    axis->setNumberPrecision(0);
}

QVector<QPointF> points(const std::vector<std::pair<CostItem, QCPGraph*>>& graphs, CostItem item) {
    QVector<QPointF> out;
    for (const auto& [which, graph] : graphs)
        if (which == item)
            for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
                out << QPointF(it->key, it->value);
    return out;
}

} // namespace

ComplexityView::ComplexityView(Document* document, QWidget* parent) : PlotView(document, parent) {
    QCustomPlot& plot = *m_plot;
    plot.plotLayout()->clear();
    m_title = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(0, 0, m_title);
    // One legend for both plots, on a row of its own above them: inset in a corner it covered
    // the curves and the line marking the session's length, wherever that length fell.
    plot.setAutoAddPlottableToLegend(false);
    m_legend = new QCPLegend;
    addLegendAtItsSize(plot.plotLayout(), 1, 0, m_legend, Qt::Horizontal);
    // Its row asks for no width of its own: the widget's least width is the plots', and the
    // legend wraps to whatever width the figure gets (below) instead of widening the window.
    plot.plotLayout()->element(1, 0)->setMinimumSize(1, 0);
    m_legend->setLayer(QStringLiteral("legend"));
    m_legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    auto* row = new QCPLayoutGrid;
    plot.plotLayout()->addElement(2, 0, row);
    plot.plotLayout()->setRowStretchFactors({0.01, 0.01, 1.0});
    m_flopsRect = makeAxisRect(&plot, tr("sequence length S"), tr("FLOPs"));
    m_bytesRect = makeAxisRect(&plot, tr("sequence length S"), tr("working memory (bytes)"));
    row->addElement(0, 0, m_flopsRect);
    row->addElement(0, 1, m_bytesRect);
    for (QCPAxisRect* rect : {m_flopsRect, m_bytesRect}) {
        logAxis(rect->axis(QCPAxis::atBottom));
        logAxis(rect->axis(QCPAxis::atLeft));
    }
    for (const Curve& curve : kCurves) {
        // Flash does the same FLOPs as softmax attention; it differs in memory only.
        if (curve.item != CostItem::Flash) {
            auto* graph = new QCPGraph(m_flopsRect->axis(QCPAxis::atBottom),
                                       m_flopsRect->axis(QCPAxis::atLeft));
            graph->setName(itemLabel(curve.item));
            m_flops.emplace_back(curve.item, graph);
        }
        auto* graph =
            new QCPGraph(m_bytesRect->axis(QCPAxis::atBottom), m_bytesRect->axis(QCPAxis::atLeft));
        graph->setName(itemLabel(curve.item));
        m_bytes.emplace_back(curve.item, graph);
    }
    // The legend wraps to the figure's width (a narrow one, or a long language).
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        if (wrapLegendToWidth(m_legend, m_plot->plotLayout()->outerRect().width() - 8))
            m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    setToolTip(tr("How the cost of each stage grows with the sequence length. Softmax attention "
                  "grows as S\u00b2 in time and memory; FlashAttention keeps the S\u00b2 time but "
                  "needs only O(S) memory; sliding-window and linear attention grow as S."));
}

std::vector<Index> ComplexityView::drawnLengths(Index current) {
    std::vector<Index> lengths;
    for (Index s = kMinSeq; s <= kMaxSeq; s *= 2)
        lengths.push_back(s);
    lengths.push_back(current);
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    return lengths;
}

CostParams ComplexityView::costParams() const {
    const Session& session = document()->session();
    const Experiment* experiment = document()->experiment();
    CostParams params;
    params.seq = experiment ? std::max<Index>(1, experiment->sk()) : kMinSeq;
    params.dModel = std::max<Index>(1, session.dModel);
    params.heads = std::max<Index>(1, session.heads);
    params.kvHeads = std::max<Index>(1, session.kvHeads);
    params.window = session.mask.window >= 0         ? session.mask.window
                    : session.mask.causalWindow >= 0 ? session.mask.causalWindow
                                                     : kDefaultWindow;
    params.qBlock = std::max<Index>(1, session.qBlock);
    params.kvBlock = std::max<Index>(1, session.kvBlock);
    params.bytesPerElement = 4;
    return params;
}

void ComplexityView::refresh() {
    const Theme look = theme();
    const CostParams current = costParams();
    const std::vector<Index> lengths = drawnLengths(current.seq);

    double lowFlops = 1e300, highFlops = 1, lowBytes = 1e300, highBytes = 1;
    auto fill = [&](std::vector<std::pair<CostItem, QCPGraph*>>& graphs, bool flops) {
        for (auto& [item, graph] : graphs) {
            QVector<double> xs, ys;
            for (Index s : lengths) {
                CostParams params = current;
                params.seq = s;
                const Cost cost = estimateCost(item, params);
                const double value = flops ? cost.flops : cost.bytes;
                if (!(value > 0)) continue; // a log axis cannot show 0
                xs << static_cast<double>(s);
                ys << value;
                (flops ? lowFlops : lowBytes) = std::min(flops ? lowFlops : lowBytes, value);
                (flops ? highFlops : highBytes) = std::max(flops ? highFlops : highBytes, value);
            }
            graph->setData(xs, ys, true);
            for (const Curve& curve : kCurves)
                if (curve.item == item) {
                    graph->setPen(QPen(curve.color, 2.2 * look.lineWidth, curve.style));
                    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
                }
        }
    };
    fill(m_flops, true);
    fill(m_bytes, false);

    // The session's configuration: a vertical line and a dot on every curve.
    m_plot->clearItems();
    for (QCPAxisRect* rect : {m_flopsRect, m_bytesRect}) {
        auto* line = new QCPItemStraightLine(m_plot);
        line->setClipAxisRect(rect);
        for (QCPItemPosition* position : {line->point1, line->point2}) {
            position->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            position->setAxisRect(rect);
        }
        line->point1->setCoords(static_cast<double>(current.seq), 1);
        line->point2->setCoords(static_cast<double>(current.seq), 10);
        line->setPen(QPen(look.accent, 1.5 * look.lineWidth, Qt::DashDotLine));
        const bool flops = rect == m_flopsRect;
        for (auto& [item, graph] : flops ? m_flops : m_bytes) {
            const Cost cost = estimateCost(item, current);
            const double value = flops ? cost.flops : cost.bytes;
            if (!(value > 0)) continue;
            auto* dot = new QCPItemTracer(m_plot);
            dot->setClipAxisRect(rect);
            dot->position->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            dot->position->setAxisRect(rect);
            dot->position->setCoords(static_cast<double>(current.seq), value);
            dot->setStyle(QCPItemTracer::tsCircle);
            dot->setSize(9);
            dot->setPen(QPen(look.foreground, 1.5));
            dot->setBrush(graph->pen().color());
        }
        rect->axis(QCPAxis::atBottom)
            ->setRange(static_cast<double>(lengths.front()) / 1.3,
                       static_cast<double>(lengths.back()) * 1.3);
    }
    m_flopsRect->axis(QCPAxis::atLeft)->setRange(lowFlops / 3, highFlops * 3);
    m_bytesRect->axis(QCPAxis::atLeft)->setRange(lowBytes / 3, highBytes * 3);

    m_title->setText(tr("Cost vs sequence length (d_model %1, heads %2, kv heads %3, window %4, "
                        "flash blocks %5\u00d7%6); this session: S = %7")
                         .arg(current.dModel)
                         .arg(current.heads)
                         .arg(current.kvHeads)
                         .arg(current.window)
                         .arg(current.qBlock)
                         .arg(current.kvBlock)
                         .arg(current.seq));
    stylePlot(*m_plot, look);
    // The memory plot has every curve (FlashAttention's FLOPs are softmax attention's), in
    // the same colours as the FLOPs plot.
    styleLegend(m_legend, look);
    fitLegendIcons(m_legend);
    m_legend->clearItems();
    for (auto& [item, graph] : m_bytes)
        m_legend->addItem(new QCPPlottableLegendItem(m_legend, graph));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QVector<QPointF> ComplexityView::plottedFlops(CostItem item) const {
    return points(m_flops, item);
}

QVector<QPointF> ComplexityView::plottedBytes(CostItem item) const {
    return points(m_bytes, item);
}

DataTable ComplexityView::data() const {
    DataTable table;
    const CostParams current = costParams();
    table.rowHeader = QStringLiteral("seq_len");
    for (const Curve& curve : kCurves) {
        table.columnLabels
            << QStringLiteral("%1_flops").arg(QString::fromLatin1(costItemName(curve.item)))
            << QStringLiteral("%1_bytes").arg(QString::fromLatin1(costItemName(curve.item)));
    }
    table.columnLabels << QStringLiteral("current");
    table.cols = static_cast<int>(table.columnLabels.size());
    // The lengths the curves are drawn at: powers of two and this session's length (marked).
    const std::vector<Index> lengths = drawnLengths(current.seq);
    for (Index s : lengths) {
        CostParams params = current;
        params.seq = s;
        table.rowLabels << QString::number(s);
        for (const Curve& curve : kCurves) {
            const Cost cost = estimateCost(curve.item, params);
            table.values.push_back(cost.flops);
            table.values.push_back(cost.bytes);
        }
        table.values.push_back(s == current.seq ? 1.0 : 0.0);
        ++table.rows;
    }
    table.extra = {
        {QStringLiteral("d_model"), static_cast<qint64>(current.dModel)},
        {QStringLiteral("heads"), static_cast<qint64>(current.heads)},
        {QStringLiteral("kv_heads"), static_cast<qint64>(current.kvHeads)},
        {QStringLiteral("window"), static_cast<qint64>(current.window)},
        {QStringLiteral("q_block"), static_cast<qint64>(current.qBlock)},
        {QStringLiteral("kv_block"), static_cast<qint64>(current.kvBlock)},
        {QStringLiteral("bytes_per_element"), static_cast<qint64>(current.bytesPerElement)}};
    return table;
}

} // namespace attnlab::ui

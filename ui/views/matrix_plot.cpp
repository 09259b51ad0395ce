#include "ui/views/matrix_plot.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/views/colormap.h"
#include "ui/views/teaching_plot.h"
#include "ui/views/token_tooltips.h"

namespace attnlab::ui {

DataTable tableOf(const MatrixFigure& figure) {
    DataTable table = DataTable::fromMatrix(figure.values, figure.rowLabels, figure.columnLabels);
    table.extra = {{QStringLiteral("figure"), figure.title},
                   {QStringLiteral("quantity"), figure.quantity}};
    table.unavailable = figure.values.size() == 0 ? figure.title : QString();
    return table;
}

MatrixPlot::MatrixPlot(QCustomPlot* plot) : m_plot(plot) {
    plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(plot, QString());
    plot->plotLayout()->addElement(0, 0, m_title);
    QCPAxisRect* rect = plot->axisRect();
    rect->axis(QCPAxis::atBottom)->grid()->setVisible(false);
    rect->axis(QCPAxis::atLeft)->grid()->setVisible(false);
    rect->axis(QCPAxis::atLeft)->setRangeReversed(true);
    rect->axis(QCPAxis::atBottom)->setSubTicks(false);
    rect->axis(QCPAxis::atLeft)->setSubTicks(false);
    m_map = new QCPColorMap(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);
    m_scale = new QCPColorScale(plot);
    plot->plotLayout()->addElement(1, 1, m_scale);
    m_scale->setType(QCPAxis::atRight);
    m_map->setColorScale(m_scale);
    auto* margins = new QCPMarginGroup(plot);
    rect->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
}

void MatrixPlot::show(const MatrixFigure& figure, const Theme& theme, const QString& colormap) {
    const int rows = static_cast<int>(figure.values.rows());
    const int cols = static_cast<int>(figure.values.cols());
    m_map->setGradient(
        makeGradient(figure.signedValues ? QStringLiteral("diverging") : colormap, theme.masked));
    const QCPRange drawn = fillColorMap(m_map, figure.values, nullptr);
    const double lowest = std::min(0.0, drawn.lower); // the scale always shows 0
    const double highest = std::max(0.0, drawn.upper);
    QCPRange range(lowest, highest);
    if (figure.signedValues) {
        const double reach = std::max({std::abs(lowest), std::abs(highest), 1e-12});
        range = QCPRange(-reach, reach);
    }
    if (range.size() <= 0) range = QCPRange(range.lower, range.lower + 1);
    m_map->setDataRange(range);
    m_scale->axis()->setLabel(figure.quantity);

    QCPAxis* x = m_plot->axisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = m_plot->axisRect()->axis(QCPAxis::atLeft);
    auto ticker = [](const QStringList& labels, int room) {
        auto out = QSharedPointer<QCPAxisTickerText>::create();
        const int count = static_cast<int>(labels.size());
        const int step = std::max(1, (count + room - 1) / std::max(1, room));
        for (int i = 0; i < count; i += step)
            out->addTick(i, labels[i]);
        return out;
    };
    const int font = std::max(6, theme.fontPointSize);
    // Up to 16 labels always fit a figure; more only when the plot is large enough.
    x->setTicker(ticker(figure.columnLabels, std::max(16, m_plot->width() / (font * 3))));
    y->setTicker(ticker(figure.rowLabels, std::max(16, m_plot->height() / (font * 2 + 2))));
    x->setTickLabelRotation(cols > 6 ? -45 : 0);
    TokenTooltips::of(m_plot)->setTokens(x, figure.rawColumns, {}, QObject::tr("key"));
    TokenTooltips::of(m_plot)->setTokens(y, figure.rawRows, {}, QObject::tr("query"));
    x->setLabel(QObject::tr("keys"));
    y->setLabel(QObject::tr("queries"));
    x->setRange(-0.5, std::max(cols, 1) - 0.5);
    y->setRange(-0.5, std::max(rows, 1) - 0.5);
    m_title->setText(figure.title);
    stylePlot(*m_plot, theme);
    m_title->setTextColor(theme.foreground);
    m_scale->axis()->setLabelColor(theme.foreground);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace attnlab::ui

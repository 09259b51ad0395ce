#include "ui/views/output_projection_view.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/state/experiment_data.h"
#include "ui/views/colormap.h"
#include "ui/views/teaching_plot.h"

namespace attnlab::ui {

namespace {

/// The experiment's W^O, or the identity when the session skips the projections.
MatrixD projectionOf(const Experiment& experiment) {
    if (experiment.wo.size() != 0) return experiment.wo.cast<double>();
    return MatrixD::Identity(experiment.merged.cols(), experiment.output.cols());
}

/// 12 -> "\u2081\u2082": head indices as subscripts.
QString subscript(Index number) {
    QString digits = QString::number(number);
    for (QChar& digit : digits)
        digit = QChar(0x2080 + digit.digitValue());
    return digits;
}

QString shapeText(Index rows, Index cols) {
    return QStringLiteral("[%1, %2]").arg(rows).arg(cols);
}

} // namespace

OutputProjectionView::OutputProjectionView(Document* document, QWidget* parent)
    : PlotView(document, parent) {
    setToolTip(tr("Multi-head attention's last step: the heads' outputs side by side, "
                  "multiplied by the output projection W\u1d3c."));
}

QString OutputProjectionView::notApplicable() const {
    const Experiment* experiment = document()->experiment();
    if (!experiment || experiment->merged.size() != 0) return {};
    return tr("The output projection belongs to a lab session: this source holds no W\u1d3c.");
}

void OutputProjectionView::refresh() {
    const Theme look = theme();
    m_plot->clearPlottables();
    m_plot->clearItems();
    m_plot->plotLayout()->clear();
    m_panelLabels.clear();
    m_heading.clear();
    const Experiment* experiment = document()->experiment();
    if (!experiment || experiment->merged.size() == 0) {
        m_plot->replot();
        return;
    }
    const Index heads = experiment->headCount();
    const Index sq = experiment->merged.rows();
    const Index width = experiment->merged.cols(); // h * d_v
    const Index dv = heads > 0 ? width / heads : 0;
    const Index dModel = experiment->output.cols();
    const bool identity = experiment->wo.size() == 0;

    m_heading = tr("z = Concat(z\u2080 \u2026 z%1) W\u1d3c: %2 heads \u00d7 d_v %3 = h·d_v "
                   "%4 \u2192 d_model %5")
                    .arg(subscript(heads - 1))
                    .arg(heads)
                    .arg(dv)
                    .arg(width)
                    .arg(dModel);
    auto* title = new QCPTextElement(m_plot, m_heading);
    m_plot->plotLayout()->addElement(0, 0, title);
    auto* grid = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, grid);
    grid->setColumnSpacing(12);
    // Room on the right for the last panel's label, centred over a narrow matrix.
    grid->setMargins(QMargins(0, 0, 4 * look.fontPointSize, 0));

    // Two lines each, the name over the shape, so the labels fit over narrow panels.
    m_panelLabels
        << tr("Concat(heads)\n[S, h·d_v] = %1").arg(shapeText(sq, width))
        << (identity
                ? tr("\u00d7 W\u1d3c = I (identity projections)\n%1").arg(shapeText(width, dModel))
                : tr("\u00d7 W\u1d3c\n[h·d_v, d_model] = %1").arg(shapeText(width, dModel)))
        << tr("= z\n[S, d_model] = %1").arg(shapeText(sq, dModel));
    const MatrixD matrices[3] = {experiment->merged.cast<double>(), projectionOf(*experiment),
                                 experiment->output.cast<double>()};
    const QStringList queries = displayTokens(experiment->queryTokens);
    const QCPColorGradient gradient =
        makeGradient(QStringLiteral("diverging"), maskedColor(look, QStringLiteral("diverging")));
    const int labelBudget = std::max(4, 360 / std::max(1, look.fontPointSize * 2));

    for (int panel = 0; panel < 3; ++panel) {
        const MatrixD& values = matrices[panel];
        auto* rect = new QCPAxisRect(m_plot);
        grid->addElement(0, panel, rect);
        setupMatrixAxes(rect);
        QCPAxis* x = rect->axis(QCPAxis::atBottom);
        QCPAxis* y = rect->axis(QCPAxis::atLeft);
        rect->axis(QCPAxis::atTop)->setVisible(true);
        rect->axis(QCPAxis::atTop)->setTicks(false);
        rect->axis(QCPAxis::atTop)->setTickLabels(false);
        rect->axis(QCPAxis::atTop)->setLabel(m_panelLabels[panel]);
        auto* map = new QCPColorMap(x, y);
        map->setInterpolate(false);
        map->setGradient(gradient);
        const QCPRange drawn = fillColorMap(map, values, nullptr);
        const double reach = std::max({std::abs(drawn.lower), std::abs(drawn.upper), 1e-12});
        map->setDataRange(QCPRange(-reach, reach));
        x->setRange(-0.5, std::max<Index>(values.cols(), 1) - 0.5);
        y->setRange(-0.5, std::max<Index>(values.rows(), 1) - 0.5);
        // Rows: tokens for the activations, d_v indices for W^O's rows; columns: indices.
        if (panel == 1) {
            y->setTicker(integerTicker());
            y->setLabel(tr("h·d_v"));
        } else {
            y->setTicker(labelTicker(queries, labelBudget));
            y->setLabel(panel == 0 ? tr("queries") : QString());
        }
        if (panel == 0) {
            // One tick per head, at the middle of its columns.
            auto ticker = QSharedPointer<QCPAxisTickerText>::create();
            for (Index h = 0; h < heads; ++h)
                ticker->addTick(static_cast<double>(h * dv) + (dv - 1) / 2.0,
                                QStringLiteral("z%1").arg(subscript(h)));
            x->setTicker(ticker);
            x->setLabel(tr("head outputs, in head order"));
        } else {
            // A few ticks: the W^O and z panels are narrow, and five labels of two digits
            // ran together ("10152025").
            x->setTicker(integerTicker());
            x->ticker()->setTickCount(3);
            x->setLabel(tr("d_model"));
        }
        auto* scale = new QCPColorScale(m_plot);
        grid->addElement(1, panel, scale);
        // The bar spans its matrix's columns, not the tick labels beside them.
        auto* sides = new QCPMarginGroup(m_plot);
        rect->setMarginGroup(QCP::msLeft | QCP::msRight, sides);
        scale->setMarginGroup(QCP::msLeft | QCP::msRight, sides);
        scale->setType(QCPAxis::atBottom);
        scale->setDataRange(map->dataRange());
        scale->setGradient(gradient);
        scale->setBarWidth(8);
        scale->axis()->ticker()->setTickCount(3);
        grid->setColumnStretchFactor(panel, static_cast<double>(std::max<Index>(values.cols(), 1)));
    }
    grid->setRowStretchFactor(1, 0.001);
    stylePlot(*m_plot, look);

    // Where one head's columns end in the concatenation and in W^O's rows.
    const QList<QCPAxisRect*> rects = m_plot->axisRects();
    if (rects.size() == 3)
        for (Index h = 1; h < heads; ++h) {
            const double edge = static_cast<double>(h * dv) - 0.5;
            for (int panel = 0; panel < 2; ++panel) {
                auto* line = new QCPItemStraightLine(m_plot);
                line->setClipAxisRect(rects[panel]);
                for (QCPItemPosition* end : {line->point1, line->point2})
                    end->setAxes(rects[panel]->axis(QCPAxis::atBottom),
                                 rects[panel]->axis(QCPAxis::atLeft));
                if (panel == 0) {
                    line->point1->setCoords(edge, 0);
                    line->point2->setCoords(edge, 1);
                } else {
                    line->point1->setCoords(0, edge);
                    line->point2->setCoords(1, edge);
                }
                line->setPen(QPen(look.foreground, 1.5 * look.lineWidth));
            }
        }
    for (QCPAxisRect* rect : rects)
        rect->axis(QCPAxis::atTop)->setLabelColor(look.foreground);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

DataTable OutputProjectionView::data() const {
    const Experiment* experiment = document()->experiment();
    if (!experiment || experiment->output.size() == 0 || experiment->merged.size() == 0) return {};
    QStringList dims;
    for (Index d = 0; d < experiment->output.cols(); ++d)
        dims << QStringLiteral("d%1").arg(d);
    return DataTable::fromMatrix(experiment->output.cast<double>(),
                                 displayTokens(experiment->queryTokens), dims);
}

} // namespace attnlab::ui

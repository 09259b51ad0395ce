#pragma once
/// EntropyView: per-query entropy of the focused head as bars, with the log(allowed) ceiling
/// (the entropy of uniform attention over the allowed keys), and each head's mean entropy.
/// Clicking a bar selects that query in every view.

#include "ui/views/view.h"

class QCPAxisRect;
class QCPBars;
class QCPGraph;
class QCPLegend;

namespace attnlab::ui {

class EntropyView : public PlotView {
    Q_OBJECT
public:
    explicit EntropyView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("entropy"); }
    QString title() const override { return tr("Entropy"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;
    QCPBars* entropyBars() const { return m_bars; }
    QCPGraph* ceilingGraph() const { return m_ceiling; }

private:
    /// Stacks the legend's entries when side by side they are wider than the bars' column of
    /// a plot `width` wide (a one-column figure), else keeps them in one row.
    void fitLegend(int width);
    QCPAxisRect* m_queryRect = nullptr;
    QCPLegend* m_legend = nullptr; ///< in its own row above the bars
    QCPAxisRect* m_headRect = nullptr;
    QCPBars* m_bars = nullptr;
    QCPBars* m_selectedBar = nullptr;
    QCPGraph* m_ceiling = nullptr;
    QCPBars* m_headBars = nullptr;
    QCPBars* m_focusedHeadBar = nullptr;
};

} // namespace attnlab::ui

#pragma once
/// StatisticsView: seed 002's analysis of the focused head: diagonal vs off-diagonal mean,
/// the most-attended token of each query, mean distance, first-token weight, and a histogram
/// of the allowed weights. The figure (export) is the histogram with the summary as its title.

#include "ui/view.h"

class QCPBars;
class QCPTextElement;
class QLabel;
class QTableWidget;

namespace attnlab::ui {

class StatisticsView : public View {
    Q_OBJECT
public:
    explicit StatisticsView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("statistics"); }
    QString title() const override { return tr("Statistics"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;
    QTableWidget* table() const { return m_table; }
    QLabel* summary() const { return m_summary; }

private:
    QLabel* m_summary = nullptr;
    QTableWidget* m_table = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPBars* m_histogram = nullptr;
    QCPTextElement* m_title = nullptr;
};

} // namespace attnlab::ui

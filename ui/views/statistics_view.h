#pragma once
/// StatisticsView: seed 002's analysis of the focused head: diagonal vs off-diagonal mean,
/// per query the most-attended token other than itself (the header says so) with its weight,
/// the query's weight on itself and whether that is the larger (seed 002 §2.5's "是否主要关注
/// 自己"), entropy, mean distance, first-token weight, and a histogram of the allowed weights.
/// The figure (export) is the histogram with the summary as its title.

#include "ui/views/view.h"

class QCPBars;
class QCPTextElement;
class QLabel;
class QTableWidget;

namespace attnlab::ui {

class StatisticsView : public View {
    Q_OBJECT
public:
    /// The table's columns.
    enum Column {
        QueryColumn,
        MostAttendedColumn, ///< argmax over the keys other than the query's own position
        MostAttendedWeightColumn,
        SelfWeightColumn, ///< w(i, p), p = i + Sk - Sq the query's own position
        MostlySelfColumn, ///< "yes" when the self weight exceeds the most-attended weight
        EntropyColumn,
        MeanDistanceColumn,
        FirstTokenColumn,
        kColumns
    };

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
    QString m_heading; ///< the histogram's title, drawn in a figure only
};

} // namespace attnlab::ui

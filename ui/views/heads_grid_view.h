#pragma once
/// HeadsGridView: small multiples of every head's weights. Under GQA/MQA each row of the grid
/// is one kv group, framed in its group's colour. Clicking a head focuses it everywhere;
/// double-clicking also asks the window to open it in the heatmap.

#include "ui/views/view.h"

class QCPMarginGroup;

namespace attnlab::ui {

class HeadsGridView : public PlotView {
    Q_OBJECT
public:
    explicit HeadsGridView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("heads"); }
    QString title() const override { return tr("Heads"); }
    /// The figure's title as last drawn ("8 heads, 2 kv heads (GQA)").
    QString heading() const { return m_heading; }
    void refresh() override;
    DataTable data() const override;
    /// Head drawn in each axis rect, in layout order.
    int headCount() const { return m_heads; }
    /// Columns of the grid: the kv group size under GQA, else about sqrt(H).
    static int columnsFor(int heads, int kvHeads);
    /// Most cells a head's map has along a side; a longer text is drawn in blocks.
    static constexpr Index kMaxCells = kOverviewCells;
    /// Below this largest weight the maps are one colour on 0..1 and the title says so.
    static constexpr double kFaintWeight = 0.05;
    /// Positions per drawn cell along a side of `positions`: 1 up to kMaxCells.
    static Index blockFor(Index positions);
    /// What a head's map draws: each cell the largest weight of a `block` x `block` square of
    /// positions that the experiment's mask allows (NaN where all of it is masked); the
    /// weights themselves at block 1.
    static MatrixD binnedWeights(const Experiment& experiment, Index head, Index block);

signals:
    void headActivated(int head);

private:
    QString m_heading;
    int headAt(const QPoint& position) const;
    int m_heads = 0;
    QCPMarginGroup* m_labelledEdges; ///< the first column's left and last row's bottom edges
};

} // namespace attnlab::ui

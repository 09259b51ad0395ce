#pragma once
/// ComplexityView (seed 002 §2.8): FLOPs and working memory against sequence length on log-log
/// axes for the QKV projection, softmax attention, sliding-window attention, linear attention
/// and FlashAttention (memory), from the core's cost model (complexity.h) with the session's
/// d_model, heads, kv heads, window and block sizes. The session's own length is marked.

#include <vector>

#include <QVector>

#include "ui/views/view.h"

#include "attnlab/lab/complexity.h"

class QCPAxisRect;
class QCPGraph;
class QCPLegend;
class QCPTextElement;

namespace attnlab::ui {

class ComplexityView : public PlotView {
    Q_OBJECT
public:
    /// The curves run over S = kMinSeq, 2 kMinSeq, ..., kMaxSeq (and the session's S).
    static constexpr Index kMinSeq = 16;
    static constexpr Index kMaxSeq = 1 << 17;

    explicit ComplexityView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("complexity"); }
    QString title() const override { return tr("Complexity"); }
    void refresh() override;
    DataTable data() const override;

    /// The plotted (S, FLOPs) or (S, bytes) points of a cost item; empty when not drawn.
    QVector<QPointF> plottedFlops(CostItem item) const;
    QVector<QPointF> plottedBytes(CostItem item) const;
    /// The parameters the curves were computed with (seq is the session's length).
    CostParams costParams() const;
    /// kMinSeq, 2 kMinSeq, ..., kMaxSeq and the session's length, ascending, once each.
    static std::vector<Index> drawnLengths(Index current);

private:
    QCPTextElement* m_title = nullptr;
    QCPAxisRect* m_flopsRect = nullptr;
    QCPAxisRect* m_bytesRect = nullptr;
    /// One legend for both plots, in its own row above them (outside the data).
    QCPLegend* m_legend = nullptr;
    std::vector<std::pair<CostItem, QCPGraph*>> m_flops;
    std::vector<std::pair<CostItem, QCPGraph*>> m_bytes;
};

} // namespace attnlab::ui

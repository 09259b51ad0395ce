#pragma once
/// KvCacheView: causal decoding with a KV cache, step by step. Step 0 is the prefill (N rows
/// at once), then one decoded row per step. It shows the attention matrix filled up to the
/// rows computed so far with this step's new rows outlined, the K cache growing row by row,
/// the newest query row's single-row attention over the cache, and the cache bytes per step
/// for multi-head, grouped-query and multi-query attention on one plot (the session's own
/// configuration drawn bold). The step lives in ViewState::kvStep (0..stepCount() - 1).

#include <QVector>

#include "ui/views/view.h"

class QCPAxisRect;
class QCPBars;
class QCPColorMap;
class QCPGraph;
class QCPItemRect;
class QCPLegend;
class QCPTextElement;
class QToolButton;

namespace attnlab::ui {

class StepControls;

class KvCacheView : public View {
    Q_OBJECT
public:
    explicit KvCacheView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("kv-cache"); }
    QString title() const override { return tr("KV cache"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;
    QString notApplicable() const override;

    /// Prefill plus decode steps; 0 when the session runs without a KV cache.
    Index stepCount() const;
    /// The view state's kvStep clamped to [0, stepCount() - 1].
    Index currentStep() const;
    /// Rows [first, second) computed in the current step.
    std::pair<Index, Index> newRows() const;
    /// The plotted cache bytes per step: MHA, GQA, MQA (in that order), as drawn.
    QVector<QPointF> plottedBytes(int which) const;
    /// The newest row's attention bars as drawn (key, weight).
    QVector<QPointF> plottedRow() const;

    void stepForward();
    void stepBack();
    QCustomPlot* plot() const { return m_plot; }

private:
    void goToStep(Index step);

    StepControls* m_controls = nullptr;
    QToolButton* m_enableButton = nullptr;

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPAxisRect* m_weightsRect = nullptr;
    QCPAxisRect* m_cacheRect = nullptr;
    QCPAxisRect* m_rowRect = nullptr;
    QCPAxisRect* m_bytesRect = nullptr;
    QCPLegend* m_bytesLegend = nullptr; ///< in its own row above the bytes plot
    QCPColorMap* m_weights = nullptr;
    QCPColorMap* m_cache = nullptr;
    QCPBars* m_rowBars = nullptr;
    QCPGraph* m_bytes[3] = {nullptr, nullptr, nullptr};
    QCPGraph* m_bytesNow = nullptr;
    QCPItemRect* m_newRowsItem = nullptr;
    QCPItemRect* m_newCacheItem = nullptr;
};

} // namespace attnlab::ui

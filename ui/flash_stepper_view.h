#pragma once
/// FlashStepperView: FlashAttention (Dao et al. 2022, Alg. 1) one tile at a time for the
/// focused head. The scaled score matrix is cut into q x kv tiles: tiles done are drawn, the
/// current tile is outlined, tiles with no allowed cell are hatched as skipped and tiles still
/// to come are veiled. For the selected query rows (the selected query, else the current
/// tile's rows) it plots per step the running max m, the running sum l and the rescale factor
/// exp(m_old - m_new) from the core's FlashTrace; it shows the accumulator O / l
/// (flashStateAfter) beside the final output, the max error against standard attention per
/// step, and how many bytes a tile touches against the S_q x S_k score matrix.
/// The step lives in the session's ViewState::flashStep (tiles done, 0..totalSteps()).

#include <QVector>

#include <optional>
#include <vector>

#include "ui/view.h"

#pragma push_macro("QT_CORE_LIB")
#undef QT_CORE_LIB
#include "attnlab/flash.h"
#pragma pop_macro("QT_CORE_LIB")

class QCPAxisRect;
class QCPColorMap;
class QCPGraph;
class QCPItemRect;
class QCPTextElement;
class QLabel;
class QSlider;
class QSpinBox;
class QTimer;
class QToolButton;

namespace attnlab::ui {

class FlashStepperView : public View {
    Q_OBJECT
public:
    /// Which per-step curve of a tracked row.
    enum class Series { RowMax, RowSum, Rescale };

    explicit FlashStepperView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("flash"); }
    QString title() const override { return tr("FlashAttention steps"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;

    /// Tiles in visiting order (q tile outer, kv tile inner), skipped ones included.
    Index totalSteps();
    /// Tiles done: the view state's flashStep clamped to [0, totalSteps()].
    Index currentStep();
    /// The query rows whose curves are plotted.
    std::vector<Index> trackedRows() const { return m_trackedRows; }
    /// The plotted (step, value) points of a tracked row's curve, as drawn.
    QVector<QPointF> plottedSeries(Series series, Index row) const;
    /// The online-softmax state drawn (after currentStep() tiles).
    const FlashState& shownState() const { return m_state; }
    /// Max |O_step - O_standard| over the head after each step 0..totalSteps(), as drawn.
    QVector<QPointF> plottedError() const;
    /// Bytes of the score tile (Br x Bc) and of the whole S_q x S_k score matrix (float32).
    qint64 tileBytes() const;
    qint64 fullScoreBytes() const;
    bool playing() const;
    /// The live block-size editors (their edits go through the Document, undoably).
    QSpinBox* queryBlockEditor() const { return m_qBlock; }
    QSpinBox* keyBlockEditor() const { return m_kvBlock; }

    void stepForward();
    void stepBack();
    void play();
    void pause();
    /// Steps per second while playing.
    void setSpeed(int stepsPerSecond);

protected:
    bool dependsOn(Document::What what) const override;

private:
    /// Recomputes the head's trace, reference and error curve when the experiment changed.
    void ensureTrace();
    void goToStep(Index step);
    void updateControls();

    // The trace and references of the focused head (a one-head copy of Q, K, V).
    bool m_traceDirty = true;
    Index m_traceHead = -1;
    std::optional<Qkv> m_headQkv;
    AttentionSpec m_spec;
    std::vector<FlashStep> m_steps;
    MatrixD m_reference;            ///< [Sq, Dv] standard softmax attention of the head
    QVector<QPointF> m_errorPoints; ///< (step, max error)
    FlashState m_state;
    std::vector<Index> m_trackedRows;
    QString m_note;

    QToolButton* m_backButton = nullptr;
    QToolButton* m_stepButton = nullptr;
    QToolButton* m_playButton = nullptr;
    QToolButton* m_pauseButton = nullptr;
    QSpinBox* m_speed = nullptr;
    QSlider* m_slider = nullptr;
    QSpinBox* m_qBlock = nullptr;
    QSpinBox* m_kvBlock = nullptr;
    QLabel* m_stepLabel = nullptr;
    QTimer* m_timer = nullptr;

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPTextElement* m_counters = nullptr;
    QCPAxisRect* m_tileRect = nullptr;
    QCPAxisRect* m_accumulatorRect = nullptr;
    QCPAxisRect* m_outputRect = nullptr;
    QCPAxisRect* m_maxRect = nullptr;
    QCPAxisRect* m_sumRect = nullptr;
    QCPAxisRect* m_rescaleRect = nullptr;
    QCPAxisRect* m_errorRect = nullptr;
    QCPColorMap* m_scores = nullptr;
    QCPColorMap* m_accumulator = nullptr;
    QCPColorMap* m_output = nullptr;
    QCPGraph* m_errorGraph = nullptr;
    QCPGraph* m_errorNow = nullptr;
    std::vector<QCPGraph*> m_seriesGraphs; ///< 3 per tracked row: max, sum, rescale
    std::vector<QCPItemRect*> m_tileItems;
};

} // namespace attnlab::ui

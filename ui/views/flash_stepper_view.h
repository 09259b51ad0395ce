#pragma once
/// FlashStepperView: FlashAttention (Dao et al. 2022, Alg. 1) one tile at a time for the
/// focused head. The scaled score matrix is cut into q x kv tiles: tiles done are drawn, the
/// current tile is outlined, tiles with no allowed cell are hatched as skipped and tiles still
/// to come are veiled, with a legend saying so. It plots per step the running max m, the
/// running sum l and the rescale factor exp(m_old - m_new) of every row faintly (up to
/// kMaxFaintRows rows) and of the focus row (the selected query, else the current tile's first
/// row) bold, and narrates the step with the walk's own numbers for the focus row ("row 5's
/// max rose from 1.20 to 2.31, so ... rescaled by e^(1.20 - 2.31) = 0.33"). It shows the
/// accumulator O / l beside the standard output, the max error against standard attention per
/// step, and how many bytes a tile touches against the S_q x S_k score matrix.
///
/// It computes nothing itself: the Document's FlashWalk (attnlab/flash_walk.h) of the focused
/// head, made on the worker when large, holds the tiles, the reference, the error curve and
/// the state after any step. The step lives in the session's ViewState::flashStep.

#include <QVector>

#include <vector>

#include "ui/views/view.h"

#include "attnlab/attention/flash_walk.h"

class QCPAxisRect;
class QCPBars;
class QCPColorMap;
class QCPGraph;
class QCPItemRect;
class QCPLayoutGrid;
class QCPLegend;
class QCPTextElement;
class QSpinBox;

namespace attnlab::ui {

class StepControls;

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
    /// The state drawn at the current step, one row per query (m, l, the current tile's
    /// rescale factor, tiles done of the row's tiles); the JSON lists the tiles (at most
    /// kMaxTableTiles) and which are done.
    DataTable data() const override;
    QString notApplicable() const override;

    static constexpr Index kMaxTableTiles = 1 << 16;
    /// At most this many rows get faint curves (all rows of a head up to this size, else the
    /// current tile's first rows).
    static constexpr Index kMaxFaintRows = 64;

    /// The narration of step `step` (tiles done) of `walk` for query row `row`, in the
    /// window's language: which tile, and for the row its m, l and rescale factor as the walk
    /// records them (FlashWalk::rowHistory), or why the tile was skipped (the mask that hides
    /// it), or that the tile does not touch the row. Numbers are written by narrationNumber().
    static QString narrate(const FlashWalk& walk, const Experiment& experiment, Index step,
                           Index row);
    /// A number as the narration writes it: two decimals, two significant digits below 0.01,
    /// U+2212 for minus, \u221e for an infinite running max.
    static QString narrationNumber(double value);

    /// Tiles in visiting order (q tile outer, kv tile inner), skipped ones included.
    Index totalSteps();
    /// Tiles done: the view state's flashStep clamped to [0, totalSteps()].
    Index currentStep();
    /// The query rows whose curves are plotted (the faint ones and the focus row).
    std::vector<Index> trackedRows() const { return m_trackedRows; }
    /// The row drawn bold and narrated; -1 when nothing is drawn.
    Index focusRow() const { return m_focusRow; }
    /// The narration shown (narrate() of the current step and focus row).
    QString narration() const { return m_narrationText; }
    /// The names in the tile legend (done, current, skipped, still to come), as drawn.
    QStringList tileLegendEntries() const;
    /// The plotted (step, value) points of a tracked row's curve, as drawn.
    QVector<QPointF> plottedSeries(Series series, Index row) const;
    /// The online-softmax state drawn (after currentStep() tiles).
    const FlashState& shownState() const { return m_state; }
    /// Max |O_step - O_standard| over the head after each sampled step, as drawn.
    QVector<QPointF> plottedError() const;
    /// Bytes of the score tile (Br x Bc) and of the whole S_q x S_k score matrix (float32).
    qint64 tileBytes() const;
    qint64 fullScoreBytes() const;
    bool playing() const;
    StepControls* stepControls() const { return m_controls; }
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
    /// The document's walk of the focused head (asked for when missing), or null.
    const FlashWalk* walk();
    void goToStep(Index step);
    void updateControls();
    /// After each layout: legends wrapped to their column, key labels turned to fit.
    void fitToLayout();

    FlashState m_state;
    std::vector<Index> m_trackedRows;
    Index m_focusRow = -1;
    QString m_narrationText;
    std::vector<FlashTile> m_tableTiles; ///< data(): the tiles as last drawn (bounded)

    StepControls* m_controls = nullptr;
    QSpinBox* m_qBlock = nullptr;
    QSpinBox* m_kvBlock = nullptr;

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPTextElement* m_narration = nullptr;
    QCPTextElement* m_counters = nullptr;
    QCPLayoutGrid* m_legends = nullptr;  ///< one row across: the two legends side by side
    QCPLayoutGrid* m_curves = nullptr;   ///< the four curves, two rows of two
    QCPLegend* m_tileLegend = nullptr;   ///< done, current, skipped, to come
    QCPLegend* m_seriesLegend = nullptr; ///< the curves': the focus row, the other rows
    QCPBars* m_tileKeys[4] = {nullptr, nullptr, nullptr, nullptr}; ///< the tile legend's icons
    QCPTextElement* m_curveTitles[4] = {nullptr, nullptr, nullptr,
                                        nullptr}; ///< m, l, rescale, error
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
    QCPGraph* m_otherRowsKey = nullptr;    ///< no data: the legend's "other rows" line
    std::vector<QCPItemRect*> m_tileItems;
};

} // namespace attnlab::ui

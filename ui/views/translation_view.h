#pragma once
/// TranslationView: a translation model writing its sentence one token at a time, the
/// companion of the KV-cache stepper for encoder-decoders (seed 002: the query comes from the
/// target language, the keys and values from the source). Step t shows the words written so
/// far with the newest one marked, the cross-attention of the chosen decoder layer and head
/// (or the mean of its heads) filled up to row t with that row outlined, and row t alone as
/// bars over the source tokens, its strongest source word named: the source word the decoder
/// reads while it writes that word.
///
/// It draws the window's ModelDocument (its latest run and the translation decoded from it).
/// A new translation plays from its first word when the view is on screen; figures, render
/// and a view off screen show the whole sentence. Not applicable without a translation model.

#include <QStringList>

#include <memory>

#include "ui/views/view.h"

class QCheckBox;
class QCPAxisRect;
class QCPBars;
class QCPColorMap;
class QCPItemRect;
class QCPTextElement;

namespace attnlab::model {
struct ModelRun;
}

namespace attnlab::ui {

class StepControls;

class TranslationView : public View {
    Q_OBJECT
public:
    explicit TranslationView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("translation"); }
    QString title() const override { return tr("Translation"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;
    QString notApplicable() const override;

    /// Rows written: the translation's target tokens (0 while there is none).
    Index rowCount() const;
    /// The row shown last (the newest word), in [0, rowCount() - 1].
    Index currentStep() const;
    void goToStep(Index step);
    /// The shown cross-attention, rows up to currentStep() (the rest NaN), [rows, sources].
    const MatrixD& shownWeights() const { return m_shown; }
    /// Whether the view draws the mean of the layer's heads rather than the focused head.
    bool meanOfHeads() const;
    void setMeanOfHeads(bool mean);
    /// The current row's strongest source token (its index), -1 when there is none.
    Index alignedSource() const { return m_aligned; }
    StepControls* controls() const { return m_controls; }
    QCustomPlot* plot() const { return m_plot; }

private:
    /// The layer's cross-attention for the focused head or the mean, [rows, sources].
    MatrixD weightsOf(const model::ModelRun& run) const;

    StepControls* m_controls = nullptr;
    QCheckBox* m_mean = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPTextElement* m_sentence = nullptr;
    QCPAxisRect* m_mapRect = nullptr;
    QCPAxisRect* m_rowRect = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPBars* m_rowBars = nullptr;
    QCPBars* m_alignedBar = nullptr;
    QCPItemRect* m_rowOutline = nullptr;

    /// The run last drawn: a new one restarts the walk from its first word.
    std::weak_ptr<const model::ModelRun> m_drawnRun;
    bool m_drawnOnce = false;
    Index m_step = -1; ///< -1: the last row
    MatrixD m_shown;
    QStringList m_rowLabels, m_columnLabels;
    Index m_aligned = -1;
};

} // namespace attnlab::ui

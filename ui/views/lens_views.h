#pragma once
/// Where a decoder's prediction comes from, beside the attention maps that explain it
/// (attnlab/model/lens.h computes both):
///
/// - LogitLensView: the residual stream after the embedding and after every layer, read through
///   the model's final norm and unembedding — a layers × positions grid, each cell the token
///   that layer would predict next there, coloured by its probability; hovering a cell gives its
///   top five.
/// - AttributionView: each head's and each MLP's direct contribution to the logit of the
///   model's prediction at the last position (the final norm's scale frozen), a layers × (heads,
///   MLP) grid on a diverging scale; the terms add up to the logit. Double-click a head to open
///   its attention map on the last row.
///
/// - PatchingView: activation patching (PatchingDocument) of the model's text (clean) against
///   a corrupted text of as many tokens: each head's output, or the residual stream entering
///   each layer at each position, taken from the clean run into the corrupted one, coloured by
///   the share of the logit difference A − B it restores (0: corrupted, 1: clean). It runs on
///   a worker with a progress bar and Cancel; double-click a head to open its attention map.
///
/// All draw the window's ModelDocument's latest run (its text and switched-off heads), computed
/// again on a worker thread when the run changes and the tab is on screen (LensDocument,
/// PatchingDocument: the views hold no worker): the previous figure stays until the new one is
/// in, and a newer run cancels the computation in flight.

#include <QStringList>

#include <optional>
#include <vector>

#include "ui/views/view.h"

#include "attnlab/model/lens.h"

class QComboBox;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace attnlab::model {
struct ModelRun;
}

namespace attnlab::ui {

/// What the lens tabs draw, computed on a worker (ui/state/lens_document.h).
class LensDocument;

class LogitLensView : public PlotView {
    Q_OBJECT
public:
    explicit LogitLensView(Document* document, QWidget* parent = nullptr);
    ~LogitLensView() override;
    QString viewId() const override { return QStringLiteral("logit-lens"); }
    QString title() const override { return tr("Logit lens"); }
    void refresh() override;
    DataTable data() const override;
    QString notApplicable() const override;

    /// [L + 1, S]: the most probable next token of each layer at each position, and its
    /// probability; empty without a decoder run.
    const std::vector<std::vector<model::RankedToken>>& top() const;
    /// The top five of a cell (layer row, position), most probable first.
    std::vector<model::RankedToken> topOf(Index row, Index position) const;
    /// Cells drawn with their token written in them at most (larger grids: colour only).
    static constexpr Index kLabelledCells = 400;
    /// True while the lens of the latest run is computed on the worker.
    bool computing() const;

protected:
    void waitForWork() override;

private:
    QString cellText(Index row, Index position) const;

    LensDocument* m_lens;
    QCPTextElement* m_title = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QStringList m_rowLabels, m_columnLabels;
};

class AttributionView : public PlotView {
    Q_OBJECT
public:
    explicit AttributionView(Document* document, QWidget* parent = nullptr);
    ~AttributionView() override;
    QString viewId() const override { return QStringLiteral("attribution"); }
    QString title() const override { return tr("Attribution"); }
    void refresh() override;
    DataTable data() const override;
    QString notApplicable() const override;

    /// The attribution drawn; nullopt without one (no run, or the model is refused).
    const std::optional<model::Attribution>& attribution() const;
    /// Opens head (layer, head)'s attention map on the last row (what a double-click does).
    void openHead(Index layer, Index head);
    /// True while the attribution of the latest run is computed on the worker.
    bool computing() const;
    /// The token attributed and the one it is contrasted with: a word the model reads as one
    /// token, or an id; empty, the model's prediction and no contrast (model::namedToken).
    QLineEdit* targetEdit() const { return m_target; }
    QLineEdit* contrastEdit() const { return m_contrast; }

protected:
    void waitForWork() override;

private:
    LensDocument* m_lens;
    QLineEdit* m_target = nullptr;
    QLineEdit* m_contrast = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
};

class PatchingDocument;

class PatchingView : public PlotView {
    Q_OBJECT
public:
    explicit PatchingView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("patching"); }
    QString title() const override { return tr("Patch"); }
    void refresh() override;
    DataTable data() const override;
    QString notApplicable() const override;

    /// The effects drawn: [L, H] (heads) or [L + 1, S] (residual); empty when none is shown.
    const MatrixD& effects() const { return m_effects; }
    /// The line under the inputs: bad input, a failure, a cancel; empty when fine.
    QString message() const;
    /// Opens head (layer, head)'s attention map on the last row (what a double-click does).
    void openHead(Index layer, Index head);

    QLineEdit* corruptedEdit() const { return m_corrupted; }
    QLineEdit* tokenAEdit() const { return m_tokenA; }
    QLineEdit* tokenBEdit() const { return m_tokenB; }
    QComboBox* targetBox() const { return m_target; }
    QProgressBar* progressBar() const { return m_progress; }
    QPushButton* cancelButton() const { return m_cancel; }

protected:
    void waitForWork() override;

private:
    void showInputs();
    void showProgress();
    QString cellText(Index row, Index column) const;

    PatchingDocument* m_patching;
    QLineEdit* m_corrupted;
    QLineEdit* m_tokenA;
    QLineEdit* m_tokenB;
    QComboBox* m_target;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
    QPushButton* m_run;
    QLabel* m_status;
    QCPTextElement* m_title = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    MatrixD m_effects;
    bool m_heads = true; ///< what m_effects holds
    QStringList m_rowLabels, m_columnLabels;
};

} // namespace attnlab::ui

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
/// Both draw the window's ModelDocument's latest run (its text and switched-off heads), computed
/// again when the run changes and the tab is on screen.

#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ui/views/view.h"

#include "attnlab/model/lens.h"

class QCPColorMap;
class QCPColorScale;
class QCPTextElement;

namespace attnlab::model {
struct ModelRun;
}

namespace attnlab::ui {

class LogitLensView : public PlotView {
    Q_OBJECT
public:
    explicit LogitLensView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("logit-lens"); }
    QString title() const override { return tr("Logit lens"); }
    void refresh() override;
    DataTable data() const override;
    QString notApplicable() const override;

    /// [L + 1, S]: the most probable next token of each layer at each position, and its
    /// probability; empty without a decoder run.
    const std::vector<std::vector<model::RankedToken>>& top() const { return m_top; }
    /// The top five of a cell (layer row, position), most probable first.
    std::vector<model::RankedToken> topOf(Index row, Index position) const;
    /// Cells drawn with their token written in them at most (larger grids: colour only).
    static constexpr Index kLabelledCells = 400;

private:
    QString cellText(Index row, Index position) const;

    QCPTextElement* m_title = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    std::weak_ptr<const model::ModelRun> m_computedFor;
    std::optional<model::LogitLens> m_lens;
    std::vector<std::vector<model::RankedToken>> m_top;
    QStringList m_rowLabels, m_columnLabels;
    QString m_error;
};

class AttributionView : public PlotView {
    Q_OBJECT
public:
    explicit AttributionView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("attribution"); }
    QString title() const override { return tr("Attribution"); }
    void refresh() override;
    DataTable data() const override;
    QString notApplicable() const override;

    /// The attribution drawn; nullopt without one (no run, or the model is refused).
    const std::optional<model::Attribution>& attribution() const { return m_parts; }
    /// Opens head (layer, head)'s attention map on the last row (what a double-click does).
    void openHead(Index layer, Index head);

private:
    QCPTextElement* m_title = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    std::weak_ptr<const model::ModelRun> m_computedFor;
    std::optional<model::Attribution> m_parts;
    QString m_error;
};

} // namespace attnlab::ui

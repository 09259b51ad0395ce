#pragma once
/// AggregateView: a model dump summed up across heads and layers: the mean over the heads of
/// the current layer, the mean over layers (of the focused head, or of all heads), and
/// attention rollout through the current layer (Abnar & Zuidema 2020).

#include "ui/views/matrix_plot.h"
#include "ui/views/view.h"

class QComboBox;

namespace attnlab::ui {

class DumpDocument;

class AggregateView : public PlotView {
    Q_OBJECT
public:
    enum class Kind { MeanOverHeads, MeanOverLayers, MeanOverAll, Rollout };

    explicit AggregateView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("aggregate"); }
    QString title() const override { return tr("Aggregates"); }
    void refresh() override;
    DataTable data() const override { return tableOf(figure()); }

    Kind kind() const { return m_kind; }
    void setKind(Kind kind);
    /// The matrix shown for the current dump, layer and head; empty without a dump.
    MatrixFigure figure() const;

private:
    DumpDocument* m_dumps;
    MatrixPlot m_matrix;
    QComboBox* m_choice;
    Kind m_kind = Kind::MeanOverHeads;
};

} // namespace attnlab::ui

#pragma once
/// OutputProjectionView: the last step of multi-head attention (seed 000 §4.2),
/// z = Concat(z_1, ..., z_h) W^O, as three matrices side by side: the heads' outputs laid next
/// to each other in head order [S, h·d_v], the projection W^O [h·d_v, d_model] and the result
/// [S, d_model], each labelled with its shape and its own colour scale. Lines mark where one
/// head's columns end. With identity projections W^O is the identity.

#include "ui/views/view.h"

namespace attnlab::ui {

class OutputProjectionView : public PlotView {
    Q_OBJECT
public:
    explicit OutputProjectionView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("output-projection"); }
    QString title() const override { return tr("Output W\u1d3c"); }
    void refresh() override;
    /// The projected output z [S, d_model], rows labelled with the query tokens.
    DataTable data() const override;
    QString notApplicable() const override;
    /// The figure's title as last drawn.
    QString heading() const { return m_heading; }
    /// The three panels' labels as last drawn (concatenation, W^O, result), shapes included.
    QStringList panelLabels() const { return m_panelLabels; }

private:
    QString m_heading;
    QStringList m_panelLabels;
};

} // namespace attnlab::ui

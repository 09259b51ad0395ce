#pragma once
/// DifferenceView: B - A between two heads of the current layer, two layers of the focused
/// head, or the same (layer, head) of two dumps (File > Open Second Dump…), on a diverging map.

#include "ui/views/matrix_plot.h"
#include "ui/views/view.h"

class QComboBox;
class QSpinBox;
class QPushButton;

namespace attnlab::ui {

class DumpDocument;

class DifferenceView : public PlotView {
    Q_OBJECT
public:
    enum class Mode { Heads, Layers, Dumps };

    explicit DifferenceView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("dump-difference"); }
    QString title() const override { return tr("Dump difference"); }
    void refresh() override;
    DataTable data() const override { return tableOf(figure()); }

    /// Compares A and B (head or layer indices; ignored for Dumps).
    void setComparison(Mode mode, int a, int b);
    MatrixFigure figure() const;

private:
    void syncControls();

    DumpDocument* m_dumps;
    MatrixPlot m_matrix;
    QComboBox* m_mode;
    QSpinBox* m_a;
    QSpinBox* m_b;
    QPushButton* m_open;
};

} // namespace attnlab::ui

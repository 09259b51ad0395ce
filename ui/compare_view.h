#pragma once
/// CompareView: two configurations side by side (A = the session, B = the session with one
/// change: causal mask, linear variant, GQA, MQA or RoPE) and the difference B - A of the
/// focused head's weights. The Document computes B only while this view is shown.

#include "ui/view.h"

class QComboBox;

namespace attnlab::ui {

class HeatmapView;

class CompareView : public View {
    Q_OBJECT
public:
    explicit CompareView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("compare"); }
    QString title() const override { return tr("Compare"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;
    QString notApplicable() const override;
    /// Selects the comparison (also used by examples and `attnlab render`).
    void setComparison(Comparison comparison);
    QComboBox* comparisonCombo() const { return m_combo; }
    HeatmapView* differenceView() const { return m_difference; }

protected:
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;

private:
    Comparison selected() const;
    QComboBox* m_combo = nullptr;
    HeatmapView* m_a = nullptr;
    HeatmapView* m_b = nullptr;
    HeatmapView* m_difference = nullptr;
};

} // namespace attnlab::ui

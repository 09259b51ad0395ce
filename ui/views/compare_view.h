#pragma once
/// CompareView: two configurations side by side (A = the session, B = the session with one
/// change: causal mask, linear variant, GQA, MQA or RoPE) and the difference B - A of the
/// focused head's weights. The Document computes B only while this view is shown.

#include "ui/views/view.h"

class QComboBox;

class QLabel;
class QSplitter;

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
    /// Selects the comparison (examples); the document computes B while the view is shown.
    void setComparison(Comparison comparison);
    /// Selects the comparison and has the document compute B now, shown or not: the one path
    /// `attnlab render --view compare --compare KIND` and the window's combo share.
    void compareWith(Comparison comparison);
    /// B = a second session (`attnlab render --compare-session S.json`, File menu): `name`
    /// captions B.
    void compareWithSession(const Session& other, const QString& name);
    /// Panels get the style (fonts, selection) without the caption; the caption titles the
    /// whole figure.
    void setFigureStyle(const FigureStyle& style) override;
    QComboBox* comparisonCombo() const { return m_combo; }
    HeatmapView* primaryView() const { return m_a; }
    HeatmapView* comparisonView() const { return m_b; }
    HeatmapView* differenceView() const { return m_difference; }
    /// The line under the comparison's choice when the colour scale draws the maps flat (a long
    /// text on the 0-to-1 scale): how flat, and a link to the per-row colours. Empty otherwise.
    QLabel* flatNote() const { return m_flatNote; }

protected:
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;
    /// The three panels share the width equally again (a drag of the splitter lasts until the
    /// view is resized).
    void resizeEvent(QResizeEvent* event) override;

private:
    Comparison selected() const;
    /// The figure's title: --caption, or what A is and what B changes.
    QString figureTitle() const;
    /// Pads the tops of the panels' matrices to the lowest one's, so the three start level
    /// where titles of the same lines still differ in height (a line with no Chinese glyph
    /// is shorter than one with them).
    void showFlatNote(bool same);
    void levelMatrixTops();
    QComboBox* m_combo = nullptr;
    QSplitter* m_splitter = nullptr;
    QLabel* m_flatNote = nullptr;
    HeatmapView* m_a = nullptr;
    HeatmapView* m_b = nullptr;
    HeatmapView* m_difference = nullptr;
};

} // namespace attnlab::ui

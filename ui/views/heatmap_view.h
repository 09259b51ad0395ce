#pragma once
/// HeatmapView: one head's [Sq, Sk] matrix (weights, raw or scaled scores, mask) or a
/// [S, D] matrix (output, Q, K, V). Queries run top to bottom, keys left to right, with token
/// labels, no interpolation, a colour bar, masked cells drawn grey with an 'x', optional value
/// labels (S <= 24), zoom and pan, and a tooltip that spells out a cell's whole computation.

#include <QHash>
#include <QString>
#include <QStringList>

#include <optional>
#include <utility>

#include "ui/views/view.h"

class QCPColorMap;
class QCPRange;
class QCPColorScale;
class QCPGraph;
class QCPMarginGroup;
class QCPItemRect;
class QCPTextElement;
class QCPAbstractItem;
class QKeyEvent;
class QLabel;
class QVBoxLayout;

namespace attnlab::ui {

class HeatmapOverview;

/// Which experiment a heatmap shows: the document's, the comparison's, or B - A.
enum class HeatmapSource { Primary, Comparison, Difference };

/// The matrix a heatmap draws, with everything needed to label it.
struct HeatmapData {
    MatrixD values;     ///< [rows, cols]
    BoolMatrix masked;  ///< [rows, cols] true = masked (drawn grey, not a value); may be empty
    BoolMatrix dropped; ///< [rows, cols] true = zeroed by train-mode dropout (a ring); or empty
    QStringList rowLabels;
    QStringList columnLabels;
    QString quantity;          ///< colour-bar label
    bool signedValues = false; ///< use a diverging map, symmetric range
    bool unitRange = false;    ///< weights and mask: range [0, 1]
    /// B - A of two weight matrices (each row sums to 0): the colour scales per row and log
    /// apply to it as to the weights.
    bool weightDifference = false;
};

class HeatmapView : public PlotView {
    Q_OBJECT
public:
    /// Value labels are drawn in the cells when both sides are at most this long.
    static constexpr int kMaxLabelledTokens = 24;
    /// Masked cells get an 'x' when the matrix has at most this many cells.
    static constexpr int kMaxMarkedCells = 64 * 64;

    explicit HeatmapView(Document* document, HeatmapSource source = HeatmapSource::Primary,
                         QWidget* parent = nullptr);

    QString viewId() const override;
    QString title() const override;
    void refresh() override;
    DataTable data() const override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    /// Lays the plot out as a figure of `size` would be (labels thinned and turned, margins
    /// set) without painting it: Compare levels its panels' tops with this.
    void layOutFigure(const QSize& size);
    /// Square cells at `width`: the title, the labels and the matrix with no blank below.
    int fittedFigureHeight(int width) override;
    /// The token labels' text size now: the theme's, or less (down to the theme's minimum) so
    /// that every visible label fits.
    double labelPoints() const { return m_labelPoints; }

    /// The matrix for the session's view state (show, head); empty when nothing to show.
    HeatmapData heatmapData() const;
    /// The tooltip text of cell (query row, key column): q.k, x scale, masked?, exp(s - max),
    /// / row sum = weight. Empty outside the matrix.
    QString explainCell(Index row, Index column) const;
    /// The colour map item (tests read its data cells).
    QCPColorMap* colorMap() const { return m_colorMap; }
    QCPColorScale* colorScale() const { return m_colorScale; }
    /// Number of value labels currently drawn in cells.
    int valueLabelCount() const { return static_cast<int>(m_valueLabels.size()); }
    /// Number of value labels shown as laid out (the others' cells are too small for them).
    int visibleValueLabelCount() const;
    HeatmapSource source() const { return m_source; }
    /// Replaces the title (the compare view names its sides); empty restores the default. A
    /// heatmap drawn already retitles at once, without drawing its cells again.
    void setCaption(const QString& caption);
    QString caption() const { return m_caption; }
    /// Drawn as one panel of several side by side: no axis titles; row labels only if asked.
    /// A panel is drawn by the view that holds it (refreshNow), not on document changes.
    void setPanel(bool rowLabels);
    /// The title's lines as drawn, and a least number of them: panels side by side pad their
    /// titles to the tallest one's, so their matrices start at the same height.
    int titleLines() const;
    void setMinimumTitleLines(int lines);
    /// Compare's A and B: colours on this range instead of the matrix's own (one scale for
    /// both), and `label` on the colour bar; nullopt restores the matrix's own. A diverging
    /// matrix keeps its symmetric range. Applied at once to the cells drawn.
    void setSharedColorRange(std::optional<std::pair<double, double>> range,
                             const QString& label = {});
    /// What the last refresh drew: the range of its colours' values (masked cells aside;
    /// nullopt for an empty matrix), the fixed range its colours span (0 to 1 for weights and
    /// the mask, the chosen range on the "range" scale; nullopt: the values' own range), and
    /// its own colour bar's label: the quantity and the scale ("weight (0 to 0.01)").
    std::optional<std::pair<double, double>> drawnRange() const;
    std::optional<std::pair<double, double>> fixedColorRange() const { return m_drawnFixed; }
    QString colorBarLabel() const { return m_drawnLabel; }
    /// Whether this panel draws its colour bar (A shares B's); the plot takes its room.
    void setColorBarShown(bool shown);

    /// A matrix with more rows or columns than this gets an overview beside its detail.
    static constexpr int kOverviewFrom = 64;
    /// When a typical row's largest weight (the median over the rows) is below this, the
    /// fixed 0-to-1 scale draws one flat colour: the window says so under the title and names
    /// the scales that show the pattern.
    static constexpr double kFlatWeight = 0.1;
    /// The whole matrix, small, beside a long one's detail in the window (not in figures, not
    /// in a panel), with a rectangle marking what the detail shows; a click or a drag in it
    /// moves the detail there. Null for a panel.
    QWidget* overview() const;
    /// Whether the overview is shown (a long matrix, not a panel).
    bool overviewShown() const;
    /// The overview's rectangle marking the detail, in the overview's pixels.
    QRectF overviewFrame() const;
    /// The window's line under the title when the fixed scale flattens the weights (a typical
    /// row's largest, and the scales that show the pattern); empty when none. Figures leave it out.
    QString flatHint() const { return m_flatHint; }
    /// A map that its colour scale draws nearly flat: a typical row's largest value (its
    /// largest |value| when signed) far below the scale's end.
    struct FlatMap {
        double typicalRowPeak = 0;
        double scaleEnd = 0;
    };
    /// Set for a panel too (which shows no hint of its own: the view it sits in says it).
    std::optional<FlatMap> flatMap() const { return m_flat; }
    /// A flat map's remedy in one click (the hint under the title, Compare's note): each row
    /// coloured over its own largest.
    static void colourEachRowOverItsLargest(Document& document);
    /// Zooms both axes about the detail's centre (factor < 1 zooms in), within the matrix.
    void zoomBy(double factor);
    /// Shows the whole matrix.
    void resetZoom();
    /// Moves the detail, keeping its size, to centre on (row, column); a detail showing the
    /// whole matrix zooms in to kOverviewFrom cells each way there.
    void centreDetailOn(double row, double column);

protected:
    bool dependsOn(Document::What what) const override;
    /// Answers the plot's tool-tip event with the hovered cell's breakdown.
    bool eventFilter(QObject* watched, QEvent* event) override;
    /// +/- zoom about the centre, 0 or Home shows the whole matrix.
    void keyPressEvent(QKeyEvent* event) override;

private:
    const Experiment* experimentFor(HeatmapSource source) const;
    /// The cell under a widget position; false outside.
    bool cellAt(const QPoint& position, Index* row, Index* column) const;
    /// Whether a plot position is on the flat-scale line under the title (a click there
    /// switches to the per-row scale).
    bool onFlatHint(const QPoint& position) const;
    void onMouseMove(QMouseEvent* event);
    void onMousePress(QMouseEvent* event);
    void clearItems();
    /// Token labels for the visible range, thinned to fit.
    /// How many token labels fit across and down the axis rect as laid out now.
    QSize labelBudget() const;
    void updateTickers();
    /// After layout: column labels side by side or upright, value labels shown only when they
    /// fit their cells, mask crosses sized to the cells.
    void fitToCells();
    /// The room a column needs for its label beside its neighbours' (the largest mean width of
    /// two neighbouring labels) plus a gap, in the tick-label font (or in `font`).
    double widestColumnLabel() const;
    double widestColumnLabel(const QFont& font) const;
    /// The label size at which every visible token label fits `room` (rows one per line,
    /// columns side by side or upright), between the theme's minimum and its size.
    double fittingLabelPoints(const QSize& room) const;
    /// Sets both axes' tick labels to m_labelPoints.
    void applyLabelFont();
    /// The colour bar across the top of the matrix (a narrow figure) or beside it.
    void placeColorBar(bool across);
    /// A figure narrower than this many times its text size has its colour bar across the top.
    static constexpr int kNarrowFigureEms = 40;
    /// QCustomPlot's own padding of axis titles and tick labels (a wider figure keeps it).
    static constexpr int kAxisPadding = 5;
    /// Lays the plot out at `size` as a figure would be, without keeping the drawing.
    void layOutAsFigure(const QSize& size);
    /// True when the column labels do not fit side by side and are drawn upright.
    bool columnLabelsUpright() const;
    /// The title wrapped to the figure's (or widget's) width.
    QString wrappedHeading() const;
    QString wrappedHeading(const QString& text) const;
    static double valueFontSize(const Theme& look);
    /// The title as drawn: the window's adds the flat-scale hint, a figure's does not.
    void applyTitleText();
    /// Wraps the heading and the hint to the plot's width, padded to the least title lines.
    void wrapTitle();

    HeatmapOverview* m_overview = nullptr;
    QLabel* m_overviewNote = nullptr; ///< under the overview: what a click does
    QVBoxLayout* m_overviewColumn = nullptr;
    QString m_flatHint;
    std::optional<FlatMap> m_flat;
    QString m_wrappedTitle; ///< the heading wrapped and padded to the least title lines
    QString m_wrappedHint;
    QString m_rowTitle; ///< the axes' titles before the shown range is added
    QString m_columnTitle;

    HeatmapSource m_source;
    QString m_caption;
    QCPColorMap* m_colorMap = nullptr;
    QCPColorScale* m_colorScale = nullptr;
    QCPGraph* m_maskMarks = nullptr;
    QCPGraph* m_dropMarks = nullptr; ///< rings on the cells dropout zeroed (train mode)
    QCPItemRect* m_selection = nullptr;
    QCPTextElement* m_title = nullptr;
    QString m_heading; ///< the title before wrapping
    bool m_panel = false;
    int m_minimumTitleLines = 0;
    bool m_exporting = false; ///< inside paintFigure: the layout is the figure's
    /// The axis rect's size as laid out (or, for a widget never shown, most of the widget).
    QSize axisRoom() const;
    bool m_panelRowLabels = true;
    std::optional<std::pair<double, double>> m_sharedRange;
    /// The last refresh's colour values: their range, fixed 0-to-1 or signed, and the label.
    std::pair<double, double> m_drawn{0, 0};
    std::optional<std::pair<double, double>> m_drawnFixed;
    bool m_drawnSigned = false;
    bool m_drawnSignedLog = false; ///< the bar's numbers are sign * log10(|d| / 10^-6)
    QString m_drawnLabel;
    /// The colour map's range from the above and the shared range; the bar's label.
    QCPRange colorRange() const;
    void applyColorRange();
    QString m_sharedLabel;
    bool m_colorBarShown = true;
    bool m_colorBarAcross = false;
    QCPMarginGroup* m_barMargins = nullptr; ///< the bar's ends level with the matrix's sides
    std::vector<QCPAbstractItem*> m_valueLabels;
    Index m_rows = 0;
    Index m_cols = 0;
    Index m_shownRows = -1; ///< shape the zoom was set for
    Index m_shownCols = -1;
    QStringList m_rowLabels;
    QSize m_labelBudget;
    double m_labelPoints = 0; ///< token labels' size; 0 until first drawn
    QStringList m_columnLabels;
    mutable QHash<QString, double> m_widestLabel; ///< widestColumnLabel by QFont::key()
};

} // namespace attnlab::ui

#include "ui/views/heatmap_view.h"

#include "attnlab/lab/cell.h"

#include <QBoxLayout>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPicture>
#include <QToolTip>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/state/experiment_data.h"
#include "ui/views/cell_labels.h"
#include "ui/views/colormap.h"
#include "ui/views/plot_captions.h"
#include "ui/views/teaching_plot.h"
#include "ui/views/token_tooltips.h"

namespace attnlab::ui {

namespace {

QStringList dimensionLabels(Index count) {
    QStringList labels;
    for (Index d = 0; d < count; ++d)
        labels << QStringLiteral("d%1").arg(d);
    return labels;
}

/// Text ticker with one tick per visible cell, thinned so labels do not collide: at most
/// `maxLabels` over the visible `range` (zooming in brings every label back).
/// Texts longer than this number the labels that are left when they are thinned.
constexpr int kNumberedLabelsFrom = 64;

QSharedPointer<QCPAxisTickerText> tokenTicker(const QStringList& labels, const QCPRange& range,
                                              double maxLabels) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int count = static_cast<int>(labels.size());
    if (count == 0) return ticker;
    const int first = std::clamp(static_cast<int>(std::floor(range.lower)), 0, count - 1);
    const int last = std::clamp(static_cast<int>(std::ceil(range.upper)), 0, count - 1);
    const int visible = std::max(1, last - first + 1);
    const int step =
        std::max(1, static_cast<int>(std::ceil(visible / std::max(1.0, std::floor(maxLabels)))));
    // A long text's labels carry their positions, thinned or zoomed in, so a repeated word can
    // be placed (a sentence keeps its words alone: the numbers would take its labels' room).
    const bool numbered = count > kNumberedLabelsFrom;
    for (int i = (first / step) * step; i <= last; i += step)
        ticker->addTick(i, numbered ? QStringLiteral("%1 %2").arg(i).arg(labels[i]) : labels[i]);
    return ticker;
}

/// Keeps a zoomed or panned range inside [-0.5, count - 0.5].
QCPRange boundedRange(const QCPRange& range, Index count) {
    const double lowest = -0.5;
    const double highest = static_cast<double>(std::max<Index>(count, 1)) - 0.5;
    double size = std::min(range.size(), highest - lowest);
    size = std::max(size, std::min(1.0, highest - lowest));
    const double lower = std::clamp(range.lower, lowest, highest - size);
    return QCPRange(lower, lower + size);
}

QString number(double value) {
    return QString::number(value, 'g', 4);
}

/// The first and last cell (0-based) a range of cell coordinates shows, of `count`.
std::pair<Index, Index> shownCells(const QCPRange& range, Index count) {
    const auto first = static_cast<Index>(std::floor(range.lower + 0.5));
    const auto last = static_cast<Index>(std::ceil(range.upper - 0.5));
    return {std::clamp<Index>(first, 0, std::max<Index>(count - 1, 0)),
            std::clamp<Index>(last, 0, std::max<Index>(count - 1, 0))};
}

/// The median of the rows' largest values (`rowPeaks`), rows of zeros (all masked) left out;
/// 0 when there are none.
double typicalRowPeak(const Eigen::VectorXd& rowPeaks) {
    std::vector<double> peaks;
    for (const double peak : rowPeaks)
        if (peak > 0) peaks.push_back(peak);
    if (peaks.empty()) return 0;
    const auto middle = peaks.begin() + static_cast<std::ptrdiff_t>(peaks.size() / 2);
    std::nth_element(peaks.begin(), middle, peaks.end());
    return *middle;
}

/// The overview's image side: at most this many pixels of the matrix each way.
constexpr Index kOverviewPixels = 256;

/// How an overview pixel sums up its block of cells.
enum class Pooling {
    Peak, ///< the largest (the farthest from 0 when signed): one strong weight still shows
    Mean, ///< the mean: a scale that already lifts each row's or the small weights' pattern
};

/// The matrix at most kOverviewPixels each way, coloured as the detail is, each pixel its
/// block's cells pooled; a block entirely hidden is NaN (masked).
QImage overviewImage(const MatrixD& values, const BoolMatrix* hidden, QCPColorGradient gradient,
                     const QCPRange& range, bool signedValues, Pooling pooling) {
    const Index rows = values.rows();
    const Index cols = values.cols();
    if (rows == 0 || cols == 0) return {};
    const Index height = std::min(rows, kOverviewPixels);
    const Index width = std::min(cols, kOverviewPixels);
    const bool useHidden = hidden && hidden->rows() == rows && hidden->cols() == cols;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> line(static_cast<std::size_t>(width));
    QImage image(static_cast<int>(width), static_cast<int>(height), QImage::Format_ARGB32);
    for (Index y = 0; y < height; ++y) {
        const Index top = y * rows / height;
        const Index bottom = (y + 1) * rows / height;
        for (Index x = 0; x < width; ++x) {
            const Index left = x * cols / width;
            const Index right = (x + 1) * cols / width;
            double best = nan;
            double sum = 0;
            int count = 0;
            for (Index i = top; i < bottom; ++i)
                for (Index j = left; j < right; ++j) {
                    if (useHidden && (*hidden)(i, j)) continue;
                    const double v = values(i, j);
                    if (!std::isfinite(v)) continue;
                    sum += v;
                    ++count;
                    if (std::isnan(best) ||
                        (signedValues ? std::abs(v) > std::abs(best) : v > best))
                        best = v;
                }
            line[static_cast<std::size_t>(x)] =
                pooling == Pooling::Mean && count > 0 ? sum / count : best;
        }
        gradient.colorize(line.data(), range, reinterpret_cast<QRgb*>(image.scanLine(int(y))),
                          static_cast<int>(width));
    }
    return image;
}

/// What the colours show: the values as the colour scale maps them, the fixed range they
/// span (0..1, or the chosen range; none: the values' own range), and the colour bar's note
/// saying which scale it is.
struct ColourScale {
    /// The values as the scale maps them; empty where they are the values themselves (no copy
    /// of a long text's 16 M cells).
    MatrixD rescaled;
    std::optional<std::pair<double, double>> fixedRange;
    QString note;
    bool signedLog = false; ///< values are sign(d) * log10(|d| / kLogFloor), 0 below the floor

    const MatrixD& values(const HeatmapData& heat) const {
        return rescaled.size() != 0 ? rescaled : heat.values;
    }
};

/// Whether the colour scale applies to what is shown: weights, never a mask, scores or
/// vectors, which have their own ranges (nor train-mode weights, which reach 1 / (1 - p)).
bool scalesWeights(const HeatmapData& heat, const ViewState& state) {
    return heat.unitRange && state.show == "weights";
}

/// The lowest weight the log scale draws: 10^-6, below any weight a person reads.
constexpr double kLogFloor = 1e-6;
/// log10(x) = ln(x) * log10(e): Eigen vectorises log, not log10 (16 M cells at 4 000 tokens).
constexpr double kLog10E = 0.43429448190325182765;

/// Each row of `values` over its entry of `tops`, in one vectorised pass; a row whose top is
/// under `least` is left as it is.
MatrixD overRowTops(const MatrixD& values, const Eigen::VectorXd& tops, double least) {
    const Eigen::VectorXd factors = (tops.array() >= least).select(tops.cwiseInverse(), 1.0);
    MatrixD out(values.rows(), values.cols());
    out.noalias() = factors.asDiagonal() * values;
    return out;
}

/// B - A on the scale chosen for the weights. On a long text a few cells of the first rows
/// differ by ~1 and the rest by ~1/S: on one +-max scale the map was blank. Per row, each row
/// spans its own largest difference; on the log scale, each difference's order of magnitude
/// keeps its sign.
ColourScale differenceScale(const HeatmapData& heat, const ViewState& state) {
    ColourScale out{MatrixD(), std::nullopt, QString(), false};
    if (state.colorScale == "row") {
        // A row whose differences are all rounding (under 10^-6) is not magnified.
        const Eigen::VectorXd tops = heat.values.cwiseAbs().rowwise().maxCoeff();
        out.rescaled = overRowTops(heat.values, tops, kLogFloor);
        out.note = HeatmapView::tr(" \u00f7 row\u2019s largest |B \u2212 A|");
    } else if (state.colorScale == "log") {
        const auto magnitude = heat.values.array().abs();
        out.rescaled = (magnitude < kLogFloor)
                           .select(0.0, heat.values.array().sign() *
                                            (magnitude.max(kLogFloor) / kLogFloor).log() * kLog10E)
                           .matrix();
        out.signedLog = true;
        out.note = HeatmapView::tr(" (log scale, sign kept)");
    }
    return out;
}

ColourScale colourScale(const HeatmapData& heat, const ViewState& state) {
    if (heat.weightDifference) return differenceScale(heat, state);
    ColourScale out{MatrixD(),
                    heat.unitRange ? std::optional(std::make_pair(0.0, 1.0)) : std::nullopt,
                    QString(), false};
    if (!scalesWeights(heat, state) || state.colorScale == "fixed") return out;
    if (state.colorScale == "data") {
        out.fixedRange.reset();
        out.note = HeatmapView::tr(" (data range)");
    } else if (state.colorScale == "row") {
        const Eigen::VectorXd tops =
            heat.masked.size() != 0
                ? Eigen::VectorXd(heat.masked.select(0.0, heat.values).rowwise().maxCoeff())
                : Eigen::VectorXd(heat.values.rowwise().maxCoeff());
        out.rescaled = overRowTops(heat.values, tops, std::numeric_limits<double>::min());
        out.note = HeatmapView::tr(" \u00f7 row max");
    } else if (state.colorScale == "log") {
        out.rescaled = (heat.values.cwiseMax(kLogFloor).array().log() * kLog10E).matrix();
        out.fixedRange.reset();
        out.note = HeatmapView::tr(" (log\u2081\u2080)");
    } else if (state.colorScale == "range") {
        // The weights themselves on the chosen range; those outside take the end colours.
        out.fixedRange = std::make_pair(state.colorLow, state.colorHigh);
        out.note =
            HeatmapView::tr(" (%1 to %2)").arg(number(state.colorLow), number(state.colorHigh));
    }
    return out;
}

/// Weights on the per-row or log scale: every block holds a row's top or a lifted small weight,
/// so their peaks would be one flat colour; their means keep the pattern.
Pooling poolingOf(const HeatmapData& heat, const ViewState& state) {
    const bool lifted = state.colorScale == "row" || state.colorScale == "log";
    return scalesWeights(heat, state) && lifted ? Pooling::Mean : Pooling::Peak;
}

} // namespace

/// A colour map that, in the window, draws a long matrix's cells in view at the screen's
/// resolution: QCustomPlot's own draw copies (mirrored, queries running down) and scales the
/// image of the whole matrix on every replot, ~70 ms at 4000 x 4000 cells. Each pixel takes
/// the cell at its centre, as the unsmoothed scaling does. Figures (`direct` false) and short
/// matrices keep QCustomPlot's drawing.
class ViewportColorMap : public QCPColorMap {
public:
    using QCPColorMap::QCPColorMap;
    /// Cells from which a matrix is drawn at the screen's resolution.
    static constexpr qint64 kDirectFrom = 256 * 256;
    bool direct = true;

protected:
    void draw(QCPPainter* painter) override {
        QCPColorMapData* cells = data();
        const int cols = cells->keySize();
        const int rows = cells->valueSize();
        if (!direct || painter->modes().testFlag(QCPPainter::pmVectorized) ||
            qint64(cols) * rows < kDirectFrom) {
            QCPColorMap::draw(painter);
            return;
        }
        const QRect area = clipRect();
        if (area.isEmpty()) return;
        // The cell under each pixel column and row; -1 outside the matrix.
        auto cellsAlong = [](const QCPAxis* axis, int from, int count, int size) {
            std::vector<int> index(static_cast<std::size_t>(count));
            for (int p = 0; p < count; ++p) {
                const auto i = static_cast<int>(std::lround(axis->pixelToCoord(from + p + 0.5)));
                index[static_cast<std::size_t>(p)] = i >= 0 && i < size ? i : -1;
            }
            return index;
        };
        const std::vector<int> column = cellsAlong(keyAxis(), area.left(), area.width(), cols);
        const std::vector<int> row = cellsAlong(valueAxis(), area.top(), area.height(), rows);
        QCPColorGradient colours = gradient();
        const QCPRange range = dataRange();
        const double nan = std::numeric_limits<double>::quiet_NaN();
        QImage image(area.size(), QImage::Format_ARGB32_Premultiplied);
        std::vector<double> line(static_cast<std::size_t>(area.width()));
        for (int y = 0; y < area.height(); ++y) {
            const int i = row[static_cast<std::size_t>(y)];
            for (int x = 0; x < area.width(); ++x) {
                const int j = column[static_cast<std::size_t>(x)];
                line[static_cast<std::size_t>(x)] = i >= 0 && j >= 0 ? cells->cell(j, i) : nan;
            }
            auto* pixels = reinterpret_cast<QRgb*>(image.scanLine(y));
            colours.colorize(line.data(), range, pixels, area.width());
            for (int x = 0; x < area.width(); ++x)
                if (i < 0 || column[static_cast<std::size_t>(x)] < 0) pixels[x] = 0; // outside
        }
        // Unantialiased: QCPPainter shifts an antialiased painter by half a pixel.
        painter->save();
        painter->setAntialiasing(false);
        painter->drawImage(area.topLeft(), image);
        painter->restore();
    }
};

/// The whole matrix, small, with a rectangle marking what the detail shows. A press or a drag
/// moves the detail there.
class HeatmapOverview : public QWidget {
public:
    explicit HeatmapOverview(HeatmapView* view) : QWidget(view), m_view(view) {
        setCursor(Qt::PointingHandCursor);
        setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    }
    void setImage(QImage image, Index rows, Index cols) {
        m_image = std::move(image);
        m_rows = rows;
        m_cols = cols;
        update();
    }
    /// Where the matrix is drawn: the widget, at the matrix's shape.
    QRectF matrixRect() const {
        const QRectF room = QRectF(rect()).adjusted(4, 1, -6, -9);
        if (m_rows <= 0 || m_cols <= 0) return room;
        const double cell = std::min(room.width() / double(m_cols), room.height() / double(m_rows));
        return {room.left(), room.top(), cell * double(m_cols), cell * double(m_rows)};
    }
    /// The detail's axes' ranges as a rectangle on the matrix drawn here.
    QRectF frame() const {
        const QRectF matrix = matrixRect();
        if (m_rows <= 0 || m_cols <= 0) return {};
        const QCPAxisRect* axes = m_view->plot()->axisRect();
        const QCPRange x = axes->axis(QCPAxis::atBottom)->range();
        const QCPRange y = axes->axis(QCPAxis::atLeft)->range();
        const double across = matrix.width() / double(m_cols);
        const double down = matrix.height() / double(m_rows);
        return {matrix.left() + (x.lower + 0.5) * across, matrix.top() + (y.lower + 0.5) * down,
                x.size() * across, y.size() * down};
    }

protected:
    void paintEvent(QPaintEvent* event) override {
        (void)event;
        QPainter painter(this);
        const Theme look = m_view->theme();
        const QRectF matrix = matrixRect();
        painter.drawImage(matrix, m_image);
        painter.setPen(QPen(look.foreground, 1));
        painter.drawRect(matrix);
        // The detail's rectangle: the accent colour inside a contrasting edge, so it reads on
        // any cell colour.
        // At least a few pixels each way, so a small detail's place still shows.
        QRectF marked = frame().intersected(matrix);
        const QPointF centre = marked.center();
        marked.setWidth(std::max(marked.width(), 6.0));
        marked.setHeight(std::max(marked.height(), 6.0));
        marked.moveCenter(centre);
        painter.setPen(QPen(look.background, 4));
        painter.drawRect(marked);
        painter.setPen(QPen(look.accent, 2));
        painter.drawRect(marked);
    }
    void mousePressEvent(QMouseEvent* event) override { moveDetail(event); }
    void mouseMoveEvent(QMouseEvent* event) override {
        if (event->buttons() & Qt::LeftButton) moveDetail(event);
    }

private:
    void moveDetail(QMouseEvent* event) {
        if (!(event->buttons() & Qt::LeftButton) || m_rows <= 0 || m_cols <= 0) return;
        const QRectF matrix = matrixRect();
        const QPointF at = event->position();
        const double column = (at.x() - matrix.left()) / matrix.width() * double(m_cols) - 0.5;
        const double row = (at.y() - matrix.top()) / matrix.height() * double(m_rows) - 0.5;
        m_view->centreDetailOn(row, column);
        event->accept();
    }

    HeatmapView* m_view;
    QImage m_image;
    Index m_rows = 0;
    Index m_cols = 0;
};

HeatmapView::HeatmapView(Document* document, HeatmapSource source, QWidget* parent)
    : PlotView(document, parent), m_source(source) {
    QCustomPlot& plot = *m_plot;
    plot.plotLayout()->insertRow(0);
    m_title = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(0, 0, m_title);

    QCPAxisRect* rect = plot.axisRect();
    rect->axis(QCPAxis::atBottom)->grid()->setVisible(false);
    rect->axis(QCPAxis::atLeft)->grid()->setVisible(false);
    rect->axis(QCPAxis::atLeft)->setRangeReversed(true); // query 0 at the top
    rect->axis(QCPAxis::atBottom)->setSubTicks(false);
    rect->axis(QCPAxis::atLeft)->setSubTicks(false);
    // Token ticks point out of the matrix: inside they would sit on the cells.
    rect->axis(QCPAxis::atBottom)->setTickLength(0, 3);
    rect->axis(QCPAxis::atLeft)->setTickLength(0, 3);

    m_colorMap = new ViewportColorMap(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    m_colorMap->setInterpolate(false);
    m_colorMap->setTightBoundary(false);

    m_colorScale = new QCPColorScale(&plot);
    plot.plotLayout()->addElement(1, 1, m_colorScale);
    m_colorScale->setType(QCPAxis::atRight);
    m_colorMap->setColorScale(m_colorScale);
    m_barMargins = new QCPMarginGroup(&plot);
    rect->setMarginGroup(QCP::msBottom | QCP::msTop, m_barMargins);
    m_colorScale->setMarginGroup(QCP::msBottom | QCP::msTop, m_barMargins);

    m_maskMarks = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    m_maskMarks->setLineStyle(QCPGraph::lsNone);
    m_maskMarks->setSelectable(QCP::stNone);
    m_dropMarks = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    m_dropMarks->setLineStyle(QCPGraph::lsNone);
    m_dropMarks->setSelectable(QCP::stNone);
    // The rings are sized to the cells as laid out, so they stay inside them at any size.
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        const QCPAxisRect* axes = m_plot->axisRect();
        const double cellWidth = std::abs(axes->axis(QCPAxis::atBottom)->coordToPixel(1) -
                                          axes->axis(QCPAxis::atBottom)->coordToPixel(0));
        const double cellHeight = std::abs(axes->axis(QCPAxis::atLeft)->coordToPixel(1) -
                                           axes->axis(QCPAxis::atLeft)->coordToPixel(0));
        QCPScatterStyle ring = m_dropMarks->scatterStyle();
        const double size = std::clamp(0.55 * std::min(cellWidth, cellHeight), 3.0, 16.0);
        ring.setSize(size);
        QPen pen = ring.pen();
        pen.setWidthF(std::clamp(size / 10, 0.6, 2.0));
        ring.setPen(pen);
        m_dropMarks->setScatterStyle(ring);
    });

    m_selection = new QCPItemRect(&plot);
    m_selection->setClipToAxisRect(true);
    m_selection->setVisible(false);

    plot.setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        connect(axis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
                [this, axis](const QCPRange& range) {
                    const bool horizontal = axis->orientation() == Qt::Horizontal;
                    const QCPRange bounded = boundedRange(range, horizontal ? m_cols : m_rows);
                    if (bounded != range) {
                        axis->setRange(bounded); // re-enters once with the bounded range
                        return;
                    }
                    updateTickers();
                    if (m_overview->isVisible()) m_overview->update();
                });
    }
    // How many labels fit depends on the axis rect's size, which is only known once the plot
    // has been laid out at its real size. Tick vectors are built during layout, so a changed
    // budget takes effect on the next replot.
    // The labels' size follows the room the same way: smaller labels free room, which could
    // let larger ones fit again, so they grow back only with room to spare and layout settles.
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        const QSize room = axisRoom();
        const double points = fittingLabelPoints(room);
        bool resized = false;
        if (points < m_labelPoints) {
            m_labelPoints = points;
            resized = true;
        } else if (points > m_labelPoints) {
            const double spare = fittingLabelPoints(room * 0.9);
            resized = spare > m_labelPoints;
            if (resized) m_labelPoints = spare;
        }
        if (resized) applyLabelFont();
        fitToCells();
        // The overview's top level with the matrix's (the window's layout, not a figure's).
        if (!m_exporting && m_overviewColumn &&
            m_overviewColumn->contentsMargins().top() != m_plot->axisRect()->top())
            m_overviewColumn->setContentsMargins(0, m_plot->axisRect()->top(), 0, 0);
        const QSize budget = labelBudget();
        if (budget == m_labelBudget && !resized) return;
        m_labelBudget = budget;
        updateTickers();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    plot.setMouseTracking(true);
    // Qt's delayed tool-tip event would otherwise reach this widget's generic tip and replace
    // the cell's breakdown after ~0.7 s: the plot answers it itself while over a cell.
    m_plot->installEventFilter(this);
    connect(m_plot, &QCustomPlot::mouseMove, this, &HeatmapView::onMouseMove);
    connect(m_plot, &QCustomPlot::mousePress, this, &HeatmapView::onMousePress);
    const QString help =
        tr("Hover a cell to see its computation; click a row to select its query; wheel zooms, "
           "drag pans. Click the heatmap, then + and \u2212 zoom, 0 or Home shows it all.");
    setToolTip(help);
    setWhatsThis(help);
    m_plot->setFocusPolicy(Qt::StrongFocus);

    // A long matrix's overview stands beside the plot, at its top: in the window only, since a
    // figure is the plot alone.
    m_overview = new HeatmapOverview(this);
    m_overview->setToolTip(tr("The whole matrix; the rectangle is the part shown. Click or drag "
                              "to move there."));
    m_overview->hide();
    if (auto* box = qobject_cast<QBoxLayout*>(layout())) {
        box->removeWidget(m_plot);
        auto* row = new QHBoxLayout;
        row->setContentsMargins(0, 0, 0, 0);
        row->setSpacing(0);
        row->addWidget(m_plot, 1);
        auto* side = new QVBoxLayout;
        side->setContentsMargins(0, 0, 0, 0);
        side->addWidget(m_overview);
        m_overviewNote = new QLabel(tr("Overview: click or drag to go there"), this);
        m_overviewNote->setWordWrap(true);
        m_overviewNote->hide();
        side->addWidget(m_overviewNote);
        side->addStretch(1);
        m_overviewColumn = side;
        row->addLayout(side);
        box->addLayout(row);
    }
}

QWidget* HeatmapView::overview() const {
    return m_overview;
}

bool HeatmapView::overviewShown() const {
    return !m_overview->isHidden();
}

QRectF HeatmapView::overviewFrame() const {
    return m_overview->frame();
}

void HeatmapView::zoomBy(double factor) {
    const QCPAxisRect* rect = m_plot->axisRect();
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        const QCPRange range = axis->range();
        const double half = range.size() * factor / 2;
        axis->setRange(range.center() - half, range.center() + half); // bounded on the way
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::resetZoom() {
    const QCPAxisRect* rect = m_plot->axisRect();
    rect->axis(QCPAxis::atBottom)->setRange(-0.5, double(std::max<Index>(m_cols, 1)) - 0.5);
    rect->axis(QCPAxis::atLeft)->setRange(-0.5, double(std::max<Index>(m_rows, 1)) - 0.5);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::centreDetailOn(double row, double column) {
    const QCPAxisRect* rect = m_plot->axisRect();
    const std::pair<QCPAxis*, std::pair<double, Index>> sides[] = {
        {rect->axis(QCPAxis::atBottom), {column, m_cols}},
        {rect->axis(QCPAxis::atLeft), {row, m_rows}}};
    for (const auto& [axis, where] : sides) {
        const auto [centre, count] = where;
        double size = axis->range().size();
        if (size >= double(count) && count > kOverviewFrom) size = kOverviewFrom;
        axis->setRange(centre - size / 2, centre + size / 2); // bounded on the way
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomBy(1 / 1.5);
        break;
    case Qt::Key_Minus:
    case Qt::Key_Underscore:
        zoomBy(1.5);
        break;
    case Qt::Key_0:
    case Qt::Key_Home:
        resetZoom();
        break;
    default:
        PlotView::keyPressEvent(event);
        return;
    }
    event->accept();
}

QString HeatmapView::viewId() const {
    switch (m_source) {
    case HeatmapSource::Primary:
        return QStringLiteral("heatmap");
    case HeatmapSource::Comparison:
        return QStringLiteral("heatmap-b");
    case HeatmapSource::Difference:
        return QStringLiteral("difference");
    }
    return QStringLiteral("heatmap");
}

void HeatmapView::setPanel(bool rowLabels) {
    m_panel = true;
    m_panelRowLabels = rowLabels;
    markStale();
}

bool HeatmapView::dependsOn(Document::What what) const {
    return !m_panel && PlotView::dependsOn(what);
}

void HeatmapView::setSharedColorRange(std::optional<std::pair<double, double>> range,
                                      const QString& label) {
    if (range == m_sharedRange && label == m_sharedLabel) return;
    m_sharedRange = range;
    m_sharedLabel = label;
    // Colours only: the cells keep their values, so they are not filled again.
    applyColorRange();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

std::optional<std::pair<double, double>> HeatmapView::drawnRange() const {
    if (m_rows == 0 || m_cols == 0) return std::nullopt;
    return m_drawn;
}

QCPRange HeatmapView::colorRange() const {
    QCPRange range(m_drawn.first, m_drawn.second);
    if (m_drawnFixed) range = QCPRange(m_drawnFixed->first, m_drawnFixed->second);
    if (m_drawnSigned) {
        const double reach = std::max({std::abs(m_drawn.first), std::abs(m_drawn.second), 1e-12});
        range = QCPRange(-reach, reach);
    }
    if (m_sharedRange && !m_drawnSigned)
        range = QCPRange(m_sharedRange->first, m_sharedRange->second);
    if (range.size() <= 0) range = QCPRange(range.lower - 0.5, range.upper + 0.5);
    return range;
}

namespace {

/// The signed log scale's bar: its numbers are orders of magnitude, so its ticks name the
/// differences they stand for (+-1, +-10^-2, ... and 0 for anything under 10^-6).
QSharedPointer<QCPAxisTicker> signedLogTicker(double reach) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int floorPower = static_cast<int>(std::lround(-std::log10(kLogFloor)));
    const int top = std::min(floorPower, static_cast<int>(std::ceil(reach - 1e-9)));
    const int stride = top > 4 ? 2 : 1;
    static const QString superscripts[] = {
        QStringLiteral("\u2070"), QStringLiteral("\u00b9"), QStringLiteral("\u00b2"),
        QStringLiteral("\u00b3"), QStringLiteral("\u2074"), QStringLiteral("\u2075"),
        QStringLiteral("\u2076")};
    for (int k = -top; k <= top; ++k) {
        if (k % stride != 0) continue;
        const int power = floorPower - std::abs(k); // |d| = 10^-power
        QString label = k == 0       ? QStringLiteral("0")
                        : power == 0 ? QStringLiteral("1")
                                     : QStringLiteral("10\u207b") + superscripts[power];
        if (k < 0) label.prepend(QChar(0x2212));
        ticker->addTick(k, label);
    }
    return ticker;
}

} // namespace

void HeatmapView::applyColorRange() {
    const QCPRange range = colorRange();
    m_colorMap->setDataRange(range);
    QCPAxis* bar = m_colorScale->axis();
    bar->setLabel(m_sharedRange && !m_sharedLabel.isEmpty() ? m_sharedLabel : m_drawnLabel);
    if (m_drawnSignedLog)
        bar->setTicker(signedLogTicker(range.upper));
    else if (bar->ticker().dynamicCast<QCPAxisTickerText>())
        bar->setTicker(QSharedPointer<QCPAxisTicker>::create());
}

void HeatmapView::setColorBarShown(bool shown) {
    if (shown == m_colorBarShown) return;
    m_colorBarShown = shown;
    QCPLayoutGrid* layout = m_plot->plotLayout();
    if (shown) {
        layout->addElement(1, 1, m_colorScale);
    } else {
        layout->take(m_colorScale);
        layout->simplify();
    }
    m_colorScale->setVisible(shown);
    m_colorScale->axis()->axisRect()->setVisible(shown);
    markStale();
}

void HeatmapView::placeColorBar(bool across) {
    if (across == m_colorBarAcross) return;
    m_colorBarAcross = across;
    QCPLayoutGrid* layout = m_plot->plotLayout();
    QCPAxisRect* rect = m_plot->axisRect();
    layout->take(m_colorScale);
    layout->simplify(); // the title's row, then the matrix's
    for (QCPLayoutElement* element :
         {static_cast<QCPLayoutElement*>(rect), static_cast<QCPLayoutElement*>(m_colorScale)}) {
        element->setMarginGroup(QCP::msAll, nullptr);
        element->setMarginGroup(across ? QCP::msLeft | QCP::msRight : QCP::msBottom | QCP::msTop,
                                m_barMargins);
    }
    if (across) {
        layout->insertRow(1);
        layout->addElement(1, 0, m_colorScale);
        layout->setRowStretchFactor(1, 0.001); // its own height; the matrix takes the rest
        m_colorScale->setType(QCPAxis::atTop);
        // The automatic margins keep a blank band on the sides that draw nothing (below the
        // bar, above and right of the matrix): small fixed ones there, the bar's ends still
        // level with the matrix's sides; on the right, room for half the bar's last number.
        const int right = std::max(3, theme().fontPointSize);
        m_colorScale->setAutoMargins(QCP::msLeft);
        m_colorScale->setMargins(QMargins(0, 2, right, 6));
        rect->setAutoMargins(QCP::msLeft | QCP::msBottom);
        rect->setMargins(QMargins(0, 0, right, 0));
    } else {
        layout->addElement(1, 1, m_colorScale);
        m_colorScale->setType(QCPAxis::atRight);
        m_colorScale->setAutoMargins(QCP::msAll);
        rect->setAutoMargins(QCP::msAll);
    }
    // Labels closer to their axis in a narrow figure: the room goes to the matrix.
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->setLabelPadding(across ? 2 : kAxisPadding);
        axis->setTickLabelPadding(across ? 2 : kAxisPadding);
    }
}

void HeatmapView::setCaption(const QString& caption) {
    if (caption == m_caption) return;
    m_caption = caption;
    if (caption.isEmpty() || m_heading.isEmpty()) {
        markStale(); // the default title is built from the data
        return;
    }
    m_heading = title();
    wrapTitle();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString HeatmapView::title() const {
    if (!figureStyle().caption.isEmpty()) return figureStyle().caption;
    if (!m_caption.isEmpty()) return m_caption;
    switch (m_source) {
    case HeatmapSource::Primary:
        return tr("Heatmap");
    case HeatmapSource::Comparison:
        return tr("Heatmap (B)");
    case HeatmapSource::Difference:
        return tr("Difference B \u2212 A");
    }
    return tr("Heatmap");
}

const Experiment* HeatmapView::experimentFor(HeatmapSource source) const {
    return source == HeatmapSource::Primary ? document()->experiment()
                                            : document()->comparisonExperiment();
}

HeatmapData HeatmapView::heatmapData() const {
    HeatmapData out;
    const ViewState& state = document()->session().viewState;
    if (m_source == HeatmapSource::Difference) {
        const Experiment* a = experimentFor(HeatmapSource::Primary);
        const Experiment* b = experimentFor(HeatmapSource::Comparison);
        if (!a || !b) return out;
        if (!a->hasWeights() || !b->hasWeights() || a->sq() != b->sq() || a->sk() != b->sk())
            return out;
        // The two heads' float maps, then their difference in double (128 MB at 4 000 tokens).
        const Matrix wa = a->headWeights(clampedHead(*a, state.head));
        const Matrix wb = b->headWeights(clampedHead(*b, state.head));
        if (wa.rows() != wb.rows() || wa.cols() != wb.cols()) return out;
        out.values = wb.cast<double>() - wa.cast<double>();
        out.rowLabels = displayTokens(a->queryTokens);
        out.columnLabels = displayTokens(a->keyTokens);
        out.quantity = tr("weight B \u2212 A");
        out.signedValues = true;
        out.weightDifference = true;
        return out;
    }
    const Experiment* experiment = experimentFor(m_source);
    if (!experiment) return out;
    const Index head = clampedHead(*experiment, state.head);
    const QString show = QString::fromStdString(state.show);
    out.rowLabels = displayTokens(experiment->queryTokens);
    out.columnLabels = displayTokens(experiment->keyTokens);
    if (show == QLatin1String("scores")) {
        out.values = experiment->rawScores(head);
        out.quantity = tr("q\u00b7k");
        out.signedValues = true;
    } else if (show == QLatin1String("scaled")) {
        out.values = experiment->scaledScores(head);
        out.masked = maskedCells(*experiment);
        out.quantity = tr("scaled score");
        out.signedValues = true;
    } else if (show == QLatin1String("mask")) {
        const BoolMatrix masked = maskedCells(*experiment);
        out.values = (masked.array() == false).cast<double>().matrix();
        out.quantity = tr("allowed");
        out.unitRange = true;
    } else if (show == QLatin1String("output")) {
        out.values = experiment->output.cast<double>();
        out.columnLabels = dimensionLabels(out.values.cols());
        out.quantity = tr("output");
        out.signedValues = true;
    } else if (show == QLatin1String("q") || show == QLatin1String("k") ||
               show == QLatin1String("v")) {
        const Tensor4& tensor = show == QLatin1String("q")   ? experiment->qkv.q
                                : show == QLatin1String("k") ? experiment->qkv.k
                                                             : experiment->qkv.v;
        const Index h = show == QLatin1String("q") ? head : experiment->kvHeadOf(head);
        out.values = headSlice(tensor, h);
        if (show != QLatin1String("q")) out.rowLabels = out.columnLabels;
        out.columnLabels = dimensionLabels(out.values.cols());
        out.quantity = show.toUpper();
        out.signedValues = true;
    } else {
        out.values = headWeights(*experiment, head);
        out.masked = maskedCells(*experiment);
        out.quantity = tr("weight");
        out.unitRange = true;
        if (experiment->dropout.active()) {
            // Train mode: the cells dropout zeroed are marked, apart from the masked ones.
            out.dropped = BoolMatrix::Constant(out.values.rows(), out.values.cols(), false);
            for (Index i = 0; i < out.values.rows(); ++i)
                for (Index j = 0; j < out.values.cols(); ++j)
                    out.dropped(i, j) = experiment->isDropped(head, i, j);
            out.quantity = tr("weight after dropout");
            out.unitRange = false; // kept weights reach 1 / (1 - p): the colours span them
        }
    }
    if (out.masked.size() != 0 &&
        (out.masked.rows() != out.values.rows() || out.masked.cols() != out.values.cols()))
        out.masked.resize(0, 0);
    return out;
}

void HeatmapView::clearItems() {
    for (QCPAbstractItem* item : m_valueLabels)
        m_plot->removeItem(item);
    m_valueLabels.clear();
}

void HeatmapView::refresh() {
    const Theme look = theme();
    const ViewState& state = document()->session().viewState;
    const HeatmapData heat = heatmapData();
    clearItems();
    m_rows = heat.values.rows();
    m_cols = heat.values.cols();
    QCPAxis* xAxis = m_plot->axisRect()->axis(QCPAxis::atBottom);
    QCPAxis* yAxis = m_plot->axisRect()->axis(QCPAxis::atLeft);
    // Hovering a token label gives its raw form (a cell has its own, fuller tooltip).
    {
        const Experiment* labelled = experimentFor(
            m_source == HeatmapSource::Difference ? HeatmapSource::Primary : m_source);
        const bool keyRows = state.show == "k" || state.show == "v";
        const bool tokenColumns = !keyRows && state.show != "q" && state.show != "output";
        const std::vector<std::string> none;
        TokenTooltips::of(m_plot)->setTokens(
            yAxis, labelled ? (keyRows ? labelled->keyTokens : labelled->queryTokens) : none, {},
            {}, false);
        TokenTooltips::of(m_plot)->setTokens(
            xAxis, labelled && tokenColumns ? labelled->keyTokens : none, {}, {}, false);
    }

    // A figure a column wide has no width to spare beside the matrix: its colour bar lies
    // across the top.
    const FigureStyle& figure = figureStyle();
    placeColorBar(!m_panel && m_colorBarShown && figure.fontPoints > 0 && figure.wrapWidth > 0 &&
                  figure.wrapWidth < kNarrowFigureEms * figure.fontPoints);

    QString name = QString::fromStdString(state.colormap);
    if (heat.signedValues) name = QStringLiteral("diverging");
    m_colorMap->setGradient(makeGradient(name, maskedColor(look, name)));

    const bool hasMask = heat.masked.size() != 0;
    // The colour scale (view.color_scale) of the weights: 0..1, the data's range, each row
    // over its own largest, log10, or the chosen range. The cells' numbers stay the weights.
    const ColourScale scaled = colourScale(heat, state);
    const QCPRange drawn =
        fillColorMap(m_colorMap, scaled.values(heat), hasMask ? &heat.masked : nullptr);
    m_drawn = {drawn.lower, drawn.upper};
    m_drawnFixed = scaled.fixedRange;
    m_drawnSigned = heat.signedValues;
    m_drawnSignedLog = scaled.signedLog;
    m_drawnLabel = heat.quantity + scaled.note;
    QVector<double> markX;
    QVector<double> markY;
    if (hasMask && m_rows * m_cols <= kMaxMarkedCells)
        for (Index i = 0; i < m_rows; ++i)
            for (Index j = 0; j < m_cols; ++j)
                if (heat.masked(i, j)) {
                    markX << static_cast<double>(j);
                    markY << static_cast<double>(i);
                }
    applyColorRange();
    const QCPRange range = colorRange();

    // A long matrix in the window: the whole of it beside the detail.
    const bool overview = !m_panel && (m_rows > kOverviewFrom || m_cols > kOverviewFrom);
    if (overview) {
        const int side = std::clamp(8 * look.fontPointSize, 96, 160);
        m_overview->setFixedSize(side + 10, side + 10);
        m_overviewNote->setFixedWidth(side + 10);
        m_overview->setImage(overviewImage(scaled.values(heat), hasMask ? &heat.masked : nullptr,
                                           m_colorMap->gradient(), range, heat.signedValues,
                                           poolingOf(heat, state)),
                             m_rows, m_cols);
    }
    m_overview->setVisible(overview);
    m_overviewNote->setVisible(overview);

    // The fixed 0-to-1 scale draws a long text's weights (all near 1/S) in one flat colour: the
    // window says so where the eye is, and which scales show the pattern.
    m_flat.reset();
    if (scalesWeights(heat, state) && state.colorScale == "fixed" &&
        heat.values.size() > 0) {
        // A causal mask gives the first rows weights near 1: the median row's largest weight
        // says how the most of the map looks.
        const double typical = typicalRowPeak(heat.values.rowwise().maxCoeff());
        if (typical > 0 && typical < kFlatWeight) m_flat = FlatMap{typical, 1.0};
    } else if (heat.weightDifference && !scaled.signedLog && state.colorScale != "row" &&
               heat.values.size() > 0) {
        // B - A of a long text: a few cells of the first rows set the +-scale and the rest is
        // blank on it.
        const Eigen::VectorXd peaks = heat.values.cwiseAbs().rowwise().maxCoeff();
        const double typical = typicalRowPeak(peaks);
        const double reach = peaks.maxCoeff();
        if (typical > 0 && typical < kFlatWeight * reach) m_flat = FlatMap{typical, reach};
    }
    m_flatHint.clear();
    if (m_flat && !m_panel && !heat.weightDifference)
        m_flatHint = tr("a typical row\u2019s largest weight is %1 \u2014 Colours: "
                        "\u201cper row\u201d or \u201clog scale\u201d shows the pattern")
                         .arg(QString::number(m_flat->typicalRowPeak, 'g', 2));

    m_maskMarks->setData(markX, markY, true); // sized to the cells in fitToCells()
    // Train-mode dropout: a ring on each allowed cell it zeroed, apart from the masked 'x'.
    QVector<double> dropX;
    QVector<double> dropY;
    const bool hasDrops =
        heat.dropped.size() != 0 && heat.dropped.rows() == m_rows && heat.dropped.cols() == m_cols;
    if (hasDrops && m_rows * m_cols <= kMaxMarkedCells)
        for (Index i = 0; i < m_rows; ++i)
            for (Index j = 0; j < m_cols; ++j)
                if (heat.dropped(i, j) && !(hasMask && heat.masked(i, j))) {
                    dropX << static_cast<double>(j);
                    dropY << static_cast<double>(i);
                }
    // Drawn in the colour that reads on a 0 cell; sized to the cells after layout.
    m_dropMarks->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle,
                        QPen(contrastingText(colormapColor(name, 0.0)), 1.5), Qt::NoBrush, 8));
    m_dropMarks->setData(dropX, dropY, true);

    m_rowLabels = heat.rowLabels;
    m_columnLabels = heat.columnLabels;
    m_widestLabel.clear();
    // The axes' titles; updateTickers adds the part shown when zoomed in.
    m_columnTitle = heat.columnLabels.isEmpty() || heat.columnLabels.first() == QLatin1String("d0")
                        ? tr("dimension")
                        : tr("keys");
    m_rowTitle = tr("queries");
    if (m_panel) {
        // A panel beside others (compare): no axis titles, and row labels only on the first.
        m_columnTitle.clear();
        m_rowTitle.clear();
        yAxis->setTickLabels(m_panelRowLabels);
    }
    if (hasDrops) // the legend of the two marks
        if (const Experiment* shown = experimentFor(m_source))
            m_columnTitle = tr("keys   \u25cb dropped by dropout (train, p = %1)   \u00d7 masked")
                                .arg(shown->dropout.rate, 0, 'g', 3);
    if (m_rows != m_shownRows || m_cols != m_shownCols) {
        // A new shape resets zoom; the same shape keeps the person's zoom and pan.
        m_shownRows = m_rows;
        m_shownCols = m_cols;
        xAxis->setRange(-0.5, std::max<Index>(m_cols, 1) - 0.5);
        yAxis->setRange(-0.5, std::max<Index>(m_rows, 1) - 0.5);
    }
    m_labelPoints = fittingLabelPoints(axisRoom());
    updateTickers();

    // Value labels in the cells, in a colour that reads on the cell.
    // They are hidden when the cells, as laid out, are too small for them (fitToCells).
    if (state.cellValues && m_rows <= kMaxLabelledTokens && m_cols <= kMaxLabelledTokens) {
        QFont font = m_plot->font();
        setFontSize(font, look, valueFontSize(look));
        for (Index i = 0; i < m_rows; ++i) {
            for (Index j = 0; j < m_cols; ++j) {
                if (hasMask && heat.masked(i, j)) continue;
                if (hasDrops && heat.dropped(i, j)) continue; // the ring says it: 0
                const double value = heat.values(i, j);
                auto* label = new QCPItemText(m_plot);
                label->setClipToAxisRect(true);
                label->position->setType(QCPItemPosition::ptPlotCoords);
                label->position->setCoords(static_cast<double>(j), static_cast<double>(i));
                // No "-0.00": tiny values print as zero.
                label->setText(QString::number(std::abs(value) < 0.005 ? 0.0 : value, 'f', 2));
                label->setFont(font);
                QColor cellColor =
                    colormapColor(name, (scaled.values(heat)(i, j) - range.lower) / range.size());
                label->setColor(contrastingText(cellColor));
                m_valueLabels.push_back(label);
            }
        }
    }

    // The selected query row.
    const Index selected = state.query;
    const bool rowSelectable =
        figureStyle().showSelection && m_rows > 0 && selected >= 0 && selected < m_rows;
    m_selection->setVisible(rowSelectable);
    if (rowSelectable) {
        m_selection->topLeft->setCoords(-0.5, static_cast<double>(selected) - 0.5);
        m_selection->bottomRight->setCoords(static_cast<double>(m_cols) - 0.5,
                                            static_cast<double>(selected) + 0.5);
        m_selection->setPen(QPen(look.accent, 2.5 * look.lineWidth));
        m_selection->setBrush(Qt::NoBrush);
    }

    const Experiment* experiment =
        experimentFor(m_source == HeatmapSource::Difference ? HeatmapSource::Primary : m_source);
    // A figure says what it shows: the quantity, where the numbers come from, the variant,
    // the mask and the head, unless the compare view or --caption names it.
    QString heading = title();
    if (experiment && figureStyle().caption.isEmpty() && m_caption.isEmpty())
        heading = tr("%1 \u2014 %2").arg(heat.quantity, figureCaption(*experiment, state.head));
    m_heading = heading;
    m_title->setVisible(figureStyle().showTitle);
    stylePlot(*m_plot, look);
    applyLabelFont();     // the theme's font, shrunk to fit the labels
    if (m_colorBarAcross) // a strip, not a column: thinner
        m_colorScale->setBarWidth(static_cast<int>(std::lround(look.fontPointSize * 0.8)));
    wrapTitle();
    m_colorScale->axis()->setLabelColor(look.foreground);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int HeatmapView::titleLines() const {
    return static_cast<int>(wrappedHeading().count(QLatin1Char('\n'))) + 1;
}

void HeatmapView::setMinimumTitleLines(int lines) {
    if (lines == m_minimumTitleLines) return;
    m_minimumTitleLines = lines;
    if (!m_heading.isEmpty()) wrapTitle();
}

double HeatmapView::valueFontSize(const Theme& look) {
    return std::max(6, look.fontPointSize - 1);
}

void HeatmapView::wrapTitle() {
    QString wrapped = wrappedHeading();
    for (int lines = static_cast<int>(wrapped.count(QLatin1Char('\n'))) + 1;
         lines < m_minimumTitleLines; ++lines)
        wrapped += QStringLiteral("\n ");
    m_wrappedTitle = wrapped;
    m_wrappedHint = m_flatHint.isEmpty() ? QString() : wrappedHeading(m_flatHint);
    applyTitleText();
}

void HeatmapView::applyTitleText() {
    m_title->setText(m_exporting || m_wrappedHint.isEmpty()
                         ? m_wrappedTitle
                         : m_wrappedTitle + QLatin1Char('\n') + m_wrappedHint);
}

QString HeatmapView::wrappedHeading() const {
    return wrappedHeading(m_heading);
}

QString HeatmapView::wrappedHeading(const QString& text) const {
    const int width =
        figureStyle().wrapWidth > 0 ? figureStyle().wrapWidth : std::max(200, m_plot->width());
    // The title sits in the matrix's column of the layout, beside the colour scale's column:
    // lay the plot out at the figure's width (as replot will) and wrap to the title's cell.
    // wrapCaption breaks lines as Unicode does, so Chinese wraps between characters too.
    QCPLayoutGrid* layout = m_plot->plotLayout();
    const QRect viewport = m_plot->viewport();
    layout->setOuterRect(QRect(viewport.topLeft(), QSize(width, viewport.height())));
    for (const auto phase :
         {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
        layout->update(phase);
    const QMargins margins = m_title->margins();
    const int cell = m_title->outerRect().width() - margins.left() - margins.right();
    const int room = std::max(40, static_cast<int>(0.97 * (cell > 0 ? cell : width) - 8));
    return wrapCaption(text, m_title->font(), room);
}

QSize HeatmapView::labelBudget() const {
    const QSize room = axisRoom();
    const int across = room.width();
    const int down = room.height();
    // Labels are spaced by at least their line height (rows, and columns drawn upright), or by
    // their width plus a gap when the columns fit side by side: never two on one spot.
    const QFontMetricsF metrics(m_plot->axisRect()->axis(QCPAxis::atLeft)->tickLabelFont());
    const double pitch = metrics.height() * 1.02;
    return {std::max(1, static_cast<int>(across /
                                         (columnLabelsUpright() ? pitch : widestColumnLabel()))),
            std::max(1, static_cast<int>(down / pitch))};
}

QSize HeatmapView::axisRoom() const {
    const QRect rect = m_plot->axisRect()->rect();
    // A widget not shown has never been laid out at its size (its axis rect is a stub):
    // assume the matrix takes most of it. A figure is always laid out at its own size.
    if (m_exporting || m_plot->isVisible())
        return {std::max(1, rect.width()), std::max(1, rect.height())};
    return {std::max({1, rect.width(), width() * 7 / 10}),
            std::max({1, rect.height(), height() * 7 / 10})};
}

double HeatmapView::widestColumnLabel() const {
    return widestColumnLabel(m_plot->axisRect()->axis(QCPAxis::atBottom)->tickLabelFont());
}

double HeatmapView::fittingLabelPoints(const QSize& room) const {
    const Theme look = theme();
    const int most = look.fontPointSize;
    const int least = std::min(most, look.minimumFontPointSize);
    const QCPAxisRect* rect = m_plot->axisRect();
    const double rows = m_rowLabels.isEmpty() ? 0 : rect->axis(QCPAxis::atLeft)->range().size();
    const double cols =
        m_columnLabels.isEmpty() ? 0 : std::max(1.0, rect->axis(QCPAxis::atBottom)->range().size());
    QFont font = rect->axis(QCPAxis::atLeft)->tickLabelFont();
    auto fits = [&](int points) {
        setFontSize(font, look, points);
        const double pitch = QFontMetricsF(font).height() * 1.02; // as labelBudget spaces them
        if (rows * pitch > room.height()) return false;
        return cols == 0 || room.width() / cols >= widestColumnLabel(font) ||
               cols * pitch <= room.width(); // side by side, or upright
    };
    // A long text does not fit even at the least size: it is thinned at the least size.
    if (!fits(least)) return least;
    int points = most;
    while (points > least && !fits(points))
        --points;
    return points;
}

void HeatmapView::applyLabelFont() {
    if (m_labelPoints <= 0) return;
    const Theme look = theme();
    for (QCPAxis* axis :
         {m_plot->axisRect()->axis(QCPAxis::atBottom), m_plot->axisRect()->axis(QCPAxis::atLeft)}) {
        QFont font = axis->tickLabelFont();
        setFontSize(font, look, m_labelPoints);
        axis->setTickLabelFont(font);
    }
}

double HeatmapView::widestColumnLabel(const QFont& font) const {
    // Layout asks several times a replot, at a few sizes: 4000 labels measured each time took
    // most of a long text's replot. The widths are kept per font until the labels change.
    const QString key = font.key();
    if (const auto known = m_widestLabel.constFind(key); known != m_widestLabel.cend())
        return *known;
    // Labels sit centred under their columns: two neighbours collide when their half widths
    // together pass a column's width, so one wide label ("<pad>") among narrow ones (Chinese
    // characters) still fits side by side where each column is wider than the pair's mean.
    const QFontMetricsF metrics(font);
    double widest = m_columnLabels.size() == 1 ? metrics.horizontalAdvance(m_columnLabels[0]) : 0;
    for (qsizetype i = 0; i + 1 < m_columnLabels.size(); ++i)
        widest = std::max(widest, (metrics.horizontalAdvance(m_columnLabels[i]) +
                                   metrics.horizontalAdvance(m_columnLabels[i + 1])) /
                                      2);
    const double width = widest + metrics.height() * 0.6;
    m_widestLabel.insert(key, width);
    return width;
}

bool HeatmapView::columnLabelsUpright() const {
    // Side by side when every visible column has room for its label beside its neighbours'.
    QCPAxis* xAxis = m_plot->axisRect()->axis(QCPAxis::atBottom);
    const double visible = std::max(1.0, xAxis->range().size());
    const double cell = axisRoom().width() / visible;
    return cell < widestColumnLabel();
}

void HeatmapView::fitToCells() {
    QCPAxisRect* rect = m_plot->axisRect();
    QCPAxis* xAxis = rect->axis(QCPAxis::atBottom);
    QCPAxis* yAxis = rect->axis(QCPAxis::atLeft);
    const double cellWidth = rect->width() / std::max(1.0, xAxis->range().size());
    const double cellHeight = rect->height() / std::max(1.0, yAxis->range().size());
    xAxis->setTickLabelRotation(columnLabelsUpright() ? -90 : 0);
    const Theme look = theme();
    // A value is shown only where it fits its cell with a margin (smaller, down to the
    // theme's least size, before it is hidden).
    if (!m_valueLabels.empty()) {
        std::vector<QCPItemText*> values;
        values.reserve(m_valueLabels.size());
        for (QCPAbstractItem* item : m_valueLabels)
            values.push_back(static_cast<QCPItemText*>(item));
        fitCellLabels(values, cellWidth, cellHeight, look, valueFontSize(look));
    }
    const double markSize = std::clamp(0.45 * std::min(cellWidth, cellHeight), 2.0, 14.0);
    m_maskMarks->setScatterStyle(QCPScatterStyle(
        QCPScatterStyle::ssCross,
        QPen(look.maskedMark, std::min(1.2 * look.lineWidth, std::max(0.5, markSize / 6))),
        Qt::NoBrush, markSize));
}

int HeatmapView::visibleValueLabelCount() const {
    return static_cast<int>(std::count_if(m_valueLabels.begin(), m_valueLabels.end(),
                                          [](QCPAbstractItem* item) { return item->visible(); }));
}

void HeatmapView::updateTickers() {
    applyLabelFont();
    QCPAxis* xAxis = m_plot->axisRect()->axis(QCPAxis::atBottom);
    QCPAxis* yAxis = m_plot->axisRect()->axis(QCPAxis::atLeft);
    const QSize budget = labelBudget();
    xAxis->setTicker(tokenTicker(m_columnLabels, xAxis->range(), budget.width()));
    yAxis->setTicker(tokenTicker(m_rowLabels, yAxis->range(), budget.height()));
    // Zoomed in, a title says which part is shown: "queries 480-540 of 1000".
    auto titled = [](const QString& title, const QCPRange& range, Index count) {
        const auto [first, last] = shownCells(range, count);
        if (title.isEmpty() || count <= 0 || (first == 0 && last == count - 1)) return title;
        return tr("%1 %2\u2013%3 of %4").arg(title).arg(first).arg(last).arg(count);
    };
    xAxis->setLabel(titled(m_columnTitle, xAxis->range(), m_cols));
    yAxis->setLabel(titled(m_rowTitle, yAxis->range(), m_rows));
}

void HeatmapView::paintFigure(QCPPainter& painter, const QSize& size) {
    layOutFigure(size);
    m_exporting = true;
    static_cast<ViewportColorMap*>(m_colorMap)->direct = false; // a figure keeps every cell
    applyTitleText();                                           // a figure has no hint
    PlotView::paintFigure(painter, size);
    m_exporting = false;
    static_cast<ViewportColorMap*>(m_colorMap)->direct = true;
    applyTitleText();
}

void HeatmapView::layOutFigure(const QSize& size) {
    // A dry pass lays the plot out at the figure's size, so the token labels are thinned for
    // that size (afterLayout) before the pass that is kept.
    // Two dry passes: the second lays out with the labels the first chose (upright or not).
    // A third: the label size chosen for the figure's room changes the margins once more.
    m_exporting = true;
    applyTitleText();
    for (int pass = 0; pass < 3; ++pass)
        layOutAsFigure(size);
    m_exporting = false;
    applyTitleText();
}

void HeatmapView::layOutAsFigure(const QSize& size) {
    // Without the cells: a picture keeps every image drawn into it, PNG-compressed, and a
    // 4 000-token head's map took seconds to compress for a layout nobody sees.
    const bool cells = m_colorMap->visible();
    m_colorMap->setVisible(false);
    QPicture scratch;
    QCPPainter dry(&scratch);
    m_plot->toPainter(&dry, size.width(), size.height());
    dry.end();
    m_colorMap->setVisible(cells);
}

int HeatmapView::fittedFigureHeight(int width) {
    ensureFresh();
    if (m_rows == 0 || m_cols == 0 || width <= 0) return 0;
    const QCPAxisRect* rect = m_plot->axisRect();
    const double rows = rect->axis(QCPAxis::atLeft)->range().size();
    const double cols = std::max(1.0, rect->axis(QCPAxis::atBottom)->range().size());
    // Rows get at least a line of the least label size each, so every row keeps its label
    // where the columns would make the cells smaller than that.
    const Theme look = theme();
    QFont least = rect->axis(QCPAxis::atLeft)->tickLabelFont();
    setFontSize(least, look, std::min(look.fontPointSize, look.minimumFontPointSize));
    const double linePitch = QFontMetricsF(least).height() * 1.02;
    int height = std::max(16, width * 3 / 4);
    m_exporting = true;
    applyTitleText();
    for (int pass = 0; pass < 3; ++pass) {
        for (int settle = 0; settle < 2; ++settle)
            layOutAsFigure(QSize(width, height));
        const double cell = std::max(rect->width() / cols, linePitch);
        const int besides = height - rect->height(); // title, column labels, axis title
        const auto matrix = static_cast<int>(std::ceil(cell * rows));
        height = std::clamp(besides + matrix, std::max(16, width / 2), 2 * width);
    }
    m_exporting = false;
    applyTitleText();
    return height;
}

DataTable HeatmapView::data() const {
    const HeatmapData heat = heatmapData();
    return DataTable::fromMatrix(heat.values, heat.rowLabels, heat.columnLabels);
}

QString HeatmapView::explainCell(Index row, Index column) const {
    const HeatmapData heat = heatmapData();
    if (row < 0 || column < 0 || row >= heat.values.rows() || column >= heat.values.cols())
        return {};
    QString query = row < heat.rowLabels.size() ? heat.rowLabels[row] : QString();
    QString key = column < heat.columnLabels.size() ? heat.columnLabels[column] : QString();
    const QString show = QString::fromStdString(document()->session().viewState.show);
    const Experiment* experiment = experimentFor(m_source);
    // The label is the token as read; the tooltip also gives the raw token when it differs.
    if (const Experiment* labelled = experimentFor(
            m_source == HeatmapSource::Difference ? HeatmapSource::Primary : m_source)) {
        const bool keyRows = show == QLatin1String("k") || show == QLatin1String("v");
        auto withRaw = [this](const QString& shown, const std::vector<std::string>& tokens,
                              Index i) {
            if (i >= static_cast<Index>(tokens.size())) return shown;
            const std::string& raw = tokens[static_cast<std::size_t>(i)];
            if (displayToken(raw) != shown || QString::fromStdString(raw) == shown) return shown;
            return tr("%1 (raw token %2)").arg(shown, QString::fromStdString(raw));
        };
        query = withRaw(query, keyRows ? labelled->keyTokens : labelled->queryTokens, row);
        if (heat.values.cols() == static_cast<Index>(labelled->keyTokens.size()) && !keyRows)
            key = withRaw(key, labelled->keyTokens, column);
    }
    const bool matrixOfScores = show == QLatin1String("weights") ||
                                show == QLatin1String("scores") || show == QLatin1String("scaled");
    if (m_source == HeatmapSource::Difference || !experiment || !matrixOfScores) {
        return tr("%1 \u2192 %2\n%3 = %4")
            .arg(query, key, heat.quantity, number(heat.values(row, column)));
    }
    const std::optional<CellComputation> cell =
        attnlab::explainCell(*experiment, document()->session().viewState.head, row, column);
    if (!cell) return {};
    QStringList lines;
    // On the chosen range a weight outside it takes an end colour, which its number alone
    // would not explain.
    const ViewState& state = document()->session().viewState;
    auto finish = [&] {
        const QCPRange colours = colorRange();
        const double weight = heat.values(row, column);
        if (scalesWeights(heat, state) && state.colorScale == "range") {
            if (weight > colours.upper)
                lines << tr("above the colour range (%1 to %2): drawn in its top colour")
                             .arg(number(colours.lower), number(colours.upper));
            else if (weight < colours.lower)
                lines << tr("below the colour range (%1 to %2): drawn in its bottom colour")
                             .arg(number(colours.lower), number(colours.upper));
        }
        return lines.join(QLatin1Char('\n'));
    };
    lines << tr("query \u201c%1\u201d (row %2) \u2192 key \u201c%3\u201d (column %4), head %5")
                 .arg(query)
                 .arg(row)
                 .arg(key)
                 .arg(column)
                 .arg(cell->head);
    if (!cell->hasScores) {
        // No Q/K in the experiment (an attention dump of a real model): only the weight.
        lines << tr("weight = %1").arg(number(cell->storedWeight));
        return finish();
    }
    lines << tr("q\u00b7k = %1").arg(number(cell->dot));
    // s = q.k x baseScale / T: the experiment says which part is which (scale = base / T).
    if (experiment->temperature != 1.0)
        lines << tr("\u00d7 scale %1 \u00f7 temperature %2 = s = %3")
                     .arg(number(experiment->baseScale), number(experiment->temperature),
                          number(cell->scaled));
    else
        lines
            << tr("\u00d7 scale %1 = s = %2").arg(number(experiment->scale), number(cell->scaled));
    if (cell->masked) {
        lines << tr("masked: yes \u2192 weight 0 (excluded from the softmax)");
        return lines.join(QLatin1Char('\n'));
    }
    lines << tr("masked: no");
    if (!cell->softmax) {
        lines << tr("%1 attention: weight = %2 (not a softmax of s)")
                     .arg(QString::fromUtf8(variantName(experiment->variant)),
                          number(cell->storedWeight));
        return finish();
    }
    lines << tr("exp(s \u2212 max) = exp(%1 \u2212 %2) = %3")
                 .arg(number(cell->scaled), number(cell->rowMax), number(cell->numerator));
    lines << tr("\u00f7 row sum %1 = weight %2").arg(number(cell->rowSum), number(cell->weight));
    lines << tr("(stored weight %1)").arg(number(cell->storedWeight));
    if (cell->dropoutActive) {
        lines << (cell->dropped
                      ? tr("dropout (train mode): dropped \u2192 weight 0")
                      : tr("dropout (train mode): kept \u2192 \u00d7 1/(1 \u2212 p) = %1 = %2")
                            .arg(number(cell->keepScale), number(cell->weight * cell->keepScale)));
    }
    return finish();
}

bool HeatmapView::cellAt(const QPoint& position, Index* row, Index* column) const {
    QCPAxisRect* rect = m_plot->axisRect();
    if (!rect->rect().contains(position)) return false;
    const double x = rect->axis(QCPAxis::atBottom)->pixelToCoord(position.x());
    const double y = rect->axis(QCPAxis::atLeft)->pixelToCoord(position.y());
    const auto j = static_cast<Index>(std::lround(x));
    const auto i = static_cast<Index>(std::lround(y));
    if (i < 0 || j < 0 || i >= m_rows || j >= m_cols) return false;
    *row = i;
    *column = j;
    return true;
}

bool HeatmapView::eventFilter(QObject* watched, QEvent* event) {
    // The window's title wraps to the plot's width as laid out: a new width (the window, or the
    // overview's column coming or going) wraps it again.
    if (watched == m_plot && event->type() == QEvent::Resize && !m_exporting &&
        figureStyle().wrapWidth <= 0 && !m_heading.isEmpty()) {
        wrapTitle();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    if (watched == m_plot && event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        Index row = 0;
        Index column = 0;
        if (cellAt(help->pos(), &row, &column)) {
            QToolTip::showText(help->globalPos(), explainCell(row, column), m_plot);
            return true;
        }
    }
    return PlotView::eventFilter(watched, event);
}

void HeatmapView::colourEachRowOverItsLargest(Document& document) {
    ViewState state = document.session().viewState;
    state.colorScale = "row";
    document.setViewState(state);
}

bool HeatmapView::onFlatHint(const QPoint& position) const {
    if (m_flatHint.isEmpty() || m_exporting || !m_title->visible()) return false;
    const QRect title = m_title->outerRect();
    const int lines = static_cast<int>(m_wrappedHint.count(QLatin1Char('\n'))) + 1;
    const int hint = lines * QFontMetrics(m_title->font()).lineSpacing();
    return title.contains(position) && position.y() >= title.bottom() - hint - 2;
}

void HeatmapView::onMouseMove(QMouseEvent* event) {
    const bool hint = onFlatHint(event->pos());
    m_plot->setCursor(hint ? Qt::PointingHandCursor : Qt::ArrowCursor);
    if (hint) {
        QToolTip::showText(event->globalPosition().toPoint(),
                           tr("Click to colour each row over its own largest weight."), m_plot);
        return;
    }
    Index row = 0;
    Index column = 0;
    if (!cellAt(event->pos(), &row, &column)) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(event->globalPosition().toPoint(), explainCell(row, column), m_plot);
}

void HeatmapView::onMousePress(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton && onFlatHint(event->pos())) {
        colourEachRowOverItsLargest(*document());
        return;
    }
    Index row = 0;
    Index column = 0;
    if (event->button() != Qt::LeftButton || !cellAt(event->pos(), &row, &column)) return;
    const Session& session = document()->session();
    if (m_source == HeatmapSource::Primary && session.viewState.show == "mask" &&
        session.mask.custom && row < session.mask.custom->rows() &&
        column < session.mask.custom->cols()) {
        document()->modify(
            [row, column](Session& s) {
                (*s.mask.custom)(row, column) = !(*s.mask.custom)(row, column);
            },
            tr("Toggle mask cell"));
        return;
    }
    document()->setSelectedQuery(session.viewState.query == row ? -1 : row);
}

} // namespace attnlab::ui

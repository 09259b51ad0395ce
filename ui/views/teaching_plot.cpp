#include "ui/views/teaching_plot.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab::ui {

QCPRange fillColorMap(QCPColorMap* map, const MatrixD& values, const BoolMatrix* hidden) {
    const int rows = static_cast<int>(values.rows());
    const int cols = static_cast<int>(values.cols());
    QCPColorMapData* cells = map->data();
    cells->setSize(std::max(1, cols), std::max(1, rows));
    // Cell i sits at coordinate i. QCustomPlot spreads a side of n > 1 cells over the range of
    // their centres plus half a cell each way, but draws a side of one cell with zero width:
    // give that side the cell's own extent.
    auto span = [](int count) { return count <= 1 ? QCPRange(-0.5, 0.5) : QCPRange(0, count - 1); };
    cells->setRange(span(cols), span(rows));
    if (rows == 0 || cols == 0) {
        cells->fill(std::numeric_limits<double>::quiet_NaN());
        return QCPRange(0, 0);
    }
    const bool useHidden = hidden && hidden->rows() == rows && hidden->cols() == cols;
    double lowest = std::numeric_limits<double>::infinity();
    double highest = -lowest;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            if (useHidden && (*hidden)(r, c)) {
                cells->setCell(c, r, std::numeric_limits<double>::quiet_NaN());
                continue;
            }
            const double value = values(r, c);
            cells->setCell(c, r, value);
            if (!std::isfinite(value)) continue;
            lowest = std::min(lowest, value);
            highest = std::max(highest, value);
        }
    if (!std::isfinite(lowest)) return QCPRange(0, 0);
    return QCPRange(lowest, highest);
}

QCPItemRect* outlineItem(QCustomPlot* plot, QCPAxisRect* rect) {
    auto* item = new QCPItemRect(plot);
    item->setClipAxisRect(rect);
    item->setClipToAxisRect(true);
    for (QCPItemPosition* position : {item->topLeft, item->bottomRight}) {
        position->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        position->setAxisRect(rect);
    }
    item->setBrush(Qt::NoBrush);
    return item;
}

QCPAxisRect* makeAxisRect(QCustomPlot* plot, const QString& xLabel, const QString& yLabel) {
    auto* rect = new QCPAxisRect(plot);
    rect->axis(QCPAxis::atBottom)->setLabel(xLabel);
    rect->axis(QCPAxis::atLeft)->setLabel(yLabel);
    return rect;
}

void setupMatrixAxes(QCPAxisRect* rect) {
    rect->axis(QCPAxis::atLeft)->setRangeReversed(true);
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->grid()->setVisible(false);
        axis->setSubTicks(false);
    }
}

QSharedPointer<QCPAxisTicker> integerTicker() {
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    return ticker;
}

QSharedPointer<QCPAxisTickerText> labelTicker(const QStringList& labels, int maxLabels) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int count = static_cast<int>(labels.size());
    const int step = std::max(1, (count + maxLabels - 1) / std::max(1, maxLabels));
    // A long text's thinned labels carry their positions: a repeated word can be placed.
    const bool numbered = step > 1 && count > kNumberedTokenLabelsFrom;
    for (int i = 0; i < count; i += step)
        ticker->addTick(i, numbered ? QStringLiteral("%1 %2").arg(i).arg(labels[i]) : labels[i]);
    return ticker;
}

namespace {
constexpr const char* kTokenLabels = "attnlab_token_labels";
} // namespace

void setTokenLabels(QCPAxis* axis, const QStringList& labels) {
    axis->setProperty(kTokenLabels, labels);
    axis->setTicker(labelTicker(labels, std::max<int>(1, static_cast<int>(labels.size()))));
}

bool fitTokenLabels(QCPAxis* axis) {
    const QStringList labels = axis->property(kTokenLabels).toStringList();
    const auto current = axis->ticker().dynamicCast<QCPAxisTickerText>();
    if (labels.isEmpty() || !current || !axis->axisRect()) return false;
    const bool vertical = axis->orientation() == Qt::Vertical;
    const int length = vertical ? axis->axisRect()->height() : axis->axisRect()->width();
    if (length <= 0) return false;
    const QFontMetrics metrics(axis->tickLabelFont());
    double pitch = metrics.height() + 1.0; // a label's room along the axis
    if (!vertical && axis->tickLabelRotation() == 0) {
        int widest = 0;
        for (const QString& label : labels)
            widest = std::max(widest, metrics.horizontalAdvance(label));
        if (labels.size() > kNumberedTokenLabelsFrom) // room for a position, should they be thinned
            widest += metrics.horizontalAdvance(QString::number(labels.size()) + QLatin1Char(' '));
        pitch = widest + 6.0;
    } else if (!vertical && std::abs(axis->tickLabelRotation()) < 80) {
        pitch = 1.5 * metrics.height() + 2.0;
    }
    const int fits = std::max(1, static_cast<int>(length / pitch));
    auto thinned = labelTicker(labels, fits);
    if (thinned->ticks().keys() == current->ticks().keys()) return false;
    axis->setTicker(thinned);
    return true;
}

bool fitTokenLabels(QCPAxis* axis, const Theme& theme) {
    const QStringList labels = axis->property(kTokenLabels).toStringList();
    if (labels.isEmpty() || !axis->axisRect() || axis->orientation() != Qt::Vertical)
        return fitTokenLabels(axis);
    // The axis's length does not depend on its labels' size (they take width, not height),
    // so the size chosen here stays chosen on the next layout.
    const int length = axis->axisRect()->height();
    if (length <= 0) return false;
    QFont font = axis->tickLabelFont();
    const int least = std::min(theme.fontPointSize, theme.minimumFontPointSize);
    int points = theme.fontPointSize;
    for (; points > least; --points) {
        setFontSize(font, theme, points);
        if (labels.size() * (QFontMetrics(font).height() + 1.0) <= length) break;
    }
    setFontSize(font, theme, points);
    bool changed = false;
    if (font != axis->tickLabelFont()) {
        axis->setTickLabelFont(font);
        changed = true;
    }
    return fitTokenLabels(axis) || changed;
}

void styleLegend(QCPLegend* legend, const Theme& theme) {
    legend->setBrush(theme.background);
    legend->setTextColor(theme.foreground);
    legend->setBorderPen(QPen(theme.grid));
    QFont font = legend->font();
    setFontSize(font, theme, std::max(7, theme.fontPointSize - 2));
    legend->setFont(font);
}

void fitLegendIcons(QCPLegend* legend) {
    const int height = QFontMetrics(legend->font()).height();
    legend->setIconSize(2 * height, height);
}

namespace {

/// The width of item `i` of `legend` on a row: icon, padding, text, margins, spacing.
int legendItemWidth(const QCPLegend* legend, int i) {
    // A wrapped legend's last row may have empty cells: they take no width.
    if (!legend->item(i)) return 0;
    const QFontMetrics metrics(legend->font());
    auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
    const QString text = item ? item->plottable()->name() : QString();
    const QMargins margins = legend->item(i)->margins();
    return legend->iconSize().width() + legend->iconTextPadding() +
           metrics.horizontalAdvance(text) + margins.left() + margins.right() +
           legend->columnSpacing();
}

} // namespace

int legendRowWidth(const QCPLegend* legend) {
    int total = 0;
    for (int i = 0; i < legend->itemCount(); ++i)
        total += legendItemWidth(legend, i);
    return total;
}

bool wrapLegendToWidth(QCPLegend* legend, int width) {
    if (width <= 0) return false;
    int items = 0;
    for (int i = 0; i < legend->itemCount(); ++i)
        items += legend->item(i) != nullptr;
    int widest = 0;
    for (int i = 0; i < legend->itemCount(); ++i)
        widest = std::max(widest, legendItemWidth(legend, i));
    const int total = legendRowWidth(legend);
    int columns = items;
    if (total > width) columns = std::max(1, width / std::max(1, widest));
    const int wrap = columns >= items ? 0 : columns;
    if (wrap == legend->wrap() && legend->fillOrder() == QCPLayoutGrid::foColumnsFirst)
        return false;
    legend->setWrap(wrap);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    return true;
}

void addLegendAtItsSize(QCPLayoutGrid* grid, int row, int column, QCPLegend* legend,
                        Qt::Orientation items) {
    auto* cell = new QCPLayoutGrid;
    grid->addElement(row, column, cell);
    cell->addElement(0, 0, legend);
    // An empty element with nearly all the stretch: the legend keeps its least size.
    auto* rest = new QCPLayoutElement(grid->parentPlot());
    if (items == Qt::Horizontal) {
        cell->addElement(0, 1, rest);
        cell->setColumnStretchFactors({0.001, 1.0});
        cell->setColumnSpacing(0);
    } else {
        cell->addElement(1, 0, rest);
        cell->setRowStretchFactors({0.001, 1.0});
        cell->setRowSpacing(0);
    }
    // A 1 px frame is drawn a pixel past its rectangle's right edge: a column of items at the
    // figure's right edge would lose it (a row has its spacer there, a column its below).
    cell->setMargins(items == Qt::Vertical ? QMargins(0, 0, 1, 0) : QMargins());
}

QCPLegend* legendAbove(QCPLayoutGrid* grid, int row, int column, QCPAxisRect* rect) {
    auto* cell = new QCPLayoutGrid;
    grid->addElement(row, column, cell);
    auto* legend = new QCPLegend;
    addLegendAtItsSize(cell, 0, 0, legend, Qt::Horizontal);
    cell->addElement(1, 0, rect);
    cell->setRowStretchFactors({0.001, 1.0});
    cell->setRowSpacing(2);
    legend->setLayer(QStringLiteral("legend"));
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    // The plot's own legend is gone (the views clear the layout): without this, every
    // plottable made from now on would be added to this one as well.
    if (QCustomPlot* plot = legend->parentPlot()) plot->setAutoAddPlottableToLegend(false);
    legend->setMargins(QMargins(0, 0, 0, 0));
    return legend;
}

namespace {

/// The unit bytesText names `bytes` in: 0 for B, 1 KiB, 2 MiB, 3 GiB (from ten of each).
int byteUnit(double bytes) {
    int unit = 0;
    for (double from = 10 * 1024.0; unit < 3 && std::abs(bytes) >= from; from *= 1024)
        ++unit;
    return unit;
}

/// A number of `unit`s, named.
QString inByteUnit(int unit, const QString& number) {
    switch (unit) {
    case 0:
        return QObject::tr("%1 B").arg(number);
    case 1:
        return QObject::tr("%1 KiB").arg(number);
    case 2:
        return QObject::tr("%1 MiB").arg(number);
    default:
        return QObject::tr("%1 GiB").arg(number);
    }
}

class BytesTicker : public QCPAxisTicker {
protected:
    double getTickStep(const QCPRange& range) override {
        m_unit = byteUnit(std::max(std::abs(range.lower), std::abs(range.upper)));
        const double size = std::pow(1024.0, m_unit);
        return QCPAxisTicker::getTickStep(QCPRange(range.lower / size, range.upper / size)) * size;
    }
    QString getTickLabel(double tick, const QLocale&, QChar, int) override {
        const double value = tick / std::pow(1024.0, m_unit);
        // Round steps (1, 2, 2.5, 5 times a power of ten) need a few digits at most.
        return inByteUnit(m_unit, QString::number(std::abs(value) < 1e-9 ? 0.0 : value, 'g', 6));
    }

private:
    int m_unit = 0;
};

} // namespace

QString bytesText(double bytes) {
    const int unit = byteUnit(bytes);
    return inByteUnit(unit,
                      QString::number(bytes / std::pow(1024.0, unit), 'f', unit == 3 ? 1 : 0));
}

QSharedPointer<QCPAxisTicker> bytesTicker() {
    return QSharedPointer<BytesTicker>::create();
}

bool fitTickCount(QCPAxis* axis, int most) {
    if (!axis->axisRect() || !axis->ticker()) return false;
    const bool vertical = axis->orientation() == Qt::Vertical;
    const int length = vertical ? axis->axisRect()->height() : axis->axisRect()->width();
    if (length <= 0) return false;
    // A label is a line high, or as wide as the range's widest end (steps 0 to 6 ran together
    // as "0123456" at 1024 px); the ticker may give about one tick more than asked (it rounds
    // the step to 1, 2, 2.5 or 5 times a power of ten): twice that room for each. One asked
    // for gives two labels, the range's ends.
    const QFontMetrics metrics(axis->tickLabelFont());
    const QCPRange range = axis->range();
    const double label =
        vertical ? metrics.height()
                 : std::max(metrics.horizontalAdvance(QString::number(range.lower, 'g', 4)),
                            metrics.horizontalAdvance(QString::number(range.upper, 'g', 4))) +
                       metrics.averageCharWidth();
    const int count = std::clamp(static_cast<int>(length / (2.0 * label)), 1, std::max(1, most));
    if (axis->ticker()->tickCount() == count) return false;
    axis->ticker()->setTickCount(count);
    return true;
}

void setViewStep(Document& document, Index ViewState::*field, Index step, Index last) {
    const Index clamped = std::clamp<Index>(step, 0, std::max<Index>(0, last));
    if (document.session().viewState.*field == clamped) return;
    ViewState state = document.session().viewState;
    state.*field = clamped;
    document.setViewState(state);
}

} // namespace attnlab::ui

#pragma once
/// Small plotting helpers shared by the views: the one colour-map fill with hidden (masked)
/// cells, token tick labels, titled axis rects, legends beside the data.

#include <QSharedPointer>
#include <QString>
#include <QStringList>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"
#include "ui/state/document.h"
#include "ui/widgets/theme.h"

class QCPAxisRect;
class QCPAxis;
class QCPAxisTicker;
class QCPAxisTickerText;
class QCPItemRect;
class QCPColorMap;
class QCPLayoutGrid;
class QCPLegend;
class QCPRange;
class QCustomPlot;

namespace attnlab::ui {

/// Fills a colour map cell by cell from a [rows, cols] matrix (x = column, y = row, cell i at
/// coordinate i); cells where `hidden` is true (same shape, may be null or empty) become NaN
/// (drawn in the gradient's NaN colour, "masked"). The one fill every matrix view uses: a 1 x 1
/// or 1 x n matrix draws too. Returns the range of the finite values drawn, (0, 0) if none.
QCPRange fillColorMap(QCPColorMap* map, const MatrixD& values, const BoolMatrix* hidden);
/// An empty rectangle in `rect`'s coordinates, clipped to it: the outline of the rows a step
/// computed (the KV-cache and translation steppers). Set its corners and pen.
QCPItemRect* outlineItem(QCustomPlot* plot, QCPAxisRect* rect);
/// A new axis rect with axis labels.
QCPAxisRect* makeAxisRect(QCustomPlot* plot, const QString& xLabel, const QString& yLabel);
/// Matrix axes: row 0 at the top, no grid, no sub-ticks.
void setupMatrixAxes(QCPAxisRect* rect);
/// Ticks at whole numbers only (multiples of 1, 2, 5 ...), for axes of indices such as head
/// dimensions: never 2.5.
QSharedPointer<QCPAxisTicker> integerTicker();
/// More labels than this are numbered with their positions when thinned.
constexpr int kNumberedTokenLabelsFrom = 64;
/// One text tick per label, thinned to at most `maxLabels`; thinned labels of more than
/// kNumberedTokenLabelsFrom carry their positions ("700 the").
QSharedPointer<QCPAxisTickerText> labelTicker(const QStringList& labels, int maxLabels);
/// Token labels on a matrix axis: every label now (labelTicker), kept with the axis so that
/// fitTokenLabels can thin them once the plot is laid out.
void setTokenLabels(QCPAxis* axis, const QStringList& labels);
/// Thins the labels setTokenLabels gave `axis` to those its laid-out length holds without
/// overlap: one per text line down a vertical axis or along a turned one, one per widest label
/// along a level one. For QCustomPlot::afterLayout; true when the ticks changed (lay out again).
bool fitTokenLabels(QCPAxis* axis);
/// The same, but down a vertical axis the labels first shrink, from the theme's size to its
/// least (Theme::minimumFontPointSize), so that every one fits before any is dropped.
bool fitTokenLabels(QCPAxis* axis, const Theme& theme);
/// A legend in its own row above `rect`, outside the data, so it never covers a bar or a curve;
/// items run left to right. `rect` goes into a new sub-grid placed at (row, column) of `grid`.
QCPLegend* legendAbove(QCPLayoutGrid* grid, int row, int column, QCPAxisRect* rect);
/// Puts `legend` at (row, column) of `grid` at its own size: a spacer after it takes the rest
/// of the cell (to its right for items in a row, below it for items in a column), so the items
/// stay together instead of spreading over the cell, and its frame stays inside the figure.
void addLegendAtItsSize(QCPLayoutGrid* grid, int row, int column, QCPLegend* legend,
                        Qt::Orientation items);
/// Background, text and border of a legend for the theme.
void styleLegend(QCPLegend* legend, const Theme& theme);
/// Icons one text line high (2:1), so each name sits level with its icon in any font size.
void fitLegendIcons(QCPLegend* legend);
/// Lays a left-to-right legend's items out in as many columns as fit in `width` pixels (its
/// font as set), wrapping to further rows, so a legend never runs past the plot it labels.
/// Returns whether the layout changed (a width <= 0, not laid out yet, changes nothing).
bool wrapLegendToWidth(QCPLegend* legend, int width);
/// The width `legend`'s items take on one row (what wrapLegendToWidth compares with).
int legendRowWidth(const QCPLegend* legend);
/// "12 B", "34 KiB", "5 MiB", "2 GiB".
QString bytesText(double bytes);
/// Ticks for an axis of bytes: round numbers of the unit bytesText names the axis's top in
/// ("250 B", "500 B"; "2.5 KiB", "5 KiB" ...), never a raw "4e+06".
QSharedPointer<QCPAxisTicker> bytesTicker();
/// Sets a number axis's tick count to what its laid-out length holds with room between labels
/// (a line's on a vertical axis, a label's width on a horizontal one; from 1 up to `most`), so
/// its tick labels never touch. For QCustomPlot::afterLayout; true when the count changed (lay
/// out again).
bool fitTickCount(QCPAxis* axis, int most = 5);
/// Moves a stepper to `step` clamped to [0, last]: writes the view-state field (flashStep,
/// kvStep) through the document, so the window, render and saved sessions agree.
void setViewStep(Document& document, Index ViewState::*field, Index step, Index last);

} // namespace attnlab::ui

#pragma once
/// Small plotting helpers shared by the teaching views (flash, kv-cache, rope, complexity):
/// matrix colour maps with hidden cells, token tick labels, and titled axis rects.

#include <QSharedPointer>
#include <QString>
#include <QStringList>

#include "ui/core.h"
#include "ui/document.h"
#include "ui/theme.h"

class QCPAxisRect;
class QCPAxisTicker;
class QCPAxisTickerText;
class QCPColorMap;
class QCPLegend;
class QCustomPlot;

namespace attnlab::ui {

/// Fills a colour map cell by cell from a [rows, cols] matrix (x = column, y = row); cells
/// where `hidden` is true (same shape, may be null or empty) become NaN (drawn as "masked").
void fillColorMap(QCPColorMap* map, const MatrixD& values, const BoolMatrix* hidden);
/// A new axis rect with axis labels.
QCPAxisRect* makeAxisRect(QCustomPlot* plot, const QString& xLabel, const QString& yLabel);
/// Matrix axes: row 0 at the top, no grid, no sub-ticks.
void setupMatrixAxes(QCPAxisRect* rect);
/// One text tick per label, thinned to at most `maxLabels`.
/// Ticks at whole numbers only (multiples of 1, 2, 5 ...), for axes of indices such as head
/// dimensions: never 2.5.
QSharedPointer<QCPAxisTicker> integerTicker();
QSharedPointer<QCPAxisTickerText> labelTicker(const QStringList& labels, int maxLabels);
/// A legend inside `rect` (created once, at `alignment`), styled for the theme.
QCPLegend* insetLegend(QCPAxisRect* rect, const Theme& theme, Qt::Alignment alignment);
/// "12 B", "34 KiB", "5 MiB", "2 GiB".
QString bytesText(double bytes);
/// Moves a stepper to `step` clamped to [0, last]: writes the view-state field (flashStep,
/// kvStep) through the document, so the window, render and saved sessions agree.
void setViewStep(Document& document, Index ViewState::*field, Index step, Index last);

} // namespace attnlab::ui

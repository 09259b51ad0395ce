#pragma once
/// Texts written in a matrix's cells (a value, a token), each a QCPItemText centred on its
/// cell: fitCellLabels() prints a text only where it fits. The font shrinks from the view's
/// size down to the theme's least size until every text fits its cell; at the least size a
/// text that still does not fit is hidden. No two texts then overlap, and none leaves its
/// cell. The attention heatmap's values and the probing views' cells share it.

#include <vector>

class QCPItemText;

namespace attnlab::ui {

struct Theme;

/// Fits `labels` to cells of `cellWidth` x `cellHeight` pixels: the largest size from
/// `mostPoints` down to look.minimumFontPointSize at which every text fits; at the least size,
/// only the texts that fit stay visible. Returns the number of texts shown.
int fitCellLabels(const std::vector<QCPItemText*>& labels, double cellWidth, double cellHeight,
                  const Theme& look, double mostPoints);

/// Whether `label`'s text, in its font, fits a cell of `cellWidth` x `cellHeight` pixels with
/// the margin fitCellLabels() keeps.
bool fitsCell(const QCPItemText& label, double cellWidth, double cellHeight);

} // namespace attnlab::ui

#pragma once
/// Figure and data export of any View: PNG (with a scale factor), SVG and PDF (vectors, text
/// kept as text), CSV and NPY (the view's DataTable), and the clipboard. Works offscreen.

#include <QImage>
#include <QSize>
#include <QString>

namespace attnlab::ui {

class View;

enum class ExportFormat { Png, Svg, Pdf, Csv, Npy };

/// The format a file name asks for by its extension; false when unknown.
bool exportFormatFor(const QString& path, ExportFormat* format);
/// File-dialog filter listing every format.
QString exportFilter();
/// The view drawn into an image of size * scale pixels (white or theme background).
QImage renderFigure(View& view, const QSize& size, double scale = 1.0);
/// Writes the view's figure or data to `path`, chosen by extension. `size` is the logical
/// figure size (points for PDF, user units for SVG); `scale` multiplies PNG pixels.
/// Returns an empty string on success, else a message naming the file and the problem.
QString exportView(View& view, const QString& path, const QSize& size, double scale = 1.0);
/// Puts the figure (PNG, at scale 2 for crispness) on the clipboard.
void copyFigureToClipboard(View& view, const QSize& size);

} // namespace attnlab::ui

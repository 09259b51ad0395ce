#pragma once
/// Figure and data export of any View: PNG (with a scale factor), SVG and PDF (vectors, text
/// kept as text), CSV and NPY (the view's DataTable), and the clipboard. Works offscreen.

#include <QImage>
#include <QList>
#include <QSize>
#include <QString>

#include <optional>

#include "attnlab/base/result.h"

#include "ui/views/view.h"

namespace attnlab::ui {

/// An export's failure as the window's one convention has it (a Status): the message a
/// person reads, naming the file and the problem.
inline Error exportError(const QString& message) {
    return Error{message.toStdString()};
}

enum class ExportFormat { Png, Svg, Pdf, Csv, Npy, Json };

/// True for the formats that hold a figure (PNG, SVG, PDF), false for data (CSV, NPY, JSON).
bool isFigureFormat(ExportFormat format);

/// A figure size that means something on a page: its size in points (1/72 in) and the text
/// size that prints well at it. Every piece of text in the figure is within
/// [minFontPoints, maxFontPoints].
struct FigurePreset {
    QString name;  ///< "column", "page", "slide", "poster" (`attnlab render --size`)
    QString label; ///< translated, for the export dialog
    QSize size;    ///< points
    int fontPoints = 8;
    int minFontPoints = 7;
    int maxFontPoints = 9;
    /// The height is the most the figure takes: a view that needs less (a heatmap's square
    /// cells) gets a page of its own height (a column figure stands in the text's flow).
    bool fitsHeight = false;
};
/// One column of a two-column paper (3.3 in), a full page width (6.9 in), a 16:9 slide
/// (13.33 x 7.5 in), a poster panel (16 x 12 in).
QList<FigurePreset> figurePresets();
std::optional<FigurePreset> figurePresetNamed(const QString& name);

/// The figure style of an export: no selection or hover, the theme's fonts.
inline FigureStyle exportFigureStyle() {
    FigureStyle style;
    style.showSelection = false;
    return style;
}

/// Everything an export needs besides the view and the file.
struct FigureOptions {
    QSize size;                              ///< logical size (points for PDF, units for SVG)
    double scale = 1.0;                      ///< PNG pixels per unit
    FigureStyle style = exportFigureStyle(); ///< selection hidden unless asked for
    /// The page takes the height the view needs at this width (View::fittedFigureHeight),
    /// when it names one; `size`'s height otherwise.
    bool fitHeight = false;
};
/// The options of a preset: its size and text sizes, and a fitted height where it has one.
FigureOptions figureOptionsOf(const FigurePreset& preset);

/// Moves the PDF that QPdfWriter wrote at `temporary` to `path` with its /CreationDate set to
/// 1980-01-01 00:00 (the same length, so the cross-reference offsets hold): a figure carries
/// no time of writing, and the same input gives the same bytes. The message names `path`.
Status publishPdf(const QString& temporary, const QString& path);

/// The format a file name asks for by its extension; false when unknown.
bool exportFormatFor(const QString& path, ExportFormat* format);
/// File-dialog filter listing the figure formats (PNG, SVG, PDF) and then the data formats.
QString exportFilter();
/// The view drawn into an image of size * scale pixels (white or theme background).
QImage renderFigure(View& view, const QSize& size, double scale = 1.0);
/// Writes the view's figure or data to `path`, chosen by extension. `size` is the logical
/// figure size (points for PDF, user units for SVG); `scale` multiplies PNG pixels.
/// A failure's message names the file and the problem. Draws with FigureOptions' default
/// style (no selection).
Status exportView(View& view, const QString& path, const QSize& size, double scale = 1.0);
/// The same with a figure style (font size, selection, title) applied for the export only:
/// the view's own style is put back afterwards.
Status exportView(View& view, const QString& path, const FigureOptions& options);
/// Writes the numbers the view draws (CSV, NPY or JSON by extension). CSV: a header row (what a row
/// is, then the column labels: key tokens), then one row per item (query, step, head ...), its
/// label then its values, with a first column naming the block in a grouped table; NPY: the float64
/// [rows, cols] values, or [blocks, rows per block, cols]; JSON: self-describing (view, source,
/// layer, head, caption, row and column labels, values with null where a cell has no value, and the
/// table's extra).
Status exportData(View& view, const QString& path);
/// Why the view has no numbers to export now (a sentence for the disabled menu item and the
/// command line); empty when it has some.
QString dataUnavailable(View& view);
/// File-dialog filter listing the data formats.
QString dataExportFilter();
/// Puts the figure (PNG, at scale 2 for crispness) on the clipboard.
void copyFigureToClipboard(View& view, const QSize& size);

} // namespace attnlab::ui

#pragma once
/// View: the base of every figure in the window. A view draws from the Document's Experiment,
/// redraws only when visible (a hidden view marks itself stale and catches up when shown),
/// and can paint itself into any QPainter at a given size, which is how figures are exported
/// (figure_export.h) and how `attnlab render` draws without a display.
///
/// Plugging in a new view: derive from View (or PlotView for a single QCustomPlot), implement
/// viewId(), title(), refresh() and, if it has data, data(); register it in
/// ViewRegistry (view_registry.h). The main window and the exporter then pick it up.

#include <QString>
#include <QStringList>
#include <QVariantMap>
#include <QWidget>

#include <vector>

#include "ui/state/document.h"
#include "ui/widgets/theme.h"

class QCustomPlot;
class QCPPainter;

namespace attnlab::ui {

/// The numbers behind a figure: a rows x cols table with labels (CSV, NPY, JSON).
struct DataTable {
    QStringList rowLabels;
    QStringList columnLabels;
    int rows = 0;
    int cols = 0;
    std::vector<double> values; ///< row-major rows * cols; NaN where a cell has no value
    double at(int r, int c) const { return values[static_cast<std::size_t>(r) * cols + c]; }
    /// What a row is (the CSV's first header cell): "token" when empty, else "step", "head" ...
    QString rowHeader;
    /// A table made of equal blocks of rows (one per head, one per compare panel): the block
    /// names, in order; rows is a multiple of their count. CSV gets a first column
    /// `groupHeader` naming each row's block, NPY is [blocks, rows / blocks, cols].
    QStringList groupLabels;
    QString groupHeader;
    /// Further self-description for the JSON file (units, the flash stepper's tiles ...).
    QVariantMap extra;
    /// Why there is nothing to export (empty table), as a sentence; empty: the default one.
    QString unavailable;

    /// The table of a labelled matrix (a heatmap's cells).
    static DataTable fromMatrix(const MatrixD& matrix, const QStringList& rowLabels,
                                const QStringList& columnLabels);
};

/// How a view draws itself for a figure (export, `attnlab render`) rather than on screen.
struct FigureStyle {
    int fontPoints = 0;        ///< > 0: text size in points (titles, ticks, labels); 0: theme's
    int minFontPoints = 0;     ///< > 0: the least text size labels may shrink to to fit
    bool showSelection = true; ///< draw the selected query / hovered item
    bool showTitle = true;     ///< draw the title line
    QString caption;           ///< non-empty: replaces the title
    int wrapWidth = 0;         ///< > 0: titles wrap to this width (the figure's)
};

class View : public QWidget {
    Q_OBJECT
public:
    explicit View(Document* document, QWidget* parent = nullptr);

    /// Stable name used in sessions and by `attnlab render --view` ("heatmap", "heads", ...).
    virtual QString viewId() const = 0;
    /// Translated title for tabs and menus.
    virtual QString title() const = 0;
    /// Redraws from the document now (also called before an offscreen export).
    virtual void refresh() = 0;
    /// Paints the figure at logical `size` into `painter` (a raster, SVG or PDF device).
    /// The default renders the widget; plot views draw their QCustomPlot as vectors.
    virtual void paintFigure(QCPPainter& painter, const QSize& size);
    /// The height a figure `width` wide needs to show this view with nothing left blank (a
    /// heatmap's square cells under its title); 0 when any height does. Export calls it for a
    /// size whose height follows the figure (a paper's column).
    virtual int fittedFigureHeight(int width) {
        (void)width;
        return 0;
    }
    /// The data behind the figure; empty when there is none.
    virtual DataTable data() const { return {}; }
    /// Why this view cannot show the document's experiment (a dump of weights holds no Q/K to
    /// tile, no session to decode or compare ...), as a sentence; empty when it applies. The
    /// window disables such a tab and `attnlab render` refuses the view with this message.
    virtual QString notApplicable() const { return {}; }

    Document* document() const { return m_document; }
    /// The theme of the session's view state, with the figure style's font size if it sets one.
    Theme theme() const;
    /// The style the view draws with; the window's is the default (selection shown, the
    /// theme's font). Export sets a figure's style for the export and puts the old one back.
    const FigureStyle& figureStyle() const { return m_figureStyle; }
    /// Sets the style and redraws (a view made of views passes it on to them).
    virtual void setFigureStyle(const FigureStyle& style);
    /// Redraws now if stale (export and tests call this before reading the figure).
    void ensureFresh();
    /// ensureFresh(), then waits for what the redraw started on a worker thread (a view that
    /// computes its figure in the background: the logit lens, attribution, patching) and
    /// redraws with its result: what export, render and screenshots call.
    void ensureComplete();
    /// refresh() now, counted as fresh: how a view made of views draws the ones it holds.
    void refreshNow();

protected:
    /// Whether a document change makes this view stale; default: experiment, view state and
    /// selection changes.
    virtual bool dependsOn(Document::What what) const;
    /// Waits (processing events) until the work this view started on a worker thread has
    /// handed its result over; default: a view that starts none.
    virtual void waitForWork() {}
    void markStale();
    void showEvent(QShowEvent* event) override;

private:
    Document* m_document;
    bool m_stale = true;
    FigureStyle m_figureStyle;
};

/// Why a view that reads a text model's tokens (what it predicts, its heads' roles, a
/// translation) cannot show the open model, an image classifier; empty for any other.
QString imageClassifierRefusal(const Document* document);

/// A view that is one QCustomPlot; paints it as vectors for export.
class PlotView : public View {
    Q_OBJECT
public:
    explicit PlotView(Document* document, QWidget* parent = nullptr);
    QCustomPlot* plot() const { return m_plot; }
    void paintFigure(QCPPainter& painter, const QSize& size) override;

protected:
    QCustomPlot* m_plot;
};

} // namespace attnlab::ui

#pragma once
/// Light, dark and projector themes. The projector theme uses large fonts and thick lines so a
/// figure reads from the back of a classroom.

#include <QColor>
#include <QFont>
#include <QString>
#include <QStringList>

class QApplication;
class QCustomPlot;

namespace attnlab::ui {

struct Theme {
    QString name;
    QColor background;
    QColor foreground;
    QColor grid;
    QColor accent;     ///< selection highlight
    QColor masked;     ///< masked heatmap cells (neutral, distinct from any colormap)
    QColor maskedMark; ///< the 'x' drawn on masked cells
    int fontPointSize = 10;
    /// The least size text may shrink to so that every label of a figure fits (token labels of
    /// a long sentence); below it labels are thinned instead.
    int minimumFontPointSize = 8;
    double lineWidth = 1.0;
    /// Figures: fontPointSize is in device units (1 unit = 1 pt on a figure's page), so the
    /// layout measures text exactly as the PDF/SVG draws it whatever the screen's DPI.
    bool deviceUnitFonts = false;
};

/// Sets `font` to `size` in the theme's unit (points on screen, device units in figures).
void setFontSize(QFont& font, const Theme& theme, double size);

/// The colour of masked cells under a colormap: the theme's neutral grey, or a pale rose where
/// the map itself has greys (cividis, grayscale) so masked never reads as a value.
QColor maskedColor(const Theme& theme, const QString& colormap);
/// "light", "dark" or "projector"; unknown names give light.
Theme themeNamed(const QString& name);
QStringList themeNames();
/// Palette and font of the whole application.
void applyTheme(QApplication& app, const Theme& theme);
/// Background, axes, grid, fonts and pens of a plot and all its axis rects.
void stylePlot(QCustomPlot& plot, const Theme& theme);

} // namespace attnlab::ui

#pragma once
/// Colormaps drawn by the views. Built here from published control points so a figure looks
/// the same on every machine: viridis, magma, cividis (perceptually uniform, colour-blind
/// safe), grayscale, print (pale to dark, prints well in grey), and a blue-white-red diverging
/// map for signed quantities (raw scores). Every sequential map is monotonic in CIE L*.

#include <QColor>
#include <QString>
#include <QStringList>

class QCPColorGradient;

namespace attnlab::ui {

/// The names the colormap picker offers, in order: viridis, magma, cividis, grayscale, print,
/// diverging.
QStringList colormapNames();
/// True for maps centred on zero (the data range must be made symmetric).
bool isDiverging(const QString& name);
/// The colour at t in [0, 1] (clamped) of the named map; unknown names fall back to viridis.
QColor colormapColor(const QString& name, double t);
/// A QCustomPlot gradient of the named map, without interpolation artefacts (many stops);
/// NaN cells (masked) get `nanColor`.
QCPColorGradient makeGradient(const QString& name, const QColor& nanColor);
/// Black or white, whichever reads better on `background` (for value labels).
QColor contrastingText(const QColor& background);

} // namespace attnlab::ui

#pragma once
/// Captions that wrap instead of being cut. fitPlotCaptions(plot) makes every title of a
/// QCustomPlot (its QCPTextElements) wrap to the plot's width before each replot, with
/// Unicode line breaking (between words, and between any two Chinese characters), and bounds
/// the plot's minimum size so a long caption or a large projector font never widens the
/// window: the caption takes more lines instead.

#include <initializer_list>

class QCPTextElement;
class QCustomPlot;
class QFont;
class QString;

namespace attnlab::ui {

/// `text` broken into lines no wider than `width` pixels in `font`; existing line breaks
/// stay. A single word wider than `width` gets a line of its own.
QString wrapCaption(const QString& text, const QFont& font, int width);

/// A figure's texts wrapped to its width (FigureStyle::wrapWidth, less a margin); nothing when
/// the width is 0 (the window wraps its own captions at every replot, fitPlotCaptions).
void wrapToFigureWidth(int wrapWidth, std::initializer_list<QCPTextElement*> texts);

/// Wraps the plot's captions at every replot (resizes included) and sets its minimum size to
/// `minimumWidth` x `minimumHeight`. Idempotent: a second call only updates the minimum.
void fitPlotCaptions(QCustomPlot* plot, int minimumWidth = 160, int minimumHeight = 120);

} // namespace attnlab::ui

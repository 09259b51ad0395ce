#include "ui/widgets/theme.h"

#include <QApplication>
#include <QPalette>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

QStringList themeNames() {
    return {QStringLiteral("light"), QStringLiteral("dark"), QStringLiteral("projector")};
}

QColor maskedColor(const Theme& theme, const QString& colormap) {
    if (colormap != QLatin1String("cividis") && colormap != QLatin1String("grayscale"))
        return theme.masked;
    return theme.name == QLatin1String("dark") ? QColor(0x6b, 0x3a, 0x3a)
                                               : QColor(0xf2, 0xd7, 0xd5);
}

Theme themeNamed(const QString& name) {
    Theme theme;
    if (name == QLatin1String("dark")) {
        theme.name = name;
        theme.background = QColor(0x1e, 0x1f, 0x22);
        theme.foreground = QColor(0xe6, 0xe6, 0xe6);
        theme.grid = QColor(0x44, 0x46, 0x4a);
        theme.accent = QColor(0xff, 0x9f, 0x1c);
        theme.masked = QColor(0x55, 0x55, 0x55);
        theme.maskedMark = QColor(0x99, 0x99, 0x99);
        return theme;
    }
    theme.name = QStringLiteral("light");
    theme.background = Qt::white;
    theme.foreground = QColor(0x20, 0x20, 0x20);
    theme.grid = QColor(0xdd, 0xdd, 0xdd);
    theme.accent = QColor(0xe4, 0x57, 0x1b);
    theme.masked = QColor(0xc8, 0xc8, 0xc8);
    theme.maskedMark = QColor(0x80, 0x80, 0x80);
    if (name == QLatin1String("projector")) {
        theme.name = name;
        theme.foreground = Qt::black;
        theme.accent = QColor(0xd0, 0x00, 0x00);
        theme.fontPointSize = 16;
        theme.minimumFontPointSize = 12; // still read from the back of a classroom
        theme.lineWidth = 3.0;
    }
    return theme;
}

void applyTheme(QApplication& app, const Theme& theme) {
    QPalette palette = app.style() ? app.style()->standardPalette() : QPalette();
    if (theme.name == QLatin1String("dark")) {
        palette.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x30));
        palette.setColor(QPalette::WindowText, theme.foreground);
        palette.setColor(QPalette::Base, theme.background);
        palette.setColor(QPalette::AlternateBase, QColor(0x33, 0x35, 0x38));
        palette.setColor(QPalette::Text, theme.foreground);
        palette.setColor(QPalette::Button, QColor(0x3a, 0x3c, 0x40));
        palette.setColor(QPalette::ButtonText, theme.foreground);
        palette.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3c, 0x40));
        palette.setColor(QPalette::ToolTipText, theme.foreground);
        palette.setColor(QPalette::Highlight, theme.accent);
        palette.setColor(QPalette::HighlightedText, Qt::black);
        palette.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
    }
    app.setPalette(palette);
    QFont font = app.font();
    font.setPointSize(theme.fontPointSize);
    app.setFont(font);
}

void setFontSize(QFont& font, const Theme& theme, double size) {
    if (theme.deviceUnitFonts) {
        font.setPixelSize(std::max(1, static_cast<int>(std::lround(size))));
        // Unhinted advances: the layout measures text as the PDF draws it, not as an 8 px
        // screen font snapped to whole pixels would be.
        font.setHintingPreference(QFont::PreferNoHinting);
    } else
        font.setPointSizeF(std::max(1.0, size));
}

void stylePlot(QCustomPlot& plot, const Theme& theme) {
    plot.setBackground(theme.background);
    QFont font = plot.font();
    setFontSize(font, theme, theme.fontPointSize);
    const QPen axisPen(theme.foreground, theme.lineWidth);
    const QPen gridPen(theme.grid, 1, Qt::DotLine);
    auto styleAxis = [&](QCPAxis* axis) {
        axis->setBasePen(axisPen);
        axis->setTickPen(axisPen);
        axis->setSubTickPen(axisPen);
        axis->setTickLabelColor(theme.foreground);
        axis->setLabelColor(theme.foreground);
        axis->setTickLabelFont(font);
        axis->setLabelFont(font);
        axis->grid()->setPen(gridPen);
        axis->grid()->setZeroLinePen(Qt::NoPen);
    };
    for (QCPAxisRect* rect : plot.axisRects()) {
        rect->setBackground(theme.background);
        for (QCPAxis* axis : rect->axes())
            styleAxis(axis);
    }
    // Titles and colour scales anywhere in the layout (nested grids included).
    for (QCPLayoutElement* element : plot.plotLayout()->elements(true)) {
        if (auto* text = qobject_cast<QCPTextElement*>(element)) {
            text->setTextColor(theme.foreground);
            QFont titleFont = font;
            titleFont.setBold(true);
            text->setFont(titleFont);
        } else if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
            styleAxis(scale->axis());
            scale->setBarWidth(static_cast<int>(std::lround(theme.fontPointSize * 1.4)));
        }
    }
}

} // namespace attnlab::ui

#include "ui/views/cell_labels.h"

#include <QFontMetricsF>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/widgets/theme.h"

namespace attnlab::ui {

bool fitsCell(const QCPItemText& label, double cellWidth, double cellHeight) {
    const QFontMetricsF metrics(label.font());
    // A margin of 15 % of the text's width: neighbours never touch.
    return metrics.horizontalAdvance(label.text()) * 1.15 <= cellWidth &&
           metrics.height() <= cellHeight;
}

int fitCellLabels(const std::vector<QCPItemText*>& labels, double cellWidth, double cellHeight,
                  const Theme& look, double mostPoints) {
    if (labels.empty()) return 0;
    const double least = std::min<double>(mostPoints, look.minimumFontPointSize);
    auto sizeAll = [&](double points) {
        QFont font = labels.front()->font();
        setFontSize(font, look, points);
        for (QCPItemText* label : labels)
            label->setFont(font);
    };
    // Whole points from the view's size down: the first at which every text fits.
    for (double points = mostPoints; points >= least; points -= 1) {
        sizeAll(points);
        if (std::all_of(labels.begin(), labels.end(), [&](const QCPItemText* label) {
                return fitsCell(*label, cellWidth, cellHeight);
            })) {
            for (QCPItemText* label : labels)
                label->setVisible(true);
            return static_cast<int>(labels.size());
        }
    }
    sizeAll(least);
    int shown = 0;
    for (QCPItemText* label : labels) {
        const bool fits = fitsCell(*label, cellWidth, cellHeight);
        label->setVisible(fits);
        shown += fits;
    }
    return shown;
}

} // namespace attnlab::ui

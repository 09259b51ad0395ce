#pragma once
// The texts a view prints in its matrix's cells, checked as a reader sees them: each shown
// text inside its cell, none meeting another.

#include <QFontMetricsF>
#include <QRectF>
#include <qcustomplot.h>

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace attnlab::ui {

/// The texts printed in `plot`'s cells (QCPItemText at cell centres, plot coordinates): each
/// shown one's rectangle, as its font measures it, must lie inside its cell and meet no other.
/// Returns how many are shown.
inline int expectCellTextsInsideTheirCellsAndApart(QCustomPlot* plot) {
    QCPAxisRect* rect = plot->axisRect();
    QCPAxis* x = rect->axis(QCPAxis::atBottom);
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    std::vector<std::pair<QRectF, QString>> shown;
    for (int i = 0; i < plot->itemCount(); ++i) {
        const auto* text = qobject_cast<QCPItemText*>(plot->item(i));
        if (!text || !text->visible()) continue;
        const QFontMetricsF metrics(text->font());
        const QPointF centre = text->position->pixelPosition();
        const double width = metrics.horizontalAdvance(text->text());
        const double height = metrics.height();
        const QRectF box(centre.x() - width / 2, centre.y() - height / 2, width, height);
        const QPointF at = text->position->coords();
        const QRectF cell = QRectF(QPointF(x->coordToPixel(at.x() - 0.5), y->coordToPixel(at.y() - 0.5)),
                                   QPointF(x->coordToPixel(at.x() + 0.5), y->coordToPixel(at.y() + 0.5)))
                                .normalized()
                                .adjusted(-0.5, -0.5, 0.5, 0.5); // pixel rounding
        EXPECT_TRUE(cell.contains(box)) << text->text().toStdString() << " leaves its cell at ("
                                        << at.x() << ", " << at.y() << ")";
        for (const auto& [other, what] : shown)
            EXPECT_FALSE(other.intersects(box))
                << text->text().toStdString() << " overlaps " << what.toStdString();
        shown.emplace_back(box, text->text());
    }
    return static_cast<int>(shown.size());
}

} // namespace attnlab::ui

// Issue 14 in the window: the dropout box edits the session (undoably) and follows it; the
// heatmap marks exactly the cells dropout zeroed (dropout.h's pattern), apart from the masked
// ones; the statistics say rows no longer sum to 1 in train mode only; the output-projection
// view labels its shapes and its data is the experiment's projected output.

#include <QDoubleSpinBox>
#include <QImage>
#include <QLabel>
#include <QPixmap>
#include <QRadioButton>
#include <QSet>
#include <QSpinBox>
#include <QUndoStack>

#include <gtest/gtest.h>

#include "ui/export/figure_export.h"
#include "ui/state/document.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/output_projection_view.h"
#include "ui/views/statistics_view.h"
#include "ui/window/dropout_box.h"

namespace attnlab::ui {
namespace {

Session lesson() {
    Session session;
    session.text = "a b c d e f g h";
    session.dModel = 16;
    session.heads = 2;
    session.mask.causal = true;
    session.dropoutRate = 0.4;
    session.dropoutSeed = 5;
    return session;
}

TEST(DropoutBox, SwitchRateAndSeedEditTheSessionAndUndo) {
    Document document;
    document.reset(lesson());
    DropoutBox box(&document);
    EXPECT_TRUE(box.evalButton()->isChecked());
    box.trainButton()->setChecked(true);
    EXPECT_TRUE(document.session().train);
    box.rateSpin()->setValue(0.25);
    EXPECT_DOUBLE_EQ(document.session().dropoutRate, 0.25);
    box.seedSpin()->setValue(9);
    EXPECT_EQ(document.session().dropoutSeed, 9u);
    // ATTNLAB_SHOTS=DIR keeps a picture of the box for a person to look at.
    if (const QByteArray dir = qgetenv("ATTNLAB_SHOTS"); !dir.isEmpty()) {
        box.resize(box.sizeHint());
        box.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/dropout_box.png"));
    }
    document.undoStack()->undo();
    document.undoStack()->undo();
    document.undoStack()->undo();
    EXPECT_FALSE(document.session().train);
    EXPECT_TRUE(box.evalButton()->isChecked()); // the box follows the document
    EXPECT_DOUBLE_EQ(box.rateSpin()->value(), 0.4);
}

TEST(DropoutViews, HeatmapMarksTheDroppedCellsApartFromTheMaskedOnes) {
    Document document;
    Session session = lesson();
    session.train = true;
    document.reset(session);
    document.flush();
    const Experiment* experiment = document.experiment();
    ASSERT_NE(experiment, nullptr);
    ASSERT_TRUE(experiment->dropout.active());
    HeatmapView view(&document);
    view.ensureFresh();
    const HeatmapData heat = view.heatmapData();
    ASSERT_EQ(heat.dropped.rows(), 8);
    ASSERT_EQ(heat.masked.rows(), 8);
    Index droppedAllowed = 0;
    for (Index i = 0; i < 8; ++i)
        for (Index j = 0; j < 8; ++j) {
            EXPECT_EQ(heat.dropped(i, j), isDropped(experiment->dropout, 0, 0, i, j));
            if (heat.dropped(i, j) && !heat.masked(i, j)) {
                ++droppedAllowed;
                EXPECT_EQ(heat.values(i, j), 0.0); // a dropped weight is 0
            }
        }
    EXPECT_GT(droppedAllowed, 0);
    EXPECT_TRUE(heat.quantity.contains(QStringLiteral("dropout")));
    // The tooltip of a dropped, allowed cell says so.
    for (Index i = 0; i < 8; ++i)
        for (Index j = 0; j <= i; ++j)
            if (heat.dropped(i, j)) {
                EXPECT_TRUE(view.explainCell(i, j).contains(QStringLiteral("dropped")));
                i = 8;
                break;
            }

    // Eval mode: nothing marked.
    document.modify([](Session& s) { s.train = false; }, QStringLiteral("eval"));
    document.flush();
    EXPECT_EQ(view.heatmapData().dropped.size(), 0);
}

TEST(DropoutViews, StatisticsSayRowsNoLongerSumToOneInTrainModeOnly) {
    Document document;
    document.reset(lesson());
    document.flush();
    StatisticsView view(&document);
    view.ensureFresh();
    EXPECT_FALSE(view.summary()->text().contains(QStringLiteral("no longer sum to 1")));
    document.modify([](Session& s) { s.train = true; }, QStringLiteral("train"));
    document.flush();
    view.ensureFresh();
    EXPECT_TRUE(view.summary()->text().contains(QStringLiteral("no longer sum to 1")))
        << view.summary()->text().toStdString();
}

TEST(DropoutViews, OutputProjectionLabelsShapesAndShowsTheProjectedOutput) {
    Document document;
    Session session = lesson();
    session.heads = 4; // d_v = 4, h * d_v = 16 = d_model
    document.reset(session);
    document.flush();
    OutputProjectionView view(&document);
    EXPECT_TRUE(view.notApplicable().isEmpty());
    view.ensureFresh();
    const QStringList labels = view.panelLabels();
    ASSERT_EQ(labels.size(), 3);
    EXPECT_TRUE(labels[0].contains(QStringLiteral("[S, h\u00b7d_v] = [8, 16]")))
        << labels[0].toStdString();
    EXPECT_TRUE(labels[1].contains(QStringLiteral("[16, 16]"))) << labels[1].toStdString();
    EXPECT_TRUE(labels[2].contains(QStringLiteral("[S, d_model] = [8, 16]")))
        << labels[2].toStdString();
    const DataTable table = view.data();
    const Experiment* experiment = document.experiment();
    ASSERT_EQ(table.rows, 8);
    ASSERT_EQ(table.cols, 16);
    for (int i = 0; i < 8; ++i)
        for (int c = 0; c < 16; ++c)
            EXPECT_EQ(table.at(i, c), static_cast<double>(experiment->output(i, c)));
    const QImage image = renderFigure(view, QSize(900, 360));
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3)
            colours.insert(image.pixel(x, y));
    EXPECT_GT(colours.size(), 16);
}

} // namespace
} // namespace attnlab::ui

// Window bugs a person met (#9, item 5), each checked on the state the window shows: the
// hover breakdown stays on its cell and divides by the temperature once; Compare never shows
// the previous example's B; invalid settings mark the figure out of date with the problem; a
// dump on screen is named as such and the views that cannot draw it are refused; a 1 x 1
// heatmap has a cell to draw; the tool bar's Undo keeps its text; legends sit outside the
// data; About names the version; the steppers share one step bar; the flash walk of the
// focused head is made on the worker.

#include <QApplication>
#include <QComboBox>
#include <QHelpEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPicture>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>
#include <QToolTip>
#include <QUndoStack>
#include <QWheelEvent>
#include <qcustomplot.h>

#include <gtest/gtest.h>

#include <cmath>

#include "attnlab/attention/flash_walk.h"
#include "small_dump.h"
#include "ui/state/document.h"
#include "ui/state/dump_document.h"
#include "ui/state/experiment_data.h"
#include "ui/views/compare_view.h"
#include "ui/views/entropy_view.h"
#include "ui/views/flash_stepper_view.h"
#include "ui/views/heads_grid_view.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/kv_cache_view.h"
#include "ui/views/step_controls.h"
#include "ui/views/view_registry.h"
#include "ui/window/inputs_panel.h"
#include "ui/window/language.h"
#include "ui/window/main_window.h"

namespace attnlab::ui {
namespace {

/// The pixel at the centre of heatmap cell (row, column), in the plot's coordinates.
QPoint cellCentre(HeatmapView& view, Index row, Index column) {
    QCPAxisRect* rect = view.plot()->axisRect();
    return QPoint(static_cast<int>(rect->axis(QCPAxis::atBottom)->coordToPixel(double(column))),
                  static_cast<int>(rect->axis(QCPAxis::atLeft)->coordToPixel(double(row))));
}

TEST(WindowBugs, HoverBreakdownStaysWhileThePointerIsOnTheCell) {
    Document document;
    document.flush();
    HeatmapView view(&document);
    view.resize(700, 500);
    view.show();
    view.ensureFresh();
    view.plot()->replot();
    QCoreApplication::processEvents();
    const QPoint local = cellCentre(view, 1, 2);
    // Qt's delayed tool-tip event (~0.7 s after the pointer stops) reaches the plot: it must
    // answer with the cell's breakdown, not let the view's generic tip replace it.
    QHelpEvent help(QEvent::ToolTip, local, view.plot()->mapToGlobal(local));
    QCoreApplication::sendEvent(view.plot(), &help);
    EXPECT_EQ(QToolTip::text(), view.explainCell(1, 2));
    EXPECT_NE(QToolTip::text(), view.toolTip());
    EXPECT_TRUE(QToolTip::text().contains(QStringLiteral("q\u00b7k")));
    QToolTip::hideText();
}

TEST(WindowBugs, HoverBreakdownDividesByTheTemperatureOnce) {
    Session session;
    session.dModel = 16;
    session.heads = 4; // d_head 4: base scale 1/2
    session.temperature = 2.0;
    Document document;
    document.reset(session);
    document.flush();
    const Experiment* experiment = document.experiment();
    ASSERT_NE(experiment, nullptr);
    EXPECT_DOUBLE_EQ(experiment->baseScale, 0.5);
    EXPECT_DOUBLE_EQ(experiment->temperature, 2.0);
    EXPECT_DOUBLE_EQ(experiment->scale, 0.25);
    // s = q.k * 1/2 / 2, whether the scores were stored or are rebuilt from Q and K; q.k
    // written out here from head 1's query and its kv head's keys (one kv head: head 0).
    ASSERT_EQ(experiment->kvHeadCount(), 1);
    MatrixD raw(experiment->sq(), experiment->sk());
    for (Index i = 0; i < raw.rows(); ++i)
        for (Index j = 0; j < raw.cols(); ++j) {
            double dot = 0;
            for (Index d = 0; d < experiment->qkv.q.dim; ++d)
                dot +=
                    double(experiment->qkv.q(0, 1, i, d)) * double(experiment->qkv.k(0, 0, j, d));
            raw(i, j) = dot;
        }
    EXPECT_TRUE(experiment->scaledScores(1).isApprox(raw * 0.25, 1e-6));
    Experiment withoutScores = *experiment;
    withoutScores.attention.scores = Tensor4();
    EXPECT_TRUE(withoutScores.scaledScores(1).isApprox(raw * 0.25, 1e-12));

    ViewState state = document.session().viewState;
    state.head = 1;
    document.setViewState(state);
    HeatmapView view(&document);
    const QString text = view.explainCell(2, 1);
    EXPECT_TRUE(text.contains(QStringLiteral("\u00d7 scale 0.5 \u00f7 temperature 2 = s = %1")
                                  .arg(QString::number(raw(2, 1) * 0.25, 'g', 4))))
        << text.toStdString();
}

TEST(WindowBugs, CompareShowsTheOpenedExamplesB) {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    ASSERT_TRUE(window.openExample(QStringLiteral(":/examples/cat_full_vs_causal.json")));
    window.document()->flush();
    ASSERT_EQ(window.currentView()->viewId(), QStringLiteral("compare"));
    EXPECT_EQ(window.document()->shownComparison(), Comparison::FullVsCausal);
    // A second example while Compare is in front: B must be this example's, not the last one's.
    ASSERT_TRUE(window.openExample(QStringLiteral(":/examples/linear_vs_softmax.json")));
    window.document()->flush();
    window.document()->flush();
    EXPECT_EQ(window.document()->shownComparison(), Comparison::SoftmaxVsLinear);
    const Experiment* b = window.document()->comparisonExperiment();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->variant, Variant::Linear);
    ASSERT_TRUE(window.openExample(QStringLiteral(":/examples/rope_relative_positions.json")));
    window.document()->flush();
    window.document()->flush();
    ASSERT_NE(window.document()->comparisonExperiment(), nullptr);
    EXPECT_EQ(window.document()->comparisonExperiment()->positional, Positional::RopeHalf);
    EXPECT_NE(window.document()->experiment()->positional, Positional::RopeHalf);
}

// Comparing a causal session with "B = causal" drew a blank B - A on a +-1e-12 scale: the
// caption now says that A and B are the same, and a real difference keeps the plain one.
TEST(WindowBugs, CompareSaysWhenAAndBAreTheSame) {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    ASSERT_TRUE(window.openExample(QStringLiteral(":/examples/cat_full_vs_causal.json")));
    window.document()->flush();
    auto* compare = qobject_cast<CompareView*>(window.view(QStringLiteral("compare")));
    ASSERT_NE(compare, nullptr);
    compare->ensureFresh();
    EXPECT_FALSE(compare->differenceView()->caption().contains(QStringLiteral("same")));
    window.document()->modify([](Session& s) { s.mask.causal = true; }, QStringLiteral("causal"));
    window.document()->flush();
    window.document()->flush();
    compare->refresh();
    EXPECT_TRUE(compare->differenceView()->caption().contains(QStringLiteral("same")))
        << compare->differenceView()->caption().toStdString();
}

/// Chinese for one test: English again afterwards, whatever happens.
struct InChinese {
    InChinese() : ok(setLanguage(QStringLiteral("zh_CN"))) {}
    ~InChinese() { setLanguage(QStringLiteral("en")); }
    InChinese(const InChinese&) = delete;
    InChinese& operator=(const InChinese&) = delete;
    bool ok;
};

// At 1280 x 720 in the projector theme B's caption wrapped to two lines and pushed its matrix
// below A's: the three panels' titles take the same room, so the matrices start level. In
// Chinese "B \u2212 A" has no Chinese glyph and its line was a few pixels shorter than A's and
// B's: B - A started higher. The matrices' tops are compared where they are drawn.
TEST(WindowBugs, CompareSharesItsWidthEquallyForALongText) {
    // At 1 000 tokens A and B were squeezed to a third of B - A's width.
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    std::string text;
    for (int i = 0; i < 1000; ++i)
        text += (i ? " w" : "w") + std::to_string(i % 50);
    window.document()->modify([&](Session& s) { s.text = text; }, QStringLiteral("text"));
    window.showView(QStringLiteral("compare"));
    auto* compare = qobject_cast<CompareView*>(window.view(QStringLiteral("compare")));
    ASSERT_NE(compare, nullptr);
    compare->compareWith(Comparison::FullVsCausal);
    window.document()->flush();
    QCoreApplication::processEvents();
    compare->ensureComplete();
    QCoreApplication::processEvents();
    const int a = compare->primaryView()->width();
    const int b = compare->comparisonView()->width();
    const int difference = compare->differenceView()->width();
    EXPECT_GT(a, 200);
    EXPECT_LE(std::abs(a - b), 2) << a << " " << b;
    EXPECT_LE(std::abs(a - difference), 2) << a << " " << difference;
}

TEST(WindowBugs, CompareStartsItsThreeMatricesLevel) {
    const InChinese chinese;
    ASSERT_TRUE(chinese.ok);
    MainWindow window;
    window.setTheme(QStringLiteral("projector"), false);
    window.resize(1280, 720);
    window.show();
    ASSERT_TRUE(window.openExample(QStringLiteral(":/examples/cat_full_vs_causal.json")));
    auto* compare = qobject_cast<CompareView*>(window.view(QStringLiteral("compare")));
    ASSERT_NE(compare, nullptr);
    compare->compareWith(Comparison::MhaVsGqa);
    window.document()->flush();
    window.document()->flush();
    QCoreApplication::processEvents();
    compare->refresh();
    const QList<HeatmapView*> panels = compare->findChildren<HeatmapView*>();
    ASSERT_EQ(panels.size(), 3);
    int lines = 0;
    for (HeatmapView* panel : panels)
        lines = std::max(lines, panel->titleLines());
    for (HeatmapView* panel : panels) {
        panel->plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QCPTextElement* title = panel->plot()->findChild<QCPTextElement*>();
        ASSERT_NE(title, nullptr);
        EXPECT_GE(static_cast<int>(title->text().count(QLatin1Char('\n'))) + 1, lines)
            << title->text().toStdString();
    }
    QList<int> tops;
    for (HeatmapView* panel :
         {compare->primaryView(), compare->comparisonView(), compare->differenceView()})
        tops << panel->plot()->mapTo(compare, QPoint(0, 0)).y() + panel->plot()->axisRect()->top();
    EXPECT_EQ(tops[1], tops[0]) << "A " << tops[0] << ", B " << tops[1];
    EXPECT_EQ(tops[2], tops[0]) << "A " << tops[0] << ", B - A " << tops[2];
}

// The exported figure (attnlab render --view compare) lays the panels out at its own size:
// there too the three matrices start level, in Chinese on the projector theme where a title
// with no Chinese glyph is shorter and B's wraps.
TEST(WindowBugs, CompareFigureStartsItsThreeMatricesLevel) {
    const InChinese chinese;
    ASSERT_TRUE(chinese.ok);
    Document document;
    Session session;
    session.text = "the quick brown fox jumps over the lazy dog";
    session.heads = 8;
    session.mask.causal = true;
    session.seed = 7;
    session.viewState.theme = "projector";
    document.reset(session);
    CompareView compare(&document);
    compare.compareWith(Comparison::MhaVsGqa);
    document.flush();
    document.flush();
    QPicture picture;
    QCPPainter painter(&picture);
    compare.paintFigure(painter, QSize(900, 600));
    painter.end();
    // The panels keep the figure's layout until they are drawn again.
    const int a = compare.primaryView()->plot()->axisRect()->top();
    EXPECT_EQ(compare.comparisonView()->plot()->axisRect()->top(), a);
    EXPECT_EQ(compare.differenceView()->plot()->axisRect()->top(), a);
}

TEST(WindowBugs, InvalidSettingsMarkTheFigureOutOfDateWithTheProblem) {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    Document* document = window.document();
    document->flush();
    EXPECT_TRUE(window.bannerText().isEmpty());
    document->modify([](Session& s) { s.heads = 3; }, QStringLiteral("heads"));
    document->flush();
    QCoreApplication::processEvents();
    const QStringList problems = Document::problemsOf(document->session());
    ASSERT_FALSE(problems.isEmpty());
    EXPECT_TRUE(document->experimentOutOfDate());
    EXPECT_TRUE(window.bannerText().contains(QStringLiteral("Out of date")));
    EXPECT_TRUE(window.bannerText().contains(problems.first()))
        << window.bannerText().toStdString();
    ASSERT_NE(document->experiment(), nullptr);
    EXPECT_EQ(document->experiment()->headCount(), 1); // the last good figure stays
    document->modify([](Session& s) { s.heads = 2; }, QStringLiteral("heads"));
    document->flush();
    QCoreApplication::processEvents();
    EXPECT_FALSE(document->experimentOutOfDate());
    EXPECT_TRUE(window.bannerText().isEmpty());
    EXPECT_EQ(document->experiment()->headCount(), 2);
}

TEST(WindowBugs, ProblemsComeFromValidateAlone) {
    Session session;
    session.heads = 3;
    session.mask.window = -5;
    QStringList expected;
    for (const std::string& problem : validate(session))
        expected << QString::fromStdString(problem);
    EXPECT_EQ(Document::problemsOf(session), expected);
}

TEST(WindowBugs, ADumpIsNamedAndViewsThatCannotDrawItAreRefused) {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    Document* document = window.document();
    document->modify([](Session& s) { s.heads = 3; }, QStringLiteral("bad heads"));
    document->flush();
    DumpDocument::of(document)->showAttention(test::uniformDump());
    QCoreApplication::processEvents();
    const Experiment* shown = document->experiment();
    ASSERT_NE(shown, nullptr);
    EXPECT_EQ(shown->source.kind, ExperimentSource::Kind::AttentionDump);
    // The inputs panel says what is shown and keeps the lab session's problems out of sight.
    InputsPanel* inputs = window.inputsPanel();
    EXPECT_FALSE(inputs->sourceNote()->isHidden());
    EXPECT_TRUE(inputs->sourceNote()->text().contains(QStringLiteral("model_dump.npz")));
    EXPECT_TRUE(inputs->problemLabel()->isHidden());
    EXPECT_TRUE(window.statusMessage().isEmpty()) << window.statusMessage().toStdString();
    // The heads grid does not call a dump of weights "MHA".
    auto* heads = qobject_cast<HeadsGridView*>(window.view(QStringLiteral("heads")));
    ASSERT_NE(heads, nullptr);
    heads->ensureFresh();
    EXPECT_FALSE(heads->heading().contains(QStringLiteral("MHA")))
        << heads->heading().toStdString();
    EXPECT_TRUE(heads->heading().contains(QStringLiteral("model_dump.npz")));
    // Flash, KV cache, RoPE and Compare need Q/K or a session: refused, tabs disabled.
    // Each view is a tab of its group's tab widget (found from the view upwards).
    auto tabsOf = [](QWidget* view) -> QTabWidget* {
        for (QWidget* up = view ? view->parentWidget() : nullptr; up; up = up->parentWidget())
            if (auto* tabs = qobject_cast<QTabWidget*>(up)) return tabs;
        return nullptr;
    };
    for (const char* id : {"flash", "kv-cache", "rope", "compare"}) {
        View* view = window.view(QString::fromLatin1(id));
        ASSERT_NE(view, nullptr) << id;
        EXPECT_FALSE(view->notApplicable().isEmpty()) << id;
        QTabWidget* tabs = tabsOf(view);
        ASSERT_NE(tabs, nullptr) << id;
        ASSERT_GE(tabs->indexOf(view), 0) << id;
        EXPECT_FALSE(tabs->isTabEnabled(tabs->indexOf(view))) << id;
    }
    View* heatmap = window.view(QStringLiteral("heatmap"));
    EXPECT_TRUE(heatmap->notApplicable().isEmpty());
    ASSERT_NE(tabsOf(heatmap), nullptr);
    EXPECT_TRUE(tabsOf(heatmap)->isTabEnabled(tabsOf(heatmap)->indexOf(heatmap)));
    // Editing the session goes back to the lab: the views apply again.
    document->modify([](Session& s) { s.heads = 2; }, QStringLiteral("heads"));
    document->flush();
    QCoreApplication::processEvents();
    EXPECT_TRUE(inputs->sourceNote()->isHidden());
    EXPECT_TRUE(window.view(QStringLiteral("flash"))->notApplicable().isEmpty());
}

TEST(WindowBugs, OneByOneHeatmapHasACellToDraw) {
    Session session;
    session.text = "cat";
    Document document;
    document.reset(session);
    document.flush();
    HeatmapView view(&document);
    view.ensureFresh();
    QCPColorMapData* cells = view.colorMap()->data();
    EXPECT_EQ(cells->keySize(), 1);
    EXPECT_EQ(cells->valueSize(), 1);
    // QCustomPlot draws a side of one cell with the width of its key range: it must be the
    // cell's own extent, not zero.
    EXPECT_DOUBLE_EQ(cells->keyRange().size(), 1.0);
    EXPECT_DOUBLE_EQ(cells->valueRange().size(), 1.0);
    EXPECT_DOUBLE_EQ(cells->cell(0, 0), 1.0); // one key: weight 1
}

TEST(WindowBugs, ToolBarUndoKeepsItsTextAndTellsWhatInItsTip) {
    MainWindow window;
    QAction* undo = window.undoButton();
    ASSERT_NE(undo, nullptr);
    const QString before = undo->text();
    EXPECT_FALSE(undo->isEnabled());
    window.document()->modify([](Session& s) { s.seed = 3; }, QStringLiteral("Change seed"));
    EXPECT_EQ(undo->text(), before);
    EXPECT_TRUE(undo->isEnabled());
    EXPECT_TRUE(undo->toolTip().contains(QStringLiteral("Change seed")));
    window.document()->undoStack()->undo();
    EXPECT_EQ(undo->text(), before);
    EXPECT_FALSE(undo->isEnabled());
}

/// True when no legend of `plot` overlaps the data area of an axis rect.
bool legendsClearOfData(QCustomPlot* plot) {
    plot->toPixmap(900, 600); // lays the plot out at a figure's size
    const QList<QCPLayoutElement*> elements = plot->plotLayout()->elements(true);
    int legends = 0;
    for (QCPLayoutElement* element : elements) {
        auto* legend = qobject_cast<QCPLegend*>(element);
        if (!legend || !legend->visible() || legend->itemCount() == 0) continue;
        ++legends;
        // Each entry is there once (a legend that collected every plottable repeated them).
        QSet<QString> names;
        for (int i = 0; i < legend->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) {
                const QString name = item->plottable()->name();
                if (name.isEmpty() || names.contains(name)) return false;
                names.insert(name);
            }
        for (QCPAxisRect* rect : plot->axisRects())
            if (legend->outerRect().intersects(rect->rect())) return false;
    }
    return legends > 0;
}

TEST(WindowBugs, LegendsOfEntropyAndKvCacheSitOutsideTheData) {
    Session session;
    session.mask.causal = true;
    session.kvPrefill = 2;
    session.heads = 4;
    session.kvHeads = 2;
    Document document;
    document.reset(session);
    document.flush();
    EntropyView entropy(&document);
    entropy.ensureFresh();
    EXPECT_TRUE(legendsClearOfData(entropy.plot()));
    KvCacheView kv(&document);
    kv.ensureFresh();
    EXPECT_TRUE(legendsClearOfData(kv.plot()));
}

TEST(WindowBugs, AboutNamesTheProjectVersion) {
    EXPECT_TRUE(MainWindow::aboutText().contains(QStringLiteral(ATTNLAB_PROJECT_VERSION)))
        << MainWindow::aboutText().toStdString();
}

TEST(WindowBugs, BothSteppersUseTheOneStepBar) {
    Session session;
    session.kvPrefill = 2;
    session.mask.causal = true;
    Document document;
    document.reset(session);
    document.flush();
    FlashStepperView flash(&document);
    KvCacheView kv(&document);
    flash.ensureFresh();
    kv.ensureFresh();
    ASSERT_NE(flash.stepControls(), nullptr);
    StepControls* kvBar = kv.findChild<StepControls*>();
    ASSERT_NE(kvBar, nullptr);
    EXPECT_EQ(flash.stepControls()->last(), flash.totalSteps());
    EXPECT_EQ(kvBar->last(), kv.stepCount() - 1);
    kvBar->stepForward(); // the bar asks, the view moves the session's step
    EXPECT_EQ(document.session().viewState.kvStep, 1);
    flash.stepControls()->stepForward();
    EXPECT_EQ(document.session().viewState.flashStep, 1);
}

TEST(WindowBugs, FlashWalkOfTheFocusedHeadIsMadeOnTheWorker) {
    Session session;
    session.heads = 2;
    session.variant = Variant::Flash;
    Document document;
    document.setWorkerThreshold(0); // everything goes to the worker
    document.reset(session);
    document.flush();
    ASSERT_NE(document.experiment(), nullptr);
    EXPECT_FALSE(document.experiment()->attention.flashTrace.has_value());
    int ready = 0;
    QObject::connect(&document, &Document::changed, [&ready](Document::What what) {
        if (what == Document::What::FlashWalk) ++ready;
    });
    document.requestFlashWalk();
    EXPECT_EQ(document.flashWalk(), nullptr); // asked, not computed on this thread
    ASSERT_TRUE(document.waitForIdle());
    EXPECT_EQ(ready, 1);
    const FlashWalk* walk = document.flashWalk();
    ASSERT_NE(walk, nullptr);
    // It is head 0's: its reference is head 0's standard attention output.
    const Experiment& ex = *document.experiment();
    EXPECT_LT((walk->reference() - headSlice(ex.attention.output, 0)).cwiseAbs().maxCoeff(), 1e-5);
    // Focusing the other head makes the walk stale until that head's walk is made.
    document.setFocusedHead(1);
    EXPECT_EQ(document.flashWalk(), nullptr);
    document.requestFlashWalk();
    ASSERT_TRUE(document.waitForIdle());
    ASSERT_NE(document.flashWalk(), nullptr);
    EXPECT_LT((document.flashWalk()->reference() - headSlice(ex.attention.output, 1))
                  .cwiseAbs()
                  .maxCoeff(),
              1e-5);
}

TEST(WindowBugs, EditsOfOneFieldMergeIntoOneUndoStep) {
    Document document;
    document.modify([](Session& s) { s.text = "a"; }, QStringLiteral("text"), EditMerge::Text);
    document.modify([](Session& s) { s.text = "a b"; }, QStringLiteral("text"), EditMerge::Text);
    EXPECT_EQ(document.undoStack()->count(), 1);
    document.modify([](Session& s) { s.qBlock = 3; }, QStringLiteral("q"), EditMerge::QueryBlock);
    document.modify([](Session& s) { s.kvBlock = 3; }, QStringLiteral("kv"),
                    EditMerge::KeyValueBlock);
    EXPECT_EQ(document.undoStack()->count(), 3);
    document.modify([](Session& s) { s.seed = 1; }, QStringLiteral("seed"));
    document.modify([](Session& s) { s.seed = 2; }, QStringLiteral("seed"));
    EXPECT_EQ(document.undoStack()->count(), 5); // None never merges
}

} // namespace
} // namespace attnlab::ui

namespace attnlab::ui {
namespace {

/// A window on screen and active, so window-wide shortcuts reach it.
void showActiveWindow(MainWindow& window) {
    window.resize(1280, 720);
    window.show();
    QApplication::setActiveWindow(&window);
    ASSERT_TRUE(QTest::qWaitForWindowActive(&window));
    window.document()->waitForIdle();
    QCoreApplication::processEvents();
}

void wheelOver(QWidget* widget, int steps) {
    const QPointF centre(widget->width() / 2.0, widget->height() / 2.0);
    QWheelEvent wheel(centre, widget->mapToGlobal(centre), QPoint(), QPoint(0, 120 * steps),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &wheel);
}

// Scrolling the inputs panel at 720 px passed the wheel to whichever spin box was under the
// pointer (dropout 0.10 -> 0.00); a field changes by the wheel only while it has focus.
TEST(WindowBugs, TheWheelChangesAFieldOnlyWhileItHasFocus) {
    MainWindow window;
    showActiveWindow(window);
    auto* inputs = window.findChild<InputsPanel*>();
    ASSERT_NE(inputs, nullptr);
    QSpinBox* heads = inputs->headsSpin();
    inputs->textEdit()->setFocus();
    const int before = heads->value();
    wheelOver(heads, -1);
    EXPECT_EQ(heads->value(), before) << "changed without focus";
    QComboBox* variant = inputs->variantCombo();
    const int variantBefore = variant->currentIndex();
    wheelOver(variant, -1);
    EXPECT_EQ(variant->currentIndex(), variantBefore);

    heads->setFocus();
    wheelOver(heads, 1);
    EXPECT_NE(heads->value(), before) << "the focused field follows the wheel";
}

// Ctrl+E did nothing while a text or number field had focus (the field took it as "end of
// line"); the field keeps its editing keys.
TEST(WindowBugs, MenuShortcutsWorkWhileAFieldHasFocus) {
    MainWindow window;
    showActiveWindow(window);
    QAction* exportFigure = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
        if (action->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_E)) exportFigure = action;
    ASSERT_NE(exportFigure, nullptr);
    QObject::disconnect(exportFigure, &QAction::triggered, nullptr, nullptr); // no dialog
    QSignalSpy triggered(exportFigure, &QAction::triggered);
    auto* inputs = window.findChild<InputsPanel*>();
    QLineEdit* text = inputs->textEdit();
    text->setFocus();
    QTest::keyClick(text, Qt::Key_E, Qt::ControlModifier);
    EXPECT_EQ(triggered.count(), 1) << "Ctrl+E in the text field";
    inputs->headsSpin()->setFocus();
    QTest::keyClick(inputs->headsSpin(), Qt::Key_E, Qt::ControlModifier);
    EXPECT_EQ(triggered.count(), 2) << "Ctrl+E in a number field";

    text->setFocus();
    QTest::keyClick(text, Qt::Key_A, Qt::ControlModifier);
    EXPECT_EQ(text->selectedText(), text->text()) << "Ctrl+A still selects the field's text";
}

// PageDown after choosing a variant changed the variant; it turns the panel's page instead.
TEST(WindowBugs, PageDownOnAComboBoxDoesNotChangeIt) {
    MainWindow window;
    showActiveWindow(window);
    QComboBox* variant = window.findChild<InputsPanel*>()->variantCombo();
    variant->setFocus();
    const int before = variant->currentIndex();
    QTest::keyClick(variant, Qt::Key_PageDown);
    QTest::keyClick(variant, Qt::Key_PageDown);
    EXPECT_EQ(variant->currentIndex(), before);
    QTest::keyClick(variant, Qt::Key_Down);
    EXPECT_NE(variant->currentIndex(), before) << "arrows still choose";
}

// Rows of controls (the step bar, the view groups, next token's sampling, the dump
// difference's choice, the head-roles probe) set the window's least width: 1 251 px in the
// projector theme, past a 1024 x 768 projector's screen. They wrap now.
TEST(WindowBugs, EveryViewFitsA1024PixelProjector) {
    for (const char* language : {"en", "zh_CN"}) {
        ASSERT_TRUE(setLanguage(QString::fromLatin1(language)));
        {
            MainWindow window;
            window.setTheme(QStringLiteral("projector"), false);
            window.resize(1024, 768);
            window.show();
            for (const ViewEntry& entry : viewRegistry()) {
                window.showView(entry.id);
                window.view(entry.id)->ensureFresh();
                QCoreApplication::processEvents();
                EXPECT_LE(window.minimumSizeHint().width(), 1024) << language << " " << entry.id.toStdString();
                EXPECT_LE(window.width(), 1024) << language << " " << entry.id.toStdString();
            }
        }
    }
    setLanguage(QStringLiteral("en"));
}

} // namespace
} // namespace attnlab::ui

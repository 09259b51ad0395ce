// The views in named groups (issue 12, item 4): every registered view sits in exactly one
// group, each group's tab widget holds that group's views and no more than seven; selecting a
// view by name (showView, the document's view state, a lesson step) brings its group and the
// view to the front; Alt+1..4, Ctrl+1..9, Ctrl+PgDown/PgUp and Ctrl+Tab navigate; in the
// projector theme at 1280 x 720 no group's tab bar needs its scroll arrows, in either language.
#include "status_assert.h"
#include "ui/window/main_window.h"

#include <QAbstractButton>
#include <QApplication>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QTabBar>
#include <QTabWidget>
#include <QTest>

#include <gtest/gtest.h>

#include "small_dump.h"
#include "ui/state/document.h"
#include "ui/state/dump_document.h"
#include "ui/state/model_document.h"
#include "ui/views/head_roles_view.h"
#include "ui/views/view.h"
#include "ui/views/view_registry.h"
#include "ui/window/language.h"
#include "ui/window/lesson_panel.h"
#include "ui/widgets/theme.h"

namespace attnlab::ui {
namespace {

/// The tab widget a view is a page of (found from the view upwards, as a user sees it).
QTabWidget* tabsHolding(const QWidget* view) {
    for (QWidget* up = view ? view->parentWidget() : nullptr; up; up = up->parentWidget())
        if (auto* tabs = qobject_cast<QTabWidget*>(up)) return tabs;
    return nullptr;
}

/// The view ids of a tab widget's pages, in tab order.
QStringList pageIds(const QTabWidget* tabs) {
    QStringList ids;
    for (int i = 0; i < tabs->count(); ++i)
        if (auto* page = qobject_cast<View*>(tabs->widget(i))) ids << page->viewId();
    return ids;
}

/// The checked group button's text, and how many are checked.
QStringList checkedGroupButtons(const MainWindow& window) {
    QStringList checked;
    for (QAbstractButton* button : window.findChildren<QAbstractButton*>())
        if (button->objectName().startsWith(QLatin1String("ViewGroup_")) && button->isChecked())
            checked << button->objectName().mid(10);
    return checked;
}

/// The session's run and a model's load and run finished (a lesson's step may open a model,
/// which loads on a worker) and their results shown.
void settle(MainWindow& window) {
    for (int i = 0; i < 3; ++i) {
        window.document()->waitForIdle();
        ASSERT_TRUE(ModelDocument::of(window.document())->waitForIdle());
        QCoreApplication::processEvents();
    }
}

/// A window on screen and active, so window-wide shortcuts reach it.
void showActive(MainWindow& window) {
    window.resize(1280, 720);
    window.show();
    QApplication::setActiveWindow(&window);
    ASSERT_TRUE(QTest::qWaitForWindowActive(&window));
    settle(window);
}

struct EnglishAfterwards {
    ~EnglishAfterwards() { setLanguage(QStringLiteral("en")); }
};

TEST(ViewGroups, EveryRegisteredViewIsInExactlyOneGroup) {
    // The registry: four groups, each view in one of them, the members where it
    // names them; what a loaded model predicts has a group of its own.
    EXPECT_EQ(viewGroupIds(), (QStringList{QStringLiteral("attention"), QStringLiteral("steps"),
                                           QStringLiteral("model"), QStringLiteral("probe")}));
    QStringList union_;
    for (const QString& group : viewGroupIds()) {
        EXPECT_FALSE(viewGroupTitle(group).isEmpty()) << group.toStdString();
        EXPECT_FALSE(viewGroupDescription(group).isEmpty()) << group.toStdString();
        const QStringList members = viewIdsInGroup(group);
        EXPECT_GE(members.size(), 1) << group.toStdString();
        EXPECT_LE(members.size(), 7) << group.toStdString();
        union_ << members;
    }
    EXPECT_EQ(union_.size(), viewIds().size());
    const QStringList all = viewIds();
    EXPECT_EQ(QSet<QString>(union_.begin(), union_.end()), QSet<QString>(all.begin(), all.end()));
    for (const char* id : {"heatmap", "heads", "lines", "entropy", "statistics", "compare"})
        EXPECT_EQ(viewGroupOf(QString::fromLatin1(id)), QStringLiteral("attention")) << id;
    for (const char* id : {"flash", "kv-cache", "rope", "complexity"})
        EXPECT_EQ(viewGroupOf(QString::fromLatin1(id)), QStringLiteral("steps")) << id;
    for (const char* id : {"model", "aggregate", "head-stats", "dump-difference"})
        EXPECT_EQ(viewGroupOf(QString::fromLatin1(id)), QStringLiteral("model")) << id;
    for (const char* id :
         {"next-token", "head-roles", "translation", "fill-mask", "logit-lens", "attribution",
          "patching"})
        EXPECT_EQ(viewGroupOf(QString::fromLatin1(id)), QStringLiteral("probe")) << id;
    EXPECT_TRUE(viewGroupOf(QStringLiteral("no-such-view")).isEmpty());

    // The window: each view a page of one tab widget, one tab widget per group, holding
    // exactly the group's views in the registry's order.
    MainWindow window;
    QSet<QTabWidget*> widgets;
    int pages = 0;
    for (const QString& id : viewIds()) {
        View* view = window.view(id);
        ASSERT_NE(view, nullptr) << id.toStdString();
        QTabWidget* tabs = tabsHolding(view);
        ASSERT_NE(tabs, nullptr) << id.toStdString();
        EXPECT_EQ(pageIds(tabs), viewIdsInGroup(viewGroupOf(id))) << id.toStdString();
        if (!widgets.contains(tabs)) pages += tabs->count();
        widgets.insert(tabs);
    }
    EXPECT_EQ(widgets.size(), static_cast<int>(viewGroups().size()));
    EXPECT_EQ(pages, viewIds().size());
    // One button per group, named in the current language.
    for (const QString& group : viewGroupIds()) {
        auto* button =
            window.findChild<QAbstractButton*>(QStringLiteral("ViewGroup_%1").arg(group));
        ASSERT_NE(button, nullptr) << group.toStdString();
        EXPECT_EQ(button->text(), viewGroupTitle(group));
        EXPECT_TRUE(button->toolTip().contains(QStringLiteral("Alt+"))) << group.toStdString();
    }
}

TEST(ViewGroups, SelectingAViewByNameBringsItsGroupAndTheViewToTheFront) {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    settle(window);
    // Every view by name: showView as "show this view" actions do, then through the document
    // as lessons, dumps and the head-roles double-click do.
    for (const QString& id : viewIds()) {
        SCOPED_TRACE(id.toStdString());
        window.showView(id);
        ASSERT_NE(window.currentView(), nullptr);
        EXPECT_EQ(window.currentView()->viewId(), id);
        EXPECT_EQ(window.currentGroup(), viewGroupOf(id));
        EXPECT_EQ(window.document()->session().viewState.view, id.toStdString());
        EXPECT_EQ(checkedGroupButtons(window), QStringList{viewGroupOf(id)});
        EXPECT_TRUE(window.view(id)->isVisible());
        EXPECT_TRUE(tabsHolding(window.view(id))->isVisible());
    }
    for (const QString& id : {QStringLiteral("kv-cache"), QStringLiteral("heatmap"),
                              QStringLiteral("next-token"), QStringLiteral("statistics")}) {
        SCOPED_TRACE(id.toStdString());
        ViewState state = window.document()->session().viewState;
        state.view = id.toStdString();
        window.document()->setViewState(state);
        QCoreApplication::processEvents();
        EXPECT_EQ(window.currentView()->viewId(), id);
        EXPECT_EQ(window.currentGroup(), viewGroupOf(id));
        EXPECT_EQ(checkedGroupButtons(window), QStringList{viewGroupOf(id)});
        EXPECT_TRUE(window.view(id)->isVisible());
    }
    // A group remembers its view: back to Step through after a detour shows KV cache again.
    window.showView(QStringLiteral("kv-cache"));
    ASSERT_TRUE(window.showGroup(QStringLiteral("attention")));
    EXPECT_EQ(window.currentView()->viewId(), QStringLiteral("statistics"));
    ASSERT_TRUE(window.showGroup(QStringLiteral("steps")));
    EXPECT_EQ(window.currentView()->viewId(), QStringLiteral("kv-cache"));
    EXPECT_EQ(window.document()->session().viewState.view, "kv-cache");
    EXPECT_FALSE(window.showGroup(QStringLiteral("no-such-group")));
    // Clicking a group button is the same as showGroup.
    auto* modelButton = window.findChild<QAbstractButton*>(QStringLiteral("ViewGroup_model"));
    ASSERT_NE(modelButton, nullptr);
    modelButton->click();
    EXPECT_EQ(window.currentGroup(), QStringLiteral("model"));
    EXPECT_EQ(viewGroupOf(window.currentView()->viewId()), QStringLiteral("model"));
    // Undo walks the view back, group and all (a view change is part of the session).
    window.showView(QStringLiteral("rope"));
    EXPECT_EQ(window.currentGroup(), QStringLiteral("steps"));
}

TEST(ViewGroups, ShowingAHeadFromAnotherGroupOpensTheHeatmap) {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    settle(window);
    // Head roles (Real model): double-clicking a head shows it in the heatmap (Attention).
    window.showView(QStringLiteral("head-roles"));
    auto* roles = qobject_cast<HeadRolesView*>(window.view(QStringLiteral("head-roles")));
    ASSERT_NE(roles, nullptr);
    emit roles->focusRequested(0, 0);
    QCoreApplication::processEvents();
    EXPECT_EQ(window.currentView()->viewId(), QStringLiteral("heatmap"));
    EXPECT_EQ(window.currentGroup(), QStringLiteral("attention"));
    EXPECT_EQ(checkedGroupButtons(window), QStringList{QStringLiteral("attention")});
    EXPECT_TRUE(window.view(QStringLiteral("heatmap"))->isVisible());
}

TEST(ViewGroups, LessonsOpenTheirViewsAcrossGroups) {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    auto* panel = window.findChild<LessonPanel*>();
    ASSERT_NE(panel, nullptr);
    // The lessons whose steps move between groups (a step in Attention, the next in Step
    // through ...): each step's view and group in front, whatever was in front before.
    int lessonsAcrossGroups = 0;
    for (const QString& path : LessonPanel::bundledLessons()) {
        ASSERT_TRUE(succeeded(panel->openLesson(path)));
        const Lesson* lesson = panel->lesson();
        ASSERT_NE(lesson, nullptr);
        QSet<QString> groups;
        for (const LessonStep& step : lesson->steps)
            groups.insert(viewGroupOf(QString::fromStdString(step.session.viewState.view)));
        if (groups.size() < 2) continue;
        ++lessonsAcrossGroups;
        SCOPED_TRACE(path.toStdString());
        for (int i = 0; i < panel->stepCount(); ++i) {
            SCOPED_TRACE("step " + std::to_string(i + 1));
            ASSERT_TRUE(succeeded(panel->goToStep(i)));
            settle(window);
            const QString id = QString::fromStdString(
                lesson->steps[static_cast<std::size_t>(i)].session.viewState.view);
            ASSERT_NE(window.currentView(), nullptr);
            EXPECT_EQ(window.currentView()->viewId(), id);
            EXPECT_EQ(window.currentGroup(), viewGroupOf(id));
            EXPECT_EQ(checkedGroupButtons(window), QStringList{viewGroupOf(id)});
            EXPECT_TRUE(window.view(id)->isVisible());
        }
    }
    // The bundled lessons do cross groups (05: heads, kv-cache, compare), so this measured
    // something.
    EXPECT_GE(lessonsAcrossGroups, 3);
}

TEST(ViewGroups, KeyboardMovesThroughViewsAndGroups) {
    MainWindow window;
    showActive(window);
    // The order the class sees: group by group, tab by tab.
    QStringList order;
    for (const QString& group : viewGroupIds())
        order << viewIdsInGroup(group);
    ASSERT_EQ(order.size(), viewIds().size());
    window.showView(order.first());
    // Ctrl+PgDown through every view (no view is refused in the default session), across the
    // group boundaries, wrapping at the end; Ctrl+PgUp back.
    for (int i = 1; i <= order.size(); ++i) {
        QTest::keyClick(&window, Qt::Key_PageDown, Qt::ControlModifier);
        const QString expected = order[i % order.size()];
        ASSERT_NE(window.currentView(), nullptr);
        EXPECT_EQ(window.currentView()->viewId(), expected) << "after " << i << " Ctrl+PgDown";
        EXPECT_EQ(window.currentGroup(), viewGroupOf(expected));
    }
    QTest::keyClick(&window, Qt::Key_PageUp, Qt::ControlModifier);
    EXPECT_EQ(window.currentView()->viewId(), order.last());
    QTest::keyClick(&window, Qt::Key_Tab, Qt::ControlModifier);
    EXPECT_EQ(window.currentView()->viewId(), order.first());
    QTest::keyClick(&window, Qt::Key_Backtab, Qt::ControlModifier | Qt::ShiftModifier);
    EXPECT_EQ(window.currentView()->viewId(), order.last());

    // Alt+1..4: a group; Ctrl+N: the group's N-th view.
    const QStringList groups = viewGroupIds();
    for (int g = 0; g < groups.size(); ++g) {
        SCOPED_TRACE(groups[g].toStdString());
        QTest::keyClick(&window, static_cast<Qt::Key>(Qt::Key_1 + g), Qt::AltModifier);
        EXPECT_EQ(window.currentGroup(), groups[g]);
        const QStringList members = viewIdsInGroup(groups[g]);
        for (int n = members.size() - 1; n >= 0; --n) {
            QTest::keyClick(&window, static_cast<Qt::Key>(Qt::Key_1 + n), Qt::ControlModifier);
            EXPECT_EQ(window.currentView()->viewId(), members[n]) << "Ctrl+" << n + 1;
        }
        // Ctrl+N past the group's last view does nothing.
        QTest::keyClick(&window, static_cast<Qt::Key>(Qt::Key_1 + members.size()),
                        Qt::ControlModifier);
        EXPECT_EQ(window.currentView()->viewId(), members.first());
    }
    // The View menu lists each group's views, with Ctrl+N on the group in front only.
    QMenu* viewMenu = nullptr;
    for (QAction* action : window.menuBar()->actions())
        if (action->menu() && action->text().remove(QLatin1Char('&')) == QLatin1String("View"))
            viewMenu = action->menu();
    ASSERT_NE(viewMenu, nullptr);
    QStringList groupTitles;
    for (const QString& group : viewGroupIds())
        groupTitles << viewGroupTitle(group);
    int listed = 0;
    for (QAction* action : viewMenu->actions()) {
        QMenu* sub = action->menu();
        if (!sub || !groupTitles.contains(sub->title())) continue; // Theme, Language
        const bool front = sub->title() == viewGroupTitle(window.currentGroup());
        for (QAction* item : sub->actions()) {
            ++listed;
            EXPECT_EQ(item->shortcut().isEmpty(), !front) << item->text().toStdString();
        }
    }
    EXPECT_EQ(listed, viewIds().size());
}

TEST(ViewGroups, NextViewSkipsViewsThatDoNotApply) {
    MainWindow window;
    showActive(window);
    // A dump on screen: FlashAttention, KV cache, RoPE, Compare ... cannot draw it.
    DumpDocument::of(window.document())->showAttention(test::uniformDump());
    settle(window);
    QStringList order;
    for (const QString& group : viewGroupIds())
        order << viewIdsInGroup(group);
    QStringList applicable;
    for (const QString& id : order)
        if (window.view(id)->notApplicable().isEmpty()) applicable << id;
    ASSERT_LT(applicable.size(), order.size()); // some views are refused: this tests skipping
    ASSERT_GE(applicable.size(), 2);
    window.showView(applicable.first());
    for (int i = 1; i <= applicable.size(); ++i) {
        QTest::keyClick(&window, Qt::Key_PageDown, Qt::ControlModifier);
        EXPECT_EQ(window.currentView()->viewId(), applicable[i % applicable.size()]);
    }
    // A group whose remembered view is refused opens on one that applies.
    window.showView(QStringLiteral("flash"));
    ASSERT_FALSE(window.view(QStringLiteral("flash"))->notApplicable().isEmpty());
    window.showView(applicable.first());
    for (const QString& group : viewGroupIds()) {
        QStringList usable;
        for (const QString& id : viewIdsInGroup(group))
            if (applicable.contains(id)) usable << id;
        if (usable.isEmpty()) continue;
        window.showGroup(group);
        EXPECT_TRUE(usable.contains(window.currentView()->viewId()))
            << group.toStdString() << ": " << window.currentView()->viewId().toStdString();
    }
}

TEST(ViewGroups, TabBarsFitAProjectorAt1280InBothLanguages) {
    const EnglishAfterwards restore;
    for (const QString& language : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
        SCOPED_TRACE(language.toStdString());
        ASSERT_TRUE(setLanguage(language));
        MainWindow window;
        window.setTheme(QStringLiteral("projector"), false);
        window.resize(1280, 720);
        window.show();
        for (const QString& group : viewGroupIds()) {
            SCOPED_TRACE(group.toStdString());
            ASSERT_TRUE(window.showGroup(group));
            settle(window);
            EXPECT_LE(window.width(), 1280);
            QTabWidget* tabs = tabsHolding(window.view(viewIdsInGroup(group).first()));
            ASSERT_NE(tabs, nullptr);
            // Every tab whole on screen: the bar needs no more than it has (no scroll arrows).
            QTabBar* bar = tabs->tabBar();
            const int needed = bar->sizeHint().width(); // every tab at its size
            EXPECT_LE(needed, bar->width())
                << "tabs need " << needed << " px, bar has " << bar->width();
            EXPECT_LE(bar->tabRect(bar->count() - 1).right(), bar->width());
            // The group buttons in one row, whole.
            for (const QString& other : viewGroupIds()) {
                auto* button =
                    window.findChild<QAbstractButton*>(QStringLiteral("ViewGroup_%1").arg(other));
                ASSERT_NE(button, nullptr);
                EXPECT_GE(button->width(), button->sizeHint().width()) << other.toStdString();
            }
        }
        window.setTheme(QStringLiteral("light"), false);
    }
}

} // namespace
} // namespace attnlab::ui

// Presentation: the theme is the application's preference (an example, a session file or an
// undo never changes it), the window in the projector theme fits a 1280 x 720 projector with
// any view in front and comes back to its light minimum, F11 hides the inputs, and the title
// names the session and the lesson.

#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLayout>
#include <QScreen>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolBar>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <algorithm>

#include <ostream>

#include "ui/state/document.h"
#include "ui/state/model_document.h"
#include "ui/views/view.h"
#include "ui/views/view_registry.h"
#include "ui/window/inputs_panel.h"
#include "ui/window/language.h"
#include "ui/window/main_window.h"
#include "ui/window/model_tool_bar.h"
#include "ui/widgets/theme.h"

// Sizes print as WxH in failures.
static void PrintTo(const QSize& size, std::ostream* out) {
    *out << size.width() << 'x' << size.height();
}

namespace attnlab::ui {
namespace {

void settle() {
    for (int i = 0; i < 3; ++i)
        QApplication::processEvents();
}

TEST(Presentation, ThemeIsAnApplicationPreferenceNotPartOfASession) {
    MainWindow window;
    window.setTheme(QStringLiteral("projector"), false);
    EXPECT_EQ(window.document()->theme(), QStringLiteral("projector"));
    EXPECT_EQ(window.document()->session().viewState.theme, "projector");

    // Every bundled example says "theme": "light".
    ASSERT_TRUE(window.openExample(QStringLiteral(":/examples/cat_full_vs_causal.json")));
    EXPECT_EQ(window.document()->theme(), QStringLiteral("projector"));
    EXPECT_EQ(window.document()->session().viewState.theme, "projector");
    EXPECT_EQ(QApplication::font().pointSize(),
              themeNamed(QStringLiteral("projector")).fontPointSize);

    // An old session file that carries a theme is still read; its theme is ignored.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("dark.json"));
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(R"({"attnlab_session": 1, "tokens": {"text": "a dark night"},
                   "view": {"view": "entropy", "theme": "dark", "colormap": "magma"}})");
    file.close();
    ASSERT_TRUE(window.openSession(path));
    EXPECT_EQ(window.document()->session().text, "a dark night");
    EXPECT_EQ(window.document()->session().viewState.colormap, "magma");
    EXPECT_EQ(window.document()->theme(), QStringLiteral("projector"));

    // Undo restores sessions, not the theme; changing the theme is not an edit.
    window.document()->modify([](Session& s) { s.text = "a bright day"; }, QStringLiteral("edit"));
    window.setTheme(QStringLiteral("dark"), false);
    EXPECT_EQ(window.document()->undoStack()->count(), 1);
    window.document()->undoStack()->undo();
    EXPECT_EQ(window.document()->session().text, "a dark night");
    EXPECT_EQ(window.document()->theme(), QStringLiteral("dark"));
    EXPECT_EQ(window.document()->session().viewState.theme, "dark");
    window.setTheme(QStringLiteral("light"), false);
}

TEST(Presentation, ProjectorThemeFits1280x720OnEveryTabAndSwitchingBackRestoresLight) {
    // In English and in Chinese (other words, other widths).
    for (const QString& language : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
        SCOPED_TRACE(language.toStdString());
        ASSERT_TRUE(setLanguage(language));
        MainWindow window;
        window.setTheme(QStringLiteral("light"), false);
        window.resize(1280, 720);
        window.show();
        // Every view, group by group (showView brings its group to the front).
        const QStringList ids = viewIds();
        // Every view drawn once first: a view's minimum is what it shows, not its empty state.
        for (const QString& id : ids) {
            window.showView(id);
            settle();
        }
        std::vector<QSize> light;
        for (const QString& id : ids) {
            window.showView(id);
            settle();
            light.push_back(window.minimumSizeHint());
        }

        window.setTheme(QStringLiteral("projector"), false);
        settle();
        // The projector theme really is larger: this test measures something.
        EXPECT_GT(QApplication::font().pointSize(), 12);
        for (const QString& id : ids) {
            window.showView(id);
            settle();
            ASSERT_EQ(window.currentView(), window.view(id));
            const QSize minimum = window.minimumSizeHint();
            EXPECT_LE(minimum.width(), 1280) << id.toStdString();
            EXPECT_LE(minimum.height(), 720) << id.toStdString();
            // What the layout really enforces, explicit minimum sizes of views included.
            const QSize enforced = window.layout()->totalMinimumSize();
            EXPECT_LE(enforced.width(), 1280) << id.toStdString();
            EXPECT_LE(enforced.height(), 720) << id.toStdString();
        }

        window.setTheme(QStringLiteral("light"), false);
        settle();
        // Hidden views redraw when shown (a view's size follows what it draws): all once.
        for (const QString& id : ids) {
            window.showView(id);
            settle();
        }
        for (std::size_t i = 0; i < static_cast<std::size_t>(ids.size()); ++i) {
            window.showView(ids[static_cast<qsizetype>(i)]);
            settle();
            EXPECT_EQ(window.minimumSizeHint(), light[i])
                << ids[static_cast<qsizetype>(i)].toStdString() << ": inputs "
                << window.inputsPanel()->minimumWidth() << ", views "
                << window.centralWidget()->minimumSizeHint().width();
        }
    }
    setLanguage(QStringLiteral("en"));
}

/// Checks that every control of the window's shown tool bars is on screen (not behind a tool
/// bar's extension) and inside the window; returns how many there are.
int expectToolBarControlsOnScreen(const MainWindow& window) {
    int controls = 0;
    for (const QToolBar* bar : window.findChildren<QToolBar*>()) {
        if (!bar->isVisible()) continue;
        for (QAction* action : bar->actions()) {
            if (!action->isVisible() || action->isSeparator()) continue;
            const QWidget* widget = bar->widgetForAction(action);
            if (!widget) {
                ADD_FAILURE() << bar->objectName().toStdString() << ": no widget";
                continue;
            }
            const auto* label = qobject_cast<const QLabel*>(widget);
            const std::string name = bar->objectName().toStdString() + ": " +
                                     (label ? label->text() : action->text()).toStdString();
            EXPECT_TRUE(widget->isVisible()) << name << " is behind the extension";
            const QRect shown(widget->mapTo(&window, QPoint(0, 0)), widget->size());
            EXPECT_TRUE(window.rect().contains(shown)) << name;
            ++controls;
        }
    }
    return controls;
}

// In the projector theme Head, Colours and Theme hid behind the tool bar's "\u00bb" at
// 1280 x 720 (#37, item 14): with the lab's session and with a model open, every tool bar's
// controls are on screen.
TEST(Presentation, EveryToolBarControlIsOnScreenInTheProjectorThemeAt1280x720) {
    for (const QString& language : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
        SCOPED_TRACE(language.toStdString());
        ASSERT_TRUE(setLanguage(language));
        MainWindow window;
        window.setTheme(QStringLiteral("projector"), false);
        window.resize(1280, 720);
        window.show();
        settle();
        ASSERT_EQ(window.size(), QSize(1280, 720));
        {
            SCOPED_TRACE("the lab's session");
            EXPECT_GE(expectToolBarControlsOnScreen(window), 10); // the display's
        }
        ModelDocument* models = ModelDocument::of(window.document());
        models->openModel(bundledModelDirectory());
        ASSERT_TRUE(models->waitForIdle());
        settle();
        {
            SCOPED_TRACE("a model");
            EXPECT_GE(expectToolBarControlsOnScreen(window), 14); // the display's and the model's
        }
        window.setTheme(QStringLiteral("light"), false);
    }
    setLanguage(QStringLiteral("en"));
}

// A window larger than the screen hides its own edges (a 1280 x 720 projector with no window
// manager opened 1400 x 880): the first size fits the screen's available area.
TEST(Presentation, TheFirstSizeFitsTheScreen) {
    const QScreen* screen = QGuiApplication::primaryScreen();
    ASSERT_NE(screen, nullptr);
    const QSize available = screen->availableGeometry().size();
    MainWindow window;
    EXPECT_LE(window.width(), available.width());
    EXPECT_LE(window.height(), available.height());
    // On a large screen it keeps its roomy default rather than shrinking to nothing.
    EXPECT_EQ(window.width(), std::min(1400, available.width()));
    EXPECT_EQ(window.height(), std::min(880, available.height()));
}

// A dock paints its title in the platform's small title font unless it has a font of its own:
// in the projector theme each dock has one, of the theme's size.
TEST(Presentation, DockTitlesAreProjectorSized) {
    MainWindow window;
    window.setTheme(QStringLiteral("projector"), false);
    const QList<QDockWidget*> docks = window.findChildren<QDockWidget*>();
    ASSERT_FALSE(docks.isEmpty());
    for (const QDockWidget* dock : docks) {
        EXPECT_GE(dock->font().pointSizeF(), themeNamed(QStringLiteral("projector")).fontPointSize)
            << dock->objectName().toStdString();
        EXPECT_NE(dock->font(), QApplication::font("QDockWidget"))
            << "the title would be painted in the small title font";
    }
    window.setTheme(QStringLiteral("light"), false);
}

TEST(Presentation, F11HidesTheInputsAndComesBack) {
    MainWindow window;
    window.show();
    settle();
    auto* dock = qobject_cast<QDockWidget*>(window.inputsPanel()->parentWidget());
    ASSERT_NE(dock, nullptr);
    ASSERT_TRUE(dock->isVisible());
    window.setPresentationMode(true);
    settle();
    EXPECT_TRUE(window.presentationMode());
    EXPECT_FALSE(dock->isVisible());
    window.setPresentationMode(false);
    settle();
    EXPECT_FALSE(window.presentationMode());
    EXPECT_TRUE(dock->isVisible());
}

TEST(Presentation, TitleNamesTheSessionAndTheLesson) {
    MainWindow window;
    ASSERT_TRUE(window.openExample(QStringLiteral(":/examples/mha_gqa_mqa.json")));
    const QString sessionTitle = QString::fromStdString(window.document()->session().title);
    ASSERT_FALSE(sessionTitle.isEmpty());
    EXPECT_TRUE(window.windowTitle().contains(sessionTitle)) << window.windowTitle().toStdString();
    window.setLessonTitle(QStringLiteral("Grouped-query attention"));
    EXPECT_TRUE(window.windowTitle().contains(QStringLiteral("Grouped-query attention")));
    EXPECT_TRUE(window.windowTitle().contains(sessionTitle));
    window.setLessonTitle(QString());
    EXPECT_FALSE(window.windowTitle().contains(QStringLiteral("Grouped-query attention")));
}

} // namespace
} // namespace attnlab::ui

#include "ui/window/main_window.h"

#include <algorithm>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QButtonGroup>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QScreen>
#include <QUndoStack>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "ui/export/figure_export.h"
#include "ui/export/step_export.h"
#include "ui/state/document.h"
#include "ui/state/dump_document.h"
#include "ui/state/model_document.h"
#include "ui/views/colormap.h"
#include "ui/views/compare_view.h"
#include "ui/views/flow_layout.h"
#include "ui/views/heads_grid_view.h"
#include "ui/views/plot_captions.h"
#include "ui/views/view.h"
#include "ui/views/view_registry.h"
#include "ui/widgets/theme.h"
#include "ui/window/color_range_dialog.h"
#include "ui/window/dump_tool_bar.h"
#include "ui/window/input_guard.h"
#include "ui/window/inputs_panel.h"
#include "ui/window/language.h"
#include "ui/window/lesson_panel.h"
#include "ui/window/model_tool_bar.h"

namespace attnlab::ui {

namespace {

constexpr int kMaxRecent = 8;
const char* const kRecentKey = "recentFiles";
const char* const kThemeKey = "theme";

struct ExampleInfo {
    const char* file;
    const char* title;
    const char* view;
    Comparison comparison;
};

// The bundled lessons: the file in resources/examples, its menu title, the view it opens in.
const ExampleInfo kExamples[] = {
    {"cat_full_vs_causal",
     QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "The cat sat on the mat: full vs causal"),
     "compare", Comparison::FullVsCausal},
    {"padding_valid_lengths",
     QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "Padding with a valid length"), "heatmap",
     Comparison::None},
    {"cross_attention_translation",
     QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "Cross-attention: translation"), "heatmap",
     Comparison::None},
    {"mha_gqa_mqa", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "MHA vs GQA vs MQA"), "heads",
     Comparison::MhaVsGqa},
    {"sliding_window", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "Sliding window"), "heatmap",
     Comparison::None},
    {"linear_vs_softmax", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "Linear vs softmax"),
     "compare", Comparison::SoftmaxVsLinear},
    {"rope_relative_positions",
     QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "RoPE: relative positions"), "compare",
     Comparison::NoneVsRope},
};

struct ShowOption {
    const char* id;
    const char* label;
};
const ShowOption kShowOptions[] = {
    {"weights", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "weights")},
    {"scores", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "raw scores q\u00b7k")},
    {"scaled", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "scaled scores")},
    {"mask", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "mask")},
    {"output", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "output")},
    {"q", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "Q")},
    {"k", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "K")},
    {"v", QT_TRANSLATE_NOOP("attnlab::ui::MainWindow", "V")},
};

} // namespace

/// The status bar's problem line: as much of its message as the bar's width holds, cut at the
/// end with "…" rather than mid-word by the bar's edge. Its owner puts the whole message
/// in the tool tip.
class StatusLabel : public QLabel {
public:
    using QLabel::QLabel;

    const QString& message() const { return m_message; }
    void setMessage(const QString& message) {
        m_message = message;
        elide();
    }
    // Any width will do: the message is cut to the width the bar gives.
    QSize minimumSizeHint() const override { return {0, QLabel::minimumSizeHint().height()}; }
    QSize sizeHint() const override { return {0, QLabel::sizeHint().height()}; }

protected:
    void resizeEvent(QResizeEvent* event) override {
        QLabel::resizeEvent(event);
        elide();
    }
    void changeEvent(QEvent* event) override {
        QLabel::changeEvent(event);
        if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) elide();
    }

private:
    void elide() {
        const QString shown =
            fontMetrics().elidedText(m_message, Qt::ElideRight, contentsRect().width());
        if (shown != text()) setText(shown);
    }

    QString m_message;
};

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), m_document(new Document(this)) {
    setObjectName(QStringLiteral("AttnLabMainWindow"));
    // Before the lesson's key filter: filters installed later see keys first, so a lesson's
    // PageDown still turns its page while a combo box has focus.
    new InputGuard(this);
    createViewTabs();
    // Captions wrap to the plot's width and no plot's minimum grows with its caption or the
    // projector's font, so the window fits a 1280 x 720 projector.
    for (QCustomPlot* plot : m_groupStack->findChildren<QCustomPlot*>())
        fitPlotCaptions(plot);
    // A line above the views says when the figure is out of date (the settings have a problem:
    // the last good result stays) or when the view in front does not apply to what is shown.
    m_banner = new QLabel(this);
    m_banner->setWordWrap(true);
    m_banner->setStyleSheet(QStringLiteral(
        "QLabel { background: #fff3cd; color: #5c4400; padding: 4px 8px; font-weight: bold; }"));
    m_banner->setVisible(false);
    auto* central = new QWidget(this);
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    centralLayout->addWidget(m_banner);
    centralLayout->addWidget(m_groupBar);
    centralLayout->addWidget(m_groupStack, 1);
    setCentralWidget(central);

    m_inputs = new InputsPanel(m_document, this);
    auto* dock = new QDockWidget(tr("Inputs"), this);
    dock->setObjectName(QStringLiteral("InputsDock"));
    dock->setWidget(m_inputs);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    m_inputsDock = dock;

    m_error = new StatusLabel(this);
    m_error->setObjectName(QStringLiteral("StatusError"));
    m_error->setStyleSheet(QStringLiteral("QLabel { color: #c62828; font-weight: bold; }"));
    m_error->setToolTip(tr("The current problem; the last good result stays on screen."));
    m_timing = new QLabel(this);
    m_timing->setObjectName(QStringLiteral("Timing"));
    m_timing->setToolTip(tr("Time the core took for the last result."));
    m_busy = new QProgressBar(this);
    m_busy->setRange(0, 0);
    m_busy->setMaximumWidth(120);
    m_busy->setToolTip(tr("Computing in the background; the previous result stays shown."));
    m_busy->setVisible(false);
    statusBar()->addWidget(m_error, 1);
    statusBar()->addPermanentWidget(m_busy);
    statusBar()->addPermanentWidget(m_timing);

    createActions();
    createToolBar();
    // The theme is the application's preference (View > Theme), not the session's.
    setTheme(QSettings().value(QLatin1String(kThemeKey)).toString(), false);

    connect(m_document, &Document::changed, this, [this](Document::What what) {
        switch (what) {
        case Document::What::ViewState:
        case Document::What::Selection:
        case Document::What::Session:
            updateFromViewState();
            updateTitle();
            break;
        case Document::What::Experiment: // a model dump brings its own head count
            updateFromViewState();
            break;
        default:
            break;
        }
        updateStatus();
    });
    connect(m_document, &Document::errorOccurred, this, &MainWindow::showError);
    connect(ModelDocument::of(m_document), &ModelDocument::loadFailed, this,
            &MainWindow::showLoadError);
    connect(m_document->undoStack(), &QUndoStack::indexChanged, this, [this] {
        if (m_errorJustRaised || m_lastError.isEmpty()) return;
        m_lastError.clear();
        updateStatus();
    });
    connect(m_document->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);

    // The first size fits the screen's available area (a 1280 x 720 projector with no window
    // manager included): a window larger than the screen hides its own edges.
    QSize first(1400, 880);
    if (const QScreen* display = QGuiApplication::primaryScreen())
        first = first.boundedTo(display->availableGeometry().size());
    resize(first);
    updateFromViewState();
    updateNavigation();
    updateStatus();
    updateTitle();
}

MainWindow::~MainWindow() {
    // The document (a child) goes after this window's members: its undo stack, cleared as it
    // goes, must not call back into a window half taken down.
    disconnect(m_document->undoStack(), nullptr, this, nullptr);
    disconnect(m_document, nullptr, this, nullptr);
}

View* MainWindow::view(const QString& id) const {
    for (View* view : m_views)
        if (view->viewId() == id) return view;
    return nullptr;
}

View* MainWindow::currentView() const {
    const auto* tabs = qobject_cast<QTabWidget*>(m_groupStack->currentWidget());
    return tabs ? qobject_cast<View*>(tabs->currentWidget()) : nullptr;
}

void MainWindow::showView(const QString& id) {
    View* target = view(id);
    if (!target) return;
    bringToFront(target);
    viewInFrontChanged();
}

QString MainWindow::currentGroup() const {
    const int index = m_groupStack->currentIndex();
    const QStringList groups = viewGroupIds();
    return index >= 0 && index < groups.size() ? groups[index] : QString();
}

bool MainWindow::showGroup(const QString& groupId) {
    const auto g = viewGroupIds().indexOf(groupId);
    if (g < 0) return false;
    QTabWidget* tabs = m_groupTabs[static_cast<std::size_t>(g)];
    // The view this group showed last, unless it does not apply now (no model open ...): then
    // the group's first view that does. When none does, the banner says why.
    int index = tabs->currentIndex();
    if (index >= 0 && !tabs->isTabEnabled(index))
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->isTabEnabled(i)) {
                index = i;
                break;
            }
    if (auto* target = qobject_cast<View*>(tabs->widget(index))) bringToFront(target);
    viewInFrontChanged();
    return true;
}

void MainWindow::stepView(int delta) {
    // Group by group, tab by tab: the order the class sees.
    std::vector<View*> order;
    for (QTabWidget* tabs : m_groupTabs)
        for (int i = 0; i < tabs->count(); ++i)
            if (auto* target = qobject_cast<View*>(tabs->widget(i))) order.push_back(target);
    const int count = static_cast<int>(order.size());
    if (count == 0 || delta == 0) return;
    const auto found = std::find(order.begin(), order.end(), currentView());
    const int from = found == order.end() ? 0 : static_cast<int>(found - order.begin());
    const int stride = delta > 0 ? 1 : -1;
    for (int step = 1; step < count; ++step) {
        View* candidate =
            order[static_cast<std::size_t>(((from + stride * step) % count + count) % count)];
        QTabWidget* tabs = tabsOf(candidate);
        if (!tabs->isTabEnabled(tabs->indexOf(candidate))) continue;
        bringToFront(candidate);
        viewInFrontChanged();
        return;
    }
}

void MainWindow::createViewTabs() {
    // The views in groups a class can follow: a row of group buttons (Alt+1..4), and under it
    // the group's own views as tabs (Ctrl+1..9), at most seven at a time, so the tab bar fits
    // a 1280-pixel projector in either language. Each group is a tab widget of its own in a
    // stack, so a group keeps the view it showed last.
    m_groupStack = new QStackedWidget(this);
    m_groupBar = new QWidget(this);
    m_groupBar->setObjectName(QStringLiteral("ViewGroupBar"));
    // The row wraps rather than widen the window past a 1024-pixel projector.
    auto* barLayout = new FlowLayout(m_groupBar);
    barLayout->setContentsMargins(6, 3, 6, 1);
    barLayout->setSpacing(0);
    m_groupButtons = new QButtonGroup(this);
    m_groupButtons->setExclusive(true);
    const QStringList groups = viewGroupIds();
    for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
        auto* tabs = new QTabWidget(m_groupStack);
        tabs->setObjectName(QStringLiteral("ViewTabs_%1").arg(groups[g]));
        tabs->setDocumentMode(true);
        // Tabs that still do not fit scroll (arrows) instead of widening the window.
        tabs->setUsesScrollButtons(true);
        tabs->setElideMode(Qt::ElideNone);
        m_groupStack->addWidget(tabs);
        m_groupTabs.push_back(tabs);
        auto* button = new QToolButton(m_groupBar);
        button->setObjectName(QStringLiteral("ViewGroup_%1").arg(groups[g]));
        button->setCheckable(true);
        button->setToolButtonStyle(Qt::ToolButtonTextOnly);
        button->setText(viewGroupTitle(groups[g]));
        // The ends of the segmented row get the rounded corners.
        if (g == 0) button->setProperty("segment", QStringLiteral("first"));
        if (g + 1 == static_cast<int>(groups.size()))
            button->setProperty("segment", QStringLiteral("last"));
        m_groupButtons->addButton(button, g);
        barLayout->addWidget(button);
        m_groupButtonList.push_back(button);
    }
    for (const ViewEntry& entry : viewRegistry()) {
        const auto g = groups.indexOf(entry.group);
        Q_ASSERT(g >= 0);
        QTabWidget* tabs = m_groupTabs[static_cast<std::size_t>(std::max<qsizetype>(0, g))];
        View* view = entry.create(m_document, tabs);
        m_views.push_back(view);
        tabs->addTab(view, view->title());
        if (auto* heads = qobject_cast<HeadsGridView*>(view)) {
            connect(heads, &HeadsGridView::headActivated, this, [this](int head) {
                m_document->setFocusedHead(head);
                showView(QStringLiteral("heatmap"));
            });
        }
    }
    for (QTabWidget* tabs : m_groupTabs)
        connect(tabs, &QTabWidget::currentChanged, this, [this, tabs](int) {
            // A hidden group's tab changing (a tab disabled under it) is not what is shown.
            if (tabs == m_groupStack->currentWidget()) viewInFrontChanged();
        });
    connect(m_groupButtons, &QButtonGroup::idClicked, this, [this](int g) {
        const QStringList ids = viewGroupIds();
        if (g >= 0 && g < ids.size()) showGroup(ids[g]);
    });
    styleGroupBar();
}

void MainWindow::styleGroupBar() {
    // Segmented buttons: the group in front filled with the highlight colour. Colours from the
    // palette of the theme now applied (a style sheet's palette() would keep the old one).
    const QPalette palette = QApplication::palette();
    const QString border = palette.color(QPalette::Mid).name();
    m_groupBar->setStyleSheet(
        QStringLiteral("QToolButton { font-weight: bold; padding: 2px 16px; margin: 0;"
                       " border: 1px solid %1; border-left-width: 0;"
                       " background: %2; color: %3; }"
                       "QToolButton[segment=\"first\"] { border-left-width: 1px;"
                       " border-top-left-radius: 4px;"
                       " border-bottom-left-radius: 4px; }"
                       "QToolButton[segment=\"last\"] { border-top-right-radius: 4px;"
                       " border-bottom-right-radius: 4px; }"
                       "QToolButton:hover:!checked { background: %4; }"
                       "QToolButton:checked { background: %5; color: %6; }")
            .arg(border, palette.color(QPalette::Button).name(),
                 palette.color(QPalette::ButtonText).name(),
                 palette.color(QPalette::Midlight).name(),
                 palette.color(QPalette::Highlight).name(),
                 palette.color(QPalette::HighlightedText).name()));
}

QTabWidget* MainWindow::tabsOf(const View* target) const {
    for (QTabWidget* tabs : m_groupTabs)
        if (tabs->indexOf(const_cast<View*>(target)) >= 0) return tabs;
    return nullptr;
}

void MainWindow::bringToFront(View* target) {
    QTabWidget* tabs = tabsOf(target);
    if (!tabs) return;
    const QSignalBlocker blockTabs(tabs);
    tabs->setCurrentWidget(target);
    m_groupStack->setCurrentWidget(tabs);
}

void MainWindow::viewInFrontChanged() {
    if (View* front = currentView()) {
        ViewState state = m_document->session().viewState;
        state.view = front->viewId().toStdString();
        if (state.view != m_document->session().viewState.view) m_document->setViewState(state);
    }
    updateNavigation();
    updateStatus();
}

void MainWindow::updateNavigation() {
    const QStringList groups = viewGroupIds();
    const int front = m_groupStack->currentIndex();
    for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
        const auto index = static_cast<std::size_t>(g);
        QStringList titles;
        for (const QString& id : viewIdsInGroup(groups[g]))
            if (View* member = view(id)) titles << member->title();
        QToolButton* button = m_groupButtonList[index];
        button->setText(viewGroupTitle(groups[g]));
        button->setChecked(g == front);
        QString keys;
        if (index < m_groupActions.size()) {
            m_groupActions[index]->setText(viewGroupTitle(groups[g]));
            keys = m_groupActions[index]->shortcut().toString(QKeySequence::NativeText);
        }
        button->setToolTip(tr("%1 (%2)\n%3: %4")
                               .arg(viewGroupTitle(groups[g]), keys,
                                    viewGroupDescription(groups[g]), titles.join(tr(", "))));
        if (index < m_groupMenus.size()) m_groupMenus[index]->setTitle(viewGroupTitle(groups[g]));
    }
    // Ctrl+1..9 pick among the group's own views, the tabs on screen.
    View* shown = currentView();
    for (std::size_t i = 0; i < m_viewActions.size() && i < m_views.size(); ++i) {
        QAction* action = m_viewActions[i];
        View* target = m_views[i];
        QTabWidget* tabs = tabsOf(target);
        const int position = tabs ? tabs->indexOf(target) : -1;
        const bool inFront = tabs && tabs == m_groupStack->currentWidget();
        action->setText(target->title());
        action->setShortcut(inFront && position >= 0 && position < 9
                                ? QKeySequence(Qt::CTRL | (Qt::Key_1 + position))
                                : QKeySequence());
        action->setChecked(target == shown);
    }
}

QString MainWindow::statusMessage() const {
    return m_error->message();
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* newAction = file->addAction(tr("&New"), this, &MainWindow::newSession);
    newAction->setShortcut(QKeySequence::New);
    newAction->setToolTip(tr("Start again from the default session"));
    QAction* openAction = file->addAction(tr("&Open\u2026"), this, &MainWindow::openDialog);
    openAction->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    m_examplesMenu = file->addMenu(tr("E&xamples"));
    for (const ExampleInfo& example : kExamples) {
        const QString path = QStringLiteral(":/examples/%1.json").arg(QLatin1String(example.file));
        QAction* action = m_examplesMenu->addAction(tr(example.title));
        action->setToolTip(tr("Open the bundled lesson \u201c%1\u201d").arg(tr(example.title)));
        connect(action, &QAction::triggered, this, [this, path] {
            if (maybeSave()) openExample(path);
        });
    }
    installLessonControls(this, file); // File > Lessons and the Lesson dock
    file->addSeparator();
    installDumpControls(this, file, m_document); // model dumps: menu entries + tool bar
    installModelControls(this, file, m_examplesMenu, m_document); // real models, badge
    // A tool bar that grows, shrinks, shows or hides may move the others to another row.
    for (QToolBar* bar : findChildren<QToolBar*>(Qt::FindDirectChildrenOnly))
        bar->installEventFilter(this);
    file->addSeparator();
    QAction* saveAction = file->addAction(tr("&Save"), this, &MainWindow::saveSession);
    saveAction->setShortcut(QKeySequence::Save);
    QAction* saveAsAction = file->addAction(tr("Save &As\u2026"), this, &MainWindow::saveSessionAs);
    saveAsAction->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    QAction* exportAction =
        file->addAction(tr("&Export Figure\u2026"), this, &MainWindow::exportFigure);
    exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction* dataAction = file->addAction(tr("Export &Data\u2026"), this, [this] {
        View* target = currentView();
        if (!target) return;
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export the data of %1").arg(target->title()),
            target->viewId() + QStringLiteral(".csv"), dataExportFilter());
        if (path.isEmpty()) return;
        if (const Status failed = exportData(*target, path)) {
            showError(QString::fromStdString(failed->message));
            return;
        }
        statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
    });
    // A view with no numbers to export now: the item is disabled and its tooltip says why.
    file->setToolTipsVisible(true);
    connect(file, &QMenu::aboutToShow, this, [this, dataAction] {
        View* target = currentView();
        const QString why = target ? dataUnavailable(*target) : tr("No view is shown");
        dataAction->setEnabled(why.isEmpty());
        dataAction->setToolTip(why.isEmpty() ? tr("Write the numbers this view draws (CSV, "
                                                  "NumPy or JSON)")
                                             : why);
    });
    QAction* copyAction = file->addAction(tr("&Copy Figure"), this, &MainWindow::copyFigure);
    copyAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    file->addAction(tr("Export All &Steps\u2026"), this, [this] {
        View* target = currentView();
        if (!target || !isStepView(target->viewId())) {
            showError(tr("Export all steps works on the FlashAttention and KV-cache views"));
            return;
        }
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export every step of %1").arg(target->title()),
            target->viewId() + QStringLiteral("_steps.pdf"),
            tr("PDF, one page per step (*.pdf);;PNG frames in a new folder (*)"));
        if (path.isEmpty()) return;
        if (const Status failed = exportSteps(*target, *m_document, path, target->size(), 2.0)) {
            showError(QString::fromStdString(failed->message));
            return;
        }
        statusBar()->showMessage(tr("Exported every step to %1").arg(path), 4000);
    });
    file->addSeparator();
    QAction* quitAction = file->addAction(tr("&Quit"), this, &QWidget::close);
    quitAction->setShortcut(QKeySequence::Quit);
    updateRecentMenu();

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    // Our own actions rather than QUndoStack's: theirs keep the prefix and the command's text
    // in the language they were made in, so a live switch left "Undo Edit text" in Chinese.
    QUndoStack* undoStack = m_document->undoStack();
    m_undoAction = edit->addAction(tr("&Undo"), undoStack, &QUndoStack::undo);
    m_undoAction->setShortcut(QKeySequence::Undo);
    m_redoAction = edit->addAction(tr("&Redo"), undoStack, &QUndoStack::redo);
    m_redoAction->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});

    QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
    // View > group > its views; Ctrl+1..9 go to the views of the group in front
    // (updateNavigation), Alt+1..4 to a group, Ctrl+PgDown/PgUp through every view.
    const QStringList groups = viewGroupIds();
    for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
        const QString groupId = groups[g];
        m_groupMenus.push_back(viewMenu->addMenu(viewGroupTitle(groupId)));
        auto* groupAction = new QAction(viewGroupTitle(groupId), this);
        if (g < 9) groupAction->setShortcut(QKeySequence(Qt::ALT | (Qt::Key_1 + g)));
        addAction(groupAction); // window-wide; its key is in the group button's tool tip
        connect(groupAction, &QAction::triggered, this, [this, groupId] { showGroup(groupId); });
        m_groupActions.push_back(groupAction);
    }
    auto* viewChoice = new QActionGroup(this);
    for (View* target : m_views) {
        const auto g = std::max<qsizetype>(0, groups.indexOf(viewGroupOf(target->viewId())));
        QAction* action = m_groupMenus[static_cast<std::size_t>(g)]->addAction(target->title());
        action->setCheckable(true);
        action->setActionGroup(viewChoice);
        const QString id = target->viewId();
        connect(action, &QAction::triggered, this, [this, id] { showView(id); });
        m_viewActions.push_back(action);
    }
    viewMenu->addSeparator();
    QAction* nextView = viewMenu->addAction(tr("&Next View"), this, [this] { stepView(1); });
    nextView->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_PageDown), QKeySequence(Qt::CTRL | Qt::Key_Tab)});
    nextView->setToolTip(tr("The next view, into the next group at a group's end "
                            "(Ctrl+PgDown, Ctrl+Tab)"));
    QAction* previousView =
        viewMenu->addAction(tr("P&revious View"), this, [this] { stepView(-1); });
    previousView->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_PageUp),
                                QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Backtab),
                                QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Tab)});
    previousView->setToolTip(tr("The previous view (Ctrl+PgUp, Ctrl+Shift+Tab)"));
    viewMenu->addSeparator();
    QMenu* themes = viewMenu->addMenu(tr("&Theme"));
    auto* themeGroup = new QActionGroup(this);
    int key = 0;
    for (const QString& name : themeNames()) {
        QAction* action = themes->addAction(name == QLatin1String("light")  ? tr("Light")
                                            : name == QLatin1String("dark") ? tr("Dark")
                                                                            : tr("Projector"));
        action->setCheckable(true);
        action->setActionGroup(themeGroup);
        action->setShortcut(QKeySequence(Qt::Key_F5 + key++));
        action->setData(name);
        connect(action, &QAction::triggered, this, [this, name] { setTheme(name); });
    }
    m_themeGroup = themeGroup;
    QMenu* languages = viewMenu->addMenu(tr("&Language"));
    m_languageGroup = new QActionGroup(this);
    for (const QString& code : languageCodes()) {
        // Each language in its own name, so whoever cannot read the current one finds theirs.
        QAction* action = languages->addAction(languageName(code));
        action->setCheckable(true);
        action->setChecked(code == currentLanguage());
        action->setActionGroup(m_languageGroup);
        action->setData(code);
        connect(action, &QAction::triggered, this, [this, code] { setLanguage(code); });
    }
    viewMenu->addSeparator();
    m_presentationAction = viewMenu->addAction(tr("&Presentation Mode"));
    m_presentationAction->setCheckable(true);
    m_presentationAction->setShortcut(QKeySequence(Qt::Key_F11));
    m_presentationAction->setToolTip(tr("Full screen with the inputs panel hidden (F11)"));
    connect(m_presentationAction, &QAction::toggled, this, &MainWindow::setPresentationMode);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About AttnLab"), this,
                    [this] { QMessageBox::about(this, tr("About AttnLab"), aboutText()); });
}

void MainWindow::createToolBar() {
    QToolBar* bar = addToolBar(tr("Display"));
    bar->setObjectName(QStringLiteral("DisplayToolBar"));
    // Fixed texts: QUndoStack's own actions read "Undo Change heads" and the tool bar jumped
    // as the text changed length. What would be undone goes to the tool tip instead.
    QUndoStack* stack = m_document->undoStack();
    m_undoButton = bar->addAction(tr("Undo"), stack, &QUndoStack::undo);
    m_redoButton = bar->addAction(tr("Redo"), stack, &QUndoStack::redo);
    connect(stack, &QUndoStack::indexChanged, this, &MainWindow::updateUndoTexts);
    connect(stack, &QUndoStack::cleanChanged, this, &MainWindow::updateUndoTexts);
    updateUndoTexts();
    bar->addSeparator();
    bar->addWidget(new QLabel(tr(" Show "), bar));
    m_show = new QComboBox(bar);
    for (const ShowOption& option : kShowOptions)
        m_show->addItem(tr(option.label), option.id);
    m_show->setToolTip(tr("What the heatmap shows: weights, raw or scaled scores, the mask, the "
                          "output, or Q/K/V of the focused head."));
    bar->addWidget(m_show);
    bar->addWidget(new QLabel(tr(" Head "), bar));
    m_head = new QSpinBox(bar);
    m_head->setToolTip(tr("The focused head (heatmap, entropy, statistics)."));
    bar->addWidget(m_head);
    bar->addWidget(new QLabel(tr(" Colours "), bar));
    m_colormap = new QComboBox(bar);
    // viridis, magma and cividis are names; the others say what they are.
    for (const QString& name : colormapNames())
        m_colormap->addItem(name == QLatin1String("grayscale")   ? tr("grayscale")
                            : name == QLatin1String("print")     ? tr("print")
                            : name == QLatin1String("diverging") ? tr("diverging")
                                                                 : name,
                            name);
    m_colormap->setToolTip(tr("Colormap of the weights; signed values always use the diverging "
                              "map."));
    bar->addWidget(m_colormap);
    m_colorScale = new QComboBox(bar);
    m_colorScale->addItem(tr("0 to 1"), QStringLiteral("fixed"));
    m_colorScale->addItem(tr("data range"), QStringLiteral("data"));
    m_colorScale->addItem(tr("per row"), QStringLiteral("row"));
    m_colorScale->addItem(tr("log scale"), QStringLiteral("log"));
    m_colorScale->addItem(tr("chosen range\u2026"), QStringLiteral("range"));
    m_colorScale->setItemData(m_colorScale->count() - 1,
                              tr("Colour the weights from a low to a high end you choose (e.g. 0 "
                                 "to 0.01 for a long text); the colour bar says which."),
                              Qt::ToolTipRole);
    m_colorScale->setObjectName(QStringLiteral("colorScale"));
    m_colorScale->setToolTip(tr("How weights map to colours: 0 to 1; the smallest to the largest "
                                "shown; each row over its own largest; log10; or a range you "
                                "choose. A long text's weights are all near 1/S: per row, log or "
                                "a chosen range shows them."));
    bar->addWidget(m_colorScale);
    bar->addWidget(new QLabel(tr(" Theme "), bar));
    m_theme = new QComboBox(bar);
    m_theme->addItem(tr("light"), QStringLiteral("light"));
    m_theme->addItem(tr("dark"), QStringLiteral("dark"));
    m_theme->addItem(tr("projector"), QStringLiteral("projector"));
    m_theme->setToolTip(tr("Light, dark, or projector (large fonts, thick lines)."));
    bar->addWidget(m_theme);
    m_values = new QCheckBox(tr("Values"), bar);
    m_values->setToolTip(tr("Write each cell's value in it (sequences of at most 24 tokens)."));
    bar->addWidget(m_values);
    // Fixed widths: on a narrow window (a projector) what does not fit goes behind the tool
    // bar's extension arrow instead of squeezing a combo box until its text is cut.
    for (QWidget* fixed :
         std::initializer_list<QWidget*>{m_show, m_head, m_colormap, m_colorScale, m_theme})
        fixed->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);

    auto editState = [this](const std::function<void(ViewState&)>& change) {
        ViewState state = m_document->session().viewState;
        change(state);
        m_document->setViewState(state);
    };
    connect(m_show, &QComboBox::activated, this, [this, editState](int) {
        editState(
            [this](ViewState& s) { s.show = m_show->currentData().toString().toStdString(); });
    });
    connect(m_colormap, &QComboBox::activated, this, [this, editState](int) {
        editState([this](ViewState& s) {
            s.colormap = m_colormap->currentData().toString().toStdString();
        });
    });
    connect(m_colorScale, &QComboBox::activated, this, [this, editState](int) {
        const std::string scale = m_colorScale->currentData().toString().toStdString();
        if (scale != "range") {
            editState([&scale](ViewState& s) { s.colorScale = scale; });
            return;
        }
        // The chosen range: asked each time it is picked, starting from the last one.
        const ViewState& state = m_document->session().viewState;
        const auto range = askColorRange(this, state.colorLow, state.colorHigh);
        if (!range) { // cancelled: the scale and the combo stay as they were
            showColorScale();
            return;
        }
        editState([&range](ViewState& s) {
            s.colorScale = "range";
            s.colorLow = range->first;
            s.colorHigh = range->second;
        });
    });
    connect(m_theme, &QComboBox::activated, this,
            [this](int) { setTheme(m_theme->currentData().toString()); });
    connect(m_values, &QCheckBox::toggled, this,
            [editState](bool on) { editState([on](ViewState& s) { s.cellValues = on; }); });
    connect(m_head, &QSpinBox::valueChanged, this,
            [this](int head) { m_document->setFocusedHead(head); });
}

void MainWindow::showColorScale() {
    const QSignalBlocker blocker(m_colorScale);
    const QString scale = QString::fromStdString(m_document->session().viewState.colorScale);
    m_colorScale->setCurrentIndex(std::max(0, m_colorScale->findData(scale)));
}

void MainWindow::updateFromViewState() {
    const Session& session = m_document->session();
    const ViewState& state = session.viewState;
    {
        const QSignalBlocker blocker(m_show);
        m_show->setCurrentIndex(std::max(0, m_show->findData(QString::fromStdString(state.show))));
    }
    {
        const QSignalBlocker blocker(m_colormap);
        m_colormap->setCurrentIndex(
            std::max(0, m_colormap->findData(QString::fromStdString(state.colormap))));
    }
    showColorScale();
    {
        const QSignalBlocker blocker(m_theme);
        m_theme->setCurrentIndex(
            std::max(0, m_theme->findData(QString::fromStdString(state.theme))));
    }
    {
        const QSignalBlocker blocker(m_values);
        m_values->setChecked(state.cellValues);
    }
    {
        const QSignalBlocker blocker(m_head);
        // A model dump shown in the document has its own head count.
        const Experiment* shown = m_document->experiment();
        const Index heads =
            m_document->hasExternalExperiment() && shown ? shown->headCount() : session.heads;
        m_head->setRange(0, static_cast<int>(std::max<Index>(1, heads) - 1));
        m_head->setValue(static_cast<int>(state.head));
    }
    const QString viewId = QString::fromStdString(state.view);
    if (View* target = view(viewId); target && target != currentView()) {
        bringToFront(target); // its group too
        updateNavigation();
    }
    const QString themeName = m_document->theme();
    if (m_themeGroup)
        for (QAction* action : m_themeGroup->actions())
            action->setChecked(action->data().toString() == themeName);
    if (themeName != m_appliedTheme) {
        m_appliedTheme = themeName;
        if (auto* app = qobject_cast<QApplication*>(QCoreApplication::instance()))
            applyTheme(*app, themeNamed(themeName));
        // A dock paints its title in the platform's small title font while its own font is
        // the application's: in the projector theme "Lesson" and "Inputs" were unreadable
        // from the back. A font of its own (the theme's size, a hair larger so it differs
        // from the application's) makes the title use it; the panel inside looks the same.
        for (QDockWidget* dock : findChildren<QDockWidget*>()) {
            QFont title = QApplication::font();
            title.setPointSizeF(themeNamed(themeName).fontPointSize + 0.01);
            dock->setFont(title);
        }
        styleGroupBar();
    }
}

QString MainWindow::aboutText() {
    return tr("<b>AttnLab</b> %1<br>A lab for attention mechanisms: type tokens, pick a variant "
              "and a mask, watch the weights.")
        .arg(QStringLiteral(ATTNLAB_VERSION));
}

QString MainWindow::bannerText() const {
    return m_banner->isVisible() ? m_banner->text() : QString();
}

void MainWindow::updateStatus() {
    // Views that do not apply to what is shown (a dump has no Q/K to tile ...) are refused.
    for (View* target : m_views) {
        QTabWidget* tabs = tabsOf(target);
        if (!tabs) continue;
        const int index = tabs->indexOf(target);
        const QString why = target->notApplicable();
        tabs->setTabEnabled(index, why.isEmpty());
        tabs->setTabToolTip(index, !why.isEmpty() ? why
                                   : index < 9
                                       ? tr("%1 (Ctrl+%2)").arg(target->title()).arg(index + 1)
                                       : target->title());
    }
    // A dump on screen: the lab session's problems are not about it.
    const bool external = m_document->hasExternalExperiment();
    const QStringList problems = external ? QStringList() : m_document->problems();
    QString banner;
    if (View* front = currentView(); front && !front->notApplicable().isEmpty())
        banner = tr("This view does not apply: %1").arg(front->notApplicable());
    else if (m_document->experimentOutOfDate() && !problems.isEmpty())
        banner = tr("Out of date: the figure shows the last settings that worked. %1")
                     .arg(problems.first());
    m_banner->setText(banner);
    m_banner->setVisible(!banner.isEmpty());
    // One line, the rest of the message in the tool tip.
    if (problems.isEmpty() && !m_lastError.isEmpty()) {
        const QString first = m_lastError.section(QLatin1Char('\n'), 0, 0);
        m_error->setMessage(first == m_lastError ? first : first + QStringLiteral(" \u2026"));
        m_error->setToolTip(m_lastError);
    } else if (problems.isEmpty()) {
        m_error->setMessage(QString());
        m_error->setToolTip(tr("No problems."));
    } else {
        m_error->setMessage(problems.first());
        m_error->setToolTip(problems.join(QLatin1Char('\n')));
    }
    m_busy->setVisible(m_document->busy());
    if (const Experiment* experiment = m_document->experiment()) {
        // A model's layer carries its forward's time; a file's weights were not timed (0).
        const QString shape = tr("S=%1\u00d7%2, H=%3")
                                  .arg(experiment->sq())
                                  .arg(experiment->sk())
                                  .arg(experiment->headCount());
        m_timing->setText(
            experiment->milliseconds > 0
                ? tr("%1 \u2014 %2 ms").arg(shape).arg(experiment->milliseconds, 0, 'f', 1)
                : shape);
    }
}

void MainWindow::showError(const QString& message) {
    // The session's own problems are shown while they last (updateStatus). Other errors are
    // shown until the person's next edit, undo or redo, but not an edit made in reply to the
    // error itself (a text the model cannot run goes to the lab session at once).
    if (message == m_document->problems().join(QLatin1Char('\n'))) {
        updateStatus();
        return;
    }
    m_lastError = message;
    m_errorJustRaised = true;
    QTimer::singleShot(0, this, [this] { m_errorJustRaised = false; });
    updateStatus();
}

void MainWindow::showLoadError(const QString& message) {
    if (!isVisible()) return; // a headless render reports on the command line
    if (!m_loadError) {
        m_loadError =
            new QMessageBox(QMessageBox::Warning, QString(), QString(), QMessageBox::Ok, this);
        m_loadError->setObjectName(QStringLiteral("ModelLoadError"));
        m_loadError->setTextFormat(Qt::PlainText); // a folder's name is not markup
        m_loadError->setTextInteractionFlags(Qt::TextSelectableByMouse);
        m_loadError->setModal(false);
    }
    m_loadError->setWindowTitle(tr("The model did not open"));
    m_loadError->setText(message);
    m_loadError->show();
    m_loadError->raise();
}

void MainWindow::updateTitle() {
    // The lesson and the session by name: what the class sees on the projector's title bar.
    const QString path = m_document->filePath();
    const QString sessionTitle = QString::fromStdString(m_document->session().title);
    QString name = !sessionTitle.isEmpty() ? sessionTitle
                   : path.isEmpty()        ? tr("untitled")
                                           : QFileInfo(path).fileName();
    if (!m_lessonTitle.isEmpty() && m_lessonTitle != name)
        name = tr("%1 \u2014 %2").arg(m_lessonTitle, name);
    setWindowTitle(tr("%1[*] \u2014 AttnLab").arg(name));
    setWindowModified(m_document->isModified());
}

void MainWindow::setLessonTitle(const QString& title) {
    m_lessonTitle = title;
    updateTitle();
}

void MainWindow::setTheme(const QString& name, bool remember) {
    const QString known = themeNames().contains(name) ? name : QStringLiteral("light");
    if (remember) QSettings().setValue(QLatin1String(kThemeKey), known);
    m_document->setTheme(known);
    updateFromViewState();
}

bool MainWindow::setLanguage(const QString& code, bool remember) {
    const QString known = normalizedLanguage(code);
    if (known.isEmpty() || !ui::setLanguage(known)) return false;
    if (remember) storeLanguagePreference(known);
    return true;
}

void MainWindow::setPresentationMode(bool on) {
    if (on == m_presentation) return;
    m_presentation = on;
    if (on) {
        m_inputsWereVisible = m_inputsDock->isVisible();
        m_inputsDock->hide();
        showFullScreen();
    } else {
        if (m_inputsWereVisible) m_inputsDock->show();
        showNormal();
    }
    const QSignalBlocker blocker(m_presentationAction);
    m_presentationAction->setChecked(on);
}

void MainWindow::updateUndoTexts() {
    // A command's text is in the language it was made in: looked up again in this one.
    const QUndoStack* stack = m_document->undoStack();
    const QString undo = retranslated(stack->undoText());
    const QString redo = retranslated(stack->redoText());
    m_undoAction->setEnabled(stack->canUndo());
    m_undoAction->setText(stack->canUndo() ? tr("&Undo %1").arg(undo) : tr("&Undo"));
    m_redoAction->setEnabled(stack->canRedo());
    m_redoAction->setText(stack->canRedo() ? tr("&Redo %1").arg(redo) : tr("&Redo"));
    m_undoButton->setEnabled(stack->canUndo());
    m_undoButton->setToolTip(stack->canUndo() ? tr("Undo: %1").arg(undo) : tr("Nothing to undo"));
    m_redoButton->setEnabled(stack->canRedo());
    m_redoButton->setToolTip(stack->canRedo() ? tr("Redo: %1").arg(redo) : tr("Nothing to redo"));
}

void MainWindow::changeEvent(QEvent* event) {
    QMainWindow::changeEvent(event);
    if (event->type() != QEvent::LanguageChange) return;
    // Texts set once (menus, tool bar, inputs, tabs) are looked up again; texts made from the
    // document (status, banner, title, figures) are rebuilt by their owners.
    retranslateTexts(this);
    updateUndoTexts();
    if (m_languageGroup)
        for (QAction* action : m_languageGroup->actions())
            action->setChecked(action->data().toString() == currentLanguage());
    for (View* target : m_views)
        if (QTabWidget* tabs = tabsOf(target))
            tabs->setTabText(tabs->indexOf(target), target->title());
    updateNavigation(); // group names, their tool tips, the View menu
    // Every view redraws its figure (titles, axes, legends) in the new language: the one in
    // front now, the others when shown.
    m_document->setViewState(m_document->session().viewState);
    updateStatus();
    updateTitle();
}

bool MainWindow::openSession(const QString& path) {
    if (!m_document->open(path)) return false;
    addRecent(path);
    updateTitle();
    return true;
}

bool MainWindow::openExample(const QString& resourcePath) {
    QFile file(resourcePath);
    if (!file.open(QIODevice::ReadOnly)) {
        showError(tr("Cannot open the example %1").arg(resourcePath));
        return false;
    }
    const Result<Session> loaded = sessionFromJson(file.readAll().toStdString());
    if (!loaded) {
        showError(tr("%1: %2").arg(resourcePath, QString::fromStdString(loaded.error())));
        return false;
    }
    m_document->reset(*loaded);
    const QString base = QFileInfo(resourcePath).completeBaseName();
    for (const ExampleInfo& example : kExamples) {
        if (base != QLatin1String(example.file)) continue;
        // Through the view, so the document computes B for this example's comparison even
        // while Compare is in front (setting the combo alone kept the previous example's B).
        if (auto* compare = qobject_cast<CompareView*>(view(QStringLiteral("compare"))))
            if (example.comparison != Comparison::None) compare->setComparison(example.comparison);
    }
    updateFromViewState();
    updateTitle();
    return true;
}

void MainWindow::newSession() {
    if (!maybeSave()) return;
    m_document->reset(Session{});
    updateTitle();
}

void MainWindow::openDialog() {
    if (!maybeSave()) return;
    const QString path = QFileDialog::getOpenFileName(this, tr("Open session"), QString(),
                                                      tr("AttnLab sessions (*.json)"));
    if (!path.isEmpty()) openSession(path);
}

bool MainWindow::saveSession() {
    if (m_document->filePath().isEmpty() || m_document->filePath().startsWith(QLatin1Char(':')))
        return saveSessionAs();
    return m_document->save(m_document->filePath());
}

bool MainWindow::saveSessionAs() {
    QString path = QFileDialog::getSaveFileName(this, tr("Save session"), QString(),
                                                tr("AttnLab sessions (*.json)"));
    if (path.isEmpty()) return false;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    if (!m_document->save(path)) return false;
    addRecent(path);
    updateTitle();
    return true;
}

void MainWindow::exportFigure() {
    View* target = currentView();
    if (!target) return;
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(this, tr("Export %1").arg(target->title()),
                                                target->viewId() + QStringLiteral(".png"),
                                                exportFilter(), &selectedFilter);
    if (path.isEmpty()) return;
    ExportFormat format;
    if (!exportFormatFor(path, &format)) path += QStringLiteral(".png");
    // The size: the window's, or a preset that prints as it is (a column, a page, a slide).
    FigureOptions figure;
    figure.size = target->size();
    if (exportFormatFor(path, &format) && isFigureFormat(format)) {
        QStringList sizes{
            tr("As on screen (%1 \u00d7 %2)").arg(target->width()).arg(target->height())};
        const QList<FigurePreset> presets = figurePresets();
        for (const FigurePreset& preset : presets)
            sizes << preset.label;
        bool ok = false;
        const QString chosen = QInputDialog::getItem(
            this, tr("Figure size"), tr("Size of the figure:"), sizes, 1, false, &ok);
        if (!ok) return;
        const int index = static_cast<int>(sizes.indexOf(chosen)) - 1;
        if (index >= 0) figure = figureOptionsOf(presets[index]);
    }
    double scale = 1.0;
    if (exportFormatFor(path, &format) && format == ExportFormat::Png) {
        bool ok = false;
        scale = QInputDialog::getDouble(this, tr("Export PNG"),
                                        tr("Scale factor (2 = twice the pixels):"), 2.0, 0.25, 8.0,
                                        2, &ok);
        if (!ok) return;
    }
    figure.scale = scale;
    if (const Status failed = exportView(*target, path, figure)) {
        showError(QString::fromStdString(failed->message));
        return;
    }
    statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
}

void MainWindow::copyFigure() {
    if (View* target = currentView()) {
        copyFigureToClipboard(*target, target->size());
        statusBar()->showMessage(tr("Figure copied to the clipboard"), 3000);
    }
}

void MainWindow::addRecent(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(QLatin1String(kRecentKey)).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(QLatin1String(kRecentKey), recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QLatin1String(kRecentKey)).toStringList();
    for (const QString& path : recent) {
        QAction* action = m_recentMenu->addAction(QFileInfo(path).fileName());
        action->setToolTip(path);
        connect(action, &QAction::triggered, this, [this, path] {
            if (maybeSave()) openSession(path);
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

bool MainWindow::maybeSave() {
    if (!m_document->isModified() || QGuiApplication::platformName() == QLatin1String("offscreen"))
        return true;
    const auto answer = QMessageBox::question(
        this, tr("Unsaved changes"), tr("Save the changes to this session first?"),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Save) return saveSession();
    return answer == QMessageBox::Discard;
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (m_sizedDocks) return;
    m_sizedDocks = true;
    // Nothing in the views holds the docks back any more (their rows of controls wrap): the
    // inputs and the lesson would take their preferred width, ~520 px in the projector theme,
    // and leave the views too little. They get about a third of the window, at least what
    // they need.
    const int least = m_inputsDock->minimumSizeHint().width();
    const int width = std::clamp(this->width() * 31 / 100, least, std::max(least, 440));
    resizeDocks({m_inputsDock}, {width}, Qt::Horizontal);
}

void MainWindow::resizeEvent(QResizeEvent* event) {
    QMainWindow::resizeEvent(event);
    fitToolBars();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (qobject_cast<QToolBar*>(watched) &&
        (event->type() == QEvent::LayoutRequest || event->type() == QEvent::Show ||
         event->type() == QEvent::Hide))
        fitToolBars();
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::fitToolBars() {
    // One row while they fit; a tool bar with no room left in the row starts the next one
    // rather than hiding its controls behind the "\u00bb" extension (the projector's font
    // with a model's tool bar open made Head, Colours and Theme vanish at 1280 x 720).
    const int spacing = layout() ? std::max(0, layout()->spacing()) : 0;
    int used = 0;
    bool first = true;
    for (QToolBar* bar : findChildren<QToolBar*>(Qt::FindDirectChildrenOnly)) {
        if (toolBarArea(bar) != Qt::TopToolBarArea) continue;
        const bool shown = bar->isVisibleTo(this);
        const int wide = bar->sizeHint().width() + spacing;
        const bool breakBefore = shown && !first && used + wide > width();
        if (breakBefore != toolBarBreak(bar)) {
            if (breakBefore)
                insertToolBarBreak(bar);
            else
                removeToolBarBreak(bar);
        }
        if (!shown) continue;
        used = breakBefore ? wide : used + wide;
        first = false;
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (maybeSave())
        event->accept();
    else
        event->ignore();
}

QStringList MainWindow::saveScreenshots(const QString& directory) {
    QDir().mkpath(directory);
    QStringList written;
    for (View* target : m_views) {
        showView(target->viewId()); // its group too
        for (int i = 0; i < 5; ++i) {
            m_document->waitForIdle();
            QCoreApplication::processEvents();
        }
        target->ensureComplete();
        QCoreApplication::processEvents();
        const QString path = QDir(directory).filePath(target->viewId() + QStringLiteral(".png"));
        if (grab().save(path)) written << path;
    }
    return written;
}

} // namespace attnlab::ui

#pragma once
/// MainWindow: the inputs panel on the left, the views in named groups (a row of group buttons,
/// the group's views as tabs under it), menus for sessions, examples, export and themes, and a
/// status bar with the inline error, the run time and a busy indicator. It owns the Document.

#include <QMainWindow>
#include <QStringList>

#include <vector>

class QAction;
class QActionGroup;
class QButtonGroup;
class QDockWidget;
class QCheckBox;
class QComboBox;
class QLabel;
class QMenu;
class QMessageBox;
class QProgressBar;
class QSpinBox;
class QStackedWidget;
class QTabWidget;
class QToolButton;

namespace attnlab::ui {

class Document;
class InputsPanel;
class StatusLabel;
class View;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    Document* document() const { return m_document; }
    InputsPanel* inputsPanel() const { return m_inputs; }
    /// The view with this id (heatmap, heads, entropy, statistics, compare), or null.
    View* view(const QString& id) const;
    View* currentView() const;
    /// Brings the view to the front, switching to its group first.
    void showView(const QString& id);
    /// The group in front (attention, steps, model: see viewGroups()).
    QString currentGroup() const;
    /// Brings a group to the front with the view it showed last (an enabled one if that view
    /// does not apply). False for an unknown group.
    bool showGroup(const QString& groupId);
    /// Ctrl+PgDown / Ctrl+PgUp: the next (+1) or previous (-1) view that applies, across
    /// groups, wrapping around at the ends.
    void stepView(int delta);
    /// Opens a session file; errors go to the status bar. False on failure.
    bool openSession(const QString& path);
    /// Loads a bundled example (resource path ":/examples/NAME.json").
    bool openExample(const QString& resourcePath);
    /// Grabs the window with each view in front into dir/NAME.png (visual checks, docs).
    QStringList saveScreenshots(const QString& directory);
    /// The message shown inline in the status bar (empty when all is well).
    QString statusMessage() const;
    /// The line above the views: "Out of date: ..." or "This view does not apply: ...";
    /// empty when hidden.
    QString bannerText() const;
    /// Help > About's text, with the version CMake's project() gives.
    static QString aboutText();
    QAction* undoButton() const { return m_undoButton; }
    /// The theme (light, dark, projector): an application preference kept in QSettings, never
    /// taken from a session. `remember` stores it as the preference for the next start.
    void setTheme(const QString& name, bool remember = true);
    /// Switches the language live (English, zh_CN) and, with `remember`, keeps it in QSettings.
    bool setLanguage(const QString& code, bool remember = true);
    /// The lesson shown (named in the window title with the session); empty for none.
    void setLessonTitle(const QString& title);
    /// F11: full screen with the inputs panel hidden; again to come back.
    void setPresentationMode(bool on);
    bool presentationMode() const { return m_presentation; }
    /// Asks whether to save unsaved changes first (Save / Discard / Cancel); true to go on.
    bool maybeSave();

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    /// Edit > Undo/Redo and the tool bar's tips, from the undo stack, in the current language.
    void updateUndoTexts();

private:
    void createActions();
    void createToolBar();
    /// Starts a new row of tool bars before each one the row above has no room for.
    void fitToolBars();
    void updateTitle();
    void updateFromViewState();
    /// The colour-scale combo on the session's scale (after a load, an undo, a cancelled dialog).
    void showColorScale();
    void updateStatus();
    /// The window's one way to show a problem (the document's errorOccurred comes here too):
    /// its first line in the status bar, the whole in its tool tip, until the next edit.
    void showError(const QString& message);
    /// A model folder that did not open: the whole message in a dialog (the status bar has room
    /// for its start only).
    void showLoadError(const QString& message);
    void updateRecentMenu();
    void addRecent(const QString& path);
    void newSession();
    void openDialog();
    bool saveSession();
    bool saveSessionAs();
    void exportFigure();
    void copyFigure();
    /// The group buttons and one tab widget per group holding its views.
    void createViewTabs();
    /// The group buttons' look, from the application's palette (again after a theme change).
    void styleGroupBar();
    /// The group's tab widget holding this view.
    QTabWidget* tabsOf(const View* view) const;
    /// Sets the group and tab in front without telling the document.
    void bringToFront(View* target);
    /// After the view in front changed: the document, the group buttons, the shortcuts.
    void viewInFrontChanged();
    /// Group buttons' checks, Ctrl+1..9 on the group's own views, tool tips and texts.
    void updateNavigation();

    Document* m_document;
    InputsPanel* m_inputs = nullptr;
    QWidget* m_groupBar = nullptr;          ///< the group buttons, above the tabs
    QStackedWidget* m_groupStack = nullptr; ///< one QTabWidget per group
    std::vector<QTabWidget*> m_groupTabs;   ///< in viewGroups() order
    QButtonGroup* m_groupButtons = nullptr;
    std::vector<QToolButton*> m_groupButtonList;
    std::vector<QAction*> m_groupActions; ///< Alt+1..4
    std::vector<QMenu*> m_groupMenus;     ///< View > group > views
    std::vector<View*> m_views;           ///< registry order
    std::vector<QAction*> m_viewActions;  ///< parallel to m_views
    QMenu* m_recentMenu = nullptr;
    QMenu* m_examplesMenu = nullptr;
    QComboBox* m_show = nullptr;
    QComboBox* m_colormap = nullptr;
    QComboBox* m_colorScale = nullptr; ///< view.color_scale
    QComboBox* m_theme = nullptr;
    QSpinBox* m_head = nullptr;
    QCheckBox* m_values = nullptr;
    StatusLabel* m_error = nullptr;
    QMessageBox* m_loadError = nullptr; ///< made at the first model folder that did not open
    /// The latest error reported (Document::errorOccurred), shown until the next edit.
    QString m_lastError;
    bool m_errorJustRaised = false; ///< the error came in this turn of the event loop
    QLabel* m_banner = nullptr;
    QAction* m_undoButton = nullptr;
    QAction* m_redoButton = nullptr;
    QAction* m_undoAction = nullptr; ///< Edit > Undo
    QAction* m_redoAction = nullptr;
    QLabel* m_timing = nullptr;
    QProgressBar* m_busy = nullptr;
    QString m_appliedTheme;
    QString m_lessonTitle;
    QDockWidget* m_inputsDock = nullptr;
    bool m_sizedDocks = false; ///< the left docks' first width is set once, when first shown
    QActionGroup* m_themeGroup = nullptr;
    QActionGroup* m_languageGroup = nullptr;
    QAction* m_presentationAction = nullptr;
    bool m_presentation = false;
    bool m_inputsWereVisible = true;
};

} // namespace attnlab::ui

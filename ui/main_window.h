#pragma once
/// MainWindow: the inputs panel on the left, the views as tabs, menus for sessions, examples,
/// export and themes, and a status bar with the inline error, the run time and a busy
/// indicator. It owns the Document.

#include <QMainWindow>
#include <QStringList>

#include <vector>

class QAction;
class QActionGroup;
class QDockWidget;
class QCheckBox;
class QComboBox;
class QLabel;
class QMenu;
class QProgressBar;
class QSpinBox;
class QTabWidget;

namespace attnlab::ui {

class Document;
class InputsPanel;
class View;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    Document* document() const { return m_document; }
    InputsPanel* inputsPanel() const { return m_inputs; }
    /// The view with this id (heatmap, heads, entropy, statistics, compare), or null.
    View* view(const QString& id) const;
    View* currentView() const;
    void showView(const QString& id);
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
    void changeEvent(QEvent* event) override;

private:
    void createActions();
    void createToolBar();
    void updateTitle();
    void updateFromViewState();
    void updateStatus();
    void updateRecentMenu();
    void addRecent(const QString& path);
    void newSession();
    void openDialog();
    bool saveSession();
    bool saveSessionAs();
    void exportFigure();
    void copyFigure();

    Document* m_document;
    InputsPanel* m_inputs = nullptr;
    QTabWidget* m_tabs = nullptr;
    std::vector<View*> m_views;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_examplesMenu = nullptr;
    QComboBox* m_show = nullptr;
    QComboBox* m_colormap = nullptr;
    QComboBox* m_theme = nullptr;
    QSpinBox* m_head = nullptr;
    QCheckBox* m_values = nullptr;
    QLabel* m_error = nullptr;
    QLabel* m_banner = nullptr;
    QAction* m_undoButton = nullptr;
    QAction* m_redoButton = nullptr;
    QLabel* m_timing = nullptr;
    QProgressBar* m_busy = nullptr;
    QString m_appliedTheme;
    QString m_lessonTitle;
    QDockWidget* m_inputsDock = nullptr;
    QActionGroup* m_themeGroup = nullptr;
    QActionGroup* m_languageGroup = nullptr;
    QAction* m_presentationAction = nullptr;
    bool m_presentation = false;
    bool m_inputsWereVisible = true;
};

} // namespace attnlab::ui

#pragma once
/// LessonPanel: the "Lesson" dock beside the views. It walks a lesson (attnlab/lesson.h,
/// docs/lessons.md) one step at a time: the lesson's title, "Step n / N", the step's title,
/// text and formula, a question with Reveal before its answer, Back and Next. Each step sets
/// the session and the view through the Document as one undoable edit. PageUp/PageDown (what
/// presentation clickers send) go back and forward from anywhere in the window; the arrow
/// keys too unless an input has the focus. Next on a step whose answer is hidden reveals it.
///
/// installLessonControls() adds File > Lessons (the bundled lessons in resources/lessons and
/// "Open Lesson…") and the dock to the main window.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>

#include "attnlab/lab/lesson.h"

class QLabel;
class QMenu;
class QPushButton;
class QTextBrowser;

namespace attnlab::ui {

class MainWindow;

class LessonPanel : public QWidget {
    Q_OBJECT
public:
    explicit LessonPanel(MainWindow* window, QWidget* parent = nullptr);
    ~LessonPanel() override;

    /// The views and comparisons a lesson may name (what the window has).
    static LessonOptions lessonOptions();
    /// The bundled lessons (":/lessons/NAME.json"), in file-name order.
    static QStringList bundledLessons();

    /// Reads a lesson (a file or a bundled ":/lessons/..." resource) and shows its first step.
    /// A bad file is one message (returned, and shown in the status bar through the document's
    /// errorOccurred) naming the file and the key, and changes nothing: the session, the undo
    /// history and the lesson shown stay.
    Status openLesson(const QString& path);
    /// Closes the lesson; the session on screen stays.
    void closeLesson();

    bool hasLesson() const { return m_lesson.has_value(); }
    const Lesson* lesson() const { return m_lesson ? &*m_lesson : nullptr; }
    QString lessonPath() const { return m_path; }
    int stepIndex() const { return m_step; }
    int stepCount() const;
    /// Shows step `index` and applies its session and view (one undo step). The next step
    /// applies its changes to the session on screen; any other applies the session it has
    /// when the lesson is walked in order. The message when it cannot apply (or there is no
    /// such step), as openLesson.
    Status goToStep(int index);
    /// Forward: reveals a hidden answer first, else the next step. False at the end.
    bool next();
    /// Back one step. False at the first.
    bool back();
    void reveal();
    bool answerShown() const { return m_revealed; }

    /// The language the lesson is shown in: set by setLanguage(), else the window's.
    QString language() const;
    void setLanguage(const QString& code);

    /// What is on screen (tests, screenshots): the header, the step title, the body text (as
    /// read: without the joiners that keep a number on one line).
    QString headerText() const;
    QString stepTitleText() const;
    QString bodyText() const;
    /// The step's text widget (tests measure whether it fits).
    QTextBrowser* body() const { return m_body; }

protected:
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void refresh();
    Error fail(const QString& message);
    Status applyStep(int index, bool forward);
    QString text(const LocalizedText& text) const;

    MainWindow* m_window;
    std::optional<Lesson> m_lesson;
    QString m_path;
    int m_step = -1;
    bool m_revealed = false;
    QString m_language; ///< empty: follow the window's language

    QLabel* m_header = nullptr;
    QLabel* m_stepTitle = nullptr;
    QTextBrowser* m_body = nullptr;
    QPushButton* m_reveal = nullptr;
    QPushButton* m_back = nullptr;
    QPushButton* m_next = nullptr;
    QPushButton* m_close = nullptr;
};

/// Adds File > Lessons to `fileMenu` and the Lesson dock (hidden until a lesson opens) to
/// `window`; returns the panel.
LessonPanel* installLessonControls(MainWindow* window, QMenu* fileMenu);

} // namespace attnlab::ui

#include "ui/window/lesson_panel.h"

#include <QAbstractItemView>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStatusBar>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <utility>

#include "ui/state/document.h"
#include "ui/views/compare_view.h"
#include "ui/views/image_attention_view.h"
#include "ui/window/data_folders.h"
#if __has_include("ui/window/language.h")
#include "ui/window/language.h" // the window's language (View > Language)
#define ATTNLAB_HAS_LANGUAGE 1
#endif
#include "ui/state/model_document.h"
#include "ui/state/patching_document.h"
#include "ui/views/view.h"
#include "ui/views/view_registry.h"
#include "ui/window/main_window.h"

namespace attnlab::ui {

namespace {

struct ComparisonName {
    const char* name;
    Comparison kind;
};
// The compare view's B sides by the names a lesson uses.
constexpr std::array<ComparisonName, 6> kComparisons = {{
    {"none", Comparison::None},
    {"full-vs-causal", Comparison::FullVsCausal},
    {"softmax-vs-linear", Comparison::SoftmaxVsLinear},
    {"mha-vs-gqa", Comparison::MhaVsGqa},
    {"mha-vs-mqa", Comparison::MhaVsMqa},
    {"none-vs-rope", Comparison::NoneVsRope},
}};

/// The HTML of a lesson text without lessonTextToHtml's outer paragraph (for inline use).
QString inlineHtml(const std::string& text) {
    QString html = QString::fromStdString(lessonTextToHtml(text));
    if (html.startsWith(QLatin1String("<p>")) && html.endsWith(QLatin1String("</p>")))
        html = html.mid(3, html.size() - 7);
    return html;
}

/// A formula as HTML that breaks lines only where mathematics does: after a comma, a
/// relation or a binary operator ("=", "+", "−", "⇔", "→"), never inside "max_j s_j".
QString formulaHtml(const std::string& formula) {
    static const QString breakAfter = QStringLiteral(",\uff0c;=+\u2212\u21d4\u2192\u2190");
    QString text = QString::fromStdString(formula);
    QChar previous;
    for (QChar& c : text) {
        if (c == QLatin1Char(' ') && !breakAfter.contains(previous)) c = QChar(0x00a0);
        if (c != QLatin1Char(' ')) previous = c;
    }
    return inlineHtml(text.toStdString());
}

/// The window's language: View > Language's, else the stored preference or the system's.
QString windowLanguage() {
#ifdef ATTNLAB_HAS_LANGUAGE
    return currentLanguage();
#else
    const QString stored = QSettings().value(QStringLiteral("language")).toString();
    const QString code = stored.isEmpty() ? QLocale().name() : stored;
    return code.startsWith(QLatin1String("zh")) ? QStringLiteral("zh_CN") : QStringLiteral("en");
#endif
}

/// Names the lesson in the window title, through MainWindow::setLessonTitle where the window
/// has it (the title then reads "lesson \u2014 session \u2014 AttnLab").
template <typename Window> void showLessonTitle(Window* window, const QString& title) {
    if constexpr (requires { window->setLessonTitle(title); }) {
        window->setLessonTitle(title);
    } else {
        const QString base = window->windowTitle().section(QStringLiteral(" \u2014 "), -2);
        window->setWindowTitle(title.isEmpty() ? base : title + QStringLiteral(" \u2014 ") + base);
    }
}

/// U+2060 WORD JOINER: no line break on either side of it.
constexpr QChar kWordJoiner(0x2060);

/// `html` with a word joiner after each point or comma between two digits, so that a number
/// ("0.48", "1,024") is never broken across lines: Qt's line breaker otherwise allows a break
/// after the point ("0." / "48" in a narrow panel).
QString keepNumbersWhole(QString html) {
    // Not inside a tag: "(?![^<]*>)" (markup keeps its own numbers).
    static const QRegularExpression separator(QStringLiteral("(?<=\\d)([.,])(?=\\d)(?![^<]*>)"));
    return html.replace(separator, QStringLiteral("\\1") + kWordJoiner);
}

/// Whether keys typed into `widget` belong to it (text, numbers, lists), not to the lesson.
bool isInput(const QWidget* widget) {
    if (!widget) return false;
    if (const auto* text = qobject_cast<const QTextEdit*>(widget)) return !text->isReadOnly();
    return qobject_cast<const QLineEdit*>(widget) ||
           qobject_cast<const QAbstractSpinBox*>(widget) ||
           qobject_cast<const QComboBox*>(widget) || qobject_cast<const QAbstractSlider*>(widget) ||
           qobject_cast<const QPlainTextEdit*>(widget) ||
           qobject_cast<const QAbstractItemView*>(widget);
}

/// A model folder named by a lesson: as given when absolute, else beside the lesson file, else
/// in AttnLab's data folders (data_folders.h).
/// A file a lesson names (a model's config.json, an image): as given when absolute, else beside
/// the lesson, then in AttnLab's resources folder; empty when none has it.
QString findLessonFile(const QString& lessonPath, const QString& file) {
    if (QDir::isAbsolutePath(file)) return QFileInfo::exists(file) ? file : QString();
    if (!lessonPath.isEmpty() && !lessonPath.startsWith(QLatin1Char(':'))) {
        const QString beside = QFileInfo(lessonPath).absoluteDir().filePath(file);
        if (QFileInfo::exists(beside)) return beside;
    }
    return findDataFile(file);
}

/// A lesson's model folder: the one holding its config.json, found as findLessonFile finds it.
QString findModelFolder(const QString& lessonPath, const QString& folder) {
    const QString config =
        findLessonFile(lessonPath, QDir(folder).filePath(QStringLiteral("config.json")));
    return config.isEmpty() ? QString() : QFileInfo(config).absolutePath();
}

} // namespace

LessonPanel::LessonPanel(MainWindow* window, QWidget* parent) : QWidget(parent), m_window(window) {
    setObjectName(QStringLiteral("LessonPanel"));
    m_header = new QLabel(this);
    m_header->setWordWrap(true);
    m_header->setObjectName(QStringLiteral("LessonHeader"));
    m_close = new QPushButton(this);
    m_close->setFlat(true);
    m_close->setFocusPolicy(Qt::NoFocus);
    m_stepTitle = new QLabel(this);
    m_stepTitle->setWordWrap(true);
    m_stepTitle->setObjectName(QStringLiteral("LessonStepTitle"));
    m_stepTitle->setTextFormat(Qt::RichText); // the title escaped, in a larger font
    m_body = new QTextBrowser(this);
    m_body->setObjectName(QStringLiteral("LessonText"));
    m_body->setOpenLinks(false);
    m_body->setFrameShape(QFrame::NoFrame);
    m_body->setFocusPolicy(Qt::NoFocus); // the arrow keys step through the lesson
    m_reveal = new QPushButton(this);
    m_back = new QPushButton(this);
    m_next = new QPushButton(this);
    for (QPushButton* button : {m_reveal, m_back, m_next})
        button->setFocusPolicy(Qt::NoFocus);

    auto* top = new QHBoxLayout;
    top->addWidget(m_header, 1);
    top->addWidget(m_close, 0, Qt::AlignTop);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_back);
    buttons->addStretch(1);
    buttons->addWidget(m_next);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_stepTitle);
    layout->addWidget(m_body, 1);
    layout->addWidget(m_reveal, 0, Qt::AlignLeft);
    layout->addLayout(buttons);
    setMinimumWidth(240);
    setFocusPolicy(Qt::StrongFocus);

    connect(m_back, &QPushButton::clicked, this, [this] { back(); });
    connect(m_next, &QPushButton::clicked, this, [this] { next(); });
    connect(m_reveal, &QPushButton::clicked, this, [this] { reveal(); });
    connect(m_close, &QPushButton::clicked, this, [this] { closeLesson(); });
    qApp->installEventFilter(this);
    refresh();
}

LessonPanel::~LessonPanel() {
    qApp->removeEventFilter(this);
}

LessonOptions LessonPanel::lessonOptions() {
    LessonOptions options;
    for (const QString& id : viewIds())
        options.views.push_back(id.toStdString());
    for (const ComparisonName& comparison : kComparisons)
        options.comparisons.emplace_back(comparison.name);
    return options;
}

QStringList LessonPanel::bundledLessons() {
    QStringList paths;
    const QDir dir(QStringLiteral(":/lessons"));
    for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
        paths << dir.filePath(name);
    return paths;
}

int LessonPanel::stepCount() const {
    return m_lesson ? static_cast<int>(m_lesson->steps.size()) : 0;
}

QString LessonPanel::language() const {
    return m_language.isEmpty() ? windowLanguage() : m_language;
}

void LessonPanel::setLanguage(const QString& code) {
    m_language = code;
    refresh();
}

QString LessonPanel::text(const LocalizedText& localized) const {
    return QString::fromStdString(localized.in(language().toStdString()));
}

Error LessonPanel::fail(const QString& message) {
    emit m_window->document()->errorOccurred(message);
    return Error{message.toStdString()};
}

Status LessonPanel::openLesson(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return fail(tr("Cannot open the lesson %1: %2").arg(path, file.errorString()));
    }
    // One byte more than a lesson may have: the reader then says the file is too large.
    const QByteArray bytes = file.read(static_cast<qint64>(Lesson::kMaxFileBytes) + 1);
    Result<Lesson> read = lessonFromJson(bytes.toStdString(), lessonOptions());
    if (!read) {
        return fail(tr("%1: %2").arg(path, QString::fromStdString(read.error())));
    }
    std::optional<Lesson> previous = std::move(m_lesson);
    const QString previousPath = m_path;
    const int previousStep = m_step;
    m_lesson = std::move(*read);
    m_path = path;
    m_step = -1;
    if (Status failed = applyStep(0, false)) {
        m_lesson = std::move(previous);
        m_path = previousPath;
        m_step = previousStep;
        refresh();
        return failed;
    }
    if (auto* dock = qobject_cast<QDockWidget*>(parentWidget())) {
        dock->show();
        dock->raise();
    }
    return std::nullopt;
}

void LessonPanel::closeLesson() {
    m_lesson.reset();
    m_path.clear();
    m_step = -1;
    m_revealed = false;
    showLessonTitle(m_window, QString());
    refresh();
    if (auto* dock = qobject_cast<QDockWidget*>(parentWidget())) dock->hide();
}

Status LessonPanel::goToStep(int index) {
    if (!m_lesson) return fail(tr("No lesson is open"));
    if (index < 0 || index >= stepCount())
        return fail(
            tr("%1 has no step %2 (it has %3)").arg(m_path).arg(index + 1).arg(stepCount()));
    return applyStep(index, index == m_step + 1);
}

bool LessonPanel::next() {
    if (!m_lesson) return false;
    const LessonStep& step = m_lesson->steps[static_cast<std::size_t>(m_step)];
    if (!step.question.empty() && !m_revealed) {
        reveal();
        return true;
    }
    return m_step + 1 < stepCount() && !goToStep(m_step + 1);
}

bool LessonPanel::back() {
    return m_lesson && m_step > 0 && !goToStep(m_step - 1);
}

void LessonPanel::reveal() {
    if (!m_lesson || m_revealed) return;
    m_revealed = true;
    refresh();
}

Status LessonPanel::applyStep(int index, bool forward) {
    const LessonStep& step = m_lesson->steps[static_cast<std::size_t>(index)];
    Document* document = m_window->document();
    const Session& current = document->session();
    Result<Session> next = Error{};
    if (forward) {
        next = lessonStepSession(step, current);
    } else {
        // Back, a jump or the first step: the session the step has when walked in order.
        Session resolved = step.session;
        resolved.viewState.theme = current.viewState.theme;
        next = std::move(resolved);
    }
    const QString where =
        tr("%1, step %2").arg(m_path.isEmpty() ? tr("lesson") : m_path).arg(index + 1);
    if (!next) {
        return fail(tr("%1: %2").arg(where, QString::fromStdString(next.error())));
    }
    QString modelFolder;
    if (step.model) {
        modelFolder = findModelFolder(m_path, QString::fromStdString(step.model->path));
        if (modelFolder.isEmpty()) {
            return fail(tr("%1: the model folder %2 was not found beside the lesson nor in "
                           "AttnLab's resources folder")
                            .arg(where, QString::fromStdString(step.model->path)));
        }
    }
    QString imageFile;
    if (step.model && !step.model->image.empty()) {
        imageFile = findLessonFile(m_path, QString::fromStdString(step.model->image));
        if (imageFile.isEmpty()) {
            return fail(tr("%1: the image %2 was not found beside the lesson nor in AttnLab's "
                           "resources folder")
                            .arg(where, QString::fromStdString(step.model->image)));
        }
    }
    const QString stepTitle = text(step.title);
    next->title = stepTitle.toStdString();

    if (!step.comparison.empty()) {
        const auto found = std::find_if(kComparisons.begin(), kComparisons.end(),
                                        [&](auto& c) { return step.comparison == c.name; });
        if (auto* compare = qobject_cast<CompareView*>(m_window->view(QStringLiteral("compare")));
            compare && found != kComparisons.end())
            compare->setComparison(found->kind);
    }
    if (m_step < 0)
        document->reset(*next); // opening: like an example, the lesson starts afresh
    else
        document->edit(*next, tr("Lesson step %1: %2").arg(index + 1).arg(stepTitle));
    // The session shown is the lesson's: nothing of the viewer's to save.
    document->undoStack()->setClean();
    m_window->showView(QString::fromStdString(next->viewState.view));
    if (step.model) {
        ModelDocument* models = ModelDocument::of(document);
        if (models->directory() != modelFolder) models->openModel(modelFolder);
        if (!imageFile.isEmpty()) {
            // Opened once the model is (a load in flight keeps the file for its end).
            if (!models->image() || models->image()->name != QFileInfo(imageFile).fileName())
                models->openImage(imageFile);
            if (auto* image = qobject_cast<ImageAttentionView*>(
                    m_window->view(QStringLiteral("image-attention"))))
                image->setMode(step.model->overlay == "rollout" ? ImageAttentionView::Mode::Rollout
                               : step.model->overlay == "mean"
                                   ? ImageAttentionView::Mode::MeanOfHeads
                                   : ImageAttentionView::Mode::Head);
        } else {
            models->setText(QString::fromStdString(step.model->text));
        }
        models->setAttentionKind(QString::fromStdString(step.model->attention));
        models->focus(step.model->layer, step.model->head);
        models->showModel();
        if (!step.model->corrupted.empty()) {
            PatchingInputs inputs;
            inputs.corrupted = QString::fromStdString(step.model->corrupted);
            inputs.target =
                step.model->patch == "residual" ? PatchTarget::Residual : PatchTarget::Heads;
            PatchingDocument::of(document)->applyInputs(inputs);
        }
    }
    m_step = index;
    m_revealed = false;
    showLessonTitle(m_window, text(m_lesson->title));
    refresh();
    return std::nullopt;
}

void LessonPanel::refresh() {
    m_close->setText(QStringLiteral("\u2715"));
    m_close->setToolTip(tr("Close the lesson"));
    m_back->setText(tr("\u25c2 Back"));
    m_back->setToolTip(tr("The previous step (PageUp, \u2190)"));
    m_next->setText(tr("Next \u25b8"));
    m_next->setToolTip(tr("The next step (PageDown, \u2192); reveals the answer first"));
    m_reveal->setText(tr("Reveal the answer"));
    if (auto* dock = qobject_cast<QDockWidget*>(parentWidget())) dock->setWindowTitle(tr("Lesson"));
    if (!m_lesson) {
        m_header->setText(tr("No lesson open"));
        m_stepTitle->setText(tr("File \u25b8 Lessons"));
        m_body->setHtml(tr("<p>Choose a lesson in <b>File \u25b8 Lessons</b>, or open your own "
                           "with <b>Open Lesson\u2026</b>.</p><p>PageUp and PageDown (what "
                           "presentation clickers send) and the arrow keys step through it.</p>"));
        m_reveal->hide();
        m_back->setEnabled(false);
        m_next->setEnabled(false);
        m_close->setEnabled(false);
        return;
    }
    const LessonStep& step = m_lesson->steps[static_cast<std::size_t>(m_step)];
    m_header->setText(tr("%1 \u2014 step %2 / %3")
                          .arg(text(m_lesson->title).toHtmlEscaped())
                          .arg(m_step + 1)
                          .arg(stepCount()));
    m_stepTitle->setText(QStringLiteral("<span style=\"font-size: x-large; font-weight: bold;\">"
                                        "%1</span>")
                             .arg(text(step.title).toHtmlEscaped()));
    const std::string lang = language().toStdString();
    // The formula first, large and centred: what the class keeps in view.
    QString html;
    if (!step.formula.empty()) {
        html += QStringLiteral("<p align=\"center\" style=\"font-family: serif; font-size: "
                               "x-large;\">%1</p>")
                    .arg(formulaHtml(step.formula.in(lang)));
    }
    html += QString::fromStdString(lessonTextToHtml(step.text.in(lang)));
    if (!step.question.empty()) {
        html += QStringLiteral("<hr><p><b>%1</b> %2</p>")
                    .arg(tr("Question:"), inlineHtml(step.question.in(lang)));
        if (m_revealed)
            html += QStringLiteral("<p><a name=\"answer\"></a><b>%1</b> %2</p>")
                        .arg(tr("Answer:"), inlineHtml(step.answer.in(lang)));
    }
    // The text stays at the theme's reading size, on a projector too; a long step scrolls.
    m_body->setHtml(keepNumbersWhole(html));
    // A revealed answer is brought into view (it is last, often below a long text).
    if (m_revealed && !step.question.empty())
        QTimer::singleShot(0, m_body,
                           [body = m_body] { body->scrollToAnchor(QStringLiteral("answer")); });
    m_reveal->setVisible(!step.question.empty() && !m_revealed);
    m_back->setEnabled(m_step > 0);
    m_next->setEnabled(m_step + 1 < stepCount() || (!step.question.empty() && !m_revealed));
    m_close->setEnabled(true);
}

QString LessonPanel::headerText() const {
    return m_header->text();
}

QString LessonPanel::stepTitleText() const {
    return m_stepTitle->text();
}

QString LessonPanel::bodyText() const {
    return m_body->toPlainText().remove(kWordJoiner);
}

void LessonPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) {
        refresh();
        if (m_lesson) showLessonTitle(m_window, text(m_lesson->title));
    }
    QWidget::changeEvent(event);
}

bool LessonPanel::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::KeyPress || !m_lesson || !isVisible()) return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->window() != m_window) return false;
    const auto* key = static_cast<QKeyEvent*>(event);
    if ((key->modifiers() & ~Qt::KeypadModifier) != Qt::NoModifier) return false;
    switch (key->key()) {
    case Qt::Key_PageDown: // presentation clickers
        next();
        return true;
    case Qt::Key_PageUp:
        back();
        return true;
    case Qt::Key_Right:
    case Qt::Key_Down:
    case Qt::Key_Left:
    case Qt::Key_Up: {
        // Arrows edit text and numbers in an input; elsewhere they step through the lesson.
        if (isInput(QApplication::focusWidget())) return false;
        if (key->key() == Qt::Key_Right || key->key() == Qt::Key_Down)
            next();
        else
            back();
        return true;
    }
    default:
        return false;
    }
}

LessonPanel* installLessonControls(MainWindow* window, QMenu* fileMenu) {
    auto* dock = new QDockWidget(LessonPanel::tr("Lesson"), window);
    dock->setObjectName(QStringLiteral("LessonDock"));
    auto* panel = new LessonPanel(window, dock);
    dock->setWidget(panel);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    // Beside the views, sharing the left area with the inputs (a tab each): the views keep
    // their width on a 1280-pixel projector, and the inputs are one click away.
    if (auto* inputs = window->findChild<QDockWidget*>(QStringLiteral("InputsDock"));
        inputs && window->dockWidgetArea(inputs) != Qt::NoDockWidgetArea) {
        window->addDockWidget(window->dockWidgetArea(inputs), dock);
        window->tabifyDockWidget(inputs, dock);
    } else {
        window->addDockWidget(Qt::RightDockWidgetArea, dock);
    }
    dock->hide();

    QMenu* menu = fileMenu->addMenu(LessonPanel::tr("&Lessons"));
    menu->setObjectName(QStringLiteral("LessonsMenu"));
    // Rebuilt each time it opens: the titles follow the language.
    auto rebuild = [window, panel, menu] {
        menu->clear();
        const std::string language = panel->language().toStdString();
        for (const QString& path : LessonPanel::bundledLessons()) {
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly)) continue;
            const Result<Lesson> read =
                lessonFromJson(file.readAll().toStdString(), LessonPanel::lessonOptions());
            if (!read) continue; // the tests open every bundled lesson
            const QString title = QString::fromStdString(read->title.in(language));
            QAction* action = menu->addAction(title);
            action->setData(path);
            action->setToolTip(
                LessonPanel::tr("%n step(s)", nullptr, static_cast<int>(read->steps.size())));
            QObject::connect(action, &QAction::triggered, panel, [window, panel, path] {
                if (window->maybeSave()) panel->openLesson(path);
            });
        }
        menu->addSeparator();
        QAction* open = menu->addAction(LessonPanel::tr("Open &Lesson\u2026"));
        open->setObjectName(QStringLiteral("OpenLessonAction"));
        QObject::connect(open, &QAction::triggered, panel, [window, panel] {
            const QString path =
                QFileDialog::getOpenFileName(window, LessonPanel::tr("Open lesson"), QString(),
                                             LessonPanel::tr("AttnLab lessons (*.json)"));
            if (!path.isEmpty() && window->maybeSave()) panel->openLesson(path);
        });
        QAction* close = menu->addAction(LessonPanel::tr("&Close Lesson"));
        close->setEnabled(panel->hasLesson());
        QObject::connect(close, &QAction::triggered, panel, &LessonPanel::closeLesson);
    };
    rebuild();
    QObject::connect(menu, &QMenu::aboutToShow, menu, rebuild);
    return panel;
}

} // namespace attnlab::ui

// The window entry point: `attnlab [SESSION.json | LESSON.json]`. `--screenshots DIR` (with
// QT_QPA_PLATFORM=offscreen or under Xvfb) grabs the window with each view in front into
// DIR/<view>.png, or with a lesson each of its steps into DIR/lesson_step_NN.png, and exits
// (`--size WxH` sets the window size); `--theme NAME`, `--example NAME`, `--lesson FILE`,
// `--model DIR` with `--text TEXT` (or an image classifier's `--image FILE`) pick what to show
// first.

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QHashFunctions>
#include <QIcon>
#include <QLabel>
#include <QTimer>

#include <iostream>

#include "attnlab/model/hub_cache.h"
#include "attnlab/model/hub_download.h"
#include "commands.h"
#include "ui/state/document.h"
#include "ui/state/model_document.h"
#include "ui/views/view.h"
#include "ui/window/hub_download_dialog.h"
#include "ui/window/language.h"
#include "ui/window/lesson_panel.h"
#include "ui/window/main_window.h"
#include "ui/widgets/theme.h"

namespace attnlab::app {

namespace {

/// Whether `path` holds a lesson (a JSON object with "steps") rather than a session.
bool isLessonFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || file.size() > (16 << 20)) return false;
    const QJsonDocument json = QJsonDocument::fromJson(file.readAll());
    return json.isObject() && json.object().value(QStringLiteral("steps")).isArray();
}

/// Each step of the open lesson, in order, as DIR/lesson_step_NN.png (the whole window).
QStringList saveLessonScreenshots(ui::MainWindow& window, ui::LessonPanel& lessons,
                                  const QString& directory) {
    QDir().mkpath(directory);
    QStringList written;
    ui::ModelDocument* models = ui::ModelDocument::of(window.document());
    for (int step = 0; step < lessons.stepCount(); ++step) {
        if (const Status failed = lessons.goToStep(step))
            std::cerr << "attnlab: lesson step " << step + 1 << ": " << failed->message << '\n';
        for (int i = 0; i < 5; ++i) {
            window.document()->waitForIdle();
            models->waitForIdle();
            QCoreApplication::processEvents();
        }
        if (ui::View* shown = window.currentView()) shown->ensureComplete();
        QCoreApplication::processEvents();
        const QString path = QDir(directory).filePath(
            QStringLiteral("lesson_step_%1.png").arg(step + 1, 2, 10, QLatin1Char('0')));
        if (window.grab().save(path)) written << path;
    }
    return written;
}

} // namespace

int guiMain(int argc, char** argv) {
    QHashSeed::setDeterministicGlobalSeed(); // exported figures: same view, same bytes
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnLab"));
    QCoreApplication::setApplicationName(QStringLiteral("AttnLab"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/attnlab.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QCoreApplication::translate("main", "A lab for attention"));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("session"),
                                 QCoreApplication::translate("main", "Session file to open."),
                                 QStringLiteral("[SESSION.json]"));
    const QCommandLineOption screenshots(
        QStringLiteral("screenshots"),
        QCoreApplication::translate("main", "Save a PNG of each view into DIR, then exit."),
        QStringLiteral("DIR"));
    const QCommandLineOption theme(QStringLiteral("theme"),
                                   QCoreApplication::translate("main", "light, dark or projector"),
                                   QStringLiteral("NAME"));
    const QCommandLineOption example(
        QStringLiteral("example"),
        QCoreApplication::translate("main", "Open a bundled example by file name."),
        QStringLiteral("NAME"));
    const QCommandLineOption size(
        QStringLiteral("size"),
        QCoreApplication::translate("main", "The window's size, WxH."),
        QStringLiteral("WxH"));
    parser.addOption(screenshots);
    parser.addOption(size);
    parser.addOption(theme);
    parser.addOption(example);
    const QCommandLineOption language(
        QStringLiteral("language"),
        QCoreApplication::translate("main", "en or zh_CN (default: the saved choice, else the "
                                            "system's language)."),
        QStringLiteral("CODE"));
    parser.addOption(language);
    const QCommandLineOption modelOption(
        QStringLiteral("model"),
        QCoreApplication::translate("main", "Open a model folder (config.json, *.safetensors, "
                                            "tokenizer.json) and show it."),
        QStringLiteral("DIR"));
    const QCommandLineOption textOption(QStringLiteral("text"),
                                        QCoreApplication::translate("main", "The text to run."),
                                        QStringLiteral("TEXT"));
    const QCommandLineOption imageOption(
        QStringLiteral("image"),
        QCoreApplication::translate("main", "The image an image model (--model) reads."),
        QStringLiteral("FILE"));
    const QCommandLineOption lessonOption(
        QStringLiteral("lesson"),
        QCoreApplication::translate("main", "Open a lesson file (or a bundled lesson's name, "
                                            "e.g. 16_translation) at its first step."),
        QStringLiteral("FILE"));
    parser.addOption(modelOption);
    parser.addOption(textOption);
    parser.addOption(imageOption);
    parser.addOption(lessonOption);
    parser.process(app);

    // Before the window is built, so every text starts in that language.
    QString languageCode = ui::preferredLanguage();
    if (parser.isSet(language)) {
        languageCode = ui::normalizedLanguage(parser.value(language));
        if (languageCode.isEmpty()) {
            std::cerr << "attnlab: --language: unknown language '"
                      << parser.value(language).toStdString() << "' (en, zh_CN)\n";
            return 2;
        }
    }
    ui::setLanguage(languageCode);
    if (parser.isSet(theme) && !ui::themeNames().contains(parser.value(theme))) {
        std::cerr << "attnlab: --theme: unknown theme '" << parser.value(theme).toStdString()
                  << "' (" << ui::themeNames().join(QStringLiteral(", ")).toStdString() << ")\n";
        return 2;
    }

    ui::MainWindow window;
    const QStringList positional = parser.positionalArguments();
    // A lesson given where a session is expected opens as the lesson it is.
    QString lessonPath = parser.isSet(lessonOption) ? parser.value(lessonOption) : QString();
    if (!positional.isEmpty() && lessonPath.isEmpty() && isLessonFile(positional.first()))
        lessonPath = positional.first();
    else if (!positional.isEmpty() && !window.openSession(positional.first())) {
        std::cerr << "attnlab: " << window.statusMessage().toStdString() << '\n';
        if (parser.isSet(screenshots)) return 2;
    }
    if (parser.isSet(example))
        window.openExample(QStringLiteral(":/examples/%1.json").arg(parser.value(example)));
    // The theme of this run; View > Theme changes (and keeps) the preference.
    if (parser.isSet(theme)) window.setTheme(parser.value(theme), false);
    if (parser.isSet(size)) {
        const QStringList parts = parser.value(size).split(QLatin1Char('x'));
        if (parts.size() == 2 && parts[0].toInt() > 0 && parts[1].toInt() > 0)
            window.resize(parts[0].toInt(), parts[1].toInt());
    }
    window.show();
    // The latest model error: the handler below stays connected while the window runs.
    QString modelError;
    if (parser.isSet(modelOption)) {
        ui::ModelDocument* models = ui::ModelDocument::of(window.document());
        // A model that does not open, or cannot run the text (longer than its positions),
        // keeps the text: the lab session runs it instead, under the model's message.
        const std::string text = parser.value(textOption).toStdString();
        const bool hasText = parser.isSet(textOption);
        QObject::connect(models, &ui::ModelDocument::errorOccurred, &window,
                         [&modelError, &window, models, text, hasText](const QString& message) {
                             modelError = message;
                             if (!hasText || models->run() ||
                                 window.document()->session().text == text)
                                 return;
                             window.document()->modify([&text](Session& s) { s.text = text; },
                                                       QCoreApplication::translate("main",
                                                                                   "Edit text"));
                         });
        if (parser.isSet(textOption)) models->setText(parser.value(textOption));
        // A folder, or a Hub id in the Hugging Face cache (hub_cache.h); one not there yet is
        // downloaded first, in the dialog that shows its files and progress (not offline, and
        // not for --screenshots, which draws what it can open now).
        const std::string argument = parser.value(modelOption).toStdString();
        const auto folder = model::resolveModelArgument(argument);
        if (folder) {
            models->openModel(QString::fromStdString(*folder));
        } else if (model::parseHubId(argument) && !model::hubOffline() &&
                   !parser.isSet(screenshots)) {
            ui::HubDownloadDialog download(QString::fromStdString(argument), &window);
            if (download.exec() == QDialog::Accepted)
                models->openModel(download.folder());
            else
                emit models->errorOccurred(QString::fromStdString(folder.error()) +
                                           QLatin1Char(' ') + download.status()->text());
        } else {
            emit models->errorOccurred(QString::fromStdString(folder.error()));
        }
        // Read once the model has loaded (an image classifier's).
        if (parser.isSet(imageOption)) models->openImage(parser.value(imageOption));
        if (parser.isSet(screenshots)) {
            models->waitForIdle();
            if (!models->model()) {
                std::cerr << "attnlab: --model: " << modelError.toStdString() << '\n';
                return 2;
            }
        }
    } else if (parser.isSet(textOption)) {
        const std::string text = parser.value(textOption).toStdString();
        window.document()->modify([&text](Session& s) { s.text = text; },
                                  QCoreApplication::translate("main", "Edit text"));
    }
    ui::LessonPanel* lessons = window.findChild<ui::LessonPanel*>();
    if (!lessonPath.isEmpty() && lessons) {
        if (!QFileInfo::exists(lessonPath) &&
            QFile::exists(QStringLiteral(":/lessons/%1.json").arg(lessonPath)))
            lessonPath = QStringLiteral(":/lessons/%1.json").arg(lessonPath);
        if (const Status failed = lessons->openLesson(lessonPath)) {
            std::cerr << "attnlab: --lesson: " << failed->message << '\n';
            if (parser.isSet(screenshots)) return 2;
        }
    }
    if (parser.isSet(screenshots)) {
        const QStringList written =
            lessons && lessons->hasLesson()
                ? saveLessonScreenshots(window, *lessons, parser.value(screenshots))
                : window.saveScreenshots(parser.value(screenshots));
        for (const QString& path : written)
            std::cout << path.toStdString() << '\n';
        return 0;
    }
    return app.exec();
}

} // namespace attnlab::app

#include "ui/window/model_tool_bar.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMimeData>
#include <QPointer>
#include <QProgressBar>
#include <QProgressDialog>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUrl>

#include <algorithm>

#include "attnlab/model/architecture.h"
#include "ui/state/document.h"
#include "ui/state/experiment_data.h"
#include "ui/state/model_document.h"
#include "ui/window/data_folders.h"
#include "ui/window/open_model_dialog.h"

namespace attnlab::ui {

namespace {

constexpr int kMaxRecentModels = 8;
const char* const kRecentModelsKey = "recentModels";
const char* const kBundledModel = "tiny-llama-induction";
const char* const kTranslationModel = "tiny-marian-en-zh";
const char* const kFillMaskModel = "tiny-bert-en";
const char* const kImageModel = "tiny-vit-shapes";
/// The bundled example images (resources/images/shapes), in the Examples menu's order.
const char* const kExampleImages[] = {QT_TRANSLATE_NOOP("attnlab::ui::Shapes", "circle"),
                                      QT_TRANSLATE_NOOP("attnlab::ui::Shapes", "square"),
                                      QT_TRANSLATE_NOOP("attnlab::ui::Shapes", "triangle"),
                                      QT_TRANSLATE_NOOP("attnlab::ui::Shapes", "cross")};

/// The file suffixes the file dialog and a drop take as images.
const QStringList& imageSuffixes() {
    static const QStringList suffixes = {"png", "jpg", "jpeg", "bmp", "gif", "webp"};
    return suffixes;
}

QString imageFileFilter() {
    QStringList patterns;
    for (const QString& suffix : imageSuffixes())
        patterns << QStringLiteral("*.") + suffix;
    return QObject::tr("Images (%1);;All files (*)").arg(patterns.join(QLatin1Char(' ')));
}

/// Takes image files dropped on the window to the open image classifier.
class ImageDropFilter : public QObject {
public:
    ImageDropFilter(QMainWindow* window, ModelDocument* models)
        : QObject(window), m_models(models) {
        window->setAcceptDrops(true);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
            auto* drag = static_cast<QDropEvent*>(event);
            if (imageIn(drag->mimeData()).isEmpty() || !m_models->readsImages())
                return QObject::eventFilter(watched, event);
            drag->acceptProposedAction();
            return true;
        }
        if (event->type() == QEvent::Drop) {
            auto* drop = static_cast<QDropEvent*>(event);
            const QString path = imageIn(drop->mimeData());
            if (path.isEmpty() || !m_models->readsImages())
                return QObject::eventFilter(watched, event);
            drop->acceptProposedAction();
            m_models->openImage(path);
            return true;
        }
        return QObject::eventFilter(watched, event);
    }

private:
    static QString imageIn(const QMimeData* data) {
        if (!data || !data->hasUrls() || data->urls().size() != 1) return {};
        const QUrl url = data->urls().front();
        if (!url.isLocalFile()) return {};
        const QString suffix = QFileInfo(url.toLocalFile()).suffix().toLower();
        return imageSuffixes().contains(suffix) ? url.toLocalFile() : QString();
    }
    ModelDocument* m_models;
};

void addRecentModel(const QString& directory) {
    QSettings settings;
    QStringList recent = settings.value(QLatin1String(kRecentModelsKey)).toStringList();
    const QString absolute = QFileInfo(directory).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecentModels)
        recent.removeLast();
    settings.setValue(QLatin1String(kRecentModelsKey), recent);
}

/// Fills the "Switch Heads Off" menu: one submenu per layer, one checkable entry per head.
void fillAblationMenu(QMenu* menu, ModelDocument* models) {
    menu->clear();
    const model::Model* loaded = models->model();
    if (!loaded) return;
    const HeadSet ablated = models->ablatedHeads();
    QAction* focused = menu->addAction(QObject::tr("Switch the &Focused Head Off or On"));
    focused->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_H));
    QObject::connect(focused, &QAction::triggered, models, [models] {
        HeadSet heads = models->ablatedHeads();
        const std::pair<Index, Index> key{models->layer(), models->head()};
        if (!heads.erase(key)) heads.insert(key);
        models->setAblatedHeads(heads);
    });
    QAction* allOn = menu->addAction(QObject::tr("&All Heads On"));
    allOn->setEnabled(!ablated.empty());
    QObject::connect(allOn, &QAction::triggered, models, [models] { models->setAblatedHeads({}); });
    menu->addSeparator();
    const Index layers = loaded->config.layers;
    const Index heads = loaded->config.heads;
    // A large model gets one submenu per layer; the menu lists at most 64 layers.
    for (Index l = 0; l < std::min<Index>(layers, 64); ++l) {
        Index off = 0;
        for (Index h = 0; h < heads; ++h)
            off += ablated.count({l, h});
        QMenu* layerMenu = menu->addMenu(off > 0 ? QObject::tr("Layer %1 (%2 off)").arg(l).arg(off)
                                                 : QObject::tr("Layer %1").arg(l));
        for (Index h = 0; h < heads; ++h) {
            QAction* action = layerMenu->addAction(QObject::tr("Head %1 off").arg(h));
            action->setCheckable(true);
            action->setChecked(ablated.count({l, h}) > 0);
            QObject::connect(action, &QAction::toggled, models, [models, l, h](bool on) {
                HeadSet next = models->ablatedHeads();
                if (on)
                    next.insert({l, h});
                else
                    next.erase({l, h});
                models->setAblatedHeads(next);
            });
        }
    }
}

} // namespace

QString bundledModelDirectory(const QString& name) {
    const QString config =
        findDataFile(QStringLiteral("models/") + name + QStringLiteral("/config.json"));
    return config.isEmpty() ? QString() : QFileInfo(config).absolutePath();
}

QString bundledTranslationModelDirectory() {
    return bundledModelDirectory(QLatin1String(kTranslationModel));
}

bool trainedByTheProject(const QString& directory) {
    QFile readme(QDir(directory).filePath(QStringLiteral("README.md")));
    return !directory.isEmpty() && readme.open(QIODevice::ReadOnly) &&
           readme.readAll().contains("scripts/train_");
}

QString grammarNote(const ModelDocument& models) {
    const QString directory = models.directory();
    const QString name = QFileInfo(directory).fileName();
    // The bundled models by name, then by their README (a folder of the same name elsewhere
    // is someone else's).
    if (name != QLatin1String(kTranslationModel) && name != QLatin1String(kFillMaskModel))
        return {};
    if (!trainedByTheProject(directory)) return {};
    if (name == QLatin1String(kTranslationModel))
        return QObject::tr(
            "<b>What this model knows.</b> It learned English → Chinese only from a small "
            "made-up grammar: about 330 words (animals, people, things, places, 16 names such "
            "as Nina and Ben, verbs in the past tense such as sat, saw, loved) in short "
            "sentences ending in a full stop, joined by “and”, “because” "
            "or “when”. Sentences that work: “the cat sat on the mat.”, "
            "“the dog chased a ball in the park.”, “Nina carried Ben.”, "
            "“the girl was happy because the sun was warm.” Other words (I, love, "
            "weather) and other kinds of sentence give a confident but wrong translation.");
    if (name == QLatin1String(kFillMaskModel))
        return QObject::tr(
            "<b>What this model knows.</b> It learned only from short made-up sentences about a "
            "small world: each animal's sound, home and food, each person's work and place, the "
            "colours of a few things. Sentences that work: “the [MASK] sat on the "
            "mat.”, “the cow ate the [MASK].”, “the grass was "
            "[MASK].”, “the dog [MASK] because it was hungry.” Outside these "
            "words and facts its guesses are nonsense, however sure they look.");
    return {};
}

std::vector<OutsideWord> wordsOutsideVocabulary(const ModelDocument& models) {
    const model::Tokenizer* tokenizer = models.tokenizer();
    if (!tokenizer || !models.active()) return {};
    const bool wholeWords = !grammarNote(models).isEmpty();
    std::vector<OutsideWord> out;
    QSet<QString> seen; // each word once, whatever its case: a long text repeats most of its words
    const QStringList words =
        models.text().split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
    for (QString word : words) {
        // A special token ([MASK], </s>) is not a word; punctuation around a word is a token
        // of its own.
        if (word.contains(QLatin1Char('[')) || word.contains(QLatin1Char('<'))) continue;
        while (!word.isEmpty() && (word.front().isPunct() || word.front().isSymbol()))
            word.remove(0, 1);
        while (!word.isEmpty() && (word.back().isPunct() || word.back().isSymbol()))
            word.chop(1);
        if (word.isEmpty()) continue;
        const QString folded = word.toCaseFolded();
        if (seen.contains(folded)) continue;
        seen.insert(folded);
        const model::Encoding pieces = tokenizer->encode(word.toStdString(), false);
        OutsideWord outside;
        outside.word = word;
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            // As the chips show it: a lone "▁" as ␣.
            outside.pieces << displayToken(pieces.display[i]).trimmed();
            outside.unknown = outside.unknown || tokenizer->isSpecial(pieces.ids[i]);
        }
        // The grammar's plurals are the noun's token and "s" (bottle s).
        const bool plural = pieces.size() == 2 && outside.pieces.back() == QLatin1String("s");
        if (outside.unknown || (wholeWords && pieces.size() > 1 && !plural))
            out.push_back(std::move(outside));
    }
    return out;
}

QString weightsBadgeText(Document* document) {
    const Experiment* shown = document->experiment();
    if (!shown) return {};
    switch (shown->source.kind) {
    case ExperimentSource::Kind::Session:
        return shown->session.identityProjections ? QObject::tr("no weights: identity projections")
                                                  : QObject::tr("untrained: random projections");
    case ExperimentSource::Kind::Model:
        // Only a model this project trained is called trained: any other folder is a
        // checkpoint, whose weights may as well be random (a test fixture, a fresh init).
        return trainedByTheProject(ModelDocument::of(document)->directory())
                   ? QObject::tr("trained model: %1").arg(QString::fromStdString(shown->source.name))
                   : QObject::tr("checkpoint: %1").arg(QString::fromStdString(shown->source.name));
    case ExperimentSource::Kind::AttentionDump:
    case ExperimentSource::Kind::QkvDump:
        return QObject::tr("model dump: %1").arg(QString::fromStdString(shown->source.name));
    }
    return {};
}

void installModelControls(QMainWindow* window, QMenu* fileMenu, QMenu* examplesMenu,
                          Document* document) {
    ModelDocument* models = ModelDocument::of(document);

    // File menu.
    QAction* open = fileMenu->addAction(QObject::tr("Open &Model\u2026"), window, [window, models] {
        QList<QPair<QString, QString>> bundled;
        for (const char* name : {kBundledModel, kTranslationModel, kFillMaskModel})
            if (const QString folder = bundledModelDirectory(QLatin1String(name));
                !folder.isEmpty())
                bundled.append({QLatin1String(name), folder});
        OpenModelDialog dialog(bundled, window);
        if (dialog.exec() == QDialog::Accepted) models->openModel(dialog.chosenFolder());
    });
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    open->setToolTip(QObject::tr("A bundled model, one from the Hugging Face cache, or a "
                                 "checkpoint folder (%1): type text and every view shows the "
                                 "real model")
                         .arg(QString::fromStdString(model::architectureList())));
    QMenu* recentMenu = fileMenu->addMenu(QObject::tr("Open Recent Mo&del"));
    auto updateRecent = [recentMenu, models] {
        recentMenu->clear();
        const QStringList recent =
            QSettings().value(QLatin1String(kRecentModelsKey)).toStringList();
        for (const QString& path : recent) {
            QAction* action = recentMenu->addAction(QFileInfo(path).fileName());
            action->setToolTip(path);
            QObject::connect(action, &QAction::triggered, models,
                             [models, path] { models->openModel(path); });
        }
        recentMenu->setEnabled(!recent.isEmpty());
    };
    updateRecent();
    QAction* close =
        fileMenu->addAction(QObject::tr("Close Model"), models, &ModelDocument::closeModel);
    close->setToolTip(QObject::tr("Back to the lab's own random projections"));
    QAction* openImage =
        fileMenu->addAction(QObject::tr("Open &Image\u2026"), window, [window, models] {
            const QString examples =
                QFileInfo(findDataFile(QStringLiteral("images/shapes/circle.png"))).path();
            const QString path = QFileDialog::getOpenFileName(
                window, QObject::tr("Open an Image for %1").arg(models->displayName()), examples,
                imageFileFilter());
            if (!path.isEmpty()) models->openImage(path);
        });
    openImage->setObjectName(QStringLiteral("OpenImage"));
    openImage->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    openImage->setToolTip(QObject::tr("An image for the open image model (PNG, JPEG): the "
                                      "Image tab shows where it looks. Or drop one on the "
                                      "window."));
    openImage->setEnabled(models->readsImages());
    QObject::connect(models, &ModelDocument::modelChanged, openImage,
                     [openImage, models] { openImage->setEnabled(models->readsImages()); });
    window->installEventFilter(new ImageDropFilter(window, models));

    // The bundled trained model under File > Examples.
    if (examplesMenu) {
        examplesMenu->addSeparator();
        QAction* bundled = examplesMenu->addAction(
            QObject::tr("Trained model: %1 (induction heads)").arg(QLatin1String(kBundledModel)));
        const QString directory = bundledModelDirectory();
        bundled->setEnabled(!directory.isEmpty());
        bundled->setToolTip(
            directory.isEmpty()
                ? QObject::tr("The bundled model was not found beside the program")
                : QObject::tr("A 3-layer Llama trained by scripts/train_demo_model.py: "
                              "layer 0 head 1 attends to the previous token, layer 1 "
                              "head 1 is an induction head"));
        QObject::connect(bundled, &QAction::triggered, models,
                         [models, directory] { models->openModel(directory); });
        QAction* translator = examplesMenu->addAction(
            QObject::tr("Trained model: %1 (English \u2192 Chinese, cross-attention)")
                .arg(QLatin1String(kTranslationModel)));
        const QString translatorDirectory = bundledTranslationModelDirectory();
        translator->setEnabled(!translatorDirectory.isEmpty());
        translator->setToolTip(
            translatorDirectory.isEmpty()
                ? QObject::tr("The bundled model was not found beside the program")
                : QObject::tr("A small Marian encoder-decoder trained on a made-up grammar "
                              "of about 330 English words: type English, read the Chinese "
                              "and the cross-attention that wrote it"));
        QObject::connect(translator, &QAction::triggered, models, [models, translatorDirectory] {
            models->openModel(translatorDirectory);
            models->setText(QStringLiteral("the cat sat on the mat"));
        });
        QAction* encoder = examplesMenu->addAction(
            QObject::tr("Trained model: %1 (BERT: fill in [MASK], two-way attention)")
                .arg(QLatin1String(kFillMaskModel)));
        const QString encoderDirectory = bundledModelDirectory(QLatin1String(kFillMaskModel));
        encoder->setEnabled(!encoderDirectory.isEmpty());
        encoder->setToolTip(encoderDirectory.isEmpty()
                                ? QObject::tr("The bundled model was not found beside the program")
                                : QObject::tr("A 3-layer BERT trained on short made-up "
                                              "sentences about animals and people: type a "
                                              "sentence with [MASK] and see what fills it, and "
                                              "how the mask reads both sides"));
        QObject::connect(encoder, &QAction::triggered, models, [models, encoderDirectory] {
            models->openModel(encoderDirectory);
            models->setText(QStringLiteral("the [MASK] sat on the mat."));
        });
        const QString visionDirectory = bundledModelDirectory(QLatin1String(kImageModel));
        QMenu* images = examplesMenu->addMenu(
            QObject::tr("Trained model: %1 (ViT: where the class token looks)")
                .arg(QLatin1String(kImageModel)));
        images->setEnabled(!visionDirectory.isEmpty());
        images->setToolTip(QObject::tr("A 4-layer vision transformer trained on made-up "
                                       "pictures of one shape each: it names the shape, and the "
                                       "Image tab shows which patches it read"));
        for (const char* shape : kExampleImages) {
            const QString path =
                findDataFile(QStringLiteral("images/shapes/%1.png").arg(QLatin1String(shape)));
            QAction* example = images->addAction(
                QObject::tr("A %1").arg(QCoreApplication::translate("attnlab::ui::Shapes", shape)));
            example->setEnabled(!path.isEmpty());
            QObject::connect(example, &QAction::triggered, models, [models, visionDirectory, path] {
                if (QFileInfo(models->directory()).canonicalFilePath() !=
                    QFileInfo(visionDirectory).canonicalFilePath())
                    models->openModel(visionDirectory);
                models->openImage(path);
            });
        }
    }

    // Tool bar: the model's name and run time, show it again, switch heads off.
    QToolBar* bar = window->addToolBar(QObject::tr("Real model"));
    bar->setObjectName(QStringLiteral("RealModelToolBar"));
    auto* name = new QLabel(bar);
    bar->addWidget(name);
    QAction* show =
        bar->addAction(QObject::tr("Show Model"), models, &ModelDocument::showModelStep);
    show->setToolTip(QObject::tr("The views show the lab session; show the real model again"));
    auto* ablationButton = new QToolButton(bar);
    ablationButton->setText(QObject::tr("Heads Off"));
    ablationButton->setToolTip(
        QObject::tr("Switch heads off (their output is zeroed) and watch the next "
                    "token and later layers change; each change is one undo step"));
    ablationButton->setPopupMode(QToolButton::InstantPopup);
    auto* ablationMenu = new QMenu(ablationButton);
    ablationButton->setMenu(ablationMenu);
    QAction* ablationAction = bar->addWidget(ablationButton);
    // A run that takes a while (a long text, a large model): its progress and a way to stop it.
    auto* runProgress = new QProgressBar(bar);
    runProgress->setObjectName(QStringLiteral("ModelRunProgress"));
    runProgress->setRange(0, 100);
    runProgress->setMaximumWidth(160);
    runProgress->setFormat(QObject::tr("Running %p%"));
    runProgress->setToolTip(QObject::tr("The model runs on the text; the views keep the previous "
                                        "run until it is done"));
    QAction* runProgressAction = bar->addWidget(runProgress);
    QAction* stopRun = bar->addAction(QObject::tr("Stop Run"), models, &ModelDocument::cancelRun);
    stopRun->setObjectName(QStringLiteral("StopModelRun"));
    stopRun->setToolTip(QObject::tr("Stop the model's run: the views keep the previous run and "
                                    "the text stays as typed"));
    runProgressAction->setVisible(false);
    stopRun->setVisible(false);
    // Shown only for a run longer than a moment, so typing does not make the bar flicker.
    auto* runDelay = new QTimer(bar);
    runDelay->setSingleShot(true);
    runDelay->setInterval(400);
    QObject::connect(runDelay, &QTimer::timeout, bar, [=] {
        runProgressAction->setVisible(models->running());
        stopRun->setVisible(models->running());
    });
    QObject::connect(models, &ModelDocument::runningChanged, bar, [=](bool running) {
        if (running) {
            runProgress->setValue(0);
            if (!runDelay->isActive() && !runProgressAction->isVisible()) runDelay->start();
            return;
        }
        runDelay->stop();
        runProgressAction->setVisible(false);
        stopRun->setVisible(false);
    });
    QObject::connect(models, &ModelDocument::runProgress, bar, [=](double fraction) {
        runProgress->setValue(static_cast<int>(fraction * 100));
    });

    // Status bar badge: where the numbers on screen come from.
    auto* badge = new QLabel(window);
    badge->setObjectName(QStringLiteral("WeightsBadge"));
    window->statusBar()->addPermanentWidget(badge);

    auto sync = [=] {
        const bool loaded = models->model() != nullptr;
        const bool active = models->active();
        bar->setVisible(loaded);
        close->setEnabled(loaded);
        show->setVisible(loaded && !active);
        ablationAction->setVisible(loaded);
        if (loaded) {
            QString text = QStringLiteral(" %1 ").arg(models->displayName());
            if (models->run())
                text += QObject::tr("\u2014 %1 tokens, %2 ms ")
                            .arg(models->run()->ids.size())
                            .arg(models->lastRunMilliseconds(), 0, 'f', 1);
            if (!models->ablatedHeads().empty())
                text += QObject::tr("\u2014 %1 heads off ").arg(models->ablatedHeads().size());
            name->setText(text);
        }
        const QString badgeText = weightsBadgeText(document);
        badge->setText(badgeText);
        badge->setVisible(!badgeText.isEmpty());
        const bool fromModel = document->experiment() &&
                             document->experiment()->source.kind == ExperimentSource::Kind::Model;
        const bool ours = fromModel && trainedByTheProject(models->directory());
        const bool lab = document->experiment() && document->experiment()->source.isSession();
        badge->setStyleSheet(
            fromModel ? QStringLiteral("QLabel { background: #d7f0dc; color: #14532d; "
                                     "padding: 1px 8px; border-radius: 3px; font-weight: bold; }")
            : lab   ? QStringLiteral("QLabel { background: #ffe0b2; color: #6d3a00; "
                                       "padding: 1px 8px; border-radius: 3px; font-weight: bold; }")
                    : QStringLiteral("QLabel { padding: 1px 8px; font-weight: bold; }"));
        badge->setToolTip(
            ours      ? QObject::tr("The views show a trained model's own q, k, v and attention")
            : fromModel ? QObject::tr("The views show this checkpoint's own q, k, v and attention")
            : lab   ? QObject::tr(
                          "The lab's own seeded random projections: the patterns are arithmetic, "
                            "not learned meaning. Open a model (File > Open Model or Examples) to see "
                            "trained attention.")
                  : QObject::tr("Attention or Q/K/V read from a dump file"));
    };
    QObject::connect(models, &ModelDocument::modelChanged, bar, [=] {
        if (models->model()) addRecentModel(models->directory());
        // An image classifier opens on its image, the one view that shows what it reads.
        if (models->readsImages() &&
            document->session().viewState.view != std::string("image-attention")) {
            ViewState state = document->session().viewState;
            state.view = "image-attention";
            document->setViewState(state);
        }
        updateRecent();
        fillAblationMenu(ablationMenu, models);
        sync();
    });
    QObject::connect(models, &ModelDocument::runChanged, bar, [=] {
        fillAblationMenu(ablationMenu, models);
        sync();
    });
    QObject::connect(ablationMenu, &QMenu::aboutToShow, bar,
                     [=] { fillAblationMenu(ablationMenu, models); });
    QObject::connect(document, &Document::changed, bar, [sync](Document::What what) {
        if (what == Document::What::Experiment || what == Document::What::Session) sync();
    });

    // Loading: a progress dialog with Cancel; the window stays live meanwhile.
    auto dialog = std::make_shared<QPointer<QProgressDialog>>();
    QObject::connect(models, &ModelDocument::loadingChanged, window, [=](bool loading) {
        if (loading) {
            if (!*dialog) {
                auto* created = new QProgressDialog(QObject::tr("Loading the model\u2026"),
                                                    QObject::tr("Cancel"), 0, 100, window);
                created->setWindowTitle(QObject::tr("Open Model"));
                created->setMinimumDuration(300);
                // reset() at the end of the load hides it (autoClose); reaching 100 % does
                // not end the load, so it does not reset by itself (autoReset).
                created->setAutoClose(true);
                created->setAutoReset(false);
                QObject::connect(created, &QProgressDialog::canceled, models,
                                 &ModelDocument::cancelLoad);
                *dialog = created;
            }
            (*dialog)->setValue(0);
            window->statusBar()->showMessage(QObject::tr("Loading the model\u2026"));
        } else {
            if (*dialog) (*dialog)->reset();
            window->statusBar()->clearMessage();
        }
    });
    QObject::connect(models, &ModelDocument::loadProgress, window, [=](double fraction) {
        if (*dialog && models->loading()) (*dialog)->setValue(static_cast<int>(fraction * 100));
    });
    sync();
}

} // namespace attnlab::ui

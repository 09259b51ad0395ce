#include "ui/state/model_document.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPointer>
#include <QUndoStack>

#include <algorithm>
#include <chrono>
#include <exception>

#include "attnlab/model/head_roles.h"
#include "attnlab/model/image_attention.h"
#include "attnlab/model/run_dumps.h"
#include "attnlab/model/text_run.h"
#include "attnlab/model/translate.h"
#include "ui/state/apply_command.h"
#include "ui/state/document.h"
#include "ui/state/dump_document.h"
#include "ui/state/image_file.h"
#include "ui/state/latest_task.h"

namespace attnlab::ui {

struct ModelLoadOutput {
    std::shared_ptr<const model::Model> model;
    std::shared_ptr<const model::Tokenizer> tokenizer;
    std::shared_ptr<const model::ImageProcessor> processor; ///< an image model's
    QString error;
    double milliseconds = 0;
};

struct ModelRunOutput {
    /// The model that ran: a run of a model replaced since is not shown.
    std::shared_ptr<const model::Model> model;
    std::shared_ptr<const model::ModelRun> run;
    std::vector<std::int64_t> ids;
    std::shared_ptr<const ModelImage> image; ///< what an image model read
    /// The run's q/k/v as the DumpDocument shows them (read from the run, not copied), and the
    /// shown layer's experiment computed ahead under the spec the window showed when the run
    /// started (while the DumpDocument's changeCount() was `changes`).
    /// Shared: the future's result is copied out of it, and a layer's maps are S x S each.
    std::optional<QkvDump> qkv;
    std::shared_ptr<Experiment> shownLayer;
    Index layer = 0;
    quint64 changes = 0;
    /// An encoder-decoder: what it wrote.
    WrittenTranslation written;
    QString error;
    bool cancelled = false;
    double milliseconds = 0;
};

/// What the worker computes ahead for the view: the layer shown, under which spec.
struct ShownLayerRequest {
    QkvApply apply;
    Index layer = 0;
    quint64 changes = 0;
};

namespace {

/// How many finished runs are kept for an undo or a retyped word.
constexpr std::size_t kRecentRuns = 3;
/// ... and beside the shown run they hold at most this many bytes (a long text's run is large:
/// Llama-3.2-1B's q/k/v at 4 096 tokens are 805 MB).
constexpr double kRecentRunBytes = 256.0 * 1024 * 1024;

/// The bytes a run reads: its q/k/v, hidden states, logits and what a translation keeps (blocks
/// a run shares with the one it extended counted in full: an upper bound).
double runBytes(const model::ModelRun& run) {
    double floats = static_cast<double>(run.finalHidden.size() + run.logits.size() +
                                        run.encoderHidden.size());
    for (const auto* list : {&run.q, &run.k, &run.v, &run.crossQ})
        for (const model::HeadCache& cache : *list)
            floats += static_cast<double>(cache.floats());
    for (const auto* list : {&run.encoderQ, &run.encoderK, &run.crossK, &run.crossV})
        for (const Tensor4& t : *list)
            floats += static_cast<double>(t.data.size());
    return floats * sizeof(float);
}
/// A translation model decodes at most this many target tokens from the text.
constexpr Index kTranslationTokens = 48;

/// Whether `run` was made from `ids` (a translation's source, else its ids).
bool madeFrom(const model::ModelRun& run, const std::vector<std::int64_t>& ids) {
    const std::span<const std::int64_t> input = model::inputIdsOf(run);
    return std::equal(input.begin(), input.end(), ids.begin(), ids.end());
}

std::vector<std::string> labelsOf(const model::Tokenizer& tokenizer,
                                  const std::vector<std::int64_t>& ids) {
    std::vector<std::string> labels;
    labels.reserve(ids.size());
    for (std::int64_t id : ids) {
        // As people read it (" cat" for "Ġcat"); the views' displayToken marks blanks.
        labels.push_back(tokenizer.displayToken(id));
    }
    return labels;
}

/// What the shown experiments say about the model: rotate-half RoPE for the llama family,
/// and the KV-cache steps: a run that extended a cached one decodes from where the cache
/// ended; any other run is shown as a prefill of half its tokens, then decoding. The
/// experiments carry the forward's wall time (the status bar's).
QkvOrigin originOf(const model::Model& loaded, const model::ModelRun& run, double milliseconds) {
    QkvOrigin origin;
    origin.kind = ExperimentSource::Kind::Model;
    origin.milliseconds = milliseconds;
    origin.positional = loaded.config.usesRope() ? Positional::RopeHalf : Positional::None;
    if (loaded.config.usesRope()) {
        origin.ropeBase = loaded.config.ropes.front().theta;
        origin.ropeFrequencies = model::ropeInverseFrequencies(loaded.config);
    }
    const Index seq = static_cast<Index>(run.ids.size());
    origin.kvPrefill =
        run.extended && run.reusedPositions > 0 ? run.reusedPositions : std::max<Index>(1, seq / 2);
    return origin;
}

/// The cells of one head's map (S x S) past which a text is not shown: the views hold the
/// shown head's map (a float copy, and a double one where a view draws it), never a whole
/// layer's. The command line's --heads writes chosen heads of any length.
constexpr double kMaxShownMapCells = 1.0e8;

ModelRunOutput computeRun(std::shared_ptr<const model::Model> loaded,
                          std::shared_ptr<const model::Tokenizer> tokenizer,
                          std::vector<std::int64_t> ids, std::shared_ptr<const ModelImage> image,
                          HeadSet ablated, std::shared_ptr<const model::ModelRun> previous,
                          const std::atomic<bool>* cancel, ShownLayerRequest shown,
                          std::function<void(double)> progress) {
    ModelRunOutput out;
    out.model = loaded;
    out.ids = ids;
    out.image = image;
    out.layer = shown.layer;
    out.changes = shown.changes;
    const auto started = std::chrono::steady_clock::now();
    try {
        const bool translation = loaded->config.kind == model::ModelKind::EncoderDecoder;
        // The views hold the shown head's map; a map past what a machine holds is refused
        // before the forward runs.
        const double cells = static_cast<double>(ids.size()) * static_cast<double>(ids.size());
        if (!translation && cells > kMaxShownMapCells) {
            out.error = QObject::tr("%1 tokens are too many to show a head's attention here "
                                    "(%2 GB a map); `attnlab model --heads` writes chosen heads")
                            .arg(ids.size())
                            .arg(cells * 12 / 1e9, 0, 'f', 1);
            return out;
        }
        if (loaded->config.vision()) {
            model::RunOptions options;
            options.ablatedHeads = std::move(ablated);
            options.cancel = cancel;
            options.progress = std::move(progress);
            Result<model::ModelRun> result = model::runImage(*loaded, image->pixels, options);
            if (!result) {
                out.cancelled = cancel->load();
                out.error = QString::fromStdString(result.error());
                return out;
            }
            auto run = std::make_shared<const model::ModelRun>(std::move(*result));
            const double forward = std::chrono::duration<double, std::milli>(
                                       std::chrono::steady_clock::now() - started)
                                       .count();
            out.qkv = model::qkvDumpOf(loaded, run, model::imageTokenNames(loaded->config));
            if (!cancel->load())
                out.shownLayer = std::make_shared<Experiment>(qkvLayerExperiment(
                    *out.qkv, shown.layer, shown.apply, originOf(*loaded, *run, forward)));
            out.run = std::move(run);
            out.milliseconds = forward;
            return out;
        }
        model::TextRunOptions options;
        options.run.logits = model::textLogits(loaded->config);
        options.run.ablatedHeads = std::move(ablated);
        options.run.cancel = cancel;
        options.run.progress = std::move(progress);
        // A translation model decodes this many target tokens at most from the text.
        options.decoding.maxTokens = kTranslationTokens;
        // The cache up to the first changed id is reused (a retyped word, a deleted one; a
        // translation's encoder while the source is the same).
        Result<model::TextRun> result = model::runText(*loaded, ids, options, previous.get());
        if (!result) {
            out.cancelled = cancel->load();
            out.error = QString::fromStdString(result.error());
            return out;
        }
        if (translation) {
            out.written.text = QString::fromStdString(tokenizer->decode(result->generated, true));
            out.written.tokens = std::move(result->generated);
            for (const model::TranslationStep& step : result->steps)
                out.written.probabilities.push_back(step.probability);
            out.run = std::make_shared<model::ModelRun>(std::move(result->run));
            out.milliseconds = std::chrono::duration<double, std::milli>(
                                   std::chrono::steady_clock::now() - started)
                                   .count();
            return out;
        }
        auto run = std::make_shared<const model::ModelRun>(std::move(result->run));
        const double forward =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                .count();
        out.qkv = model::qkvDumpOf(loaded, run, labelsOf(*tokenizer, run->ids));
        if (!cancel->load()) {
            // The layer on screen, here rather than on the GUI thread once the run is shown.
            out.shownLayer = std::make_shared<Experiment>(qkvLayerExperiment(
                *out.qkv, shown.layer, shown.apply, originOf(*loaded, *run, forward)));
        }
        out.run = std::move(run);
        out.milliseconds = forward;
        return out;
    } catch (const std::exception& error) {
        out.error = QString::fromUtf8(error.what());
    }
    out.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    return out;
}

} // namespace

struct ModelInput {
    QString text;
    std::vector<std::int64_t> ids;
};

namespace {

/// Merges consecutive typed edits of the model's text (apart from the lab's EditMerge keys and
/// the patching inputs' 1001, 1002).
constexpr int kMergeModelText = 1101;

/// A change of the switched-off heads, an edit of the model's text (typed, merged while
/// typing, or a token appended), and the person's switch from the lab back to the model.
using AblationCommand = ApplyCommand<HeadSet>;
using ModelTextCommand = ApplyCommand<ModelInput>;
using ShowCommand = ApplyCommand<bool>;
/// An image opened for an image classifier (its pixels are that model's).
using ImageCommand = ApplyCommand<std::shared_ptr<const ModelImage>>;

} // namespace

ModelDocument::ModelDocument(Document* document)
    : QObject(document), m_document(document), m_dumps(DumpDocument::of(document)) {
    setObjectName(QStringLiteral("ModelDocument"));
    // A newer text stops the run in flight between layers; every finished run comes back, and
    // a stale one is shown where nothing is (finishRun).
    m_runs = std::make_unique<LatestTask<ModelRunOutput>>(
        this, WorkPolicy{true, WorkPolicy::Hand::Every},
        [this](Result<ModelRunOutput> output, bool latest) {
            if (output) finishRun(std::move(*output), latest);
        });
    m_runs->onBusyChanged([this](bool busy) { emit runningChanged(busy); });
    m_loadTask =
        std::make_unique<LatestTask<ModelLoadOutput>>(this, [this](Result<ModelLoadOutput> output) {
            if (output)
                finishLoad(std::move(*output));
            else
                failLoad(QString::fromStdString(output.error()));
        });
    m_loadTask->onBusyChanged([this](bool busy) {
        m_loading = busy;
        emit loadingChanged(busy);
    });
    m_rolesTask = std::make_unique<LatestTask<Roles>>(this, [this](Result<Roles> roles) {
        if (!roles || m_rolesRun != m_run) return; // another run meanwhile
        m_roles = std::move(*roles);
        emit rolesChanged();
    });
    connect(m_dumps, &DumpDocument::attentionKindRequested, this,
            [this](const QString& kind) { setAttentionKind(kind); });
    connect(m_dumps, &DumpDocument::layerChanged, this, [this] {
        if (active() && m_dumps->layer() != m_layer) {
            m_layer = m_dumps->layer();
            emit layerChanged();
        }
    });
}

ModelDocument::~ModelDocument() {
    // The workers read the model and call back into this object: stop and wait for them.
    m_runs.reset();     // stops its run and waits for it
    m_loadTask.reset(); // stops its load and waits for it
    m_rolesTask.reset();
}

bool ModelDocument::rolesMeasurable() const {
    // A head's role is read off text (the previous token, a repeat); an image has none.
    return m_model && m_run && m_model->config.kind != model::ModelKind::EncoderDecoder &&
           !m_model->config.vision();
}

bool ModelDocument::readsImages() const {
    return m_model && m_model->config.vision();
}

bool ModelDocument::isCurrent(const model::ModelRun& run,
                              const std::shared_ptr<const ModelImage>& image) const {
    if (readsImages()) return image == m_image && run.ablatedHeads == m_ablated;
    return madeFrom(run, m_ids) && run.ablatedHeads == m_ablated;
}

std::vector<std::string> ModelDocument::runLabels() const {
    if (readsImages()) return model::imageTokenNames(m_model->config);
    return labelsOf(*m_tokenizer, m_run->ids);
}

bool ModelDocument::openImage(const QString& path) {
    if (m_loading) {
        // The model being loaded reads it (setModel), if it is an image classifier.
        m_pendingImage = path;
        return true;
    }
    if (!takesImages()) return false;
    Result<QImage> picture = readImageFile(path);
    if (!picture) {
        fail(QString::fromStdString(picture.error()));
        return false;
    }
    return setImage(*picture, QFileInfo(path).fileName());
}

bool ModelDocument::takesImages() {
    if (readsImages() && m_processor) return true;
    fail(tr("Open an image model first (File > Open Model): %1 reads text.")
             .arg(m_model ? displayName() : tr("no model")));
    return false;
}

bool ModelDocument::setImage(const QImage& picture, const QString& name) {
    if (!takesImages()) return false;
    if (picture.isNull()) {
        fail(tr("%1: the image is empty").arg(name));
        return false;
    }
    const QImage rgb = picture.convertToFormat(QImage::Format_RGB888);
    Result<std::vector<float>> pixels =
        model::processImage(rgbBytesOf(rgb), rgb.width(), rgb.height(), *m_processor);
    if (!pixels) {
        fail(QStringLiteral("%1: %2").arg(name, QString::fromStdString(pixels.error())));
        return false;
    }
    auto image = std::make_shared<const ModelImage>(ModelImage{rgb, std::move(*pixels), name});
    m_document->undoStack()->push(new ImageCommand(
        this, [this](const std::shared_ptr<const ModelImage>& shown) { applyImage(shown); },
        m_image, std::move(image), -1, tr("Open the image %1").arg(name)));
    return true;
}

void ModelDocument::applyImage(std::shared_ptr<const ModelImage> image) {
    if (!readsImages()) return;
    m_image = std::move(image);
    m_shown = true;
    emit imageChanged();
    scheduleRun();
}

void ModelDocument::requestRoles() {
    if (!rolesMeasurable() || m_roles || (m_rolesTask->busy() && m_rolesRun == m_run)) return;
    m_rolesRun = m_run;
    m_rolesTask->start([net = m_model, run = m_run](const std::atomic<bool>*) -> Result<Roles> {
        return std::make_shared<const std::vector<model::HeadRole>>(model::headRoles(*net, *run));
    });
}

void ModelDocument::waitForRoles() {
    m_rolesTask->wait();
}

ModelDocument* ModelDocument::of(Document* document) {
    if (auto* existing = document->findChild<ModelDocument*>(QString(), Qt::FindDirectChildrenOnly))
        return existing;
    return new ModelDocument(document);
}

bool ModelDocument::active() const {
    return m_model && m_shown && m_dumps->active() &&
           m_dumps->sourceKind() == ExperimentSource::Kind::Model;
}

QString ModelDocument::displayName() const {
    return m_model ? QString::fromStdString(m_model->name) : QString();
}

QString ModelDocument::directory() const {
    return m_model ? QString::fromStdString(m_model->directory) : QString();
}

std::vector<std::string> ModelDocument::tokenLabels() const {
    if (readsImages()) return model::imageTokenNames(m_model->config);
    if (!m_tokenizer) return {};
    if (!m_run) return labelsOf(*m_tokenizer, m_ids);
    const std::span<const std::int64_t> input = model::inputIdsOf(*m_run);
    return labelsOf(*m_tokenizer, std::vector<std::int64_t>(input.begin(), input.end()));
}

std::vector<std::string> ModelDocument::writtenTokenLabels() const {
    if (!m_tokenizer || !m_run || m_run->crossQ.empty()) return {};
    return labelsOf(*m_tokenizer,
                    m_written.tokens.size() == m_run->ids.size() ? m_written.tokens : m_run->ids);
}

Index ModelDocument::translationTokenLimit() {
    return kTranslationTokens;
}

bool ModelDocument::translationCutShort() const {
    if (!m_tokenizer || !m_run || m_run->crossQ.empty()) return false;
    if (static_cast<Index>(m_written.tokens.size()) < kTranslationTokens) return false;
    const std::optional<std::int64_t> end = m_tokenizer->eosId();
    return !end || m_written.tokens.back() != *end;
}

Index ModelDocument::head() const {
    return m_document->session().viewState.head;
}

void ModelDocument::fail(const QString& message) {
    emit errorOccurred(message);
    emit m_document->errorOccurred(message);
}

void ModelDocument::failLoad(const QString& message) {
    fail(message);
    emit loadFailed(message);
}

QString ModelDocument::noTokenizerMessage(const QString& directory) {
    return tr("%1 has no %2, so the window cannot turn text into tokens. Add the checkpoint's "
              "%2 to this folder, or run it on token ids without one: %3")
        .arg(QDir::toNativeSeparators(directory), QStringLiteral("tokenizer.json"),
             QStringLiteral("attnlab model --model \"%1\" --ids 1,2,3 --top-k 5")
                 .arg(QDir::toNativeSeparators(directory)));
}

namespace {

ModelLoadOutput loadCheckpoint(const QString& directory, const model::LoadOptions& options) {
    ModelLoadOutput out;
    QElapsedTimer clock;
    clock.start();
    // The core's message names files and keys as they are; the words around it are the reader's.
    const QString didNotOpen =
        QCoreApplication::translate("ModelDocument", "The model did not open: %1");
    try {
        const QFileInfo info(directory);
        if (!info.isDir()) {
            out.error = QCoreApplication::translate("ModelDocument",
                                                    "%1: not a folder (a model is a folder with "
                                                    "config.json, *.safetensors, tokenizer.json)")
                            .arg(directory);
            return out;
        }
        const QString cleaned = QDir::cleanPath(info.absoluteFilePath());
        const std::string dir = cleaned.toStdString();
        // An image classifier reads images through its image processor, not text.
        if (auto config = model::readConfig(dir + "/config.json"); config && config->vision()) {
            const std::string processorPath = dir + "/preprocessor_config.json";
            if (!QFileInfo::exists(QString::fromStdString(processorPath))) {
                out.error =
                    QCoreApplication::translate(
                        "ModelDocument", "%1 is an image model (%2) without %3: add the "
                                         "checkpoint's %3 to this folder (it says how images are "
                                         "resized and normalised).")
                        .arg(cleaned,
                             QString::fromStdString(std::string(config->arch().displayName)),
                             QStringLiteral("preprocessor_config.json"));
                return out;
            }
            Result<model::ImageProcessor> processor = model::readModelImageProcessor(dir, *config);
            if (!processor) {
                out.error = didNotOpen.arg(QString::fromStdString(processor.error()));
                return out;
            }
            out.processor = std::make_shared<const model::ImageProcessor>(std::move(*processor));
        } else {
            // A folder as transformers' save_pretrained writes a model has no tokenizer: the
            // window runs text, so it names the file to add, and the command line that runs ids
            // without it.
            if (!model::Tokenizer::folderHasTokenizer(dir)) {
                out.error = ModelDocument::noTokenizerMessage(cleaned);
                return out;
            }
            Result<model::Tokenizer> tokenizer = model::Tokenizer::fromFile(dir);
            if (!tokenizer) {
                out.error = didNotOpen.arg(QString::fromStdString(tokenizer.error()));
                return out;
            }
            out.tokenizer = std::make_shared<const model::Tokenizer>(std::move(*tokenizer));
        }
        Result<model::Model> loaded = model::loadModel(dir, options);
        if (!loaded) {
            out.error = didNotOpen.arg(QString::fromStdString(loaded.error()));
            return out;
        }
        out.model = std::make_shared<const model::Model>(std::move(*loaded));
    } catch (const std::exception& error) {
        out.error = didNotOpen.arg(
            QStringLiteral("%1: %2").arg(directory, QString::fromUtf8(error.what())));
    }
    out.milliseconds = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    return out;
}

} // namespace

void ModelDocument::openModel(const QString& directory) {
    // Progress is posted to the GUI thread at most once per percent. The load never outlives
    // this object: its destructor stops the task and waits for it.
    auto lastPercent = std::make_shared<std::atomic<int>>(-1);
    auto progress = [this, lastPercent](double fraction) {
        const int percent = static_cast<int>(fraction * 100);
        if (lastPercent->exchange(percent) == percent) return;
        QMetaObject::invokeMethod(
            this, [this, fraction] { emit loadProgress(fraction); }, Qt::QueuedConnection);
    };
    // A load in flight stops at its flag and this one follows it: the window never waits.
    m_loadTask->start(
        [directory, progress](const std::atomic<bool>* cancel) -> Result<ModelLoadOutput> {
            model::LoadOptions options;
            options.cancel = cancel;
            options.touchPages = true;
            options.progress = progress;
            return loadCheckpoint(directory, options);
        });
    emit loadProgress(0.0);
}

bool ModelDocument::openModelNow(const QString& directory) {
    if (m_loading) cancelLoad();
    ModelLoadOutput out = loadCheckpoint(directory, {});
    if (!out.model) {
        failLoad(out.error);
        return false;
    }
    setModel(std::move(out.model), std::move(out.tokenizer), std::move(out.processor));
    return true;
}

void ModelDocument::cancelLoad() {
    if (!m_loading) return;
    m_loadTask->stop(); // it hands nothing over; loadingChanged(false) once it has stopped
    m_pendingImage.clear();
    fail(tr("Loading the model was cancelled; the previous state is kept."));
}

void ModelDocument::finishLoad(ModelLoadOutput output) {
    if (!output.model) {
        m_pendingImage.clear();
        failLoad(output.error);
        return;
    }
    emit loadProgress(1.0);
    setModel(std::move(output.model), std::move(output.tokenizer), std::move(output.processor));
}

void ModelDocument::setModel(std::shared_ptr<const model::Model> loaded,
                             std::shared_ptr<const model::Tokenizer> tokenizer,
                             std::shared_ptr<const model::ImageProcessor> processor) {
    // A run of the previous model is stopped by this one's (scheduleRun below), and none of it
    // is shown (finishRun).
    m_model = std::move(loaded);
    m_tokenizer = std::move(tokenizer);
    m_processor = std::move(processor);
    m_run.reset();
    m_runImage.reset();
    m_roles.reset();
    m_recent.clear();
    m_ablated.clear();
    m_layer = std::min<Index>(m_layer, m_model->config.layers - 1);
    // A translation model opens on its last decoder layer, where cross-attention aligns.
    if (m_model->config.kind == model::ModelKind::EncoderDecoder) m_layer = m_model->config.layers - 1;
    // An image classifier opens on its last layer, whose class token the classifier reads.
    if (m_model->config.vision()) m_layer = m_model->config.layers - 1;
    m_shown = true;
    // The ablation, text and image steps of the previous model mean nothing for this one (its
    // ids are another tokenizer's, its pixels another processor's).
    for (int i = m_document->undoStack()->count() - 1; i >= 0; --i) {
        const QUndoCommand* step = m_document->undoStack()->command(i);
        if (dynamic_cast<const AblationCommand*>(step) ||
            dynamic_cast<const ModelTextCommand*>(step) || dynamic_cast<const ShowCommand*>(step) ||
            dynamic_cast<const ImageCommand*>(step)) {
            m_document->undoStack()->clear();
            break;
        }
    }
    if (m_text.isEmpty()) m_text = QString::fromStdString(m_document->session().text);
    if (m_model->config.vision()) {
        // The class token and the patches; the picture stays, made into this model's pixels.
        m_ids.assign(static_cast<std::size_t>(m_model->config.maxPositions), 0);
        const std::shared_ptr<const ModelImage> kept = std::exchange(m_image, nullptr);
        if (kept && m_processor) {
            const std::vector<std::uint8_t> rgb = rgbBytesOf(kept->picture);
            if (auto pixels = model::processImage(rgb, kept->picture.width(),
                                                  kept->picture.height(), *m_processor))
                m_image = std::make_shared<const ModelImage>(
                    ModelImage{kept->picture, std::move(*pixels), kept->name});
        }
    } else {
        m_ids = m_tokenizer->encode(m_text.toStdString()).ids;
    }
    emit modelChanged();
    const QString pending = std::exchange(m_pendingImage, QString());
    if (m_model->config.vision() && !pending.isEmpty()) openImage(pending);
    scheduleRun();
}

void ModelDocument::closeModel() {
    if (!m_model) return;
    // A run in flight is stale, and nothing is left to run.
    m_runs->stop();
    const bool wasShown = active();
    const std::string typed = m_text.toStdString();
    m_model.reset();
    m_tokenizer.reset();
    m_processor.reset();
    m_image.reset();
    m_runImage.reset();
    m_run.reset();
    m_roles.reset();
    m_recent.clear();
    m_ids.clear();
    m_ablated.clear();
    m_shown = false;
    if (wasShown && typed != m_document->session().text) {
        // The lab keeps the text typed while the model was shown, as one undo step: undo
        // brings the lab's own text back.
        m_document->modify([&](Session& s) { s.text = typed; },
                           tr("Close the model, keep its text"));
    } else if (wasShown) {
        m_document->applySession(m_document->session());
    }
    emit modelChanged();
    emit runChanged();
}

void ModelDocument::setText(const QString& text) {
    if (!m_tokenizer) {
        m_text = text;
        return;
    }
    m_shown = true;
    if (text == m_text && m_run && madeFrom(*m_run, m_ids)) {
        if (!active()) publish();
        return;
    }
    m_text = text;
    // Tokenizing is microseconds for typed text; the forward pass is what goes to the worker.
    m_ids = m_tokenizer->encode(m_text.toStdString()).ids;
    scheduleRun();
}

void ModelDocument::editText(const QString& text) {
    if (!m_tokenizer || (text == m_text && m_run && madeFrom(*m_run, m_ids))) {
        setText(text);
        return;
    }
    pushInput({text, m_tokenizer->encode(text.toStdString()).ids}, kMergeModelText,
              QCoreApplication::translate("ModelDocument", "Edit the model's text"));
}

void ModelDocument::appendToken(std::int64_t id) {
    if (!m_tokenizer) return;
    std::vector<std::int64_t> ids = m_ids;
    ids.push_back(id);
    // The text follows the ids (decoded), so the text box shows what runs; the ids stay the
    // source of truth so the run extends the previous one through its cache.
    const QString text = QString::fromStdString(m_tokenizer->decode(ids, true));
    pushInput({text, std::move(ids)}, -1,
              QCoreApplication::translate("ModelDocument", "Append a token"));
}

void ModelDocument::pushInput(ModelInput next, int mergeId, const QString& description) {
    m_document->undoStack()->push(new ModelTextCommand(
        this, [this](const ModelInput& input) { applyInput(input.text, input.ids); },
        {m_text, m_ids}, std::move(next), mergeId, description));
}

void ModelDocument::applyInput(const QString& text, const std::vector<std::int64_t>& ids) {
    if (!m_tokenizer) return;
    m_shown = true;
    const bool textChanges = text != m_text;
    m_text = text;
    m_ids = ids;
    if (textChanges) emit textChanged();
    scheduleRun();
}

void ModelDocument::setAblatedHeads(const HeadSet& heads) {
    if (heads == m_ablated) return;
    const QString description =
        heads.size() > m_ablated.size()
            ? QCoreApplication::translate("ModelDocument", "Switch off a head")
            : QCoreApplication::translate("ModelDocument", "Switch heads back on");
    m_document->undoStack()->push(new AblationCommand(
        this, [this](const HeadSet& set) { applyAblation(set); }, m_ablated, heads, -1,
        description));
}

void ModelDocument::applyAblation(const HeadSet& heads) {
    m_ablated = heads;
    m_shown = true;
    scheduleRun();
}

void ModelDocument::setLayer(Index layer) {
    if (!m_model) return;
    layer = std::clamp<Index>(layer, 0, m_model->config.layers - 1);
    if (layer == m_layer && active()) return;
    m_layer = layer;
    if (active())
        m_dumps->setLayer(layer);
    else
        publish();
    emit layerChanged();
}

void ModelDocument::focus(Index layer, Index head) {
    setLayer(layer);
    m_document->setFocusedHead(head);
}

void ModelDocument::showModel() {
    if (!m_model) return;
    m_shown = true;
    if (m_run && isCurrent(*m_run, m_runImage))
        publish();
    else
        scheduleRun();
}

void ModelDocument::showModelStep() {
    if (!m_model || active()) return;
    m_document->undoStack()->push(new ShowCommand(
        this,
        [this](const bool& shown) {
            if (shown) return showModel();
            // Back to the lab: its session as it stands (nothing was edited above this step).
            m_shown = false;
            m_document->applySession(m_document->session());
        },
        false, true, -1, QCoreApplication::translate("ModelDocument", "Show the model")));
}

bool ModelDocument::idle() const {
    return !m_loading && m_runs->idle();
}

bool ModelDocument::waitForIdle(int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (!idle()) {
        if (clock.elapsed() > timeoutMs) return false;
        m_runs->wait();
        if (m_loading) m_loadTask->wait();
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return true;
}

void ModelDocument::scheduleRun() {
    if (!m_model) return;
    // The run starts once control is back in the event loop: every change made in this turn (a
    // paste, an undo of several edits) is one run, and a keystroke waits for nothing. Keys
    // typed while a run works stop it between layers and are merged into the run that follows.
    // The job is the text's as it is when the run starts: nothing (an empty or too long text),
    // a recent run again (at once, here), or the forward on the worker.
    using Job = LatestTask<ModelRunOutput>::Job;
    m_runs->request(
        [this]() -> std::optional<Job> {
            if (!m_model) return std::nullopt;
            if (m_ids.empty() || (readsImages() && !m_image)) {
                // Nothing to run (an empty text and no template tokens): the last figure stays.
                emit runChanged();
                return std::nullopt;
            }
            if (static_cast<Index>(m_ids.size()) > m_model->config.maxPositions) {
                // Refused here, in the person's language: the forward would refuse it the same way.
                // The last figure stays; the text stays for the person to shorten.
                fail(tr("The text is %1 tokens; %2 reads at most %3. Shorten it to run the model.")
                         .arg(m_ids.size())
                         .arg(displayName())
                         .arg(m_model->config.maxPositions));
                return std::nullopt;
            }
            for (const RecentRun& recent : m_recent) {
                if (!isCurrent(*recent.run, recent.image)) continue;
                ModelRunOutput out;
                out.model = m_model;
                out.ids = m_ids;
                out.image = recent.image;
                out.milliseconds = recent.milliseconds; // the forward that made it; none runs now
                out.written = recent.written;
                out.run = recent.run;
                return Job{
                    [out](const std::atomic<bool>*) -> Result<ModelRunOutput> { return out; },
                    true};
            }
            // Progress is posted to the GUI thread at most once per percent.
            auto lastPercent = std::make_shared<std::atomic<int>>(-1);
            QPointer<ModelDocument> self(this);
            std::function<void(double)> progress = [self, lastPercent](double fraction) {
                const int percent = static_cast<int>(fraction * 100);
                if (lastPercent->exchange(percent) == percent) return;
                QMetaObject::invokeMethod(
                    self,
                    [self, fraction] {
                        if (self) emit self->runProgress(fraction);
                    },
                    Qt::QueuedConnection);
            };
            // The head on screen keeps its map from the layer's run: the heatmap computes nothing.
            QkvApply apply = shownApply();
            apply.keptHead = m_document->session().viewState.head;
            // The previous run's cache is reused when the new ids extend its ids (runModel checks).
            return Job{
                [model = m_model, tokenizer = m_tokenizer, ids = m_ids, image = m_image,
                 ablated = m_ablated, previous = m_run,
                 shown = ShownLayerRequest{std::move(apply), m_layer, m_dumps->changeCount()},
                 progress](const std::atomic<bool>* cancel) -> Result<ModelRunOutput> {
                    return computeRun(model, tokenizer, ids, image, ablated, previous, cancel,
                                      shown, progress);
                }};
        },
        0);
}

bool ModelDocument::running() const {
    return m_runs->busy();
}

void ModelDocument::cancelRun() {
    if (!m_runs->busy()) return;
    m_runs->stop(); // the text as typed waits for the next edit
    fail(tr("The run was stopped; the views show the text's previous run."));
}

QkvApply ModelDocument::shownApply() const {
    QkvApply apply = model::nativeApply(m_model->config);
    // "What if" settings stay while the model's text changes.
    if (m_dumps->sourceKind() == ExperimentSource::Kind::Model && m_dumps->qkvDump() &&
        m_dumps->qkvDump()->kvHeads == m_model->config.kvHeads)
        apply = m_dumps->qkvApply();
    return apply;
}

void ModelDocument::showRun(std::optional<QkvDump> qkv, const QkvApply& apply,
                            std::optional<Experiment> shownLayer) {
    std::vector<std::string> labels;
    if (!qkv) labels = runLabels();
    std::optional<AttentionDump> weights;
    // The model's own maps, computed from the run when a view asks for them.
    if (model::reproducesModel(apply, m_model->config))
        weights = model::attentionDumpOf(m_model, m_run, qkv ? qkv->tokens : labels);
    if (!qkv) qkv = model::qkvDumpOf(m_model, m_run, std::move(labels));
    if (shownLayer) shownLayer->milliseconds = m_lastRunMs;
    m_dumps->showQkv(std::move(*qkv), apply, std::move(weights), m_layer,
                     originOf(*m_model, *m_run, m_lastRunMs), std::move(shownLayer));
}

void ModelDocument::finishRun(ModelRunOutput output, bool latest) {
    // A stale run is still shown when nothing is (below).
    const bool stale = !latest;
    if (!m_model) return; // closed while it ran
    // A run of the model this one replaced: none of it is shown (a translation model's run
    // has no q/k/v for a decoder's views).
    const bool otherModel = output.model != m_model;
    if (otherModel) {
        // Nothing: the new model's own run is scheduled.
    } else if (!output.run) {
        if (!output.cancelled && !stale) fail(output.error);
    } else if (!stale || !m_run) {
        // A stale run is still shown when nothing is: the first figure comes sooner.
        m_run = std::move(output.run);
        m_roles.reset();
        m_rolesTask->stop();
        m_rolesRun.reset();
        if (std::none_of(m_recent.begin(), m_recent.end(),
                         [&](const RecentRun& recent) { return recent.run == m_run; })) {
            m_recent.push_front({m_run, output.milliseconds, output.written, output.image});
            double kept = 0;
            for (std::size_t i = 1; i < m_recent.size(); ++i)
                kept += runBytes(*m_recent[i].run);
            while (m_recent.size() > kRecentRuns ||
                   (m_recent.size() > 1 && kept > kRecentRunBytes)) {
                kept -= runBytes(*m_recent.back().run);
                m_recent.pop_back();
            }
        }
        m_lastRunMs = output.milliseconds;
        m_runImage = std::move(output.image);
        m_written = std::move(output.written);
        if (m_shown && m_model->config.kind == model::ModelKind::EncoderDecoder) {
            showTranslation();
        } else if (m_shown) {
            // The layer computed ahead is shown when the window still shows what it was
            // computed for.
            std::optional<Experiment> ahead;
            if (output.shownLayer && output.changes == m_dumps->changeCount() &&
                output.layer == m_layer)
                ahead = std::move(*output.shownLayer);
            try {
                showRun(std::move(output.qkv), shownApply(), std::move(ahead));
            } catch (const std::exception& error) {
                fail(QString::fromUtf8(error.what()));
            }
        }
        emit runChanged();
    }
}

void ModelDocument::publish() {
    if (!m_model) return;
    m_shown = true;
    if (!m_run || !isCurrent(*m_run, m_runImage)) {
        scheduleRun();
        return;
    }
    if (m_model->config.kind == model::ModelKind::EncoderDecoder) {
        showTranslation();
        return;
    }
    // The lab was shown meanwhile: the dumps are made again from the current run, no forward.
    showRun(std::nullopt, model::nativeApply(m_model->config), std::nullopt);
}

void ModelDocument::showTranslation() {
    if (!m_model || !m_run || m_run->crossQ.empty()) return;
    const std::span<const std::int64_t> source = model::inputIdsOf(*m_run);
    // Cross-attention's rows are labelled with the word each step wrote (what a reader
    // aligns), the decoder's own attention with its input tokens.
    const bool written = m_attentionKind == QLatin1String("cross") &&
                         m_written.tokens.size() == m_run->ids.size();
    try {
        m_dumps->showAttention(
            model::translationDumpOf(m_model, m_run, m_attentionKind.toStdString(),
                                     labelsOf(*m_tokenizer, {source.begin(), source.end()}),
                                     labelsOf(*m_tokenizer, written ? m_written.tokens : m_run->ids)),
            0, originOf(*m_model, *m_run, m_lastRunMs), m_layer);
    } catch (const std::exception& error) {
        fail(QString::fromUtf8(error.what()));
    }
}

void ModelDocument::setAttentionKind(const QString& kind) {
    if (kind == m_attentionKind) return;
    m_attentionKind = kind;
    if (m_shown && m_run) showTranslation();
    emit runChanged();
}

} // namespace attnlab::ui

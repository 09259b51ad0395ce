#include "ui/state/patching_document.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QUndoStack>

#include <chrono>
#include <string>

#include "attnlab/model/model.h"
#include "attnlab/tokenizer/tokenizer.h"
#include "ui/state/apply_command.h"
#include "ui/state/document.h"
#include "ui/state/latest_task.h"
#include "ui/state/model_document.h"
#include "ui/state/named_token.h"

namespace attnlab::ui {

namespace {

/// Undo merge ids of the patching fields, apart from the session's EditMerge ids.
constexpr int kMergeCorrupted = 1001;
constexpr int kMergeMetric = 1002;

/// The most probable next token after the last position of `ids`.
Result<std::int64_t> prediction(const model::Model& net, std::span<const std::int64_t> ids,
                                const model::RunOptions& base) {
    model::RunOptions options = base;
    options.logits = model::LogitRows::Last;
    auto run = model::runModel(net, ids, options);
    if (!run) return Error{run.error()};
    Index best = 0;
    run->logits.row(run->logits.rows() - 1).maxCoeff(&best);
    return static_cast<std::int64_t>(best);
}

/// The worker: the default metric tokens, then the core's activation patching.
/// Its failure is a sentence for the tab (translated where it is ours).
Result<PatchingResult> computePatching(PatchingKey key, const std::atomic<bool>* cancel,
                                       const std::function<void(Index, Index)>& progress) {
    const auto started = std::chrono::steady_clock::now();
    model::RunOptions base;
    base.ablatedHeads = key.ablated;
    base.cancel = cancel;
    model::LogitDifference metric;
    for (auto [typed, ids, slot] : {std::tuple{key.a, &key.clean, &metric.a},
                                    std::tuple{key.b, &key.corrupted, &metric.b}}) {
        if (typed) {
            *slot = *typed;
            continue;
        }
        auto predicted = prediction(*key.model, *ids, base);
        if (!predicted) return Error{predicted.error()};
        *slot = *predicted;
    }
    if (metric.a == metric.b)
        return Error{QCoreApplication::translate(
                         "attnlab::ui::PatchingDocument",
                         "Both texts make the model predict the same token: type tokens A "
                         "and B whose difference the corruption changes.")
                         .toStdString()};
    model::PatchingOptions options;
    options.metric = metric;
    options.heads = key.target == PatchTarget::Heads;
    options.residual = key.target == PatchTarget::Residual;
    options.progress = progress;
    auto patched =
        model::activationPatching(*key.model, key.clean, key.corrupted, options, base);
    if (!patched) {
        if (patched.error().find("same logit difference") == std::string::npos)
            return Error{patched.error()};
        return Error{QCoreApplication::translate(
                         "attnlab::ui::PatchingDocument",
                         "The clean and corrupted texts give the same logit difference: "
                         "there is nothing to restore (change the corruption or the "
                         "tokens).")
                         .toStdString()};
    }
    PatchingResult result;
    result.key = std::move(key);
    result.patching = std::move(*patched);
    result.metric = metric;
    result.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    return result;
}

} // namespace

PatchingDocument::PatchingDocument(Document* document)
    : QObject(document), m_document(document), m_models(ModelDocument::of(document)),
      m_task(std::make_unique<LatestTask<PatchingResult>>(
          this, [this](Result<PatchingResult> done) { finish(std::move(done)); })) {
    setObjectName(QStringLiteral("PatchingDocument"));
    m_task->onBusyChanged([this](bool busy) {
        if (!busy) stopped();
        emit runningChanged(busy);
    });
}

// The task stops the run in flight and waits for it before the members it reports to go.
PatchingDocument::~PatchingDocument() = default;

bool PatchingDocument::running() const {
    return m_task->busy();
}

PatchingDocument* PatchingDocument::of(Document* document) {
    if (auto* existing =
            document->findChild<PatchingDocument*>(QString(), Qt::FindDirectChildrenOnly))
        return existing;
    return new PatchingDocument(document);
}

void PatchingDocument::edit(const PatchingInputs& next, int mergeId, const QString& description) {
    if (next == m_inputs) return;
    m_document->undoStack()->push(new ApplyCommand<PatchingInputs>(
        this, [this](const PatchingInputs& inputs) { applyInputs(inputs); }, m_inputs, next,
        mergeId, description));
}

void PatchingDocument::setCorruptedText(const QString& text) {
    PatchingInputs next = m_inputs;
    next.corrupted = text;
    edit(next, kMergeCorrupted, tr("Edit corrupted text"));
}

void PatchingDocument::setMetricTokens(const QString& tokenA, const QString& tokenB) {
    PatchingInputs next = m_inputs;
    next.tokenA = tokenA;
    next.tokenB = tokenB;
    edit(next, kMergeMetric, tr("Edit patching metric"));
}

void PatchingDocument::setTarget(PatchTarget target) {
    PatchingInputs next = m_inputs;
    next.target = target;
    edit(next, -1, tr("Change what is patched"));
}

void PatchingDocument::applyInputs(const PatchingInputs& inputs) {
    if (inputs == m_inputs) return;
    m_inputs = inputs;
    emit inputsChanged();
}

std::optional<PatchingKey> PatchingDocument::currentKey(QString* why) const {
    QString ignored;
    QString& reason = why ? *why : ignored;
    const model::Tokenizer* tokenizer = m_models->tokenizer();
    if (!m_models->model() || !tokenizer) {
        reason = tr("Open a model (File > Open Model, or File > Examples) and type a text.");
        return std::nullopt;
    }
    if (m_models->model()->config.kind != model::ModelKind::Decoder) {
        reason = tr("Activation patching here reads a decoder's prediction at the last "
                    "position; this model is not a decoder.");
        return std::nullopt;
    }
    PatchingKey key;
    key.model = m_models->sharedModel();
    key.clean = m_models->ids();
    key.target = m_inputs.target;
    key.ablated = m_models->ablatedHeads();
    if (key.clean.empty()) {
        reason = tr("Type a text: it is the clean prompt.");
        return std::nullopt;
    }
    if (m_inputs.corrupted.trimmed().isEmpty()) {
        reason = tr("Type a corrupted text: as many tokens as the clean one, with the words "
                    "that matter changed.");
        return std::nullopt;
    }
    key.corrupted = tokenizer->encode(m_inputs.corrupted.toStdString()).ids;
    if (key.corrupted.size() != key.clean.size()) {
        reason = tr("The clean text is %1 tokens and the corrupted one %2: patching needs the "
                    "same number of tokens.")
                     .arg(key.clean.size())
                     .arg(key.corrupted.size());
        return std::nullopt;
    }
    for (auto [typed, slot] :
         {std::pair{&m_inputs.tokenA, &key.a}, std::pair{&m_inputs.tokenB, &key.b}}) {
        if (typed->isEmpty()) continue;
        *slot = namedTokenIn(*typed, tokenizer, key.model->config, tr("Metric token"), &reason);
        if (!*slot) return std::nullopt;
    }
    if (key.a && key.b && *key.a == *key.b) {
        reason = tr("A and B are the same token: their difference is always 0.");
        return std::nullopt;
    }
    if (auto problem = model::validateRun(key.model->config, key.corrupted, {})) {
        reason = QString::fromStdString(problem->message);
        return std::nullopt;
    }
    return key;
}

void PatchingDocument::request() {
    QString why;
    std::optional<PatchingKey> key = currentKey(&why);
    if (!key) {
        // Bad input: one line, no map; a run in flight for older inputs is stopped.
        m_task->stop();
        const bool changed = m_result.has_value() || m_message != why;
        m_result.reset();
        m_message = why;
        if (changed) emit finished();
        return;
    }
    if (m_result && m_result->key == *key) {
        // Back to the inputs on screen: nothing to run, a run for others is dropped.
        m_task->stop();
        if (!m_message.isEmpty()) {
            m_message.clear();
            emit finished();
        }
        return;
    }
    if (m_heldKey && *m_heldKey == *key) {
        if (m_message != m_heldMessage) {
            m_message = m_heldMessage;
            emit finished();
        }
        return;
    }
    // The same request already in flight goes on; any other supersedes it.
    if (m_task->busy() && m_requested == key && !m_userCancelled) return;
    start(std::move(*key));
}

void PatchingDocument::rerun() {
    m_heldKey.reset();
    request();
}

void PatchingDocument::cancel() {
    if (!m_task->busy()) return;
    m_userCancelled = true;
    m_heldKey = m_requested;
    m_task->stop();
}

void PatchingDocument::start(PatchingKey key) {
    m_heldKey.reset();
    m_userCancelled = false;
    m_requested = key;
    m_progress = {0, 0};
    const quint64 generation = ++m_generation;
    emit progressChanged(0, 0);
    // Each patched run's report is posted to this thread; a superseded run's are dropped.
    auto progress = [this, generation](Index done, Index total) {
        QMetaObject::invokeMethod(
            this,
            [this, generation, done, total] {
                if (generation != m_generation || !m_task->busy()) return;
                m_progress = {done, total};
                emit progressChanged(done, total);
            },
            Qt::QueuedConnection);
    };
    m_task->start([key = std::move(key), progress](const std::atomic<bool>* cancel) mutable {
        return computePatching(std::move(key), cancel, progress);
    });
}

void PatchingDocument::stopped() {
    if (!m_userCancelled) return;
    // The person cancelled: the previous result stays on screen.
    m_userCancelled = false;
    m_message = tr("Cancelled: the previous result stays on screen.");
    m_heldMessage = m_message;
    emit finished();
}

void PatchingDocument::finish(Result<PatchingResult> done) {
    if (!done) {
        // The same request would fail the same way: it is not run again by itself.
        m_heldKey = m_requested;
        m_result.reset();
        m_message = QString::fromStdString(done.error());
        m_heldMessage = m_message;
    } else {
        m_result = std::move(*done);
        m_message.clear();
    }
    emit finished();
}

bool PatchingDocument::waitForIdle(int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (!idle()) {
        if (clock.elapsed() > timeoutMs) return false;
        m_task->wait();
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return true;
}

} // namespace attnlab::ui

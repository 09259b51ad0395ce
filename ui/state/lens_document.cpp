#include "ui/state/lens_document.h"

#include <atomic>
#include <utility>

#include "attnlab/model/model.h"
#include "ui/state/document.h"
#include "ui/state/experiment_data.h"
#include "ui/state/latest_task.h"
#include "ui/state/model_document.h"

namespace attnlab::ui {

namespace {

/// The run's options for a lens computation: the document's switched-off heads, every core.
model::RunOptions optionsOf(const ModelDocument& models) {
    model::RunOptions options;
    options.ablatedHeads = models.ablatedHeads();
    return options;
}

/// A computation's result as the views read it: the value, or its error's message.
template <typename T, typename Value> void take(Result<T> result, Value& value, QString& error) {
    value = {};
    error.clear();
    if (result)
        value = std::move(*result);
    else
        error = QString::fromStdString(result.error());
}

} // namespace

bool readsOneSequence(const model::Model& net) {
    return net.config.kind != model::ModelKind::EncoderDecoder;
}

LensDocument::LensDocument(Document* document)
    : QObject(document), m_document(document),
      m_lensTask(std::make_unique<LatestTask<LensTable>>(this,
                                                         [this](Result<LensTable> table) {
                                                             take(std::move(table), m_lens,
                                                                  m_lensError);
                                                             report(tr("Logit lens: %1"),
                                                                    m_lensError);
                                                             emit lensChanged();
                                                         })),
      m_attributionTask(std::make_unique<LatestTask<model::Attribution>>(
          this, [this](Result<model::Attribution> parts) {
              take(std::move(parts), m_attribution, m_attributionError);
              report(tr("Attribution: %1"), m_attributionError);
              emit attributionChanged();
          })) {
    setObjectName(QStringLiteral("LensDocument"));
}

void LensDocument::report(const QString& what, const QString& error) {
    // The window's one path for a problem; the views' titles say what is missing.
    if (!error.isEmpty()) emit m_document->errorOccurred(what.arg(error));
}

LensDocument::~LensDocument() = default; // the tasks stop and wait for their runs

LensDocument* LensDocument::of(Document* document) {
    if (auto* existing = document->findChild<LensDocument*>(QString(), Qt::FindDirectChildrenOnly))
        return existing;
    return new LensDocument(document);
}

void LensDocument::requestLens() {
    ModelDocument* models = ModelDocument::of(m_document);
    const std::shared_ptr<const model::Model> net = models->sharedModel();
    const std::shared_ptr<const model::ModelRun> run = models->sharedRun();
    if (!net || !run || !readsOneSequence(*net) || run->ids.empty()) {
        m_lensTask->stop();
        m_lens = {};
        m_lensError.clear();
        m_lensRun.reset();
        return;
    }
    if (run == m_lensRun.lock()) return; // shown, or in flight
    // Computed again for each new run (text, appended token, heads switched off).
    m_lensRun = run;
    m_lensTask->start([net, ids = run->ids, options = optionsOf(*models),
                       tokens = displayTokens(models->tokenLabels())](
                          const std::atomic<bool>* cancel) -> Result<LensTable> {
        model::RunOptions stoppable = options;
        stoppable.cancel = cancel;
        LensTable table;
        table.tokens = tokens;
        // One layer's [S, V] logits at a time, reduced to the few tokens the view shows.
        const Status failed =
            model::logitLensRows(*net, ids, stoppable, [&table](Index, Matrix& logits) {
                const Matrix p = model::probabilities(logits);
                auto& cells = table.cells.emplace_back();
                auto& top = table.top.emplace_back();
                for (Index i = 0; i < p.rows(); ++i) {
                    cells.push_back(model::topTokens(p.row(i), kTopTokens));
                    top.push_back(cells.back().front());
                }
            });
        if (failed) return *failed;
        return table;
    });
}

bool LensDocument::lensComputing() const {
    return m_lensTask->busy();
}

void LensDocument::waitForLens() {
    m_lensTask->wait();
}

void LensDocument::requestAttribution(const model::AttributionOptions& asked) {
    ModelDocument* models = ModelDocument::of(m_document);
    const std::shared_ptr<const model::Model> net = models->sharedModel();
    const std::shared_ptr<const model::ModelRun> run = models->sharedRun();
    if (!net || !run || !readsOneSequence(*net) || run->ids.empty()) {
        clearAttribution();
        return;
    }
    if (run == m_attributionRun.lock() && asked.target == m_askedTarget &&
        asked.contrast == m_askedContrast)
        return; // shown, or in flight
    m_attributionRun = run;
    m_askedTarget = asked.target;
    m_askedContrast = asked.contrast;
    m_attributionTask->start([net, ids = run->ids, options = optionsOf(*models), asked](
                                 const std::atomic<bool>* cancel) -> Result<model::Attribution> {
        model::RunOptions stoppable = options;
        stoppable.cancel = cancel;
        return model::directLogitAttribution(*net, ids, asked, stoppable);
    });
}

void LensDocument::clearAttribution(const QString& why) {
    m_attributionTask->stop();
    m_attribution.reset();
    m_attributionError = why;
    m_attributionRun.reset();
}

bool LensDocument::attributionComputing() const {
    return m_attributionTask->busy();
}

void LensDocument::waitForAttribution() {
    m_attributionTask->wait();
}

} // namespace attnlab::ui

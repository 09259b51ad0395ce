#include "ui/views/model_views_binding.h"

#include <atomic>
#include <memory>

#include "ui/state/document.h"
#include "ui/state/latest_task.h"
#include "ui/state/model_document.h"

namespace attnlab::ui {

NextTokenInput nextTokenInputOf(const ModelDocument& models) {
    NextTokenInput input;
    input.modelName = models.displayName();
    const model::ModelRun* run = models.run();
    if (const QString why = imageClassifierRefusal(models.document()); !why.isEmpty()) {
        input.noNextToken = why;
        return input;
    }
    // An encoder's logits at the last position are its guess for [SEP], not a next token.
    if (models.model() && models.model()->config.kind == model::ModelKind::Encoder) {
        input.noNextToken = NextTokenView::tr(
            "An encoder reads the whole text at once and predicts no next token: type [MASK] "
            "in the text and see the Fill mask tab.");
        return input;
    }
    // A translation model's decoder predicts the next word of the translation given the
    // source; its last row follows the </s> that ended the translation, a guess about nothing.
    if (models.model() && models.model()->config.kind == model::ModelKind::EncoderDecoder) {
        const QString written = models.translation();
        input.noNextToken =
            written.isEmpty()
                ? NextTokenView::tr(
                      "A translation model's next token is its decoder's next word of the "
                      "translation, given the whole source: see the Translation tab, where it "
                      "writes the translation word by word.")
                : NextTokenView::tr(
                      "A translation model's next token is its decoder's next word of the "
                      "translation, given the whole source. It wrote \u201c%1\u201d and ended "
                      "it with </s>: see the Translation tab to watch it write word by word.")
                      .arg(written);
        return input;
    }
    if (input.modelName.isEmpty() || !run || run->logits.rows() < 1) return input;
    const Index last = run->logits.rows() - 1;
    input.logits.assign(run->logits.row(last).data(),
                        run->logits.row(last).data() + run->logits.cols());
    if (const model::Tokenizer* tokenizer = models.tokenizer()) {
        // Copies of a Tokenizer share its tables: the view keeps its own, valid after a reload.
        input.tokenText = [copy = *tokenizer](std::int64_t id) {
            return QString::fromStdString(copy.displayToken(id));
        };
        input.rawToken = [copy = *tokenizer](std::int64_t id) {
            return copy.idToToken(id).value_or(std::string());
        };
    }
    // The last few tokens the model continues from.
    const std::vector<std::string> labels = models.tokenLabels();
    constexpr std::size_t kContextTokens = 8;
    const std::size_t first = labels.size() > kContextTokens ? labels.size() - kContextTokens : 0;
    QString context = first > 0 ? QStringLiteral("\u2026") : QString();
    for (std::size_t i = first; i < labels.size(); ++i)
        context += QString::fromStdString(labels[i]);
    context.replace(QLatin1Char('\n'), QStringLiteral("\u21b5"));
    input.context = context;
    input.ablatedHeads = static_cast<int>(run->ablatedHeads.size());
    return input;
}

HeadRolesInput headRolesInputOf(const ModelDocument& models) {
    HeadRolesInput input;
    input.modelName = models.displayName();
    const model::Model* net = models.model();
    if (input.modelName.isEmpty() || !net) return input;
    input.layers = net->config.layers;
    input.heads = net->config.heads;
    input.ablated = models.ablatedHeads();
    const Index positions = net->config.maxPositions - (net->config.bosTokenId ? 1 : 0);
    input.maxProbeLength = std::max<Index>(1, positions / 2);
    if (const model::ModelRun* run = models.run()) {
        // Measured on a worker when the view asks (every head's map, one at a time).
        if (const auto* roles = models.runRoles())
            input.roles = *roles;
        else
            input.measuring = models.rolesMeasurable();
        input.tokens = static_cast<Index>(run->ids.size());
        input.ablated = run->ablatedHeads;
    }
    return input;
}

Result<HeadRolesProbe> runInductionProbe(const ModelDocument& models, Index length, quint64 seed) {
    const model::Model* net = models.model();
    if (!net) return Error{QObject::tr("Open a model first.").toStdString()};
    return runInductionProbe(*net, models.ablatedHeads(), length, seed);
}

Result<HeadRolesProbe> runInductionProbe(const model::Model& net,
                                         const std::set<std::pair<Index, Index>>& ablated,
                                         Index length, quint64 seed,
                                         const std::atomic<bool>* cancel) {
    auto ids = model::inductionProbe(net.config, length, seed);
    if (!ids) return Error{ids.error()};
    model::RunOptions options;
    options.ablatedHeads = ablated;
    options.cancel = cancel;
    auto run = model::runModel(net, *ids, options);
    if (!run) return Error{run.error()};
    HeadRolesProbe probe;
    probe.roles = model::headRoles(net, *run);
    probe.length = length;
    probe.seed = seed;
    probe.ablated = options.ablatedHeads;
    return probe;
}

namespace {

/// The induction probe of one head-roles view on a worker: the latest request wins.
class ProbeRunner {
public:
    ProbeRunner(HeadRolesView* view, ModelDocument* models)
        : m_view(view), m_models(models),
          m_task(view, [this](Result<HeadRolesProbe> probe) { finish(std::move(probe)); }) {
        m_task.onBusyChanged([view](bool busy) { view->setProbeRunning(busy); });
    }

    bool running() const { return m_task.busy(); }
    /// The model the latest request measures.
    const std::shared_ptr<const model::Model>& model() const { return m_model; }
    void stop() { m_task.stop(); }

    void request(Index length, quint64 seed) {
        m_model = m_models->sharedModel();
        if (!m_model) {
            m_models->document()->reportInputError(
                QObject::tr("Induction probe: %1").arg(QObject::tr("Open a model first.")));
            return;
        }
        m_ablated = m_models->ablatedHeads();
        m_length = length;
        m_seed = seed;
        m_task.start([net = m_model, heads = m_ablated, length,
                      seed](const std::atomic<bool>* cancel) {
            return runInductionProbe(*net, heads, length, seed, cancel);
        });
    }

private:
    void finish(Result<HeadRolesProbe> probe) {
        if (m_model != m_models->sharedModel()) return; // another model meanwhile
        if (m_ablated != m_models->ablatedHeads()) {
            // Heads were switched meanwhile: the probe is measured with the heads now off.
            request(m_length, m_seed);
            return;
        }
        if (!probe) {
            m_models->document()->reportInputError(
                QObject::tr("Induction probe: %1").arg(QString::fromStdString(probe.error())));
            return;
        }
        m_view->setProbeResult(std::move(*probe));
    }

    HeadRolesView* m_view;
    ModelDocument* m_models;
    LatestTask<HeadRolesProbe> m_task;
    std::shared_ptr<const model::Model> m_model;
    std::set<std::pair<Index, Index>> m_ablated;
    Index m_length = 0;
    quint64 m_seed = 0;
};

} // namespace

void bindNextTokenView(NextTokenView* view, ModelDocument* models) {
    // The last run with every head on, kept so an ablated run of the same ids shows its effect.
    struct Baseline {
        std::vector<std::int64_t> ids;
        std::vector<float> logits;
    };
    auto baseline = std::make_shared<Baseline>();
    const auto update = [view, models, baseline] {
        NextTokenInput input = nextTokenInputOf(*models);
        const model::ModelRun* run = models->run();
        if (run && !input.logits.empty()) {
            if (run->ablatedHeads.empty())
                *baseline = {run->ids, input.logits};
            else if (baseline->ids == run->ids)
                input.baselineLogits = baseline->logits;
        }
        view->setInput(std::move(input));
    };
    QObject::connect(models, &ModelDocument::runChanged, view, update);
    QObject::connect(models, &ModelDocument::modelChanged, view, update);
    QObject::connect(view, &NextTokenView::appendRequested, models,
                     [models](qint64 id) { models->appendToken(id); });
    update();
}

void bindHeadRolesView(HeadRolesView* view, ModelDocument* models) {
    // Lives as long as the view's connections (its task stops a probe still running then).
    auto runner = std::make_shared<ProbeRunner>(view, models);
    const auto update = [view, models, runner] {
        if (runner->running() && runner->model() != models->sharedModel()) runner->stop();
        view->setInput(headRolesInputOf(*models));
        // The probe on screen follows the heads switched off.
        if (view->showingProbe() && !runner->running() &&
            view->probe()->ablated != models->ablatedHeads())
            runner->request(view->probe()->length, view->probe()->seed);
    };
    QObject::connect(models, &ModelDocument::runChanged, view, update);
    QObject::connect(models, &ModelDocument::modelChanged, view, update);
    QObject::connect(models, &ModelDocument::rolesChanged, view, update);
    QObject::connect(view, &HeadRolesView::rolesWanted, models,
                     [models] { models->requestRoles(); });
    QObject::connect(view, &HeadRolesView::rolesAwaited, models, [models] {
        models->requestRoles();
        models->waitForRoles();
    });
    QObject::connect(view, &HeadRolesView::probeRequested, view,
                     [runner](qint64 length, quint64 seed) { runner->request(length, seed); });
    QObject::connect(view, &HeadRolesView::probeCancelRequested, view,
                     [runner] { runner->stop(); });
    QObject::connect(view, &HeadRolesView::ablationRequested, models,
                     [models](const std::set<std::pair<Index, Index>>& heads) {
                         models->setAblatedHeads(heads);
                     });
    QObject::connect(view, &HeadRolesView::focusRequested, models,
                     [models](qint64 layer, qint64 head) {
                         models->focus(layer, head);
                         Document* document = models->document();
                         ViewState state = document->session().viewState;
                         state.view = "heatmap";
                         document->setViewState(state);
                     });
    update();
}

} // namespace attnlab::ui

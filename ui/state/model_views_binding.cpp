#include "ui/state/model_views_binding.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>
#include <memory>
#include <optional>

#include "ui/state/document.h"
#include "ui/state/model_document.h"

namespace attnlab::ui {

NextTokenInput nextTokenInputOf(const ModelDocument& models) {
    NextTokenInput input;
    input.modelName = models.displayName();
    const model::ModelRun* run = models.run();
    // An encoder's logits at the last position are its guess for [SEP], not a next token.
    if (models.model() && models.model()->config.kind == model::ModelKind::Encoder) {
        input.noNextToken = NextTokenView::tr(
            "An encoder reads the whole text at once and predicts no next token: type [MASK] "
            "in the text and see the Fill mask tab.");
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
        input.roles = model::headRoles(*run);
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
    probe.roles = model::headRoles(*run);
    probe.length = length;
    probe.seed = seed;
    probe.ablated = options.ablatedHeads;
    return probe;
}

namespace {

/// What a probe on the worker hands back (a QFuture's result is default-constructed).
struct ProbeOutput {
    std::optional<HeadRolesProbe> probe;
    std::string error;
};

/// The probe in flight for one view: at most one runs; a request meanwhile cancels it and
/// runs after it.
struct ProbeRunner {
    HeadRolesView* view = nullptr;
    ModelDocument* models = nullptr;
    QFutureWatcher<ProbeOutput>* watcher = nullptr;
    std::shared_ptr<std::atomic<bool>> cancel;
    std::shared_ptr<const model::Model> model; ///< the model the probe in flight runs
    std::set<std::pair<Index, Index>> ablated; ///< its heads off
    Index length = 0;
    quint64 seed = 0;
    std::optional<std::pair<Index, quint64>> next; ///< asked for while one ran

    bool running() const { return watcher->isRunning(); }

    void request(Index probeLength, quint64 probeSeed) {
        if (running()) {
            next = {probeLength, probeSeed};
            cancel->store(true);
            return;
        }
        start(probeLength, probeSeed);
    }

    void stop() {
        next.reset();
        if (cancel) cancel->store(true);
    }

    void start(Index probeLength, quint64 probeSeed) {
        model = models->sharedModel();
        if (!model) {
            models->document()->reportInputError(
                QObject::tr("Induction probe: %1").arg(QObject::tr("Open a model first.")));
            return;
        }
        ablated = models->ablatedHeads();
        length = probeLength;
        seed = probeSeed;
        cancel = std::make_shared<std::atomic<bool>>(false);
        view->setProbeRunning(true);
        // The worker holds the model and the flag, never the view: it may outlive both.
        watcher->setFuture(QtConcurrent::run([net = model, heads = ablated, probeLength, probeSeed,
                                              flag = cancel] {
            ProbeOutput out;
            try {
                auto result = runInductionProbe(*net, heads, probeLength, probeSeed, flag.get());
                if (result)
                    out.probe = std::move(*result);
                else
                    out.error = result.error();
            } catch (const std::exception& error) {
                out.error = error.what();
            }
            return out;
        }));
    }

    void finish() {
        ProbeOutput out = watcher->result();
        // Read here, not on the worker: a stop before this point drops even a finished run.
        const bool cancelled = cancel->load();
        const std::shared_ptr<const model::Model> ran = std::move(model);
        view->setProbeRunning(false);
        if (next) {
            const auto [nextLength, nextSeed] = *next;
            next.reset();
            start(nextLength, nextSeed);
            return;
        }
        if (cancelled || ran != models->sharedModel()) return; // stopped, or another model
        if (ablated != models->ablatedHeads()) {
            // Heads were switched meanwhile: the probe is measured with the heads now off.
            start(length, seed);
            return;
        }
        if (!out.probe) {
            models->document()->reportInputError(
                QObject::tr("Induction probe: %1").arg(QString::fromStdString(out.error)));
            return;
        }
        view->setProbeResult(std::move(*out.probe));
    }
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
    auto runner = std::make_shared<ProbeRunner>();
    runner->view = view;
    runner->models = models;
    runner->watcher = new QFutureWatcher<ProbeOutput>(view);
    QObject::connect(runner->watcher, &QFutureWatcher<ProbeOutput>::finished, view,
                     [runner] { runner->finish(); });
    // A probe still running when the view goes keeps only the model and its flag: stop it.
    QObject::connect(view, &QObject::destroyed, [runner] { runner->stop(); });
    const auto update = [view, models, runner] {
        if (runner->running() && runner->model != models->sharedModel()) runner->stop();
        view->setInput(headRolesInputOf(*models));
        // The probe on screen follows the heads switched off.
        if (view->showingProbe() && !runner->running() &&
            view->probe()->ablated != models->ablatedHeads())
            runner->request(view->probe()->length, view->probe()->seed);
    };
    QObject::connect(models, &ModelDocument::runChanged, view, update);
    QObject::connect(models, &ModelDocument::modelChanged, view, update);
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

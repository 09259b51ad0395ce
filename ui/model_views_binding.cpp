#include "ui/model_views_binding.h"

#include <QApplication>
#include <QCursor>

#include <memory>

#include "ui/document.h"
#include "ui/model_document.h"

namespace attnlab::ui {

NextTokenInput nextTokenInputOf(const ModelDocument& models) {
    NextTokenInput input;
    input.modelName = models.displayName();
    const model::ModelRun* run = models.run();
    if (input.modelName.isEmpty() || !run || run->logits.rows() < 1) return input;
    const Index last = run->logits.rows() - 1;
    input.logits.assign(run->logits.row(last).data(),
                        run->logits.row(last).data() + run->logits.cols());
    if (const model::Tokenizer* tokenizer = models.tokenizer()) {
        // Copies of a Tokenizer share its tables: the view keeps its own, valid after a reload.
        input.tokenText = [copy = *tokenizer](std::int64_t id) {
            return QString::fromStdString(copy.displayToken(id));
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
    auto ids = model::inductionProbe(net->config, length, seed);
    if (!ids) return Error{ids.error()};
    model::RunOptions options;
    options.ablatedHeads = models.ablatedHeads();
    auto run = model::runModel(*net, *ids, options);
    if (!run) return Error{run.error()};
    HeadRolesProbe probe;
    probe.roles = model::headRoles(*run);
    probe.length = length;
    probe.seed = seed;
    probe.ablated = options.ablatedHeads;
    return probe;
}

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
    const auto probe = [view, models](qint64 length, quint64 seed) {
        QApplication::setOverrideCursor(QCursor(Qt::WaitCursor));
        auto result = runInductionProbe(*models, length, seed);
        QApplication::restoreOverrideCursor();
        if (!result) {
            models->document()->reportInputError(
                QObject::tr("Induction probe: %1").arg(QString::fromStdString(result.error())));
            return;
        }
        view->setProbeResult(std::move(*result));
    };
    const auto update = [view, models, probe] {
        view->setInput(headRolesInputOf(*models));
        // The probe on screen follows the heads switched off.
        if (view->showingProbe() && view->probe()->ablated != models->ablatedHeads())
            probe(view->probe()->length, view->probe()->seed);
    };
    QObject::connect(models, &ModelDocument::runChanged, view, update);
    QObject::connect(models, &ModelDocument::modelChanged, view, update);
    QObject::connect(view, &HeadRolesView::probeRequested, view, probe);
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

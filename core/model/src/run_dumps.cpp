#include "attnlab/model/run_dumps.h"

#include <algorithm>

#include "attnlab/model/attention_maps.h"

namespace attnlab::model {

QkvApply nativeApply(const ModelConfig& config) {
    QkvApply apply;
    apply.spec.variant = Variant::Softmax;
    apply.spec.mask = MaskSpec{};
    // Layers that differ (Gemma 2's alternation) re-run under full causal attention; their
    // own weights are shown as recorded.
    const std::optional<Index> window = config.uniformWindow();
    if (window && *window > 0)
        apply.spec.mask.causalWindow = *window - 1; // i - W < j <= i
    else
        apply.spec.mask.causal = config.kind != ModelKind::Encoder; // an encoder sees both sides
    if (!window)
        for (const LayerAttention& layer : config.layerAttention)
            apply.layerWindows.push_back(layer.window);
    apply.spec.scale = config.attentionScale;
    if (config.attentionSoftcap > 0) apply.spec.softcap = config.attentionSoftcap;
    return apply;
}

bool reproducesModel(const QkvApply& apply, const ModelConfig& config) {
    const AttentionSpec nativeSpec = nativeApply(config).spec;
    const MaskSpec& native = nativeSpec.mask;
    const MaskSpec& mask = apply.spec.mask;
    const bool flashServes = apply.spec.variant == Variant::Flash && !nativeSpec.softcap;
    return (apply.spec.variant == Variant::Softmax || flashServes) && apply.kvHeads == 0 &&
           apply.temperature == 1.0 && apply.spec.scale == nativeSpec.scale &&
           apply.spec.softcap == nativeSpec.softcap &&
           apply.layerWindows == nativeApply(config).layerWindows &&
           mask.causal == native.causal && mask.window == native.window &&
           mask.causalWindow == native.causalWindow && mask.validLen.empty() && !mask.custom;
}

namespace {

/// A run's layers as a Q/K/V dump reads them: one layer copied when asked.
class RunLayers final : public QkvLayers {
public:
    explicit RunLayers(std::shared_ptr<const ModelRun> run) : m_run(std::move(run)) {}
    Qkv layer(Index l) const override {
        const auto at = static_cast<std::size_t>(l);
        return Qkv{m_run->q[at].tensor(), m_run->k[at].tensor(), m_run->v[at].tensor()};
    }

private:
    std::shared_ptr<const ModelRun> m_run;
};

/// One of a run's attentions as a dump reads it: each head's map computed when asked.
class RunMaps final : public HeadMaps {
public:
    RunMaps(std::shared_ptr<const Model> model, std::shared_ptr<const ModelRun> run,
            AttentionOf of)
        : m_model(std::move(model)), m_run(std::move(run)), m_of(of) {}
    Matrix head(Index /*b*/, Index l, Index h) const override {
        return attentionMap(*m_model, *m_run, l, h, m_of);
    }

private:
    std::shared_ptr<const Model> m_model;
    std::shared_ptr<const ModelRun> m_run;
    AttentionOf m_of;
};

AttentionDump runDump(std::shared_ptr<const Model> model, std::shared_ptr<const ModelRun> run,
                      AttentionOf of) {
    const AttentionShape shape = attentionShape(*model, *run, of);
    AttentionDump dump;
    dump.source = model->name;
    dump.storedRank = 4;
    dump.batch = 1;
    dump.layers = shape.layers;
    dump.heads = shape.heads;
    dump.sq = shape.queries;
    dump.sk = shape.keys;
    dump.maps = std::make_shared<RunMaps>(std::move(model), std::move(run), of);
    return dump;
}

} // namespace

QkvDump qkvDumpOf(std::shared_ptr<const Model> model, std::shared_ptr<const ModelRun> run,
                  std::vector<std::string> tokens) {
    ATTN_CHECK(model && run, "qkvDumpOf: no model or run");
    const ModelConfig& c = model->config;
    const auto seq = static_cast<Index>(run->ids.size());
    QkvDump qkv;
    qkv.source = model->name;
    qkv.layers = c.layers;
    qkv.heads = c.heads;
    qkv.kvHeads = c.kvHeads;
    qkv.sq = seq;
    qkv.sk = seq;
    qkv.dim = c.headDim;
    qkv.dimV = c.headDim;
    qkv.layerSource = std::make_shared<RunLayers>(std::move(run));
    qkv.tokens = std::move(tokens);
    return qkv;
}

AttentionDump translationDumpOf(std::shared_ptr<const Model> model,
                                std::shared_ptr<const ModelRun> run, const std::string& kind,
                                std::vector<std::string> sourceTokens,
                                std::vector<std::string> targetTokens) {
    ATTN_CHECK(model && run, "translationDumpOf: no model or run");
    const AttentionOf of = kind == "encoder"   ? AttentionOf::Encoder
                           : kind == "decoder" ? AttentionOf::Self
                                               : AttentionOf::Cross;
    ATTN_CHECK(attentionShape(*model, *run, AttentionOf::Cross).layers > 0,
               "translationDumpOf: not a translation run");
    AttentionDump dump = runDump(std::move(model), std::move(run), of);
    dump.kind = kind == "encoder" || kind == "decoder" ? kind : "cross";
    dump.tokens = dump.kind == "decoder" ? std::move(targetTokens) : std::move(sourceTokens);
    if (dump.kind == "cross") dump.queryTokenList = std::move(targetTokens);
    return dump;
}

AttentionDump attentionDumpOf(std::shared_ptr<const Model> model,
                              std::shared_ptr<const ModelRun> run,
                              std::vector<std::string> tokens) {
    ATTN_CHECK(model && run, "attentionDumpOf: no model or run");
    AttentionDump dump = runDump(std::move(model), std::move(run), AttentionOf::Self);
    dump.tokens = std::move(tokens);
    return dump;
}

} // namespace attnlab::model

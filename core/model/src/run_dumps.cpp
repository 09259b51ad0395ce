#include "attnlab/model/run_dumps.h"

#include <algorithm>

#include "attnlab/model/attention_maps.h"

namespace attnlab::model {

namespace {

/// Copies a per-layer [1, heads, S, dim] list into one [L, heads, S, dim] buffer.
AlignedVector<float> stackLayers(const std::vector<Tensor4>& layers) {
    AlignedVector<float> out;
    std::size_t total = 0;
    for (const Tensor4& t : layers)
        total += t.data.size();
    out.reserve(total);
    for (const Tensor4& t : layers)
        out.insert(out.end(), t.data.begin(), t.data.end());
    return out;
}

} // namespace

std::size_t commonPrefix(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
    const std::size_t limit = std::min(a.size(), b.size());
    std::size_t common = 0;
    while (common < limit && a[common] == b[common])
        ++common;
    return common;
}

ModelRun truncatedRun(const ModelRun& run, Index keep) {
    ATTN_CHECK(keep > 0 && keep <= static_cast<Index>(run.ids.size()),
               "cannot keep " << keep << " of a run of " << run.ids.size() << " positions");
    ModelRun out;
    out.ids.assign(run.ids.begin(), run.ids.begin() + keep);
    auto rows = [keep](const Tensor4& t) {
        Tensor4 cut(1, t.heads, keep, t.dim);
        for (Index h = 0; h < t.heads; ++h)
            cut.head(0, h) = t.head(0, h).topRows(keep);
        return cut;
    };
    for (Index start : run.passes)
        if (start < keep) out.passes.push_back(start);
    for (const Tensor4& t : run.q)
        out.q.push_back(rows(t));
    for (const Tensor4& t : run.k)
        out.k.push_back(rows(t));
    for (const Tensor4& t : run.v)
        out.v.push_back(rows(t));
    out.finalHidden = run.finalHidden.topRows(keep);
    out.ablatedHeads = run.ablatedHeads;
    return out;
}

std::shared_ptr<const ModelRun> reusablePrefix(std::shared_ptr<const ModelRun> previous,
                                               std::span<const std::int64_t> ids,
                                               const RunOptions& options) {
    if (!previous || previous->ablatedHeads != options.ablatedHeads) return nullptr;
    const std::size_t common = commonPrefix(previous->ids, ids);
    if (common == 0) return nullptr;
    // runModel extends a run whose ids are a proper prefix; a run that differs later is cut
    // back to the common prefix.
    if (common < ids.size() && common < previous->ids.size())
        return std::make_shared<const ModelRun>(
            truncatedRun(*previous, static_cast<Index>(common)));
    return previous;
}

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

QkvDump qkvDumpOf(const Model& model, const ModelRun& run, std::vector<std::string> tokens) {
    const ModelConfig& c = model.config;
    const auto seq = static_cast<Index>(run.ids.size());
    QkvDump qkv;
    qkv.source = model.name;
    qkv.layers = c.layers;
    qkv.heads = c.heads;
    qkv.kvHeads = c.kvHeads;
    qkv.sq = seq;
    qkv.sk = seq;
    qkv.dim = c.headDim;
    qkv.dimV = c.headDim;
    qkv.q = stackLayers(run.q);
    qkv.k = stackLayers(run.k);
    qkv.v = stackLayers(run.v);
    qkv.tokens = std::move(tokens);
    return qkv;
}

AttentionDump translationDumpOf(const Model& model, const ModelRun& run, const std::string& kind,
                                std::vector<std::string> sourceTokens,
                                std::vector<std::string> targetTokens) {
    const std::vector<Tensor4> layers = attentionRecord(model, run,
                                                        kind == "encoder"   ? AttentionOf::Encoder
                                                        : kind == "decoder" ? AttentionOf::Self
                                                                            : AttentionOf::Cross);
    ATTN_CHECK(!layers.empty(), "translationDumpOf: not a translation run");
    AttentionDump dump;
    dump.source = model.name;
    dump.kind = kind == "encoder" || kind == "decoder" ? kind : "cross";
    dump.storedRank = 4;
    dump.batch = 1;
    dump.layers = static_cast<Index>(layers.size());
    dump.heads = layers.front().heads;
    dump.sq = layers.front().seq;
    dump.sk = layers.front().dim;
    dump.weights = stackLayers(layers);
    dump.tokens = dump.kind == "decoder" ? std::move(targetTokens) : std::move(sourceTokens);
    if (dump.kind == "cross") dump.queryTokenList = std::move(targetTokens);
    return dump;
}

AttentionDump attentionDumpOf(const Model& model, const ModelRun& run,
                              std::vector<std::string> tokens,
                              const std::vector<Tensor4>* record) {
    const ModelConfig& c = model.config;
    const auto seq = static_cast<Index>(run.ids.size());
    AttentionDump weights;
    weights.source = model.name;
    weights.storedRank = 4;
    weights.batch = 1;
    weights.layers = c.layers;
    weights.heads = c.heads;
    weights.sq = seq;
    weights.sk = seq;
    weights.weights = stackLayers(record ? *record : attentionRecord(model, run));
    weights.tokens = std::move(tokens);
    return weights;
}

} // namespace attnlab::model

#include "attnlab/lab/dump_experiment.h"

#include <mutex>
#include <string>
#include <utility>

#include "attnlab/base/parallel.h"

namespace attnlab {

namespace {

std::string baseName(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

HeadSummary summarizeHead(const HeadStats& stats, Index layer, Index head) {
    HeadSummary out;
    out.layer = layer;
    out.head = head;
    out.meanEntropy = stats.meanEntropy;
    double distance = 0;
    double first = 0;
    Index rows = 0;
    for (std::size_t i = 0; i < stats.emptyRow.size(); ++i) {
        if (stats.emptyRow[i]) continue;
        distance += stats.meanDistance[i];
        first += stats.firstTokenWeight[i];
        ++rows;
    }
    if (rows > 0) {
        out.meanDistance = distance / static_cast<double>(rows);
        out.firstTokenMass = first / static_cast<double>(rows);
    }
    return out;
}

std::vector<HeadSummary> headStatisticsTable(const AttentionDump& dump, Index b, int threads) {
    const Index count = dump.layers * dump.heads;
    std::vector<HeadSummary> table(static_cast<std::size_t>(count));
    detail::parallelFor(count, threads, [&](Index n) {
        const Index l = n / dump.heads;
        const Index h = n % dump.heads;
        table[static_cast<std::size_t>(n)] =
            summarizeHead(headStats(dump.head(b, l, h), MaskSpec{}, 0), l, h);
    });
    return table;
}

Experiment dumpExperiment(const AttentionDump& dump, Index b, Index l) {
    ATTN_CHECK(b >= 0 && b < dump.batch, "batch " << b << " outside [0, " << dump.batch << ")");
    ATTN_CHECK(l >= 0 && l < dump.layers, "layer " << l << " outside [0, " << dump.layers << ")");
    Experiment ex;
    ex.keyTokens = dump.keyTokens(b);
    ex.queryTokens = dump.queryTokens(b);
    // The dump is its own source: no Session is invented for it.
    ex.source.kind = ExperimentSource::Kind::AttentionDump;
    ex.source.name = baseName(dump.source);
    ex.source.attention = dump.kind;
    ex.source.layer = l;
    ex.source.batch = dump.batch > 1 ? b : -1;
    ex.variant = Variant::Softmax; // the model's own weights, shown as they are
    // Shapes only: no Q/K/V were dumped, so there is no q.k to show or explain.
    ex.qkv.q = Tensor4(1, dump.heads, dump.sq, 0);
    ex.qkv.k = Tensor4(1, dump.heads, dump.sk, 0);
    ex.qkv.v = Tensor4(1, dump.heads, dump.sk, 0);
    ex.attention.weights = Tensor4(1, dump.heads, dump.sq, dump.sk);
    for (Index h = 0; h < dump.heads; ++h)
        ex.attention.weights.head(0, h) = dump.head(b, l, h);
    ex.attention.emptyRows.assign(static_cast<std::size_t>(dump.sq), 0);
    ex.stats.reserve(static_cast<std::size_t>(dump.heads));
    for (Index h = 0; h < dump.heads; ++h)
        ex.stats.push_back(
            headStats(std::as_const(ex.attention.weights).head(0, h), MaskSpec{}, 0));
    ex.warnings = dump.warnings;
    return ex;
}

namespace {

/// Layer l of `dump` as applyToQkvLayer runs it: K/V mean-pooled to apply.kvHeads, the spec
/// with the layer's own window, the scale divided by the temperature, weights asked for.
struct AppliedLayer {
    Qkv qkv;
    AttentionSpec spec;
    double baseScale = 0;
};

AppliedLayer appliedLayer(const QkvDump& dump, Index l, const QkvApply& apply) {
    AppliedLayer ex;
    ex.qkv = dump.layer(l);
    Index kvHeads = dump.kvHeads;
    if (apply.kvHeads > 0 && apply.kvHeads != dump.kvHeads) {
        ATTN_CHECK(apply.kvHeads < dump.kvHeads && dump.kvHeads % apply.kvHeads == 0,
                   "kv heads " << apply.kvHeads << " must divide the dump's " << dump.kvHeads
                               << " kv heads");
        // Mean-pool each group of kv heads into one (Ainslie et al. 2023, section 2.1).
        kvHeads = apply.kvHeads;
        const Index group = dump.kvHeads / kvHeads;
        auto pool = [&](const Tensor4& from) {
            Tensor4 to(1, kvHeads, from.seq, from.dim);
            for (Index g = 0; g < kvHeads; ++g) {
                for (Index m = 0; m < group; ++m)
                    to.head(0, g) += from.head(0, g * group + m);
                to.head(0, g) /= static_cast<Scalar>(group);
            }
            return to;
        };
        ex.qkv.k = pool(ex.qkv.k);
        ex.qkv.v = pool(ex.qkv.v);
    }
    ATTN_CHECK(apply.temperature > 0, "temperature must be positive, got " << apply.temperature);
    AttentionSpec& spec = ex.spec;
    spec = apply.spec;
    if (!apply.layerWindows.empty()) {
        ATTN_CHECK(l >= 0 && l < static_cast<Index>(apply.layerWindows.size()),
                   "layer " << l << " has no window among " << apply.layerWindows.size());
        const Index window = apply.layerWindows[static_cast<std::size_t>(l)];
        spec.mask = MaskSpec{};
        if (window > 0)
            spec.mask.causalWindow = window - 1;
        else
            spec.mask.causal = true;
    }
    ex.baseScale = spec.scale.value_or(1.0 / std::sqrt(static_cast<double>(dump.dim)));
    spec.scale = ex.baseScale / apply.temperature;
    spec.wantWeights = true;
    spec.wantScores = apply.keepScores;
    return ex;
}

/// Query head h of a layer's Q/K/V alone, with the K/V head it reads.
Qkv oneHead(const Qkv& qkv, Index head) {
    const Index kvHead = kvHeadOf(head, qkv.q.heads, qkv.k.heads);
    auto slice = [](const Tensor4& from, Index h) {
        Tensor4 to(1, 1, from.seq, from.dim);
        to.head(0, 0) = from.head(0, h);
        return to;
    };
    return Qkv{slice(qkv.q, head), slice(qkv.k, kvHead), slice(qkv.v, kvHead)};
}

/// A layer's weights a head at a time: attend() of the head alone runs the kernel the whole
/// layer's run gives each head (heads are independent where the spec names no head: no
/// dropout, no score bias). The spec's wantScores stays as the layer's run had it, since it
/// chooses the kernel; the scores are not kept. The layer's Q/K/V are the caller's (the
/// Experiment's), not a copy. The last head asked for is kept for the next view that asks.
class QkvHeadMaps final : public LayerMaps {
public:
    explicit QkvHeadMaps(AttentionSpec spec) : m_spec(std::move(spec)) {
        m_spec.wantWeights = true;
    }

    Attention attendHead(const Qkv& qkv, Index head, int threads) const {
        AttentionSpec spec = m_spec;
        spec.threads = threads;
        return attend(oneHead(qkv, head), spec);
    }

    Matrix weights(const Qkv& qkv, Index head) const override {
        const std::lock_guard lock(m_mutex);
        return held(qkv, head);
    }
    Scalar weight(const Qkv& qkv, Index head, Index row, Index column) const override {
        const std::lock_guard lock(m_mutex);
        return held(qkv, head)(row, column);
    }
    /// Keeps head `head`'s map, computed by attendHead, for the next view that asks.
    void keep(Index head, Matrix weights) {
        const std::lock_guard lock(m_mutex);
        m_weights = std::move(weights);
        m_head = head;
    }

private:
    /// Head `head`'s map, computed unless it is the one kept. Called with the mutex held.
    const Matrix& held(const Qkv& qkv, Index head) const {
        if (head != m_head) {
            m_weights = attendHead(qkv, head, m_spec.threads).weights.head(0, 0);
            m_head = head;
        }
        return m_weights;
    }

    AttentionSpec m_spec;
    mutable std::mutex m_mutex;
    mutable Index m_head = -1;
    mutable Matrix m_weights;
};

} // namespace

Experiment applyToQkvLayer(const QkvDump& dump, Index l, const QkvApply& apply) {
    AppliedLayer layer = appliedLayer(dump, l, apply);
    Experiment ex;
    ex.qkv = std::move(layer.qkv);
    const AttentionSpec& spec = layer.spec;
    ex.baseScale = layer.baseScale;
    ex.temperature = apply.temperature;
    ex.scale = *spec.scale;
    ex.softcap = spec.softcap;
    const bool onDemand = apply.weightsOnDemand && spec.dropout.rate == 0 && !spec.scoreBias;
    if (onDemand) {
        // Checked as the whole layer's run would be, before any head runs.
        if (const auto problem = validate(ex.qkv, spec)) ATTN_CHECK(false, problem->message);
    } else {
        ex.attention = attend(ex.qkv, spec);
    }

    ex.source.kind = ExperimentSource::Kind::QkvDump;
    ex.source.name = baseName(dump.source);
    ex.source.layer = l;
    ex.variant = spec.variant;
    ex.mask = spec.mask;
    ex.keyTokens = dump.keyTokens();
    ex.queryTokens = dump.queryTokens();

    if (onDemand) {
        auto maps = std::make_shared<QkvHeadMaps>(spec);
        const Index heads = ex.qkv.q.heads;
        const Index sq = ex.qkv.q.seq;
        const Index sk = ex.qkv.k.seq;
        const Index dv = ex.qkv.v.dim;
        const Index block = overviewBlock(std::max(sq, sk));
        ex.output.resize(sq, heads * dv);
        ex.stats.resize(static_cast<std::size_t>(heads));
        ex.overviews.resize(static_cast<std::size_t>(heads));
        // A head at a time on each thread: its map lives while its numbers are taken.
        detail::parallelFor(heads, spec.threads, static_cast<double>(sq * sk), [&](Index h) {
            Attention one = maps->attendHead(ex.qkv, h, 1);
            const auto weights = std::as_const(one.weights).head(0, 0);
            ex.output.middleCols(h * dv, dv) = std::as_const(one.output).head(0, 0);
            const auto at = static_cast<std::size_t>(h);
            ex.stats[at] = headStats(weights, spec.mask, 0);
            ex.overviews[at] = blockMax(weights, spec.mask, block);
            if (h == 0) ex.attention.emptyRows = std::move(one.emptyRows);
            if (h == apply.keptHead) maps->keep(h, weights);
        });
        ex.maps = std::move(maps);
        ex.warnings = dump.warnings;
        return ex;
    }
    // Merged heads [Sq, H * Dv] (the dump has no output projection).
    const Tensor4& out = ex.attention.output;
    ex.output.resize(out.seq, out.heads * out.dim);
    for (Index h = 0; h < out.heads; ++h)
        ex.output.middleCols(h * out.dim, out.dim) = out.head(0, h);
    // Each head's statistics on its own thread (S x S each; the same numbers at any count).
    ex.stats.resize(static_cast<std::size_t>(dump.heads));
    const double cells = static_cast<double>(ex.attention.weights.seq * ex.attention.weights.dim);
    detail::parallelFor(dump.heads, spec.threads, cells, [&](Index h) {
        ex.stats[static_cast<std::size_t>(h)] =
            headStats(std::as_const(ex.attention.weights).head(0, h), spec.mask, 0);
    });
    ex.warnings = dump.warnings;
    return ex;
}

namespace {

/// A Q/K/V dump's maps under a spec, a head at a time (QkvHeadMaps); the layer last asked for
/// is kept ready, with its head last asked.
class AppliedMaps final : public HeadMaps {
public:
    AppliedMaps(std::shared_ptr<const QkvDump> qkv, QkvApply apply)
        : m_qkv(std::move(qkv)), m_apply(std::move(apply)) {}

    Matrix head(Index /*b*/, Index l, Index h) const override {
        const std::lock_guard lock(m_mutex);
        if (l != m_layerIndex || !m_maps) {
            m_layer = appliedLayer(*m_qkv, l, m_apply);
            if (const auto problem = validate(m_layer.qkv, m_layer.spec))
                ATTN_CHECK(false, problem->message);
            m_maps = std::make_unique<QkvHeadMaps>(m_layer.spec);
            m_layerIndex = l;
        }
        return m_maps->weights(m_layer.qkv, h);
    }

private:
    std::shared_ptr<const QkvDump> m_qkv;
    QkvApply m_apply;
    mutable std::mutex m_mutex;
    mutable Index m_layerIndex = -1;
    mutable AppliedLayer m_layer;
    mutable std::unique_ptr<QkvHeadMaps> m_maps;
};

} // namespace

AttentionDump appliedDump(std::shared_ptr<const QkvDump> qkv, const QkvApply& apply) {
    ATTN_CHECK(qkv != nullptr, "appliedDump: no Q/K/V dump");
    AttentionDump out;
    out.source = qkv->source;
    out.batch = 1;
    out.layers = qkv->layers;
    out.heads = qkv->heads;
    out.sq = qkv->sq;
    out.sk = qkv->sk;
    out.tokens = qkv->tokens;
    out.maps = std::make_shared<AppliedMaps>(std::move(qkv), apply);
    // A wrong spec (a kv-head count that does not divide, a bad mask) is refused now, not at
    // the first map a view asks for; layer 0 stays computed for the first view.
    if (out.layers > 0 && out.heads > 0) (void)out.maps->head(0, 0, 0);
    return out;
}

} // namespace attnlab

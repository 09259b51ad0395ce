// KV-cache decoding: prefill N rows, then one row at a time against the growing cache, each
// step a kernel call on sub-views of Q, K and V (bottom-right alignment places the rows).

#include "attnlab/attention/kv_cache.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "attnlab/base/parallel.h"
#include "kernels.h"

namespace attnlab {

std::int64_t kvCacheBytes(Index batch, Index kvHeads, Index cacheLen, Index dk, Index dv,
                          Index bytesPerElement) {
    return static_cast<std::int64_t>(batch) * kvHeads * cacheLen * (dk + dv) * bytesPerElement;
}

namespace {

/// The mask of the sub-problem rows [r0, r0 + rows) x keys [0, keys): the same rules (they
/// only depend on absolute positions, which bottom-right alignment keeps) and the matching
/// block of a custom mask.
MaskSpec subMask(const MaskSpec& mask, Index r0, Index rows, Index keys) {
    MaskSpec sub;
    sub.causal = mask.causal;
    sub.window = mask.window;
    sub.causalWindow = mask.causalWindow;
    sub.validLen = mask.validLen;
    if (mask.custom) sub.custom = BoolMatrix(mask.custom->block(r0, 0, rows, keys));
    return sub;
}

template <typename T>
AttentionT<T> attendKvCacheT(const QkvT<T>& qkv, const AttentionSpec& spec, Index prefill,
                             Index bytesPerElement, KvCacheTrace* trace) {
    ATTN_CHECK(qkv.q.seq == qkv.k.seq,
               "KV-cache decoding needs self-attention (Sq == Sk), got Sq = "
                   << qkv.q.seq << " and Sk = " << qkv.k.seq);
    ATTN_CHECK(prefill >= 0 && prefill <= qkv.q.seq,
               "prefill must be in [0, " << qkv.q.seq << "] (got " << prefill << ")");
    ATTN_CHECK(bytesPerElement > 0,
               "bytes per element must be > 0 (got " << bytesPerElement << ")");
    AttentionSpec causalSpec = spec;
    causalSpec.mask.causal = true;
    if (auto problem = validate(qkv, causalSpec)) ATTN_CHECK(false, problem->message);

    const Index batch = qkv.q.batch;
    const Index heads = qkv.q.heads;
    const Index seq = qkv.q.seq;
    const Index dim = qkv.q.dim;
    const Index dv = qkv.v.dim;
    const MaskSpec& mask = causalSpec.mask;

    AttentionT<T> result = kernels::prepareResult(qkv, spec);
    const std::optional<AdditiveParamsT<T>> additive = kernels::additiveParamsFor(qkv, spec);

    // The steps are the same for every head; their masks are built once.
    struct Step {
        Index r0, rows;
        MaskSpec mask;
    };
    std::vector<Step> steps;
    steps.push_back({0, prefill, subMask(mask, 0, prefill, prefill)});
    for (Index t = prefill; t < seq; ++t)
        steps.push_back({t, 1, subMask(mask, t, 1, t + 1)});

    const double workPerHead = static_cast<double>(seq) * static_cast<double>(seq) *
                               static_cast<double>(dim + dv);
    detail::parallelFor(batch * heads, spec.threads, workPerHead, [&](Index pair) {
        const Index b = pair / heads;
        const Index h = pair % heads;
        const Index kvHead = kvHeadOf(h, heads, qkv.k.heads);
        const auto q = qkv.q.head(b, h);
        const auto k = qkv.k.head(b, kvHead);
        const auto v = qkv.v.head(b, kvHead);
        auto out = result.output.head(b, h);
        T* weights = spec.wantWeights ? result.weights.data.data() + pair * seq * seq : nullptr;
        MatrixT<T> prefillWeights; // the prefill writes [N, N]; copied into the [S, S] rows
        for (const Step& step : steps) {
            if (step.rows == 0) continue;
            const Index keys = step.r0 + step.rows; // the cache after this step
            // Dropout keys each cell by its row in the whole sequence: the same cells drop as
            // in one full pass.
            std::optional<kernels::HeadDropout> dropout;
            if (spec.dropout.active()) dropout = kernels::HeadDropout{spec.dropout, h, step.r0};
            T* stepWeights = nullptr;
            if (weights) {
                if (step.rows == 1) {
                    stepWeights = weights + step.r0 * seq; // one row: contiguous
                } else {
                    prefillWeights.resize(step.rows, keys);
                    stepWeights = prefillWeights.data();
                }
            }
            const kernels::HeadJobT<T> job{
                ConstMatrixMapT<T>(q.data() + step.r0 * dim, step.rows, dim),
                ConstMatrixMapT<T>(k.data(), keys, dim),
                ConstMatrixMapT<T>(v.data(), keys, dv),
                MatrixMapT<T>(out.data() + step.r0 * dv, step.rows, dv),
                stepWeights,
                nullptr,
                step.mask,
                b,
                static_cast<T>(result.scale),
                h == 0 ? result.emptyRows.data() + b * seq + step.r0 : nullptr,
                dropout ? &*dropout : nullptr,
                spec.softcap ? static_cast<T>(*spec.softcap) : T(0)};
            kernels::runHead(job, spec, additive, nullptr);
            if (weights && step.rows > 1)
                MatrixMapT<T>(weights, seq, seq).topLeftCorner(step.rows, keys) = prefillWeights;
        }
        if (spec.wantScores)
            MatrixMapT<T>(result.scores.data.data() + pair * seq * seq, seq, seq).noalias() =
                static_cast<T>(result.scale) * (q * k.transpose());
    });

    if (trace) *trace = kvCacheTrace(batch, qkv.k.heads, seq, prefill, dim, dv, bytesPerElement);
    return result;
}

} // namespace

KvCacheTrace kvCacheTrace(Index batch, Index kvHeads, Index seq, Index prefill, Index dk, Index dv,
                          Index bytesPerElement) {
    ATTN_CHECK(prefill >= 0 && prefill <= seq,
               "prefill must be in [0, " << seq << "] (got " << prefill << ")");
    KvCacheTrace trace;
    trace.prefill = prefill;
    // The prefill, then one row a step (the steps attendKvCacheT runs).
    trace.steps.push_back({prefill, prefill, kvCacheBytes(batch, kvHeads, prefill, dk, dv,
                                                          bytesPerElement)});
    for (Index t = prefill; t < seq; ++t)
        trace.steps.push_back({1, t + 1, kvCacheBytes(batch, kvHeads, t + 1, dk, dv,
                                                      bytesPerElement)});
    return trace;
}

Attention attendKvCache(const Qkv& qkv, const AttentionSpec& spec, Index prefill,
                        Index bytesPerElement, KvCacheTrace* trace) {
    return attendKvCacheT(qkv, spec, prefill, bytesPerElement, trace);
}
AttentionD attendKvCache(const QkvD& qkv, const AttentionSpec& spec, Index prefill,
                         Index bytesPerElement, KvCacheTrace* trace) {
    return attendKvCacheT(qkv, spec, prefill, bytesPerElement, trace);
}

std::string kvCacheTraceJson(const KvCacheTrace& trace) {
    using nlohmann::json;
    json steps = json::array();
    for (const KvCacheStep& step : trace.steps) {
        json s = json::object();
        s["new_rows"] = step.newRows;
        s["cache_len"] = step.cacheLen;
        s["cache_bytes"] = step.cacheBytes;
        steps.push_back(std::move(s));
    }
    json root = json::object();
    root["prefill"] = trace.prefill;
    root["steps"] = std::move(steps);
    return root.dump();
}

} // namespace attnlab

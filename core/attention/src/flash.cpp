// FlashAttention (Dao et al. 2022, Alg. 1) for one head: q tiles outer, kv tiles inner,
// online softmax, fully masked tiles skipped, optional trace and partial-state read-out.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/attention/flash.h"
#include "flash_run.h"
#include "kernels.h"

namespace attnlab {

namespace kernels {

template <typename T>
void flashHead(const HeadJobT<T>& job, Index qBlock, Index kvBlock,
               std::type_identity_t<FlashHeadTraceT<T>>* trace) {
    const Index sq = job.q.rows();
    if (sq > 0 && job.k.rows() == 0) {
        MatrixMapT<T> out = job.out;
        out.setZero();
        if (job.emptyRows) std::fill(job.emptyRows, job.emptyRows + sq, 1);
        return;
    }
    // Dispatched once per head: eval mode runs the loop it ran before dropout existed.
    if (job.dropout)
        flashHeadDropout(job, qBlock, kvBlock, trace);
    else if (trace)
        flashRun<T, true, false>(job, qBlock, kvBlock, trace, StateSink<T>{});
    else
        flashRun<T, false, false>(job, qBlock, kvBlock, nullptr, StateSink<T>{});
}

template void flashHead(const HeadJobT<float>&, Index, Index, FlashHeadTraceT<float>*);
template void flashHead(const HeadJobT<double>&, Index, Index, FlashHeadTraceT<double>*);

} // namespace kernels

FlashState flashStateAfter(const Qkv& qkv, const AttentionSpec& spec, Index batch, Index head,
                           Index steps) {
    if (auto problem = validate(qkv, spec)) ATTN_CHECK(false, problem->message);
    ATTN_CHECK(batch >= 0 && batch < qkv.q.batch,
               "batch " << batch << " out of range [0, " << qkv.q.batch << ")");
    ATTN_CHECK(head >= 0 && head < qkv.q.heads,
               "head " << head << " out of range [0, " << qkv.q.heads << ")");
    const Index sq = qkv.q.seq;
    const Index dv = qkv.v.dim;
    FlashState state;
    state.accumulator = Matrix::Zero(sq, dv);
    state.rowMax.assign(static_cast<std::size_t>(sq), kMinusInf<float>);
    state.rowSum.assign(static_cast<std::size_t>(sq), 0.0f);
    if (steps <= 0 || sq == 0) return state;

    const Index kvHead = head / (qkv.q.heads / qkv.k.heads);
    const Scalar scale = static_cast<Scalar>(
        spec.scale ? *spec.scale
                   : (qkv.q.dim > 0 ? 1.0 / std::sqrt(static_cast<double>(qkv.q.dim)) : 1.0));
    Matrix unusedOut(sq, dv);
    const kernels::HeadJob job{qkv.q.head(batch, head),
                               qkv.k.head(batch, kvHead),
                               qkv.v.head(batch, kvHead),
                               MatrixMap(unusedOut.data(), sq, dv),
                               nullptr,
                               nullptr,
                               spec.mask,
                               batch,
                               scale,
                               nullptr};
    StateSink<float> sink;
    sink.state = &state;
    sink.stepLimit = steps;
    flashRun<float, false, false>(job, spec.qBlock, spec.kvBlock, nullptr, sink);
    return state;
}

namespace {
/// The shortest decimal that reads back as x, as a double, so the JSON shows 0.1 and not
/// 0.10000000149011612.
double shortestDouble(float x) {
    char text[32];
    const auto [end, error] = std::to_chars(text, text + sizeof text, x);
    if (error != std::errc()) return static_cast<double>(x);
    *end = '\0';
    return std::strtod(text, nullptr);
}
/// A double is written by the JSON library as the shortest decimal that reads back as it.
double shortestDouble(double x) {
    return x;
}

template <typename T> std::string traceJson(const FlashTraceT<T>& trace) {
    using nlohmann::json;
    auto numbers = [](const std::vector<T>& values) {
        json list = json::array();
        for (T x : values) {
            if (std::isfinite(x))
                list.push_back(shortestDouble(x));
            else
                list.push_back(nullptr);
        }
        return list;
    };
    json heads = json::array();
    for (const FlashHeadTraceT<T>& head : trace.heads) {
        json steps = json::array();
        for (const FlashStepT<T>& step : head.steps) {
            json s = json::object();
            s["q_start"] = step.qStart;
            s["q_end"] = step.qEnd;
            s["kv_start"] = step.kvStart;
            s["kv_end"] = step.kvEnd;
            s["skipped"] = step.skipped;
            s["row_max"] = numbers(step.rowMax);
            s["row_sum"] = numbers(step.rowSum);
            s["rescale"] = numbers(step.rescale);
            steps.push_back(std::move(s));
        }
        heads.push_back(json{{"batch", head.batch}, {"head", head.head}, {"steps", steps}});
    }
    json root = json::object();
    root["variant"] = "flash";
    root["q_block"] = trace.qBlock;
    root["kv_block"] = trace.kvBlock;
    root["heads"] = std::move(heads);
    return root.dump();
}

} // namespace

std::string flashTraceJson(const FlashTrace& trace) {
    return traceJson(trace);
}
std::string flashTraceJson(const FlashTraceD& trace) {
    return traceJson(trace);
}

} // namespace attnlab

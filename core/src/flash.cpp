// FlashAttention (Dao et al. 2022, Alg. 1) for one head: q tiles outer, kv tiles inner,
// online softmax, fully masked tiles skipped, optional trace and partial-state read-out.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/flash.h"
#include "kernels.h"

namespace attnlab {

namespace {

template <typename T> constexpr T kMinusInf = -std::numeric_limits<T>::infinity();

/// Per-thread buffers of one q tile, sized once per head and reused for every tile.
template <typename T> struct TileBuffers {
    MatrixT<T> scores;          // [Br, Bc] logits, then probabilities
    MatrixT<T> accumulator;     // [Br, Dv] un-normalised output
    ArrayT<T> rowMax, rowSum;   // [Br] running m and l
    ArrayT<T> tileMax, rescale; // [Br]
    ArrayT<T> shift;            // [Br] the m_new subtracted before exp (0 while m_new is -inf)
    ArrayT<T> inverse;          // [Br] 1 / l, or 0 for a row with no allowed key
    std::vector<KeyRange> ranges;

    void reserve(Index br, Index bc, Index dv) {
        scores.resize(br, bc);
        accumulator.resize(br, dv);
        rowMax.resize(br);
        rowSum.resize(br);
        tileMax.resize(br);
        rescale.resize(br);
        shift.resize(br);
        inverse.resize(br);
        ranges.resize(static_cast<std::size_t>(br));
    }
};

/// Where a partial run leaves its state (flashStateAfter), or nothing for a normal run.
template <typename T> struct StateSink {
    FlashStateT<T>* state = nullptr;
    Index stepLimit = std::numeric_limits<Index>::max();
};

/// Writes the rows [q0, q0 + br) of the tile state into the sink.
template <typename T>
void sinkTile(const TileBuffers<T>& buf, Index q0, Index br, FlashStateT<T>& state) {
    state.accumulator.middleRows(q0, br) = buf.accumulator.topRows(br);
    for (Index i = 0; i < br; ++i) {
        state.rowMax[static_cast<std::size_t>(q0 + i)] = buf.rowMax(i);
        state.rowSum[static_cast<std::size_t>(q0 + i)] = buf.rowSum(i);
    }
}

/// Whether the tile rows x [k0, k1) holds at least one allowed cell.
bool tileHasAllowed(const std::vector<KeyRange>& ranges, Index br, Index q0, Index k0, Index k1,
                    const BoolMatrix* custom) {
    for (Index i = 0; i < br; ++i) {
        const KeyRange& r = ranges[static_cast<std::size_t>(i)];
        const Index b = std::max(r.begin, k0);
        const Index e = std::min(r.end, k1);
        if (e <= b) continue;
        if (!custom || custom->row(q0 + i).segment(b, e - b).any()) return true;
    }
    return false;
}

/// Sets the cells of the [br, bc] tile at (q0, k0) that the mask forbids to -inf.
template <typename T>
void maskTile(Eigen::Ref<MatrixT<T>, 0, Eigen::OuterStride<>> tile,
              const std::vector<KeyRange>& ranges, Index q0, Index k0, const BoolMatrix* custom) {
    const Index br = tile.rows();
    const Index bc = tile.cols();
    for (Index i = 0; i < br; ++i) {
        const KeyRange& r = ranges[static_cast<std::size_t>(i)];
        const Index b = std::clamp<Index>(r.begin - k0, 0, bc);
        const Index e = std::clamp<Index>(r.end - k0, b, bc);
        if (b > 0) tile.row(i).head(b).setConstant(kMinusInf<T>);
        if (e < bc) tile.row(i).tail(bc - e).setConstant(kMinusInf<T>);
        if (custom) {
            const auto allow = custom->row(q0 + i).segment(k0, bc).array();
            tile.row(i) = allow.select(tile.row(i).array(), kMinusInf<T>).matrix();
        }
    }
}

/// Dao et al. 2022, Alg. 1 over one head. For each q tile Q_i and kv tile (K_j, V_j):
///   S = scale Q_i K_j^T,  m_new = max(m, rowmax S),  P = exp(S - m_new),
///   l = exp(m - m_new) l + rowsum P,  O = diag(exp(m - m_new)) O + P V_j,
/// and O / l at the end of the q tile. kRecord appends the state after every tile to trace.
/// kDropout (train mode) drops cells of P after l has summed them, before P V_j: the output is
/// the dropped weights times V, exactly as softmax attention with the same dropout.
template <typename T, bool kRecord, bool kDropout>
void flashRun(const kernels::HeadJobT<T>& job, Index qBlock, Index kvBlock,
              FlashHeadTraceT<T>* trace, const StateSink<T>& sink) {
    const Index sq = job.q.rows();
    const Index sk = job.k.rows();
    const Index dv = job.v.cols();
    if (sq == 0) return;
    qBlock = std::max<Index>(1, std::min(qBlock, sq));
    kvBlock = std::max<Index>(1, kvBlock);
    const BoolMatrix* custom = job.mask.custom ? &*job.mask.custom : nullptr;
    MatrixMapT<T> output = job.out; // writable: job is const, the memory it names is not

    thread_local TileBuffers<T> buf;
    buf.reserve(qBlock, std::min(kvBlock, std::max<Index>(sk, 1)), dv);

    if (job.scores)
        MatrixMapT<T>(job.scores, sq, sk).noalias() = job.scale * (job.q * job.k.transpose());

    Index step = 0;
    for (Index q0 = 0; q0 < sq; q0 += qBlock) {
        const Index br = std::min(qBlock, sq - q0);
        const auto qTile = job.q.middleRows(q0, br);
        auto acc = buf.accumulator.topRows(br);
        auto rowMax = buf.rowMax.head(br);
        auto rowSum = buf.rowSum.head(br);
        acc.setZero();
        rowMax.setConstant(kMinusInf<T>);
        rowSum.setZero();
        for (Index i = 0; i < br; ++i)
            buf.ranges[static_cast<std::size_t>(i)] = keyRange(job.mask, job.batch, q0 + i, sq, sk);

        bool stopped = false;
        for (Index k0 = 0; k0 < sk; k0 += kvBlock, ++step) {
            if (step >= sink.stepLimit) {
                stopped = true;
                break;
            }
            const Index bc = std::min(kvBlock, sk - k0);
            const bool skip = !tileHasAllowed(buf.ranges, br, q0, k0, k0 + bc, custom);
            auto rescale = buf.rescale.head(br);
            if (!skip) {
                auto s = buf.scores.topLeftCorner(br, bc);
                s.noalias() = job.scale * (qTile * job.k.middleRows(k0, bc).transpose());
                maskTile<T>(s, buf.ranges, q0, k0, custom);
                auto tileMax = buf.tileMax.head(br);
                auto shift = buf.shift.head(br);
                tileMax = s.rowwise().maxCoeff().array();
                auto& newMax = tileMax;
                newMax = rowMax.max(tileMax);
                // A row that has seen no allowed key keeps m = -inf: shift by 0 so exp gives 0.
                shift = (newMax > kMinusInf<T>).select(newMax, T(0));
                // exp(m_old - m_new); 0 for a row that had seen no key (its state is zero).
                rescale = (rowMax - shift).exp();
                s.array().colwise() -= shift;
                s = s.array().exp().matrix();
                rowSum = rescale * rowSum + s.rowwise().sum().array();
                if constexpr (kDropout)
                    for (Index i = 0; i < br; ++i)
                        kernels::dropWeights<T>(&s(i, 0), bc, k0, *job.dropout, job.batch, q0 + i,
                                                kernels::keepScale<T>(*job.dropout));
                acc.array().colwise() *= rescale;
                acc.noalias() += s * job.v.middleRows(k0, bc);
                rowMax = newMax;
            } else {
                rescale.setOnes();
            }
            if constexpr (kRecord) {
                FlashStepT<T> rec;
                rec.qStart = q0;
                rec.qEnd = q0 + br;
                rec.kvStart = k0;
                rec.kvEnd = k0 + bc;
                rec.skipped = skip;
                rec.rowMax.assign(rowMax.data(), rowMax.data() + br);
                rec.rowSum.assign(rowSum.data(), rowSum.data() + br);
                rec.rescale.assign(rescale.data(), rescale.data() + br);
                trace->steps.push_back(std::move(rec));
            }
        }
        if (sink.state) {
            sinkTile(buf, q0, br, *sink.state);
            sink.state->stepsDone = step;
            if (stopped) return;
            continue;
        }

        // O_i = diag(l)^-1 O_i; a row with l == 0 saw no allowed key: zero and flagged.
        auto out = output.middleRows(q0, br);
        auto inverse = buf.inverse.head(br);
        inverse = (rowSum > T(0)).select(rowSum.inverse(), T(0));
        out.array() = acc.array().colwise() * inverse;
        if (job.emptyRows)
            for (Index i = 0; i < br; ++i)
                if (!(rowSum(i) > 0)) job.emptyRows[q0 + i] = 1;

        if (job.weights) {
            // Exact weights by a second pass: w = exp(s - m_final) / l_final, tile by tile.
            MatrixMapT<T> weights(job.weights + q0 * sk, br, sk);
            for (Index k0 = 0; k0 < sk; k0 += kvBlock) {
                const Index bc = std::min(kvBlock, sk - k0);
                auto w = weights.middleCols(k0, bc);
                if (!tileHasAllowed(buf.ranges, br, q0, k0, k0 + bc, custom)) {
                    w.setZero();
                    continue;
                }
                w.noalias() = job.scale * (qTile * job.k.middleRows(k0, bc).transpose());
                maskTile<T>(w, buf.ranges, q0, k0, custom);
                auto shift = buf.shift.head(br);
                shift = (rowMax > kMinusInf<T>).select(rowMax, T(0));
                w.array().colwise() -= shift;
                w = (w.array().exp().colwise() * inverse).matrix();
                if constexpr (kDropout)
                    for (Index i = 0; i < br; ++i)
                        kernels::dropWeights<T>(&w(i, 0), bc, k0, *job.dropout, job.batch, q0 + i,
                                                kernels::keepScale<T>(*job.dropout));
            }
        }
    }
    if (sink.state) sink.state->stepsDone = step;
}

} // namespace

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
    if (trace && job.dropout)
        flashRun<T, true, true>(job, qBlock, kvBlock, trace, StateSink<T>{});
    else if (trace)
        flashRun<T, true, false>(job, qBlock, kvBlock, trace, StateSink<T>{});
    else if (job.dropout)
        flashRun<T, false, true>(job, qBlock, kvBlock, nullptr, StateSink<T>{});
    else
        flashRun<T, false, false>(job, qBlock, kvBlock, nullptr, StateSink<T>{});
}

template void flashHead(const HeadJobT<float>&, Index, Index, FlashHeadTraceT<float>*);
template void flashHead(const HeadJobT<double>&, Index, Index, FlashHeadTraceT<double>*);

} // namespace kernels

FlashState flashStateAfter(const Qkv& qkv, const AttentionSpec& spec, Index batch, Index head,
                           Index steps) {
    if (auto problem = validate(qkv, spec)) ATTN_CHECK(false, *problem);
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

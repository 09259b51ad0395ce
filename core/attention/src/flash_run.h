#pragma once
// The FlashAttention recurrence of one head (Dao et al. 2022, Alg. 1) as a template, for
// flash.cpp (the eval kernels, trace and partial-state read-out) and flash_dropout.cpp (the
// train-mode kernels). Internal to attnlab_core. The train-mode instantiations live in their
// own translation unit so that they do not change how the compiler inlines the eval ones:
// eval mode compiles to the code it compiled to before dropout existed.
// Everything here has internal linkage (an unnamed namespace), as it had inside flash.cpp.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attnlab/attention/flash.h"
#include "flash_tile.h"
#include "kernels.h"

namespace attnlab {

// NOLINTBEGIN(cert-dcl59-cpp,google-build-namespaces): internal linkage on purpose, see above
namespace {

template <typename T> constexpr T kMinusInf = -std::numeric_limits<T>::infinity();

/// Per-thread buffers of one q tile, sized once per head and reused for every tile.
template <typename T> struct TileBuffers {
    MatrixT<T> scores;        // [Br, Bc] logits, then probabilities
    MatrixT<T> accumulator;   // [Br, Dv] un-normalised output
    ArrayT<T> rowMax, rowSum; // [Br] running m and l
    ArrayT<T> rescale;        // [Br] exp(m_old - m_new) of the last tile
    ArrayT<T> shift;          // [Br] the m_new subtracted before exp (0 while m_new is -inf)
    ArrayT<T> inverse;        // [Br] 1 / l, or 0 for a row with no allowed key
    std::vector<KeyRange> ranges;

    void reserve(Index br, Index bc, Index dv) {
        scores.resize(br, bc);
        accumulator.resize(br, dv);
        rowMax.resize(br);
        rowSum.resize(br);
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
        kernels::tileKeyRanges(job.mask, job.batch, q0, br, sq, sk, buf.ranges);

        bool stopped = false;
        for (Index k0 = 0; k0 < sk; k0 += kvBlock, ++step) {
            if (step >= sink.stepLimit) {
                stopped = true;
                break;
            }
            const Index bc = std::min(kvBlock, sk - k0);
            const bool skip = !kernels::tileHasAllowed(buf.ranges, br, q0, k0, k0 + bc, custom);
            auto rescale = buf.rescale.head(br);
            if (!skip) {
                auto s = buf.scores.topLeftCorner(br, bc);
                kernels::tileScores<T>(s, job.scale, qTile, job.k.middleRows(k0, bc), buf.ranges,
                                       q0, k0, custom);
                auto shift = buf.shift.head(br);
                kernels::onlineSoftmaxUpdate<T>(s, rowMax, rowSum, rescale, shift);
                if constexpr (kDropout)
                    for (Index i = 0; i < br; ++i)
                        kernels::dropWeights<T>(&s(i, 0), bc, k0, *job.dropout, job.batch, q0 + i,
                                                kernels::keepScale<T>(*job.dropout));
                kernels::accumulateTile(acc, rescale, s, job.v.middleRows(k0, bc));
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
                if (!kernels::tileHasAllowed(buf.ranges, br, q0, k0, k0 + bc, custom)) {
                    w.setZero();
                    continue;
                }
                kernels::tileScores<T>(w, job.scale, qTile, job.k.middleRows(k0, bc), buf.ranges,
                                       q0, k0, custom);
                auto shift = buf.shift.head(br);
                shift = (rowMax > kMinusInf<T>).select(rowMax, T(0));
                w.array().colwise() -= shift;
                w = (kernels::expMasked(w.array()).colwise() * inverse).matrix();
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
// NOLINTEND(cert-dcl59-cpp,google-build-namespaces)

namespace kernels {
/// flashHead in train mode (flash_dropout.cpp).
template <typename T>
void flashHeadDropout(const HeadJobT<T>& job, Index qBlock, Index kvBlock,
                      std::type_identity_t<FlashHeadTraceT<T>>* trace);
} // namespace kernels

} // namespace attnlab

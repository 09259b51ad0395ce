#pragma once
// Dense softmax attention of one head as a template (kDropout: train-mode dropout after the
// softmax), for softmax.cpp (eval) and softmax_dropout.cpp (train). Internal to attnlab_core.
// The train-mode instantiations live in their own translation unit so that they do not change
// how the compiler inlines the eval ones. Everything has internal linkage, as in softmax.cpp.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels.h"

namespace attnlab {

// NOLINTBEGIN(cert-dcl59-cpp,google-build-namespaces): internal linkage on purpose, see above
namespace {
template <typename T> constexpr T kMinusInf = -std::numeric_limits<T>::infinity();
/// Scores are computed in row chunks of about this many cells, so a chunk stays in cache
/// between its GEMM, its softmax and its P V product.
constexpr Index kChunkCells = Index(1) << 18;

template <typename T>
bool softmaxRowT(Eigen::Ref<RowVectorT<T>> row, KeyRange range, const bool* customRow) {
    const Index n = row.size();
    const Index begin = std::clamp<Index>(range.begin, 0, n);
    const Index end = std::clamp<Index>(range.end, begin, n);
    row.head(begin).setZero();
    row.tail(n - end).setZero();
    if (end <= begin) return false;
    auto allowed = row.segment(begin, end - begin).array();
    if (customRow) {
        const Eigen::Map<const Eigen::Array<bool, 1, Eigen::Dynamic>> custom(customRow + begin,
                                                                             end - begin);
        allowed = custom.select(allowed, kMinusInf<T>);
    }
    const T rowMax = allowed.maxCoeff();
    if (!(rowMax > kMinusInf<T>)) {
        allowed.setZero();
        return false;
    }
    allowed = kernels::expMasked(allowed - rowMax);
    allowed *= T(1) / kernels::indexOrderSum(allowed);
    return true;
}

} // namespace

namespace kernels {
namespace {

/// softmaxHead's body; kDropout drops weights after the softmax of each row (train mode).
template <typename T, bool kDropout> void softmaxRun(const HeadJobT<T>& job) {
    const Index sq = job.q.rows();
    const Index sk = job.k.rows();
    if (sq == 0) return;
    MatrixMapT<T> out = job.out;
    if (sk == 0) {
        out.setZero();
        if (job.emptyRows) std::fill(job.emptyRows, job.emptyRows + sq, 1);
        return;
    }
    const BoolMatrix* custom = job.mask.custom ? &*job.mask.custom : nullptr;
    const Index chunkRows = std::clamp<Index>(kChunkCells / sk, 1, sq);
    // Weights go straight into the caller's buffer; otherwise into a scratch chunk that the
    // thread keeps between heads.
    thread_local MatrixT<T> scratch;
    thread_local std::vector<KeyRange> ranges;
    if (!job.weights) scratch.resize(chunkRows, sk);
    ranges.resize(static_cast<std::size_t>(chunkRows));

    for (Index r0 = 0; r0 < sq; r0 += chunkRows) {
        const Index rows = std::min(chunkRows, sq - r0);
        MatrixMapT<T> probs(job.weights ? job.weights + r0 * sk : scratch.data(), rows, sk);
        // Only the key columns [lo, hi) that some row of the chunk may see are computed
        // (half the work under a causal mask); the scores, when asked for, need them all.
        Index lo = job.scores ? 0 : sk;
        Index hi = job.scores ? sk : 0;
        for (Index i = 0; i < rows; ++i) {
            const KeyRange range = keyRange(job.mask, job.batch, r0 + i, sq, sk);
            ranges[static_cast<std::size_t>(i)] = range;
            if (range.empty()) continue;
            lo = std::min(lo, range.begin);
            hi = std::max(hi, range.end);
        }
        if (hi <= lo) { // no row of the chunk has an allowed key
            if (job.weights) probs.setZero();
            out.middleRows(r0, rows).setZero();
            if (job.emptyRows) std::fill(job.emptyRows + r0, job.emptyRows + r0 + rows, 1);
            continue;
        }
        const Index width = hi - lo;
        auto logits = probs.middleCols(lo, width);
        /// s = scale * Q K^T (the scale folds into the GEMM's alpha).
        logits.noalias() =
            job.scale * (job.q.middleRows(r0, rows) * job.k.middleRows(lo, width).transpose());
        if (job.softcap > 0) logits = (logits.array() / job.softcap).tanh() * job.softcap;
        if (job.scoreBias)
            logits += ConstMatrixMapT<T>(job.scoreBias + r0 * sk, rows, sk).middleCols(lo, width);
        if (job.scores) MatrixMapT<T>(job.scores + r0 * sk, rows, sk) = probs;
        if (job.weights) {
            probs.leftCols(lo).setZero();
            probs.rightCols(sk - hi).setZero();
        }
        for (Index i = 0; i < rows; ++i) {
            const Index row = r0 + i;
            const KeyRange range = ranges[static_cast<std::size_t>(i)];
            const bool any = softmaxRowT<T>(logits.row(i), {range.begin - lo, range.end - lo},
                                            custom ? &(*custom)(row, lo) : nullptr);
            if (!any && job.emptyRows) job.emptyRows[row] = 1;
            if constexpr (kDropout)
                if (any)
                    dropWeights<T>(&logits(i, 0), width, lo, *job.dropout, job.batch, row,
                                   keepScale<T>(*job.dropout));
        }
        out.middleRows(r0, rows).noalias() = logits * job.v.middleRows(lo, width);
    }
}

} // namespace
} // namespace kernels
// NOLINTEND(cert-dcl59-cpp,google-build-namespaces)

namespace kernels {
/// softmaxHead in train mode (softmax_dropout.cpp).
template <typename T> void softmaxHeadDropout(const HeadJobT<T>& job);
} // namespace kernels

} // namespace attnlab

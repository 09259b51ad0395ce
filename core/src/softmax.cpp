// Dense softmax attention of one head, and the masked row softmax it is built on.

// GCC 12 reports false "maybe uninitialized" warnings inside Eigen's AVX-512 intrinsics
// (the _mm512_undefined_ps idiom) when they are inlined here with -march=native.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels.h"

namespace attnlab {

namespace {
constexpr Scalar kMinusInf = -std::numeric_limits<Scalar>::infinity();
/// Scores are computed in row chunks of about this many cells, so a chunk stays in cache
/// between its GEMM, its softmax and its P V product.
constexpr Index kChunkCells = Index(1) << 18;
} // namespace

bool softmaxRow(Eigen::Ref<RowVector> row, KeyRange range, const bool* customRow) {
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
        allowed = custom.select(allowed, kMinusInf);
    }
    const Scalar rowMax = allowed.maxCoeff();
    if (!(rowMax > kMinusInf)) {
        allowed.setZero();
        return false;
    }
    allowed = (allowed - rowMax).exp();
    allowed *= Scalar(1) / allowed.sum();
    return true;
}

namespace kernels {

void softmaxHead(const HeadJob& job) {
    const Index sq = job.q.rows();
    const Index sk = job.k.rows();
    if (sq == 0) return;
    MatrixMap out = job.out;
    if (sk == 0) {
        out.setZero();
        if (job.emptyRows) std::fill(job.emptyRows, job.emptyRows + sq, 1);
        return;
    }
    const BoolMatrix* custom = job.mask.custom ? &*job.mask.custom : nullptr;
    const Index chunkRows = std::clamp<Index>(kChunkCells / sk, 1, sq);
    // Weights go straight into the caller's buffer; otherwise into a scratch chunk that the
    // thread keeps between heads.
    thread_local Matrix scratch;
    if (!job.weights) scratch.resize(chunkRows, sk);

    for (Index r0 = 0; r0 < sq; r0 += chunkRows) {
        const Index rows = std::min(chunkRows, sq - r0);
        MatrixMap probs(job.weights ? job.weights + r0 * sk : scratch.data(), rows, sk);
        /// s = scale * Q K^T (the scale folds into the GEMM's alpha).
        probs.noalias() = job.scale * (job.q.middleRows(r0, rows) * job.k.transpose());
        if (job.scores) MatrixMap(job.scores + r0 * sk, rows, sk) = probs;
        for (Index i = 0; i < rows; ++i) {
            const Index row = r0 + i;
            const KeyRange range = keyRange(job.mask, job.batch, row, sq, sk);
            const bool any = softmaxRow(probs.row(i), range, custom ? &(*custom)(row, 0) : nullptr);
            if (!any && job.emptyRows) job.emptyRows[row] = 1;
        }
        out.middleRows(r0, rows).noalias() = probs * job.v;
    }
}

} // namespace kernels
} // namespace attnlab

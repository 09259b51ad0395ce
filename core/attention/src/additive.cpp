// Additive (MLP, Bahdanau) attention, d2l's "MLP attention" (seed 003 §2.2):
//   score_ij = v^T tanh(Wq q_i + Wk k_j),   weights = masked softmax(score),   out = P V.
// Seed 003's MLPAttention code drops the tanh and applies W_k to the queries and W_q to the
// keys; docs/architecture.md's formula (and seed 003's own text) is followed here. Scores are not
// divided by sqrt(d): the learned v sets their scale.

#include <cmath>

#include "attnlab/base/seeded.h"
#include "kernels.h"

namespace attnlab {

namespace {
// Streams of seededMatrix() reserved for the additive parameters (projections use 0..3).
constexpr std::uint64_t kStreamWq = 0xadd0;
constexpr std::uint64_t kStreamWk = 0xadd1;
constexpr std::uint64_t kStreamV = 0xadd2;
} // namespace

AdditiveParams makeAdditiveParams(Index units, Index dq, Index dk, std::uint64_t seed) {
    ATTN_CHECK(units >= 1, "additive attention needs at least 1 hidden unit (got " << units << ")");
    ATTN_CHECK(dq >= 0 && dk >= 0,
               "additive attention dimensions must be >= 0 (got " << dq << ", " << dk << ")");
    AdditiveParams params;
    params.wq = seededMatrix(units, dq, seed, kStreamWq);
    params.wk = seededMatrix(units, dk, seed, kStreamWk);
    params.v = seededMatrix(units, 1, seed, kStreamV);
    return params;
}

namespace kernels {

template <typename T>
void additiveHead(const HeadJobT<T>& job, const std::type_identity_t<AdditiveParamsT<T>>& params) {
    const Index sq = job.q.rows();
    const Index sk = job.k.rows();
    const Index units = params.v.size();
    ATTN_CHECK(params.wq.rows() == units && params.wk.rows() == units,
               "additive parameters disagree on the number of units: wq has "
                   << params.wq.rows() << " rows, wk " << params.wk.rows() << ", v " << units);
    ATTN_CHECK(params.wq.cols() == job.q.cols(), "additive wq is ["
                                                     << params.wq.rows() << ", " << params.wq.cols()
                                                     << "] but queries have D = " << job.q.cols());
    ATTN_CHECK(params.wk.cols() == job.k.cols(), "additive wk is ["
                                                     << params.wk.rows() << ", " << params.wk.cols()
                                                     << "] but keys have D = " << job.k.cols());
    ATTN_CHECK(job.v.rows() == sk,
               "additive attention: k has " << sk << " rows but v has " << job.v.rows());
    if (sq == 0) return;
    MatrixMapT<T> out = job.out; // a writable view (job is const, the memory it names is not)

    // Projections once per head: hq = Q Wq^T [Sq, units], hk = K Wk^T [Sk, units].
    MatrixT<T> hq(sq, units);
    hq.noalias() = job.q * params.wq.transpose();
    MatrixT<T> hk(sk, units);
    hk.noalias() = job.k * params.wk.transpose();

    const BoolMatrix* custom = job.mask.custom ? &*job.mask.custom : nullptr;
    RowVectorT<T> scratch(sk);
    ArrayT<T> hidden(units);
    for (Index i = 0; i < sq; ++i) {
        Eigen::Map<RowVectorT<T>> row(job.weights ? job.weights + i * sk : scratch.data(), sk);
        const KeyRange range = keyRange(job.mask, job.batch, i, sq, sk);
        // Scores are wanted unmasked; otherwise only the allowed interval is evaluated.
        const Index first = job.scores ? 0 : range.begin;
        const Index last = job.scores ? sk : range.end;
        for (Index j = first; j < last; ++j) {
            hidden = (hq.row(i) + hk.row(j)).transpose().array().tanh();
            row(j) = (hidden * params.v.array()).sum();
        }
        if (job.scores) Eigen::Map<RowVectorT<T>>(job.scores + i * sk, sk) = row;
        const bool any = softmaxRow(row, range, custom ? &(*custom)(i, 0) : nullptr);
        if (!any) {
            out.row(i).setZero();
            if (job.emptyRows) job.emptyRows[i] = 1;
            continue;
        }
        if (job.dropout) // train mode; one test per row, next to tanh over every cell
            kernels::dropWeights<T>(row.data() + range.begin, range.size(), range.begin,
                                    *job.dropout, job.batch, i,
                                    kernels::keepScale<T>(*job.dropout));
        out.row(i).noalias() =
            row.segment(range.begin, range.size()) * job.v.middleRows(range.begin, range.size());
    }
}

template void additiveHead(const HeadJobT<float>&, const AdditiveParamsT<float>&);
template void additiveHead(const HeadJobT<double>&, const AdditiveParamsT<double>&);

} // namespace kernels
} // namespace attnlab

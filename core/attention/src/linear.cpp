// Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs", eq. 4-6) with
// phi(x) = elu(x) + 1, written exactly as seed 001's linear_attention:
//   out_i = phi(q_i)^T (sum_j phi(k_j) v_j^T) / (phi(q_i)^T sum_j phi(k_j) + 1e-6),
// the sums running over the keys row i may see.

#include <cmath>
#include <vector>

#include "kernels.h"

namespace attnlab::kernels {

namespace {

constexpr double kLinearEps = 1e-6; // added to the denominator, as in seed 001

/// elu(x) + 1: x + 1 for x > 0, exp(x) otherwise (always > 0), written branch-free as
/// max(x, 0) + exp(min(x, 0)) so that Eigen vectorises the exp.
template <typename T> MatrixT<T> featureMap(ConstMatrixMapT<T> x) {
    MatrixT<T> phi(x.rows(), x.cols());
    phi.array() = x.array().max(T(0)) + x.array().min(T(0)).exp();
    return phi;
}

/// Running sums over a key interval [begin, end): S = sum phi(k_j) v_j^T, z = sum phi(k_j).
/// Moving either end adds or subtracts one key, so the state over [begin, end) equals the
/// difference of the prefix sums P(end) - P(begin) without storing all S + 1 prefixes
/// (the structured masks move both ends monotonically, so each key enters and leaves once).
/// Double precision keeps the subtraction of a sliding window exact enough.
class IntervalState {
public:
    template <typename T>
    IntervalState(const MatrixT<T>& phiK, ConstMatrixMapT<T> v)
        : m_phiK(phiK.template cast<double>()), m_v(v.template cast<double>()),
          m_kv(MatrixD::Zero(phiK.cols(), v.cols())), m_z(Eigen::RowVectorXd::Zero(phiK.cols())) {}

    void moveTo(KeyRange range) {
        while (m_end < range.end)
            accumulate(m_end++, 1.0);
        while (m_end > range.end)
            accumulate(--m_end, -1.0);
        while (m_begin < range.begin)
            accumulate(m_begin++, -1.0);
        while (m_begin > range.begin)
            accumulate(--m_begin, 1.0);
    }

    const MatrixD& kv() const { return m_kv; }
    const Eigen::RowVectorXd& z() const { return m_z; }

private:
    void accumulate(Index j, double sign) {
        // Row-major [D, Dv]: row c gains phi(k_j)_c v_j, no temporaries.
        for (Index c = 0; c < m_kv.rows(); ++c)
            m_kv.row(c) += (sign * m_phiK(j, c)) * m_v.row(j);
        m_z += sign * m_phiK.row(j);
    }

    const MatrixD m_phiK;   // [Sk, D] in double, converted once
    const MatrixD m_v;      // [Sk, Dv]
    MatrixD m_kv;           // [D, Dv]
    Eigen::RowVectorXd m_z; // [D]
    Index m_begin = 0;
    Index m_end = 0;
};

template <typename T> void markEmpty(const HeadJobT<T>& job, MatrixMapT<T>& out, Index i) {
    out.row(i).setZero();
    if (job.emptyRows) job.emptyRows[i] = 1;
}

} // namespace

template <typename T> void linearHead(const HeadJobT<T>& job) {
    const Index sq = job.q.rows();
    const Index sk = job.k.rows();
    ATTN_CHECK(job.k.cols() == job.q.cols(),
               "linear attention: q has D = " << job.q.cols() << " but k has D = " << job.k.cols());
    ATTN_CHECK(job.v.rows() == sk,
               "linear attention: k has " << sk << " rows but v has " << job.v.rows());
    if (sq == 0) return;
    MatrixMapT<T> out = job.out; // a writable view (job is const, the memory it names is not)

    const MatrixT<T> phiQ = featureMap<T>(job.q);
    const MatrixT<T> phiK = featureMap<T>(job.k);

    // The raw kernel values phi(q).phi(k), wanted for the scores and/or the implied weights.
    MatrixT<T> kernel;
    if (job.scores || job.weights) {
        kernel.resize(sq, sk);
        kernel.noalias() = phiQ * phiK.transpose();
        if (job.scores) MatrixMapT<T>(job.scores, sq, sk) = kernel;
        if (job.weights) MatrixMapT<T>(job.weights, sq, sk).setZero();
    }

    if (job.mask.custom) {
        // Explicit O(Sq Sk D) form: the allowed set is an interval AND an arbitrary matrix.
        const BoolMatrix& custom = *job.mask.custom;
        RowVectorT<T> rowKernel(sk);
        for (Index i = 0; i < sq; ++i) {
            const KeyRange range = keyRange(job.mask, job.batch, i, sq, sk);
            double denominator = 0;
            bool any = false;
            rowKernel.setZero();
            for (Index j = range.begin; j < range.end; ++j) {
                if (!custom(i, j)) continue;
                any = true;
                rowKernel(j) = kernel.size() ? kernel(i, j) : phiQ.row(i).dot(phiK.row(j));
                denominator += rowKernel(j);
            }
            if (!any) {
                markEmpty(job, out, i);
                continue;
            }
            denominator += kLinearEps;
            const auto inv = static_cast<T>(1.0 / denominator);
            out.row(i).noalias() = (rowKernel * inv) * job.v;
            if (job.weights) MatrixMapT<T>(job.weights, sq, sk).row(i) = rowKernel * inv;
        }
        return;
    }

    if (job.mask.none()) {
        // Associative form, O(S D Dv): phi(Q) (phi(K)^T V) / (phi(Q) sum_j phi(k_j) + eps).
        if (sk == 0) {
            for (Index i = 0; i < sq; ++i)
                markEmpty(job, out, i);
            return;
        }
        MatrixT<T> kv(phiK.cols(), job.v.cols());
        kv.noalias() = phiK.transpose() * job.v;
        const VectorT<T> keySum = phiK.colwise().sum().transpose();
        VectorT<T> denominator(sq);
        denominator.noalias() = phiQ * keySum;
        denominator.array() += static_cast<T>(kLinearEps);
        out.noalias() = phiQ * kv;
        out.array().colwise() /= denominator.array();
        if (job.weights) {
            MatrixMapT<T> weights(job.weights, sq, sk);
            weights = kernel;
            weights.array().colwise() /= denominator.array();
        }
        return;
    }

    // Interval masks (causal, window, causal window, padding): running interval sums.
    IntervalState state(phiK, job.v);
    Eigen::RowVectorXd phiRow(phiQ.cols());
    Eigen::RowVectorXd outRow(job.v.cols());
    for (Index i = 0; i < sq; ++i) {
        const KeyRange range = keyRange(job.mask, job.batch, i, sq, sk);
        if (range.empty()) {
            markEmpty(job, out, i);
            continue;
        }
        state.moveTo(range);
        phiRow = phiQ.row(i).template cast<double>();
        const double denominator = phiRow.dot(state.z()) + kLinearEps;
        outRow.noalias() = phiRow * state.kv();
        out.row(i) = (outRow / denominator).template cast<T>();
        if (job.weights) {
            MatrixMapT<T> weights(job.weights, sq, sk);
            weights.row(i).segment(range.begin, range.size()) =
                (kernel.row(i).segment(range.begin, range.size()).template cast<double>() /
                 denominator)
                    .template cast<T>();
        }
    }
}

template void linearHead(const HeadJobT<float>&);
template void linearHead(const HeadJobT<double>&);

} // namespace attnlab::kernels

#pragma once
// One tile of FlashAttention's recurrence (Dao et al. 2022, Alg. 1), the one place it is
// written: which tiles hold an allowed cell, the mask applied to a tile's logits, and the
// online-softmax update of the running max m and sum l. The kernel (flash_run.h) and the
// stepper's one-head walk (flash_walk.cpp) both call these, so the walk shows exactly the
// numbers the kernel computes. Internal to attnlab_core.

#include <algorithm>
#include <limits>
#include <vector>

#include "attnlab/attention/mask.h"
#include "kernels.h"

namespace attnlab::kernels {

/// ranges[i] = the key range of query row q0 + i under the interval masks, for br rows.
inline void tileKeyRanges(const MaskSpec& mask, Index batch, Index q0, Index br, Index sq, Index sk,
                          std::vector<KeyRange>& ranges) {
    ranges.resize(static_cast<std::size_t>(br));
    for (Index i = 0; i < br; ++i)
        ranges[static_cast<std::size_t>(i)] = keyRange(mask, batch, q0 + i, sq, sk);
}

/// Whether the tile of rows [q0, q0 + ranges.size()) x keys [k0, k1) holds an allowed cell;
/// ranges[i] is row q0 + i's key range under the interval masks.
inline bool tileHasAllowed(const std::vector<KeyRange>& ranges, Index br, Index q0, Index k0,
                           Index k1, const BoolMatrix* custom) {
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
    constexpr T kMinusInf = -std::numeric_limits<T>::infinity();
    const Index br = tile.rows();
    const Index bc = tile.cols();
    for (Index i = 0; i < br; ++i) {
        const KeyRange& r = ranges[static_cast<std::size_t>(i)];
        const Index b = std::clamp<Index>(r.begin - k0, 0, bc);
        const Index e = std::clamp<Index>(r.end - k0, b, bc);
        if (b > 0) tile.row(i).head(b).setConstant(kMinusInf);
        if (e < bc) tile.row(i).tail(bc - e).setConstant(kMinusInf);
        if (custom) {
            const auto allow = custom->row(q0 + i).segment(k0, bc).array();
            tile.row(i) = allow.select(tile.row(i).array(), kMinusInf).matrix();
        }
    }
}

/// A tile's scaled, masked logits: s = scale Q_i K_j^T, -inf where the mask forbids a key (the
/// kernel's tiles, its exact weights' second pass and the stepper's walk alike).
template <typename T, typename Scores, typename QTile, typename KTile>
void tileScores(Scores&& s, T scale, const QTile& q, const KTile& k,
                const std::vector<KeyRange>& ranges, Index q0, Index k0, const BoolMatrix* custom) {
    s.noalias() = scale * (q * k.transpose());
    maskTile<T>(s, ranges, q0, k0, custom);
}

/// The output's update by one tile: O = diag(rescale) O + P V_j.
template <typename Acc, typename Rescale, typename P, typename VTile>
void accumulateTile(Acc&& acc, const Rescale& rescale, const P& p, const VTile& v) {
    acc.array().colwise() *= rescale;
    acc.noalias() += p * v;
}

/// The online-softmax update by one tile of masked, scaled logits `s` [br, bc]:
///   m_new = max(m, rowmax s),  P = exp(s - m_new) (written over s),
///   rescale = exp(m - m_new),  l = rescale l + rowsum P,  m = m_new.
/// A row that has seen no allowed key keeps m = -inf and shifts by 0, so its P and rescale
/// are 0. The caller then applies O = diag(rescale) O + P V (after dropout, in train mode).
/// `shift` is scratch of br values.
template <typename T, typename Scores, typename Rows>
void onlineSoftmaxUpdate(Scores&& s, Rows&& rowMax, Rows&& rowSum, Rows&& rescale, Rows&& shift) {
    constexpr T kMinusInf = -std::numeric_limits<T>::infinity();
    shift = s.rowwise().maxCoeff().array();
    shift = rowMax.max(shift); // m_new
    rescale = expMasked(rowMax - (shift > kMinusInf).select(shift, T(0)));
    rowMax = shift;
    shift = (rowMax > kMinusInf).select(rowMax, T(0));
    s.array().colwise() -= shift;
    s = expMasked(s.array()).matrix();
    rowSum = rescale * rowSum + s.rowwise().sum().array();
}

} // namespace attnlab::kernels

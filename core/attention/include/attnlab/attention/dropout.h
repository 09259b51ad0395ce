#pragma once
/// Attention dropout (seed 003: d2l's DotProductAttention and MLPAttention apply nn.Dropout to
/// the attention weights while training). In train mode each weight w_ij of head (b, h) is
/// zeroed with probability p and every other becomes w_ij / (1 - p), so each row sums to 1
/// only in expectation; eval mode (p = 0) is plain attention.
///
/// Which cells drop is a pure function of (seed, b, h, i, j): a counter-based hash, never a
/// sequential random stream. The pattern therefore does not depend on the number of threads,
/// the flash tile sizes, the variant (softmax, flash and additive drop the same cells), the
/// precision (float or double) or the order in which cells are visited; query i is the row
/// index of Q (a KV-cache decode step keeps the row's index in the whole sequence).

#include <cstdint>
#include <optional>
#include <string>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"

namespace attnlab {

struct Dropout {
    double rate = 0;        ///< p in [0, 1); 0 is eval mode (nothing dropped, nothing scaled)
    std::uint64_t seed = 0; ///< the same seed drops the same cells

    bool active() const { return rate > 0; }
};

/// The problem with a dropout rate (not a number, negative, 1 or more), or nothing.
Status validateDropoutRate(double rate);

namespace detail {
/// SplitMix64's output function (Steele, Lea & Flood 2014): a bijection of 64 bits whose
/// every output bit depends on every input bit.
constexpr std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
} // namespace detail

/// The drop decisions of one query row: cell j is dropped iff bits(j) < threshold, where
/// bits(j) is the j-th output of a SplitMix64 stream keyed by (seed, batch, head, row) and the
/// threshold is floor(p * 2^64), so P(drop) = p to within 2^-64.
class DropoutRow {
public:
    DropoutRow(const Dropout& dropout, Index batch, Index head, Index row)
        : m_threshold(threshold(dropout.rate)) {
        std::uint64_t key = detail::mix64(dropout.seed + detail::kGolden);
        for (const Index part : {batch, head, row})
            key = detail::mix64(key ^ (static_cast<std::uint64_t>(part) + detail::kGolden));
        m_key = key;
    }

    /// The 64 random bits of key column j.
    std::uint64_t bits(Index j) const {
        return detail::mix64(m_key + (static_cast<std::uint64_t>(j) + 1) * detail::kGolden);
    }
    bool dropped(Index j) const { return bits(j) < m_threshold; }

    /// floor(p * 2^64) for p in [0, 1); 0 for p <= 0 (nothing drops).
    static std::uint64_t threshold(double rate) {
        if (!(rate > 0)) return 0;
        // p < 1 is at most 1 - 2^-53, so p * 2^64 <= 2^64 - 2^11 fits in 64 bits.
        return static_cast<std::uint64_t>(rate * 18446744073709551616.0);
    }

private:
    std::uint64_t m_key = 0;
    std::uint64_t m_threshold = 0;
};

/// Whether train-mode dropout zeroes weight (row, column) of head (batch, head).
inline bool isDropped(const Dropout& dropout, Index batch, Index head, Index row, Index column) {
    return dropout.active() && DropoutRow(dropout, batch, head, row).dropped(column);
}

} // namespace attnlab

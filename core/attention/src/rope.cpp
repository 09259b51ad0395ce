#include "attnlab/attention/rope.h"

#include <cmath>

namespace attnlab {

const char* ropeStyleName(RopeStyle style) {
    switch (style) {
    case RopeStyle::Interleaved:
        return "interleaved";
    case RopeStyle::Half:
        return "half";
    }
    return "interleaved";
}

std::optional<RopeStyle> parseRopeStyle(const std::string& name) {
    if (name == "interleaved") return RopeStyle::Interleaved;
    if (name == "half") return RopeStyle::Half;
    return std::nullopt;
}

Matrix ropeAngles(Index seq, Index dim, double base, Index positionOffset) {
    ATTN_CHECK(dim % 2 == 0 && dim >= 0, "RoPE needs an even head dimension (got " << dim << ")");
    ATTN_CHECK(seq >= 0, "sequence length must be >= 0 (got " << seq << ")");
    ATTN_CHECK(base > 0 && std::isfinite(base), "RoPE base must be > 0 (got " << base << ")");
    const Index pairs = dim / 2;
    Matrix angles(seq, pairs);
    for (Index i = 0; i < pairs; ++i) {
        // theta_i = base^(-2i/D), as seed 001's freqs = 1 / base^(arange(0, D, 2) / D).
        const double invFreq =
            std::pow(base, -static_cast<double>(2 * i) / static_cast<double>(dim));
        for (Index s = 0; s < seq; ++s)
            angles(s, i) = static_cast<Scalar>(static_cast<double>(positionOffset + s) * invFreq);
    }
    return angles;
}

std::pair<Index, Index> ropePair(RopeStyle style, Index pairIndex, Index dim) {
    ATTN_CHECK(dim % 2 == 0 && pairIndex >= 0 && pairIndex < dim / 2,
               "RoPE pair " << pairIndex << " out of range for dimension " << dim);
    if (style == RopeStyle::Interleaved) return {2 * pairIndex, 2 * pairIndex + 1};
    return {pairIndex, pairIndex + dim / 2};
}

namespace {

template <typename T>
void applyRopeT(Tensor4T<T>& x, RopeStyle style, double base, Index positionOffset) {
    ATTN_CHECK(x.dim % 2 == 0, "RoPE needs an even head dimension (got " << x.dim << ")");
    ATTN_CHECK(base > 0 && std::isfinite(base), "RoPE base must be > 0 (got " << base << ")");
    if (x.seq == 0 || x.dim == 0 || x.batch == 0 || x.heads == 0) return;
    const Index pairs = x.dim / 2;
    // cos/sin in double once per (position, pair), shared by every batch entry and head.
    Eigen::MatrixXd cosines(x.seq, pairs);
    Eigen::MatrixXd sines(x.seq, pairs);
    for (Index i = 0; i < pairs; ++i) {
        const double invFreq =
            std::pow(base, -static_cast<double>(2 * i) / static_cast<double>(x.dim));
        for (Index s = 0; s < x.seq; ++s) {
            const double angle = static_cast<double>(positionOffset + s) * invFreq;
            cosines(s, i) = std::cos(angle);
            sines(s, i) = std::sin(angle);
        }
    }
    for (Index b = 0; b < x.batch; ++b)
        for (Index h = 0; h < x.heads; ++h) {
            MatrixMapT<T> head = x.head(b, h);
            for (Index s = 0; s < x.seq; ++s)
                for (Index i = 0; i < pairs; ++i) {
                    const auto [ix, iy] = ropePair(style, i, x.dim);
                    const double px = head(s, ix);
                    const double py = head(s, iy);
                    head(s, ix) = static_cast<T>(px * cosines(s, i) - py * sines(s, i));
                    head(s, iy) = static_cast<T>(px * sines(s, i) + py * cosines(s, i));
                }
        }
}

} // namespace

void applyRope(Tensor4& x, RopeStyle style, double base, Index positionOffset) {
    applyRopeT(x, style, base, positionOffset);
}
void applyRope(Tensor4d& x, RopeStyle style, double base, Index positionOffset) {
    applyRopeT(x, style, base, positionOffset);
}

} // namespace attnlab

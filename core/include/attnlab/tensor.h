#pragma once
/// Tensor types shared by the whole core. Everything is float32 and row-major:
/// a head is an [S, D] row-major matrix, a Tensor4 is [B, H, S, D] contiguous.

// attnlab_core never links Qt, so Qt's headers are not on its include path and a
// `#include <Q...>` in core/ fails to compile; this also stops a Qt define leaking into the
// core's own flags. Qt code may include these headers freely.
#if defined(ATTNLAB_BUILDING_CORE) && defined(QT_CORE_LIB)
#error "attnlab_core must not depend on Qt"
#endif

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlab/check.h"

namespace attnlab {

using Index = Eigen::Index;
using Scalar = float;

using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;
using BoolMatrix = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// A dense [B, H, S, D] float tensor, contiguous and row-major (D fastest).
/// Rank-2 [S, D] data is B = H = 1; rank-3 [B, S, D] data is H = 1.
struct Tensor4 {
    Index batch = 0;
    Index heads = 0;
    Index seq = 0;
    Index dim = 0;
    std::vector<Scalar> data;

    Tensor4() = default;
    /// Zero-filled tensor of the given shape; every extent must be >= 0.
    Tensor4(Index b, Index h, Index s, Index d)
        : batch(b), heads(h), seq(s), dim(d), data(static_cast<std::size_t>(b * h * s * d), 0) {
        ATTN_CHECK(b >= 0 && h >= 0 && s >= 0 && d >= 0, "tensor extents must be non-negative");
    }

    std::size_t size() const { return data.size(); }
    bool empty() const { return data.empty(); }
    Index headStride() const { return seq * dim; }

    /// The [S, D] matrix of batch b, head h, viewed in place.
    MatrixMap head(Index b, Index h) {
        ATTN_ASSERT(b >= 0 && b < batch && h >= 0 && h < heads);
        return MatrixMap(data.data() + (b * heads + h) * headStride(), seq, dim);
    }
    ConstMatrixMap head(Index b, Index h) const {
        ATTN_ASSERT(b >= 0 && b < batch && h >= 0 && h < heads);
        return ConstMatrixMap(data.data() + (b * heads + h) * headStride(), seq, dim);
    }

    Scalar& operator()(Index b, Index h, Index s, Index d) {
        return data[static_cast<std::size_t>(((b * heads + h) * seq + s) * dim + d)];
    }
    Scalar operator()(Index b, Index h, Index s, Index d) const {
        return data[static_cast<std::size_t>(((b * heads + h) * seq + s) * dim + d)];
    }

    bool sameShape(const Tensor4& other) const {
        return batch == other.batch && heads == other.heads && seq == other.seq && dim == other.dim;
    }
};

} // namespace attnlab

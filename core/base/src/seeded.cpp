#include "attnlab/base/seeded.h"

#include <cmath>

#include "attnlab/base/check.h"

namespace attnlab {

Matrix seededMatrix(Index rows, Index cols, std::uint64_t seed, std::uint64_t stream) {
    ATTN_CHECK(rows >= 0 && cols >= 0,
               "matrix extents must be >= 0 (got " << rows << "x" << cols << ")");
    Matrix m(rows, cols);
    if (rows + cols == 0) return m;
    const double limit = std::sqrt(6.0 / static_cast<double>(rows + cols));
    const std::uint64_t key =
        seeded::splitmix64(seeded::splitmix64(seed) ^ seeded::splitmix64(~stream));
    for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c) {
            const auto n = static_cast<std::uint64_t>(r * cols + c);
            const double u = seeded::unitClosedZero(seeded::counterWord(key, n));
            m(r, c) = static_cast<Scalar>((2.0 * u - 1.0) * limit);
        }
    return m;
}

} // namespace attnlab

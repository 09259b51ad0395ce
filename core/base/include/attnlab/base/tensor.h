#pragma once
/// Tensor types shared by the whole core, row-major: a head is an [S, D] row-major matrix, a
/// Tensor4 is [B, H, S, D] contiguous. The plain names (Matrix, Tensor4, ...) are float32, the
/// precision of the window, the model layer and float32 files; the attention kernels also come
/// in float64 (Tensor4d, MatrixD, ...) for float64 inputs, through the templates below
/// (instantiated for exactly float and double in the .cpp files).

// attnlab_core never links Qt, so Qt's headers are not on its include path and a
// `#include <Q...>` in core/ fails to compile; this also stops a Qt define leaking into the
// core's own flags. Qt code may include these headers freely.
#if defined(ATTNLAB_BUILDING_CORE) && defined(QT_CORE_LIB)
#error "attnlab_core must not depend on Qt"
#endif

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "attnlab/base/check.h"

namespace attnlab {

using Index = Eigen::Index;
/// The scalar of the float32 path.
using Scalar = float;

template <typename T>
using MatrixT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T> using VectorT = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <typename T> using RowVectorT = Eigen::Matrix<T, 1, Eigen::Dynamic>;
template <typename T> using ArrayT = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T> using MatrixMapT = Eigen::Map<MatrixT<T>>;
template <typename T> using ConstMatrixMapT = Eigen::Map<const MatrixT<T>>;

using Matrix = MatrixT<float>;
using Vector = VectorT<float>;
using RowVector = RowVectorT<float>;
using Array = ArrayT<float>;
using MatrixMap = MatrixMapT<float>;
using ConstMatrixMap = ConstMatrixMapT<float>;
using BoolMatrix = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixD = MatrixT<double>;
using VectorD = VectorT<double>;
using RowVectorD = RowVectorT<double>;
using MatrixMapD = MatrixMapT<double>;
using ConstMatrixMapD = ConstMatrixMapT<double>;

/// The allocator of every buffer the core reduces over: 64-byte aligned (a cache line, an
/// AVX-512 vector). Eigen's vectorised sums over a row start their packets at the first
/// aligned element, so over malloc's 16-byte alignment where a row's sum began depended on
/// where the heap put the buffer, and the same input gave different last bits from run to run.
/// On aligned storage the order depends on the element's index alone.
namespace detail {
/// Buffers from this size on are backed by huge pages where the system offers them
/// (tensor.cpp).
inline constexpr std::size_t kHugePageBytes = std::size_t{8} << 20;
/// Asks for huge pages over [p, p + bytes) where bytes >= kHugePageBytes (nothing below): one
/// page fault per 2 MB instead of per 4 KB when a fresh buffer is first written (a layer's maps:
/// tens of MB each keystroke). A hint only: nothing changes where the system declines.
void adviseHugePages(void* p, std::size_t bytes) noexcept;
} // namespace detail

template <typename T> struct AlignedAllocator {
    using value_type = T;
    static constexpr std::align_val_t kAlignment{64};

    AlignedAllocator() noexcept = default;
    template <typename U> AlignedAllocator(const AlignedAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        void* p = ::operator new(n * sizeof(T), kAlignment);
        detail::adviseHugePages(p, n * sizeof(T));
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }

    /// An element made without a value is default-initialised, as `new T[n]` makes it: for a
    /// float, no write at all. So `resize(n)` and `AlignedVector<T>(n)` leave new floats
    /// unset, for buffers the caller writes in full (a kernel's weights, a file's values), and
    /// zeros are asked for by value: `resize(n, 0)`, `AlignedVector<T>(n, 0)`. The pages of a
    /// large buffer are then first touched by the threads that write it, not zeroed first by
    /// one (tens of MB on every keystroke for a layer's maps).
    template <typename U> void construct(U* p) noexcept(
        std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args> void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }

    template <typename U> bool operator==(const AlignedAllocator<U>&) const noexcept {
        return true;
    }
};

/// A std::vector on AlignedAllocator: tensors, arrays read from files, dumps.
template <typename T> using AlignedVector = std::vector<T, AlignedAllocator<T>>;

/// A dense [B, H, S, D] tensor of T (float or double), contiguous and row-major (D fastest).
/// Rank-2 [S, D] data is B = H = 1; rank-3 [B, S, D] data is H = 1.
template <typename T> struct Tensor4T {
    Index batch = 0;
    Index heads = 0;
    Index seq = 0;
    Index dim = 0;
    AlignedVector<T> data;

    Tensor4T() = default;
    /// Zero-filled tensor of the given shape; every extent must be >= 0.
    Tensor4T(Index b, Index h, Index s, Index d)
        : batch(b), heads(h), seq(s), dim(d), data(static_cast<std::size_t>(b * h * s * d), 0) {
        ATTN_CHECK(b >= 0 && h >= 0 && s >= 0 && d >= 0, "tensor extents must be non-negative");
    }

    /// A tensor of the given shape whose values are not set: for a caller that writes every
    /// one before any is read (AlignedAllocator::construct).
    static Tensor4T uninitialized(Index b, Index h, Index s, Index d) {
        ATTN_CHECK(b >= 0 && h >= 0 && s >= 0 && d >= 0, "tensor extents must be non-negative");
        Tensor4T t;
        t.batch = b;
        t.heads = h;
        t.seq = s;
        t.dim = d;
        t.data.resize(static_cast<std::size_t>(b * h * s * d));
        return t;
    }

    std::size_t size() const { return data.size(); }
    bool empty() const { return data.empty(); }
    Index headStride() const { return seq * dim; }

    /// The [S, D] matrix of batch b, head h, viewed in place.
    MatrixMapT<T> head(Index b, Index h) {
        ATTN_ASSERT(b >= 0 && b < batch && h >= 0 && h < heads);
        return MatrixMapT<T>(data.data() + (b * heads + h) * headStride(), seq, dim);
    }
    ConstMatrixMapT<T> head(Index b, Index h) const {
        ATTN_ASSERT(b >= 0 && b < batch && h >= 0 && h < heads);
        return ConstMatrixMapT<T>(data.data() + (b * heads + h) * headStride(), seq, dim);
    }

    T& operator()(Index b, Index h, Index s, Index d) {
        return data[static_cast<std::size_t>(((b * heads + h) * seq + s) * dim + d)];
    }
    T operator()(Index b, Index h, Index s, Index d) const {
        return data[static_cast<std::size_t>(((b * heads + h) * seq + s) * dim + d)];
    }

    template <typename U> bool sameShape(const Tensor4T<U>& other) const {
        return batch == other.batch && heads == other.heads && seq == other.seq && dim == other.dim;
    }

    /// The same shape with every value converted to U (exact from float to double).
    template <typename U> Tensor4T<U> cast() const {
        Tensor4T<U> out;
        out.batch = batch;
        out.heads = heads;
        out.seq = seq;
        out.dim = dim;
        out.data.assign(data.begin(), data.end());
        return out;
    }
};

using Tensor4 = Tensor4T<float>;
using Tensor4d = Tensor4T<double>;

/// A shape for messages, as PyTorch prints it: "[2, 3, 5]".
std::string shapeText(const std::vector<Index>& shape);

} // namespace attnlab

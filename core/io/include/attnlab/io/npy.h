#pragma once
/// NumPy .npy (format 1.0-3.0) and .npz I/O. Reading returns errors as data so the CLI
/// can print them and the window can show them; writing is atomic (temp file + rename).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"

namespace attnlab {

enum class DType { Float32, Float64, Float16, BFloat16 };
const char* dtypeName(DType t);
Index dtypeBytes(DType t);

/// A numeric array as read: its shape, the dtype it was stored in, and its values as float
/// in `data` -- or, for a float64 file read with NpyReadOptions::keepFloat64 (or an array
/// built from doubles), at full precision in `data64`, with `data` empty.
struct NpyArray {
    std::vector<Index> shape;
    DType dtype = DType::Float32;
    AlignedVector<float> data;
    AlignedVector<double> data64;

    Index rank() const { return static_cast<Index>(shape.size()); }
    Index elementCount() const;
};

struct NpyReadOptions {
    bool allowHalf = false;   ///< accept float16 / bfloat16 (converted to float)
    bool keepFloat64 = false; ///< float64 values go to NpyArray::data64 unrounded
    Index minRank = 1;
    Index maxRank = 4;
    bool allowEmpty = false;    ///< accept a dimension of 0 (refused by default: degenerate)
    bool requireFinite = false; ///< refuse NaN and infinities, naming the first
};

/// What a .npy header says: its dict, where the data starts, and the sizes it implies,
/// overflow-checked. The one .npy header parser; the float and string readers use it.
struct NpyHeader {
    std::string descr;
    bool fortranOrder = false;
    std::vector<Index> shape;
    std::size_t dataOffset = 0; ///< bytes before the data (magic, version, length, dict)
    Index count = 0;            ///< elements: the product of the shape
    Index itemBytes = -1;       ///< bytes per element; -1 when the dtype has no fixed size
    Index dataBytes = -1;       ///< count * itemBytes; -1 when itemBytes is unknown
};

/// The size of the header (magic to the end of the dict) from the first 10 (version 1) or 12
/// bytes of a .npy; an error for a bad magic, an unknown version or a header over 1 MiB.
Result<std::size_t> npyHeaderSize(std::string_view prefix, const std::string& name);
/// Parses the header at the start of `bytes`, which may end anywhere after it.
Result<NpyHeader> parseNpyHeader(std::string_view bytes, const std::string& name);

/// Parses a whole .npy file image; `name` is used in messages.
Result<NpyArray> parseNpy(const std::string& bytes, const std::string& name,
                          const NpyReadOptions& options = {});
/// Reads and parses a .npy file. Messages name the file and what is wrong.
Result<NpyArray> readNpy(const std::string& path, const NpyReadOptions& options = {});

/// A numpy string array ('<U n' UTF-32LE or '|S n' bytes, NUL padded) as UTF-8 strings.
struct NpyStrings {
    std::vector<Index> shape;
    std::vector<std::string> values; ///< C order
};
struct NpyStringOptions {
    Index minRank = 1;
    Index maxRank = 2;
    Index maxCount = Index(1) << 24; ///< more strings are refused before any is decoded
};
/// Parses a string .npy; the count and width are checked against the bytes present (and
/// maxCount) before anything is allocated.
Result<NpyStrings> parseNpyStrings(const std::string& bytes, const std::string& name,
                                   const NpyStringOptions& options = {});

/// A .npy header (magic, version 1.0, or 2.0 when the dict needs it, and the dict padded to 64
/// bytes) for data of numpy type `descr` (e.g. "<f4", "<i8", "<U12") and `shape`, C order.
std::string npyHeader(const std::string& descr, const std::vector<Index>& shape);
/// A .npy image of int64 values of the given shape.
std::string encodeNpyInt64(const std::vector<Index>& shape,
                           const std::vector<std::int64_t>& values);
/// A .npy image of a 1-D '<U' array (UTF-32, the width of the longest string); strings are
/// UTF-8 and each invalid byte becomes U+FFFD.
std::string encodeNpyUnicode(const std::vector<std::string>& strings);
/// Serialises to a .npy image in `dtype` (Float32 or Float64), little-endian, C order.
std::string encodeNpy(const NpyArray& array, DType dtype);
/// Writes atomically: to "<path>.tmp-XXXX" then rename; nothing is left behind on failure.
Status writeNpy(const std::string& path, const NpyArray& array, DType dtype);

/// Every ".npy" member of an .npz archive (stored or deflated) as raw bytes, keyed without
/// ".npy", each member's CRC verified; for archives that also hold non-float arrays (a
/// model dump's '<U' tokens). A corrupt archive is an error naming the file.
Result<std::map<std::string, std::string>> readNpzMembers(const std::string& path);
/// Reads every .npy member of an .npz archive (stored or deflated), keyed by name without
/// ".npy". Non-npy members are ignored; a corrupt archive is an error naming the file.
Result<std::map<std::string, NpyArray>> readNpz(const std::string& path,
                                                const NpyReadOptions& options = {});
/// Writes an .npz (stored) archive atomically.
Status writeNpz(const std::string& path, const std::map<std::string, NpyArray>& arrays,
                DType dtype);
/// Writes an .npz (stored) archive of ready .npy images (name without ".npy" -> bytes)
/// atomically, for members writeNpz cannot encode (int64 ids, '<U' tokens).
Status writeNpzMembers(const std::string& path, const std::map<std::string, std::string>& members);

/// A member produced while the archive is written, so it never sits whole in memory: `pieces`
/// pieces, piece(i, out) appending piece i's bytes to out (empty on entry), in order; together
/// a .npy image (header first) of exactly `bytes` bytes. A piece may throw: nothing is then left
/// at the archive's path, and the error (or "not enough memory") is the write's.
struct StreamedNpzMember {
    std::uint64_t bytes = 0;
    std::size_t pieces = 0;
    std::function<void(std::size_t piece, std::string& out)> piece;
};
/// writeNpzMembers with streamed members beside the ready ones (names unique across both).
Status writeNpzMembers(const std::string& path, const std::map<std::string, std::string>& members,
                       const std::map<std::string, StreamedNpzMember>& streamed);

/// Views rank 2 [S, D], 3 [B, S, D] or 4 [B, H, S, D] data as a Tensor4 (data64 rounded to
/// float when that is where the values are).
Tensor4 toTensor4(const NpyArray& array);
/// The same as a Tensor4d: data64 as it is, or float data widened (exactly).
Tensor4d toTensor4d(const NpyArray& array);
/// The inverse for a given output rank (2, 3 or 4); rank 2/3 need B (and H) == 1 accordingly.
NpyArray fromTensor4(const Tensor4& t, Index rank, DType dtype);
/// The same from doubles: the values go to data64.
NpyArray fromTensor4(const Tensor4d& t, Index rank, DType dtype);

} // namespace attnlab

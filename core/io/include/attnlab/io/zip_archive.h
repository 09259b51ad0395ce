#pragma once
/// libzip's handles as owners, and the one bound on a member's claimed expansion, for every
/// reader of a zip archive (.npz in npy.cpp, pytorch_model.bin in the model library). Include
/// only where libzip is linked.

#include <zip.h>

#include <memory>

namespace attnlab::zip {

struct ArchiveCloser {
    void operator()(zip_t* archive) const { zip_discard(archive); }
};
/// An archive opened for reading, discarded (never written) when it goes.
using Archive = std::unique_ptr<zip_t, ArchiveCloser>;

struct FileCloser {
    void operator()(zip_file_t* file) const { zip_fclose(file); }
};
using File = std::unique_ptr<zip_file_t, FileCloser>;

/// Deflate's largest expansion is about 1032:1 (RFC 1951: 258 bytes from a 2-bit code at
/// best); a member claiming more than this over its compressed size is lying.
constexpr zip_uint64_t kMaxDeflateRatio = 1100;

} // namespace attnlab::zip

#pragma once
/// safetensors checkpoints (one file, or shards listed by model.safetensors.index.json),
/// memory-mapped. The header is validated before any tensor is touched, as the format's own
/// loader does: header length inside the file, JSON object, every dtype x shape equal to its
/// byte length (overflow-safe), offsets in order, inside the buffer, without gaps or overlap.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"

namespace attnlab::model {

/// The dtypes a safetensors header may name. Only F32, F16 and BF16 can be read as weights;
/// the others are still size-checked so a checkpoint with extra integer buffers loads.
enum class TensorDType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool, F8E4M3, F8E5M2 };

const char* tensorDTypeName(TensorDType t);
std::size_t tensorDTypeBytes(TensorDType t);
/// Widens `count` F16 or BF16 values to float32 as attnlab/base/half.h does (exact; F16 with
/// the CPU's conversion instructions where the build has them). Throws for any other type.
void widenHalves(const std::uint16_t* in, std::size_t count, TensorDType type, float* out);

/// Shapes in messages: attnlab::shapeText (attnlab/tensor.h), "[2, 3]".
using attnlab::shapeText;

/// One tensor of the checkpoint as its header describes it.
struct TensorEntry {
    std::string name;
    TensorDType dtype = TensorDType::F32;
    std::vector<Index> shape;
    std::size_t file = 0;   ///< index into SafeTensors' files
    std::size_t offset = 0; ///< absolute byte offset in that file
    std::size_t bytes = 0;

    Index elementCount() const;
};

/// A read-only memory mapping of a whole file, unmapped on destruction.
class MappedFile {
public:
    /// Maps `path`; the error names the file.
    static Result<std::shared_ptr<MappedFile>> open(const std::string& path);
    /// Bytes read into memory (a PyTorch checkpoint's storages, a strided view made
    /// contiguous), held like a mapping; `path` names where they came from in messages.
    static std::shared_ptr<MappedFile> fromBytes(std::string path,
                                                 std::vector<unsigned char> bytes);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const unsigned char* data() const { return m_data; }
    std::size_t size() const { return m_size; }
    const std::string& path() const { return m_path; }

private:
    MappedFile() = default;
    const unsigned char* m_data = nullptr;
    std::size_t m_size = 0;
    std::string m_path;
    std::vector<unsigned char> m_owned; ///< fromBytes(): the bytes themselves (nothing mapped)
};

/// Parses and validates a safetensors header against a file image of `fileSize` bytes
/// (`bytes` holds at least the first min(fileSize, 8 + header length) bytes). `name` is used in
/// messages; entries get file index `fileIndex`.
Result<std::vector<TensorEntry>> parseSafetensorsHeader(const unsigned char* bytes,
                                                        std::size_t fileSize,
                                                        const std::string& name,
                                                        std::size_t fileIndex = 0);

/// Every tensor of a checkpoint, mapped. Floats are read in place (F32) or widened (F16/BF16).
/// The one source of tensors the loader reads, whichever format filled it: safetensors, or
/// PyTorch's zip checkpoints (torch_checkpoint.h), whose storages are read into memory.
class SafeTensors {
public:
    /// Opens `path`: a .safetensors file, or a folder holding model.safetensors or
    /// model.safetensors.index.json (+ its shards). Every file is mapped and its header
    /// validated; every tensor the index names must be in the shard it names. A folder with
    /// neither, holding pytorch_model.bin or pytorch_model.bin.index.json, and a file that is
    /// a PyTorch zip archive, are read by openTorchCheckpoint (safetensors win where a folder
    /// has both).
    static Result<SafeTensors> open(const std::string& path);
    /// Tensors another reader found: `entries` index into `files`; `source` names the
    /// checkpoint (a file or an index) in messages.
    static SafeTensors fromEntries(std::vector<std::shared_ptr<MappedFile>> files,
                                   std::map<std::string, TensorEntry> entries, std::string source);
    /// The checkpoint's file, or its index when sharded: what messages about a missing tensor
    /// name.
    const std::string& source() const { return m_source; }

    const TensorEntry* find(const std::string& name) const;
    const std::map<std::string, TensorEntry>& entries() const { return m_entries; }
    /// The file an entry lives in (for messages).
    const std::string& filePath(const TensorEntry& entry) const;

    /// The raw bytes of an entry (inside the mapping).
    const unsigned char* raw(const TensorEntry& entry) const;

    /// The values of a F32/F16/BF16 tensor as float32: a view into the mapping for aligned F32,
    /// otherwise a copy widened into `storage` (which must outlive the span).
    /// Error for any other dtype, naming the tensor and file.
    Result<std::span<const float>> floats(const TensorEntry& entry,
                                          std::vector<float>& storage) const;

    /// Total bytes of all mapped files.
    std::size_t mappedBytes() const;

private:
    std::vector<std::shared_ptr<MappedFile>> m_files;
    std::map<std::string, TensorEntry> m_entries;
    std::string m_source;
};

} // namespace attnlab::model

// safetensors: the header validated as the format's own loader does, then memory-mapped.

#include "attnlab/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "attnlab/base/check.h"
#include "attnlab/base/half.h"
#include "attnlab/io/json_read.h"
#include "attnlab/model/torch_checkpoint.h"

namespace attnlab::model {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors is little-endian; AttnLab reads it in place");

/// The format's own limit on the header (100 MB): a larger claim is a corrupt file.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

Error fail(const std::string& name, const std::string& what) {
    return Error{name + ": " + what};
}

std::optional<TensorDType> parseDType(const std::string& text) {
    static const std::map<std::string, TensorDType> names = {
        {"F64", TensorDType::F64},        {"F32", TensorDType::F32},
        {"F16", TensorDType::F16},        {"BF16", TensorDType::BF16},
        {"I64", TensorDType::I64},        {"I32", TensorDType::I32},
        {"I16", TensorDType::I16},        {"I8", TensorDType::I8},
        {"U8", TensorDType::U8},          {"BOOL", TensorDType::Bool},
        {"F8_E4M3", TensorDType::F8E4M3}, {"F8_E5M2", TensorDType::F8E5M2},
    };
    const auto it = names.find(text);
    if (it == names.end()) return std::nullopt;
    return it->second;
}

} // namespace

void widenHalves(const std::uint16_t* in, std::size_t count, TensorDType type, float* out) {
    ATTN_CHECK(type == TensorDType::F16 || type == TensorDType::BF16,
               "widenHalves: " << tensorDTypeName(type) << " is not a 16-bit float type");
    if (type == TensorDType::BF16)
        widenBfloat16(in, count, out);
    else
        widenHalfFloats(in, count, out);
}

const char* tensorDTypeName(TensorDType t) {
    switch (t) {
    case TensorDType::F64:
        return "F64";
    case TensorDType::F32:
        return "F32";
    case TensorDType::F16:
        return "F16";
    case TensorDType::BF16:
        return "BF16";
    case TensorDType::I64:
        return "I64";
    case TensorDType::I32:
        return "I32";
    case TensorDType::I16:
        return "I16";
    case TensorDType::I8:
        return "I8";
    case TensorDType::U8:
        return "U8";
    case TensorDType::Bool:
        return "BOOL";
    case TensorDType::F8E4M3:
        return "F8_E4M3";
    case TensorDType::F8E5M2:
        return "F8_E5M2";
    }
    return "?";
}

std::size_t tensorDTypeBytes(TensorDType t) {
    switch (t) {
    case TensorDType::F64:
    case TensorDType::I64:
        return 8;
    case TensorDType::F32:
    case TensorDType::I32:
        return 4;
    case TensorDType::F16:
    case TensorDType::BF16:
    case TensorDType::I16:
        return 2;
    case TensorDType::I8:
    case TensorDType::U8:
    case TensorDType::Bool:
    case TensorDType::F8E4M3:
    case TensorDType::F8E5M2:
        return 1;
    }
    return 1;
}

Index TensorEntry::elementCount() const {
    Index count = 1;
    for (Index extent : shape)
        count *= extent;
    return count;
}

// ---- MappedFile ---------------------------------------------------------------------------

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        return fail(path, "not a regular file");
    }
    std::shared_ptr<MappedFile> file(new MappedFile);
    file->m_path = path;
    file->m_size = static_cast<std::size_t>(info.st_size);
    if (file->m_size > 0) {
        void* address = ::mmap(nullptr, file->m_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (address == MAP_FAILED) {
            const int error = errno;
            ::close(fd);
            return fail(path, std::string("cannot map: ") + std::strerror(error));
        }
        file->m_data = static_cast<const unsigned char*>(address);
    }
    ::close(fd);
    return file;
}

std::shared_ptr<MappedFile> MappedFile::fromBytes(std::string path,
                                                  std::vector<unsigned char> bytes) {
    std::shared_ptr<MappedFile> file(new MappedFile);
    file->m_path = std::move(path);
    file->m_owned = std::move(bytes);
    file->m_data = file->m_owned.data();
    file->m_size = file->m_owned.size();
    return file;
}

MappedFile::~MappedFile() {
    if (!m_owned.empty() || m_size == 0) return; // fromBytes(): nothing mapped
    ::munmap(const_cast<unsigned char*>(m_data), m_size);
}

// ---- the header ---------------------------------------------------------------------------

Result<std::vector<TensorEntry>> parseSafetensorsHeader(const unsigned char* bytes,
                                                        std::size_t fileSize,
                                                        const std::string& name,
                                                        std::size_t fileIndex) {
    if (fileSize < 8)
        return fail(name, "truncated: " + std::to_string(fileSize) +
                              " bytes, too short for a safetensors header length");
    // A safetensors file is its header's length (8 bytes) and then the header, a JSON object:
    // anything else (a text file, a PyTorch .bin renamed) is named for what it is not, before
    // its first bytes are read as a length.
    if (fileSize > 8 && bytes[8] != '{')
        return fail(name, "not a safetensors file: what follows the first 8 bytes is not a JSON "
                          "object header");
    std::uint64_t headerLength = 0;
    std::memcpy(&headerLength, bytes, 8);
    if (headerLength > fileSize - 8)
        return fail(name, "header length " + std::to_string(headerLength) +
                              " runs past the end of the file (" + std::to_string(fileSize) +
                              " bytes)");
    if (headerLength > kMaxHeaderBytes)
        return fail(name, "header length " + std::to_string(headerLength) +
                              " is larger than the format's 100 MB limit");
    if (headerLength < 2) return fail(name, "header is not a JSON object");

    Result<nlohmann::json> parsed =
        detail::parseJson(std::string_view(reinterpret_cast<const char*>(bytes) + 8, headerLength));
    if (!parsed) return fail(name, "header: " + parsed.error());
    const nlohmann::json header = std::move(*parsed);
    if (!header.is_object()) return fail(name, "header is not a JSON object");

    const std::size_t dataStart = 8 + static_cast<std::size_t>(headerLength);
    const std::size_t bufferSize = fileSize - dataStart;
    std::vector<TensorEntry> entries;
    std::vector<std::pair<std::size_t, std::size_t>> ranges; // relative [begin, end)
    for (const auto& [key, value] : header.items()) {
        if (key == "__metadata__") {
            if (!value.is_object()) return fail(name, "__metadata__ is not an object");
            continue;
        }
        const std::string where = "tensor '" + key + "'";
        if (!value.is_object()) return fail(name, where + " is not an object");
        const auto dtypeIt = value.find("dtype");
        const auto shapeIt = value.find("shape");
        const auto offsetsIt = value.find("data_offsets");
        if (dtypeIt == value.end() || !dtypeIt->is_string())
            return fail(name, where + " has no dtype string");
        if (shapeIt == value.end() || !shapeIt->is_array())
            return fail(name, where + " has no shape list");
        if (offsetsIt == value.end() || !offsetsIt->is_array() || offsetsIt->size() != 2)
            return fail(name, where + " has no data_offsets [begin, end]");

        TensorEntry entry;
        entry.name = key;
        const auto dtype = parseDType(dtypeIt->get<std::string>());
        if (!dtype)
            return fail(name, where + " has unknown dtype '" + dtypeIt->get<std::string>() + "'");
        entry.dtype = *dtype;

        // dtype x shape, overflow-checked at every step.
        std::uint64_t byteCount = tensorDTypeBytes(entry.dtype);
        for (const auto& extent : *shapeIt) {
            if (!extent.is_number_unsigned())
                return fail(name, where + " has a shape entry that is not a non-negative integer");
            const std::uint64_t e = extent.get<std::uint64_t>();
            if (e > static_cast<std::uint64_t>(std::numeric_limits<Index>::max()) ||
                (e != 0 && byteCount > std::numeric_limits<std::uint64_t>::max() / e))
                return fail(name, where + " has a shape whose size overflows");
            byteCount *= e;
            entry.shape.push_back(static_cast<Index>(e));
        }
        const auto& begin = (*offsetsIt)[0];
        const auto& end = (*offsetsIt)[1];
        if (!begin.is_number_unsigned() || !end.is_number_unsigned())
            return fail(name, where + " has data_offsets that are not non-negative integers");
        const std::uint64_t b = begin.get<std::uint64_t>();
        const std::uint64_t e = end.get<std::uint64_t>();
        if (b > e) return fail(name, where + " has data_offsets that end before they begin");
        if (e > bufferSize)
            return fail(name, where + " has data_offsets [" + std::to_string(b) + ", " +
                                  std::to_string(e) + ") past the end of the data (" +
                                  std::to_string(bufferSize) + " bytes)");
        if (e - b != byteCount)
            return fail(name, where + ": dtype " + tensorDTypeName(entry.dtype) + " x shape " +
                                  shapeText(entry.shape) + " is " + std::to_string(byteCount) +
                                  " bytes but data_offsets hold " + std::to_string(e - b));
        entry.file = fileIndex;
        entry.offset = dataStart + static_cast<std::size_t>(b);
        entry.bytes = static_cast<std::size_t>(byteCount);
        ranges.emplace_back(static_cast<std::size_t>(b), static_cast<std::size_t>(e));
        entries.push_back(std::move(entry));
    }

    // In order, without overlap or gap, and covering the whole buffer (the format's rule).
    std::vector<std::size_t> order(entries.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return ranges[a] < ranges[b]; });
    std::size_t expected = 0;
    for (std::size_t i : order) {
        if (ranges[i].first < expected)
            return fail(name, "tensor '" + entries[i].name + "' overlaps the tensor before it");
        if (ranges[i].first > expected)
            return fail(name, "tensor '" + entries[i].name + "' leaves a gap of " +
                                  std::to_string(ranges[i].first - expected) + " bytes before it");
        expected = ranges[i].second;
    }
    if (expected != bufferSize)
        return fail(name, "the tensors cover " + std::to_string(expected) +
                              " bytes of data but the file holds " + std::to_string(bufferSize));
    return entries;
}

// ---- SafeTensors --------------------------------------------------------------------------

Result<SafeTensors> SafeTensors::open(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<std::string> shardPaths;
    std::map<std::string, std::string> indexMap; // tensor -> shard file name
    std::string indexPath;
    if (fs::is_directory(path, ec)) {
        const fs::path single = fs::path(path) / "model.safetensors";
        const fs::path index = fs::path(path) / "model.safetensors.index.json";
        if (fs::exists(single, ec)) {
            shardPaths.push_back(single.string());
        } else if (fs::exists(index, ec)) {
            indexPath = index.string();
            std::ifstream in(indexPath, std::ios::binary);
            if (!in) return fail(indexPath, "cannot open");
            const std::string text{std::istreambuf_iterator<char>(in), {}};
            Result<nlohmann::json> parsed = detail::parseJson(text);
            if (!parsed) return fail(indexPath, parsed.error());
            const nlohmann::json json = std::move(*parsed);
            if (!json.is_object() || !json.contains("weight_map") ||
                !json["weight_map"].is_object())
                return fail(indexPath, "has no weight_map object");
            std::set<std::string> shards;
            for (const auto& [tensor, shard] : json["weight_map"].items()) {
                if (!shard.is_string())
                    return fail(indexPath, "weight_map entry '" + tensor + "' is not a file name");
                const std::string file = shard.get<std::string>();
                if (file.empty() || file.find('/') != std::string::npos || file == "." ||
                    file == "..")
                    return fail(indexPath, "weight_map entry '" + tensor +
                                               "' names a file outside the folder: '" + file + "'");
                indexMap[tensor] = file;
                shards.insert(file);
            }
            if (shards.empty()) return fail(indexPath, "weight_map is empty");
            for (const auto& shard : shards)
                shardPaths.push_back((fs::path(path) / shard).string());
        } else if (fs::exists(fs::path(path) / "pytorch_model.bin", ec) ||
                   fs::exists(fs::path(path) / "pytorch_model.bin.index.json", ec)) {
            return openTorchCheckpoint(path); // only where there are no safetensors
        } else {
            return fail(path, "holds neither model.safetensors nor model.safetensors.index.json "
                              "(nor pytorch_model.bin)");
        }
    } else {
        // A PyTorch checkpoint given as a file (a zip, or the legacy format's pickles): its own
        // reader.
        std::ifstream in(path, std::ios::binary);
        char magic[4] = {0, 0, 0, 0};
        if (in.read(magic, 4) && (std::memcmp(magic, "PK\x03\x04", 4) == 0 ||
                                  std::memcmp(magic, "\x80\x02\x8a\x0a", 4) == 0))
            return openTorchCheckpoint(path);
        shardPaths.push_back(path);
    }

    SafeTensors result;
    result.m_source = indexPath.empty() ? shardPaths.front() : indexPath;
    for (const auto& shardPath : shardPaths) {
        auto file = MappedFile::open(shardPath);
        if (!file) return Error{file.error()};
        auto entries = parseSafetensorsHeader((*file)->data(), (*file)->size(), shardPath,
                                              result.m_files.size());
        if (!entries) return Error{entries.error()};
        const std::string shardName = fs::path(shardPath).filename().string();
        for (auto& entry : *entries) {
            if (!indexPath.empty()) {
                const auto it = indexMap.find(entry.name);
                if (it == indexMap.end() || it->second != shardName)
                    continue; // the index names another shard (or none): not this copy
            }
            if (result.m_entries.count(entry.name))
                return fail(shardPath, "tensor '" + entry.name + "' appears in two shards");
            result.m_entries.emplace(entry.name, std::move(entry));
        }
        result.m_files.push_back(std::move(*file));
    }
    for (const auto& [tensor, shard] : indexMap)
        if (!result.m_entries.count(tensor))
            return fail(indexPath, "tensor '" + tensor + "' is listed in " + shard +
                                       " but that file does not hold it");
    return result;
}

SafeTensors SafeTensors::fromEntries(std::vector<std::shared_ptr<MappedFile>> files,
                                     std::map<std::string, TensorEntry> entries,
                                     std::string source) {
    SafeTensors result;
    result.m_files = std::move(files);
    result.m_entries = std::move(entries);
    result.m_source = std::move(source);
    return result;
}

const TensorEntry* SafeTensors::find(const std::string& name) const {
    const auto it = m_entries.find(name);
    return it == m_entries.end() ? nullptr : &it->second;
}

const std::string& SafeTensors::filePath(const TensorEntry& entry) const {
    return m_files.at(entry.file)->path();
}

const unsigned char* SafeTensors::raw(const TensorEntry& entry) const {
    return m_files.at(entry.file)->data() + entry.offset;
}

Result<std::span<const float>> SafeTensors::floats(const TensorEntry& entry,
                                                   std::vector<float>& storage) const {
    const unsigned char* bytes = raw(entry);
    const auto count = static_cast<std::size_t>(entry.elementCount());
    // A tensor with a zero in its shape holds no bytes; an empty vector's data() may be null,
    // which memcpy must never be given, even for zero bytes.
    const bool readable = entry.dtype == TensorDType::F32 || entry.dtype == TensorDType::F16 ||
                          entry.dtype == TensorDType::BF16;
    if (count == 0 && readable) return std::span<const float>();
    switch (entry.dtype) {
    case TensorDType::F32:
        if (reinterpret_cast<std::uintptr_t>(bytes) % alignof(float) == 0)
            return std::span<const float>(reinterpret_cast<const float*>(bytes), count);
        storage.resize(count);
        std::memcpy(storage.data(), bytes, count * sizeof(float));
        return std::span<const float>(storage);
    case TensorDType::F16:
    case TensorDType::BF16: {
        storage.resize(count);
        if (reinterpret_cast<std::uintptr_t>(bytes) % alignof(std::uint16_t) == 0) {
            widenHalves(reinterpret_cast<const std::uint16_t*>(bytes), count, entry.dtype,
                        storage.data());
        } else {
            std::vector<std::uint16_t> aligned(count);
            std::memcpy(aligned.data(), bytes, count * sizeof(std::uint16_t));
            widenHalves(aligned.data(), count, entry.dtype, storage.data());
        }
        return std::span<const float>(storage);
    }
    default:
        return fail(filePath(entry), "tensor '" + entry.name + "' has dtype " +
                                         tensorDTypeName(entry.dtype) +
                                         "; AttnLab reads F32, F16 and BF16 weights");
    }
}

std::size_t SafeTensors::mappedBytes() const {
    std::size_t total = 0;
    for (const auto& file : m_files)
        total += file->size();
    return total;
}

} // namespace attnlab::model

#pragma once
// Tests' own safetensors writer and fixture helpers: builds checkpoint images byte by byte
// (so a test can make a header lie) and copies the committed fixtures into a TempDir to spoil
// them. Independent of the reader under test except where it reuses a fixture's tensors.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/io/npy.h"

namespace attnlab::test {

inline std::string fixtureDir(const std::string& name) {
    return std::string(ATTNLAB_SOURCE_DIR) + "/tests/model/fixtures/" + name;
}

inline const std::vector<std::string>& allFixtures() {
    static const std::vector<std::string> names = {
        "gpt2_lmhead_f32",       "gpt2_base_f16",   "llama_gqa_llama3_bf16_sharded",
        "llama_mqa_linear_tied", "qwen2_bias_tied", "qwen3_qknorm",
        "mistral_window3"};
    return names;
}

/// The token ids scripts/make_model_fixtures.py runs every fixture on.
inline const std::vector<std::int64_t>& fixtureIds() {
    static const std::vector<std::int64_t> ids = {3, 17, 5, 39, 0, 22, 8};
    return ids;
}

/// A tensor to write: name, dtype string, shape and raw little-endian bytes.
struct RawTensor {
    std::string name;
    std::string dtype = "F32";
    std::vector<std::int64_t> shape;
    std::string bytes;
};

inline RawTensor floatTensor(const std::string& name, std::vector<std::int64_t> shape,
                             const std::vector<float>& values) {
    RawTensor t{name, "F32", std::move(shape), std::string(values.size() * 4, '\0')};
    std::memcpy(t.bytes.data(), values.data(), values.size() * 4);
    return t;
}

/// The header JSON a correct writer would produce for `tensors` laid out in order.
inline nlohmann::json headerFor(const std::vector<RawTensor>& tensors) {
    nlohmann::json header = nlohmann::json::object();
    std::size_t offset = 0;
    for (const auto& t : tensors) {
        header[t.name] = {{"dtype", t.dtype},
                          {"shape", t.shape},
                          {"data_offsets", {offset, offset + t.bytes.size()}}};
        offset += t.bytes.size();
    }
    return header;
}

/// A safetensors image: u64 header length, the header text, then the tensors' bytes in order.
inline std::string safetensorsImage(const std::vector<RawTensor>& tensors,
                                    const std::string& headerText) {
    std::string image(8, '\0');
    const std::uint64_t length = headerText.size();
    std::memcpy(image.data(), &length, 8);
    image += headerText;
    for (const auto& t : tensors)
        image += t.bytes;
    return image;
}

inline std::string safetensorsImage(const std::vector<RawTensor>& tensors) {
    return safetensorsImage(tensors, headerFor(tensors).dump());
}

inline void writeBytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

/// Copies a committed fixture folder into `into` (a fresh folder) and returns its path.
inline std::string copyFixture(const std::string& name, const std::filesystem::path& into) {
    const auto target = into / name;
    std::filesystem::create_directories(target);
    for (const auto& entry : std::filesystem::directory_iterator(fixtureDir(name)))
        std::filesystem::copy_file(entry.path(), target / entry.path().filename());
    return target.string();
}

/// The tensors of a single-file safetensors image, parsed here without the reader under test.
inline std::vector<RawTensor> splitImage(const std::string& image) {
    std::uint64_t length = 0;
    std::memcpy(&length, image.data(), 8);
    const auto header = nlohmann::json::parse(image.substr(8, length));
    std::vector<RawTensor> tensors;
    for (const auto& [name, value] : header.items()) {
        if (name == "__metadata__") continue;
        const auto begin = value["data_offsets"][0].get<std::size_t>();
        const auto end = value["data_offsets"][1].get<std::size_t>();
        tensors.push_back({name, value["dtype"].get<std::string>(),
                           value["shape"].get<std::vector<std::int64_t>>(),
                           image.substr(8 + length + begin, end - begin)});
    }
    return tensors;
}

/// The float arrays of a fixture's expected.npz (ids, being int64, are skipped).
inline std::map<std::string, NpyArray> readExpected(const std::string& name) {
    const std::string path = fixtureDir(name) + "/expected.npz";
    auto members = readNpzMembers(path);
    EXPECT_TRUE(members.ok()) << (members.ok() ? "" : members.error());
    std::map<std::string, NpyArray> arrays;
    if (!members.ok()) return arrays;
    for (const auto& [key, bytes] : *members) {
        if (key == "ids") continue;
        auto array = parseNpy(bytes, path + "[" + key + "]");
        EXPECT_TRUE(array.ok()) << (array.ok() ? "" : array.error());
        if (array.ok()) arrays[key] = std::move(*array);
    }
    return arrays;
}

} // namespace attnlab::test

// The safetensors reader: values read back as written (F32 in place, F16/BF16 widened),
// shards through the index, and every lie a header can tell refused with the tensor's name.

#include "attnlab/model/safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "checkpoint_builder.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

using test::floatTensor;
using test::RawTensor;
using test::safetensorsImage;
using test::TempDir;
using test::writeBytes;

std::string openError(const std::string& path) {
    auto opened = SafeTensors::open(path);
    EXPECT_FALSE(opened.ok());
    return opened.ok() ? std::string() : opened.error();
}

TEST(Safetensors, ReadsF32InPlaceAndWidensF16AndBF16) {
    TempDir dir("attnlab_model");
    RawTensor a = floatTensor("a", {2, 3}, {1, -2, 3.5f, 0, 1e-3f, -7});
    // F16 bits of 1.0, -2.0, 65504 (max), 2^-24 (smallest subnormal)
    RawTensor h{"h", "F16", {4}, std::string(8, '\0')};
    const std::uint16_t halves[4] = {0x3c00, 0xc000, 0x7bff, 0x0001};
    std::memcpy(h.bytes.data(), halves, 8);
    // BF16 bits of 1.0, -0.5, 3.140625
    RawTensor b{"b", "BF16", {3}, std::string(6, '\0')};
    const std::uint16_t bf[3] = {0x3f80, 0xbf00, 0x4049};
    std::memcpy(b.bytes.data(), bf, 6);
    writeBytes(dir.file("m.safetensors"), safetensorsImage({a, h, b}));

    auto st = SafeTensors::open(dir.file("m.safetensors"));
    ASSERT_TRUE(st.ok()) << st.error();
    std::vector<float> storage;
    auto av = st->floats(*st->find("a"), storage);
    ASSERT_TRUE(av.ok());
    EXPECT_TRUE(storage.empty()) << "an aligned F32 tensor is used in place";
    EXPECT_EQ(reinterpret_cast<const unsigned char*>(av->data()), st->raw(*st->find("a")));
    EXPECT_EQ((std::vector<float>(av->begin(), av->end())),
              (std::vector<float>{1, -2, 3.5f, 0, 1e-3f, -7}));

    std::vector<float> hs;
    auto hv = st->floats(*st->find("h"), hs);
    ASSERT_TRUE(hv.ok());
    EXPECT_EQ((*hv)[0], 1.0f);
    EXPECT_EQ((*hv)[1], -2.0f);
    EXPECT_EQ((*hv)[2], 65504.0f);
    EXPECT_EQ((*hv)[3], std::ldexp(1.0f, -24));

    std::vector<float> bs;
    auto bv = st->floats(*st->find("b"), bs);
    ASSERT_TRUE(bv.ok());
    EXPECT_EQ((std::vector<float>(bv->begin(), bv->end())),
              (std::vector<float>{1.0f, -0.5f, 3.140625f}));
}

// A shape with a zero in it holds no bytes. Placed after a two-byte tensor, its offset is not
// a float's alignment, which took the copying path: memcpy from a null vector, undefined
// behaviour the sanitizers stop on (the fuzzer found it in a PyTorch checkpoint).
TEST(Safetensors, ReadsATensorWithNoElementsAtAnOddOffset) {
    TempDir dir("attnlab_model");
    RawTensor h{"h", "F16", {1}, std::string("\x00\x3c", 2)};
    RawTensor empty{"empty", "F32", {0, 4}, std::string()};
    RawTensor emptyHalf{"empty_half", "BF16", {3, 0}, std::string()};
    std::string header = test::headerFor({h, empty, emptyHalf}).dump();
    header.append((4 - header.size() % 4) % 4, ' '); // the data starts at a float's alignment
    writeBytes(dir.file("m.safetensors"), safetensorsImage({h, empty, emptyHalf}, header));
    auto st = SafeTensors::open(dir.file("m.safetensors"));
    ASSERT_TRUE(st.ok()) << st.error();
    ASSERT_NE(reinterpret_cast<std::uintptr_t>(st->raw(*st->find("empty"))) % alignof(float), 0u)
        << "the case needs an offset that is not a float's alignment";
    for (const char* name : {"empty", "empty_half"}) {
        std::vector<float> storage;
        auto values = st->floats(*st->find(name), storage);
        ASSERT_TRUE(values.ok()) << values.error();
        EXPECT_TRUE(values->empty()) << name;
    }
}

TEST(Safetensors, RefusesNonFloatDtypeAsWeightsButLoadsTheFile) {
    TempDir dir("attnlab_model");
    RawTensor ids{"position_ids", "I64", {2}, std::string(16, '\0')};
    writeBytes(dir.file("m.safetensors"), safetensorsImage({ids}));
    auto st = SafeTensors::open(dir.file("m.safetensors"));
    ASSERT_TRUE(st.ok()) << st.error();
    std::vector<float> storage;
    auto values = st->floats(*st->find("position_ids"), storage);
    ASSERT_FALSE(values.ok());
    EXPECT_NE(values.error().find("'position_ids'"), std::string::npos) << values.error();
    EXPECT_NE(values.error().find("I64"), std::string::npos) << values.error();
}

TEST(Safetensors, RefusesTruncatedFiles) {
    TempDir dir("attnlab_model");
    const std::string image = safetensorsImage({floatTensor("w", {4}, {1, 2, 3, 4})});
    writeBytes(dir.file("short.safetensors"), image.substr(0, 5));
    EXPECT_NE(openError(dir.file("short.safetensors")).find("too short"), std::string::npos);
    writeBytes(dir.file("cut.safetensors"), image.substr(0, image.size() - 4));
    const std::string cut = openError(dir.file("cut.safetensors"));
    EXPECT_NE(cut.find("'w'"), std::string::npos) << cut;
    EXPECT_NE(cut.find("cut.safetensors"), std::string::npos) << cut;
}

TEST(Safetensors, RefusesHeaderPastTheEnd) {
    TempDir dir("attnlab_model");
    std::string image = safetensorsImage({floatTensor("w", {1}, {1})});
    const std::uint64_t huge = 1ull << 40;
    std::memcpy(image.data(), &huge, 8);
    writeBytes(dir.file("m.safetensors"), image);
    EXPECT_NE(openError(dir.file("m.safetensors")).find("past the end"), std::string::npos);
}

// A text file (or a PyTorch .bin) renamed: named for what it is not, not by a header length
// read out of its first bytes.
TEST(Safetensors, AFileOfAnotherKindIsNamedAsNotSafetensors) {
    TempDir dir("attnlab_model");
    writeBytes(dir.file("model.safetensors"), "These are notes, not weights.\n");
    const std::string error = openError(dir.file("model.safetensors"));
    EXPECT_NE(error.find("not a safetensors file"), std::string::npos) << error;
    EXPECT_EQ(error.find("header length"), std::string::npos) << error;
}

TEST(Safetensors, RefusesBadJsonAndMissingFields) {
    TempDir dir("attnlab_model");
    writeBytes(dir.file("a.safetensors"), safetensorsImage({}, "{not json"));
    EXPECT_NE(openError(dir.file("a.safetensors")).find("JSON"), std::string::npos);
    writeBytes(dir.file("b.safetensors"), safetensorsImage({}, "[1, 2]"));
    EXPECT_NE(openError(dir.file("b.safetensors")).find("not a JSON object"), std::string::npos);
    writeBytes(dir.file("c.safetensors"),
               safetensorsImage({}, R"({"w": {"dtype": "F32", "shape": [0]}})"));
    EXPECT_NE(openError(dir.file("c.safetensors")).find("'w' has no data_offsets"),
              std::string::npos);
}

TEST(Safetensors, RefusesOverlappingOffsets) {
    TempDir dir("attnlab_model");
    RawTensor a = floatTensor("a", {2}, {1, 2});
    RawTensor b = floatTensor("b", {2}, {3, 4});
    auto header = test::headerFor({a, b});
    header["b"]["data_offsets"] = {4, 12}; // overlaps a's [0, 8)
    writeBytes(dir.file("m.safetensors"),
               safetensorsImage({a, b, floatTensor("pad", {1}, {0})}, header.dump()));
    const std::string error = openError(dir.file("m.safetensors"));
    EXPECT_NE(error.find("'b' overlaps"), std::string::npos) << error;
}

TEST(Safetensors, RefusesGapsAndTrailingBytes) {
    TempDir dir("attnlab_model");
    RawTensor a = floatTensor("a", {1}, {1});
    RawTensor b = floatTensor("b", {1}, {2});
    auto header = test::headerFor({a, b});
    header["b"]["data_offsets"] = {8, 12};
    writeBytes(dir.file("gap.safetensors"),
               safetensorsImage({a, floatTensor("x", {1}, {0}), b}, header.dump()));
    EXPECT_NE(openError(dir.file("gap.safetensors")).find("gap"), std::string::npos);
    writeBytes(dir.file("tail.safetensors"), safetensorsImage({a}) + "junk");
    EXPECT_NE(openError(dir.file("tail.safetensors")).find("cover 4 bytes"), std::string::npos);
}

TEST(Safetensors, RefusesDtypeTimesShapeNotEqualToByteLength) {
    TempDir dir("attnlab_model");
    RawTensor a = floatTensor("a", {3}, {1, 2, 3});
    auto header = test::headerFor({a});
    header["a"]["shape"] = {2, 2}; // 16 bytes claimed, 12 present
    writeBytes(dir.file("m.safetensors"), safetensorsImage({a}, header.dump()));
    const std::string error = openError(dir.file("m.safetensors"));
    EXPECT_NE(error.find("'a'"), std::string::npos) << error;
    EXPECT_NE(error.find("16 bytes"), std::string::npos) << error;

    // A shape whose element count overflows 64 bits is refused, not wrapped around.
    header["a"]["shape"] = {4294967296ull, 4294967296ull};
    writeBytes(dir.file("o.safetensors"), safetensorsImage({a}, header.dump()));
    EXPECT_NE(openError(dir.file("o.safetensors")).find("overflows"), std::string::npos);
}

TEST(Safetensors, RefusesUnknownDtypeAndNegativeShape) {
    TempDir dir("attnlab_model");
    RawTensor a = floatTensor("a", {1}, {1});
    auto header = test::headerFor({a});
    header["a"]["dtype"] = "F4";
    writeBytes(dir.file("d.safetensors"), safetensorsImage({a}, header.dump()));
    EXPECT_NE(openError(dir.file("d.safetensors")).find("unknown dtype 'F4'"), std::string::npos);
    header["a"]["dtype"] = "F32";
    header["a"]["shape"] = {-1};
    writeBytes(dir.file("n.safetensors"), safetensorsImage({a}, header.dump()));
    EXPECT_NE(openError(dir.file("n.safetensors")).find("non-negative"), std::string::npos);
}

TEST(Safetensors, ReadsShardsThroughTheIndex) {
    TempDir dir("attnlab_model");
    writeBytes(dir.file("s1.safetensors"), safetensorsImage({floatTensor("a", {1}, {1})}));
    writeBytes(dir.file("s2.safetensors"), safetensorsImage({floatTensor("b", {2}, {2, 3})}));
    writeBytes(dir.file("model.safetensors.index.json"),
               R"({"metadata": {}, "weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})");
    auto st = SafeTensors::open(dir.path().string());
    ASSERT_TRUE(st.ok()) << st.error();
    std::vector<float> storage;
    auto b = st->floats(*st->find("b"), storage);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ((*b)[1], 3.0f);
    EXPECT_EQ(st->entries().size(), 2u);

    // The index names a tensor its shard does not hold.
    writeBytes(dir.file("model.safetensors.index.json"),
               R"({"weight_map": {"a": "s1.safetensors", "c": "s2.safetensors"}})");
    EXPECT_NE(openError(dir.path().string()).find("'c'"), std::string::npos);
    // ... or a shard outside the folder, or a shard that is missing.
    writeBytes(dir.file("model.safetensors.index.json"), R"({"weight_map": {"a": "../x"}})");
    EXPECT_NE(openError(dir.path().string()).find("outside the folder"), std::string::npos);
    writeBytes(dir.file("model.safetensors.index.json"),
               R"({"weight_map": {"a": "missing.safetensors"}})");
    EXPECT_NE(openError(dir.path().string()).find("missing.safetensors"), std::string::npos);
}

TEST(Safetensors, RefusesAFolderWithoutACheckpoint) {
    TempDir dir("attnlab_model");
    EXPECT_NE(openError(dir.path().string()).find("neither model.safetensors"), std::string::npos);
}

} // namespace
} // namespace attnlab::model

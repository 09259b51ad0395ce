// Tests for core/io/src/npy.cpp: headers are written by hand here from the NumPy format
// specification (numpy/lib/format.py), so the reader is checked against the format, not
// against our own writer. Deflated .npz members are written with libzip directly.

#include <gtest/gtest.h>

#include <zip.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "attnlab/base/utf8.h"
#include "attnlab/io/file_io.h"
#include "attnlab/io/npy.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

/// The values of an aligned buffer as a plain std::vector, to compare with a literal.
template <typename T> std::vector<T> plain(const AlignedVector<T>& values) {
    return {values.begin(), values.end()};
}

using test::TempDir;

void writeBytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A .npy image assembled by hand the way numpy.lib.format writes it: magic, version,
/// little-endian header length, the dict padded with spaces to a multiple of 64 and '\n'.
std::string handNpy(const std::string& dict, const std::string& data, int major = 1,
                    bool pad = true) {
    const std::size_t lengthBytes = major == 1 ? 2 : 4;
    std::string header = dict;
    if (pad) {
        const std::size_t unpadded = 8 + lengthBytes + header.size() + 1;
        header.append((64 - unpadded % 64) % 64, ' ');
    }
    header.push_back('\n');
    std::string out("\x93NUMPY", 6);
    out.push_back(static_cast<char>(major));
    out.push_back('\0');
    for (std::size_t i = 0; i < lengthBytes; ++i)
        out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
    return out + header + data;
}

template <typename T> std::string rawBytes(const std::vector<T>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

std::string floatDict(const std::string& descr, const std::string& shape) {
    return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

NpyReadOptions halfOptions() {
    NpyReadOptions options;
    options.allowHalf = true;
    options.minRank = 0;
    return options;
}

// ---- round trips --------------------------------------------------------------------------

TEST(Npy, RoundTripsFloat32AndFloat64AtEveryRank) {
    TempDir dir{"attnlab_npy"};
    const std::vector<std::vector<Index>> shapes = {{5}, {2, 3}, {2, 3, 4}, {2, 1, 3, 2}, {0, 3}};
    std::mt19937 gen(7);
    std::normal_distribution<float> dist;
    for (DType dtype : {DType::Float32, DType::Float64}) {
        for (const auto& shape : shapes) {
            NpyArray array;
            array.shape = shape;
            array.data.resize(static_cast<std::size_t>(array.elementCount()));
            for (auto& x : array.data)
                x = dist(gen);
            const std::string path = dir.file("a.npy");
            ASSERT_FALSE(writeNpy(path, array, dtype).has_value());
            NpyReadOptions options;
            options.allowEmpty = true; // the (0, 3) case
            auto back = readNpy(path, options);
            ASSERT_TRUE(back.ok()) << back.error();
            EXPECT_EQ(back->shape, shape);
            EXPECT_EQ(back->dtype, dtype);
            EXPECT_EQ(back->data, array.data); // float -> double -> float is exact
        }
    }
    EXPECT_EQ(dir.listing(), std::vector<std::string>{"a.npy"}); // no temp file left
}

TEST(Npy, WrittenHeaderFollowsTheNumpyLayout) {
    NpyArray array;
    array.shape = {2, 3};
    array.data.assign(6, 1.5f);
    const std::string image = encodeNpy(array, DType::Float64);
    ASSERT_GE(image.size(), 10u);
    EXPECT_EQ(image.substr(0, 6), std::string("\x93NUMPY", 6));
    EXPECT_EQ(image[6], 1);
    EXPECT_EQ(image[7], 0);
    const std::size_t headerLength =
        static_cast<unsigned char>(image[8]) | (static_cast<unsigned char>(image[9]) << 8);
    EXPECT_EQ((10 + headerLength) % 64, 0u); // data aligned as numpy aligns it
    const std::string header = image.substr(10, headerLength);
    EXPECT_EQ(header.back(), '\n');
    EXPECT_NE(header.find("'descr': '<f8'"), std::string::npos);
    EXPECT_NE(header.find("'fortran_order': False"), std::string::npos);
    EXPECT_NE(header.find("'shape': (2, 3)"), std::string::npos);
    EXPECT_EQ(image.size(), 10 + headerLength + 6 * 8);
    double first;
    std::memcpy(&first, image.data() + 10 + headerLength, 8);
    EXPECT_EQ(first, 1.5);
}

// ---- hand-written headers -----------------------------------------------------------------

TEST(Npy, ParsesHandWrittenVersion1Header) {
    const std::vector<float> values = {1, 2, 3, 4, 5, 6};
    auto array = parseNpy(handNpy(floatDict("<f4", "(2, 3)"), rawBytes(values)), "h.npy");
    ASSERT_TRUE(array.ok()) << array.error();
    EXPECT_EQ(array->shape, (std::vector<Index>{2, 3}));
    EXPECT_EQ(array->dtype, DType::Float32);
    EXPECT_EQ(plain(array->data), values);
}

TEST(Npy, ParsesHandWrittenVersion2HeaderWithDoubles) {
    const std::vector<double> values = {0.25, -1e300, 3};
    auto array = parseNpy(handNpy(floatDict("<f8", "(3,)"), rawBytes(values), 2), "h.npy");
    ASSERT_TRUE(array.ok()) << array.error();
    EXPECT_EQ(array->shape, (std::vector<Index>{3}));
    EXPECT_EQ(array->dtype, DType::Float64);
    EXPECT_EQ(array->data[0], 0.25f);
    EXPECT_TRUE(std::isinf(array->data[1]) && array->data[1] < 0); // beyond float range
    EXPECT_EQ(array->data[2], 3.0f);
}

TEST(Npy, ParsesVersion3UnpaddedHeaderWithKeysInAnyOrder) {
    const std::vector<float> values = {7, 8};
    const std::string dict = "{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"<f4\"}";
    auto array = parseNpy(handNpy(dict, rawBytes(values), 3, false), "h.npy");
    ASSERT_TRUE(array.ok()) << array.error();
    EXPECT_EQ(array->shape, (std::vector<Index>{1, 2}));
    EXPECT_EQ(plain(array->data), values);
}

TEST(Npy, ParsesScalarAndEmptyShapes) {
    const std::vector<float> one = {42};
    auto scalar = parseNpy(handNpy(floatDict("<f4", "()"), rawBytes(one)), "s.npy", halfOptions());
    ASSERT_TRUE(scalar.ok()) << scalar.error();
    EXPECT_TRUE(scalar->shape.empty());
    EXPECT_EQ(plain(scalar->data), one);
    NpyReadOptions allowEmpty;
    allowEmpty.allowEmpty = true;
    auto empty = parseNpy(handNpy(floatDict("<f4", "(0, 4)"), ""), "e.npy", allowEmpty);
    ASSERT_TRUE(empty.ok()) << empty.error();
    EXPECT_EQ(empty->elementCount(), 0);
}

TEST(Npy, AcceptsNativeOrderMarkerForFloats) {
    const std::vector<float> values = {1, 2};
    auto array = parseNpy(handNpy(floatDict("|f4", "(2,)"), rawBytes(values)), "n.npy");
    ASSERT_TRUE(array.ok()) << array.error();
    EXPECT_EQ(plain(array->data), values);
}

// ---- half precision -----------------------------------------------------------------------

TEST(Npy, ConvertsFloat16ExactlyIncludingSubnormalsInfAndNan) {
    // binary16 bit patterns: 0, 1, -2, 65504 (max), 2^-24 (smallest subnormal),
    // 2^-14 (smallest normal), -0, +inf, -inf, NaN.
    const std::vector<std::uint16_t> bits = {0x0000, 0x3c00, 0xc000, 0x7bff, 0x0001,
                                             0x0400, 0x8000, 0x7c00, 0xfc00, 0x7e00};
    auto array =
        parseNpy(handNpy(floatDict("<f2", "(10,)"), rawBytes(bits)), "h.npy", halfOptions());
    ASSERT_TRUE(array.ok()) << array.error();
    EXPECT_EQ(array->dtype, DType::Float16);
    const auto& d = array->data;
    EXPECT_EQ(d[0], 0.0f);
    EXPECT_EQ(d[1], 1.0f);
    EXPECT_EQ(d[2], -2.0f);
    EXPECT_EQ(d[3], 65504.0f);
    EXPECT_EQ(d[4], std::ldexp(1.0f, -24));
    EXPECT_EQ(d[5], std::ldexp(1.0f, -14));
    EXPECT_EQ(d[6], 0.0f);
    EXPECT_TRUE(std::signbit(d[6]));
    EXPECT_EQ(d[7], std::numeric_limits<float>::infinity());
    EXPECT_EQ(d[8], -std::numeric_limits<float>::infinity());
    EXPECT_TRUE(std::isnan(d[9]));
}

TEST(Npy, ConvertsBfloat16FromMlDtypesVoidDescr) {
    // bfloat16 is the top 16 bits of a float32: 1 = 0x3f80, -2 = 0xc000, 3.140625 = 0x4049,
    // smallest subnormal 2^-133 = 0x0001, inf = 0x7f80, NaN = 0x7fc0.
    const std::vector<std::uint16_t> bits = {0x3f80, 0xc000, 0x4049, 0x0001, 0x7f80, 0x7fc0};
    for (const char* descr : {"<V2", "|V2"}) {
        auto array =
            parseNpy(handNpy(floatDict(descr, "(6,)"), rawBytes(bits)), "b.npy", halfOptions());
        ASSERT_TRUE(array.ok()) << array.error();
        EXPECT_EQ(array->dtype, DType::BFloat16);
        const auto& d = array->data;
        EXPECT_EQ(d[0], 1.0f);
        EXPECT_EQ(d[1], -2.0f);
        EXPECT_EQ(d[2], 3.140625f);
        EXPECT_EQ(d[3], std::ldexp(1.0f, -133));
        EXPECT_EQ(d[4], std::numeric_limits<float>::infinity());
        EXPECT_TRUE(std::isnan(d[5]));
    }
}

TEST(Npy, RejectsHalfPrecisionUnlessAllowed) {
    const std::vector<std::uint16_t> bits = {0x3c00};
    auto f16 = parseNpy(handNpy(floatDict("<f2", "(1,)"), rawBytes(bits)), "h.npy");
    ASSERT_FALSE(f16.ok());
    EXPECT_NE(f16.error().find("float16"), std::string::npos) << f16.error();
    auto bf16 = parseNpy(handNpy(floatDict("<V2", "(1,)"), rawBytes(bits)), "b.npy");
    ASSERT_FALSE(bf16.ok());
    EXPECT_NE(bf16.error().find("bfloat16"), std::string::npos) << bf16.error();
}

// ---- rejections, each with its message ----------------------------------------------------

/// Expects a parse failure whose message names the file and contains `what`.
void expectRejected(const std::string& image, const std::string& what,
                    const NpyReadOptions& options = {}) {
    auto result = parseNpy(image, "bad.npy", options);
    ASSERT_FALSE(result.ok()) << "accepted; expected: " << what;
    EXPECT_EQ(result.error().rfind("bad.npy: ", 0), 0u) << result.error();
    EXPECT_NE(result.error().find(what), std::string::npos) << result.error();
    EXPECT_EQ(result.error().find('\n'), std::string::npos) << "message must be one line";
}

const std::vector<float> kSix = {1, 2, 3, 4, 5, 6};

TEST(Npy, RejectsBadMagic) {
    std::string image = handNpy(floatDict("<f4", "(6,)"), rawBytes(kSix));
    image[1] = 'X';
    expectRejected(image, "bad magic");
    expectRejected("", "bad magic");
    expectRejected("PK\x03\x04 zip file", "bad magic");
}

TEST(Npy, RejectsTruncatedHeader) {
    const std::string image = handNpy(floatDict("<f4", "(6,)"), rawBytes(kSix));
    expectRejected(image.substr(0, 9), "truncated header");
    expectRejected(image.substr(0, 40), "truncated header");
}

TEST(Npy, RejectsTruncatedData) {
    const std::string image = handNpy(floatDict("<f4", "(2, 3)"), rawBytes(kSix));
    expectRejected(image.substr(0, image.size() - 1), "truncated data");
    expectRejected(handNpy(floatDict("<f4", "(2, 4)"), rawBytes(kSix)), "needs 32 bytes");
}

TEST(Npy, RejectsTrailingData) {
    expectRejected(handNpy(floatDict("<f4", "(5,)"), rawBytes(kSix)), "trailing data");
}

TEST(Npy, RejectsFortranOrder) {
    const std::string dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }";
    expectRejected(handNpy(dict, rawBytes(kSix)), "Fortran");
}

TEST(Npy, RejectsBigEndian) {
    expectRejected(handNpy(floatDict(">f4", "(6,)"), rawBytes(kSix)), "big-endian");
}

TEST(Npy, RejectsIntegerBoolComplexAndObjectDtypes) {
    const std::string eight(8, '\0');
    expectRejected(handNpy(floatDict("<i8", "(1,)"), eight),
                   "int64 is not supported; save as float32 or float64");
    expectRejected(handNpy(floatDict("<i4", "(2,)"), eight), "int32 is not supported");
    expectRejected(handNpy(floatDict("<u2", "(4,)"), eight), "uint16 is not supported");
    expectRejected(handNpy(floatDict("|b1", "(8,)"), eight), "bool is not supported");
    expectRejected(handNpy(floatDict("<c8", "(1,)"), eight), "complex64 is not supported");
    expectRejected(handNpy(floatDict("|O", "(1,)"), eight), "object arrays are not supported");
    const std::string structured =
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }";
    expectRejected(handNpy(structured, eight), "structured");
}

TEST(Npy, RejectsRankOutsideTheAllowedRange) {
    NpyReadOptions options;
    options.minRank = 2;
    options.maxRank = 4;
    expectRejected(handNpy(floatDict("<f4", "(6,)"), rawBytes(kSix)),
                   "expected 2 to 4 dimensions, got 1", options);
    expectRejected(handNpy(floatDict("<f4", "(1, 1, 1, 2, 3)"), rawBytes(kSix)),
                   "expected 2 to 4 dimensions, got 5", options);
}

TEST(Npy, RejectsNegativeAndOverflowingShapes) {
    expectRejected(handNpy(floatDict("<f4", "(-2, 3)"), rawBytes(kSix)), "negative dimension");
    expectRejected(handNpy(floatDict("<f4", "(4294967296, 4294967296)"), ""), "too large");
    expectRejected(handNpy(floatDict("<f4", "(99999999999999999999999,)"), ""), "too large");
}

TEST(Npy, RejectsMalformedHeaderDicts) {
    expectRejected(handNpy("{'descr': '<f4', 'shape': (6,), }", rawBytes(kSix)),
                   "no 'fortran_order'");
    expectRejected(
        handNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", rawBytes(kSix)),
        "unexpected key 'x'");
    expectRejected(
        handNpy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (6,)}", rawBytes(kSix)),
        "fortran_order must be True or False");
    expectRejected(
        handNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (6)}", rawBytes(kSix)),
        "not a tuple");
    expectRejected(handNpy("['descr', '<f4']", rawBytes(kSix)), "malformed header");
}

TEST(Npy, ReadNpyNamesAMissingFile) {
    TempDir dir{"attnlab_npy"};
    auto result = readNpy(dir.file("missing.npy"));
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().find("missing.npy"), std::string::npos) << result.error();
}

TEST(Npy, DegenerateShapesAreRefusedUnlessAskedFor) {
    // A 128-byte file claiming D = 0 and S = 2^20 holds no value but would be 2^40 weights.
    expectRejected(handNpy(floatDict("<f4", "(1048576, 0)"), ""), "empty dimension");
    expectRejected(handNpy(floatDict("<f4", "(0, 4611686018427387904, 4611686018427387904)"), ""),
                   "empty dimension");
}

TEST(Npy, ShapeProductThatWouldWrapAroundIsRefused) {
    // Each product wraps to a small number (0 or the few bytes present) in 64 bits.
    expectRejected(handNpy(floatDict("<f4", "(65536, 65536, 65536, 65536)"), ""), "too large");
    expectRejected(handNpy(floatDict("<f4", "(4294967297, 4294967295)"), ""), "too large");
    // The count fits, the byte count (x 8) does not.
    expectRejected(handNpy(floatDict("<f8", "(2305843009213693952,)"), ""), "too large");
    // Fits in 64 bits but far beyond the bytes present: refused before allocating.
    expectRejected(handNpy(floatDict("<f4", "(1073741824, 1024)"), rawBytes(kSix)),
                   "truncated data");
}

TEST(Npy, HeaderClaimingMoreThanAMegabyteIsRefusedBeforeReadingIt) {
    std::string image = handNpy(floatDict("<f4", "(2, 3)"), rawBytes(kSix), 2);
    image[8] = image[9] = image[10] = '\xff';
    image[11] = '\x7f'; // header length 2^31 - 1
    expectRejected(image, "at most");
}

// ---- string arrays ------------------------------------------------------------------------

std::string utf32(const std::u32string& text, std::size_t width) {
    std::string out;
    for (std::size_t i = 0; i < width; ++i) {
        const char32_t c = i < text.size() ? text[i] : U'\0';
        for (int b = 0; b < 4; ++b)
            out.push_back(static_cast<char>((static_cast<std::uint32_t>(c) >> (8 * b)) & 0xff));
    }
    return out;
}

TEST(Npy, NonFiniteValuesAreRefusedWhenAskedFor) {
    NpyReadOptions finite;
    finite.requireFinite = true;
    finite.allowHalf = true;
    const std::vector<float> withNan = {1, std::numeric_limits<float>::quiet_NaN(), 3};
    expectRejected(handNpy(floatDict("<f4", "(3,)"), rawBytes(withNan)), "value 1", finite);
    const std::vector<double> withInf = {1, 2, -std::numeric_limits<double>::infinity()};
    expectRejected(handNpy(floatDict("<f8", "(3,)"), rawBytes(withInf)), "-inf", finite);
    const std::vector<std::uint16_t> halfInf = {0x3c00, 0x7c00}; // 1.0, +inf
    expectRejected(handNpy(floatDict("<f2", "(2,)"), rawBytes(halfInf)),
                   "value 1 (in C order) is +inf", finite);
    // Without the option they are read as they are.
    auto plain = parseNpy(handNpy(floatDict("<f4", "(3,)"), rawBytes(withNan)), "n.npy");
    ASSERT_TRUE(plain.ok()) << plain.error();
    EXPECT_TRUE(std::isnan(plain->data[1]));
}

TEST(NpyStrings, DecodesUnicodeAndByteStringsToUtf8) {
    const std::string u = handNpy(floatDict("<U3", "(3,)"),
                                  utf32(U"cat", 3) + utf32(U"h\u00e9", 3) + utf32(U"\u732b", 3));
    auto parsed = parseNpyStrings(u, "t.npy");
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    EXPECT_EQ(parsed->values, (std::vector<std::string>{"cat", "h\xc3\xa9", "\xe7\x8c\xab"}));
    const std::string b =
        handNpy(floatDict("|S2", "(2, 1)"), std::string("ab") + std::string("c\0", 2));
    auto bytes = parseNpyStrings(b, "b.npy");
    ASSERT_TRUE(bytes.ok()) << bytes.error();
    EXPECT_EQ(bytes->shape, (std::vector<Index>{2, 1}));
    EXPECT_EQ(bytes->values, (std::vector<std::string>{"ab", "c"}));
}

TEST(NpyStrings, WidthZeroCannotClaimAnyNumberOfStrings) {
    // 10^8 strings of width 0 need 0 bytes: the 494-byte npz that asked for 3 GB.
    auto parsed = parseNpyStrings(handNpy(floatDict("<U0", "(100000000,)"), ""), "t.npy");
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.error().find("width 0"), std::string::npos) << parsed.error();
}

TEST(NpyStrings, CountIsCheckedAgainstBytesAndTheLimitBeforeDecoding) {
    auto truncated =
        parseNpyStrings(handNpy(floatDict("<U5", "(1000000,)"), utf32(U"a", 5)), "t.npy");
    ASSERT_FALSE(truncated.ok());
    EXPECT_NE(truncated.error().find("truncated data"), std::string::npos) << truncated.error();
    auto wraps = parseNpyStrings(handNpy(floatDict("<U4", "(1152921504606846976,)"), ""), "t.npy");
    ASSERT_FALSE(wraps.ok()); // 2^60 x 16 bytes wraps to 0 in 64 bits
    EXPECT_NE(wraps.error().find("too large"), std::string::npos) << wraps.error();
    NpyStringOptions options;
    options.maxCount = 2;
    auto many = parseNpyStrings(
        handNpy(floatDict("<U1", "(3,)"), utf32(U"a", 1) + utf32(U"b", 1) + utf32(U"c", 1)),
        "t.npy", options);
    ASSERT_FALSE(many.ok());
    EXPECT_NE(many.error().find("at most 2"), std::string::npos) << many.error();
}

TEST(NpyStrings, RefusesNonStringsObjectsAndBadCharacters) {
    auto floats = parseNpyStrings(handNpy(floatDict("<f4", "(6,)"), rawBytes(kSix)), "t.npy");
    ASSERT_FALSE(floats.ok());
    EXPECT_NE(floats.error().find("string array"), std::string::npos) << floats.error();
    auto objects = parseNpyStrings(handNpy(floatDict("|O", "(2,)"), "pickle"), "t.npy");
    ASSERT_FALSE(objects.ok());
    EXPECT_NE(objects.error().find("object array"), std::string::npos) << objects.error();
    auto surrogate =
        parseNpyStrings(handNpy(floatDict("<U1", "(1,)"), utf32(U"\xd800", 1)), "t.npy");
    ASSERT_FALSE(surrogate.ok());
    EXPECT_NE(surrogate.error().find("invalid character"), std::string::npos) << surrogate.error();
}

// ---- npz ----------------------------------------------------------------------------------

/// Writes a zip with libzip directly: each member stored or deflated as asked.
void writeZip(const std::string& path,
              const std::vector<std::tuple<std::string, std::string, bool>>& members) {
    int errorCode = 0;
    zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &errorCode);
    ASSERT_NE(archive, nullptr);
    for (const auto& [name, contents, deflate] : members) {
        zip_source_t* source = zip_source_buffer(archive, contents.data(), contents.size(), 0);
        ASSERT_NE(source, nullptr);
        const zip_int64_t at = zip_file_add(archive, name.c_str(), source, 0);
        ASSERT_GE(at, 0);
        ASSERT_EQ(zip_set_file_compression(archive, static_cast<zip_uint64_t>(at),
                                           deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 9),
                  0);
    }
    ASSERT_EQ(zip_close(archive), 0);
}

TEST(Npy, ReadsNpzWithStoredAndDeflatedMembersAndIgnoresOthers) {
    TempDir dir{"attnlab_npy"};
    std::vector<float> big(1000);
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<float>(i % 7); // compressible, so deflate really deflates
    const std::vector<double> small = {1.5, -2.5};
    const std::string path = dir.file("p.npz");
    writeZip(path, {{"wq.npy", handNpy(floatDict("<f4", "(10, 100)"), rawBytes(big)), true},
                    {"v.npy", handNpy(floatDict("<f8", "(2,)"), rawBytes(small)), false},
                    {"README.txt", "not an array", true}});
    auto arrays = readNpz(path);
    ASSERT_TRUE(arrays.ok()) << arrays.error();
    ASSERT_EQ(arrays->size(), 2u);
    EXPECT_EQ(arrays->at("wq").shape, (std::vector<Index>{10, 100}));
    EXPECT_EQ(plain(arrays->at("wq").data), big);
    EXPECT_EQ(plain(arrays->at("v").data), (std::vector<float>{1.5f, -2.5f}));
}

TEST(Npy, NpzMemberErrorsNameTheArchiveAndMember) {
    TempDir dir{"attnlab_npy"};
    const std::string path = dir.file("p.npz");
    writeZip(path, {{"wq.npy", handNpy(floatDict("<i8", "(1,)"), std::string(8, '\0')), true}});
    auto arrays = readNpz(path);
    ASSERT_FALSE(arrays.ok());
    EXPECT_NE(arrays.error().find("p.npz[wq]"), std::string::npos) << arrays.error();
    EXPECT_NE(arrays.error().find("int64"), std::string::npos) << arrays.error();
}

TEST(Npy, RejectsCorruptAndTruncatedNpz) {
    TempDir dir{"attnlab_npy"};
    const std::string good = dir.file("good.npz");
    std::vector<float> values(256, 3.0f);
    writeZip(good, {{"a.npy", handNpy(floatDict("<f4", "(256,)"), rawBytes(values)), true}});
    auto bytes = readFile(good);
    ASSERT_TRUE(bytes.ok());

    const std::string truncated = dir.file("truncated.npz");
    writeBytes(truncated, bytes->substr(0, bytes->size() / 2));
    auto t = readNpz(truncated);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().find("truncated.npz"), std::string::npos) << t.error();

    const std::string garbage = dir.file("garbage.npz");
    writeBytes(garbage, "this is not a zip archive at all");
    auto g = readNpz(garbage);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.error().find("garbage.npz"), std::string::npos) << g.error();

    // Flip a byte inside the deflated data: the CRC (or inflate) must catch it.
    std::string flipped = *bytes;
    const std::size_t dataAt = 30 + 5; // local header (30) + "a.npy"
    flipped[dataAt + 10] = static_cast<char>(flipped[dataAt + 10] ^ 0x55);
    const std::string corrupt = dir.file("corrupt.npz");
    writeBytes(corrupt, flipped);
    auto c = readNpz(corrupt);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("corrupt.npz"), std::string::npos) << c.error();
}

TEST(Npy, RejectsStoredNpzMemberWithBadCrc) {
    TempDir dir{"attnlab_npy"};
    std::vector<float> values(16, 2.0f);
    const std::string member = handNpy(floatDict("<f4", "(16,)"), rawBytes(values));
    const std::string good = dir.file("good.npz");
    writeZip(good, {{"a.npy", member, false}});
    auto bytes = readFile(good);
    ASSERT_TRUE(bytes.ok());
    // Change one float of the stored data: still a well-formed .npy, but the CRC differs.
    std::string flipped = *bytes;
    const std::size_t dataAt = flipped.find(member);
    ASSERT_NE(dataAt, std::string::npos);
    flipped[dataAt + member.size() - 2] =
        static_cast<char>(flipped[dataAt + member.size() - 2] ^ 1);
    const std::string corrupt = dir.file("crc.npz");
    writeBytes(corrupt, flipped);
    auto c = readNpz(corrupt);
    ASSERT_FALSE(c.ok()) << "a CRC mismatch must not pass as data";
    EXPECT_NE(c.error().find("crc.npz"), std::string::npos) << c.error();
}

/// Sets a 32-bit little-endian field of a zip image.
void putLe32(std::string& image, std::size_t at, std::uint32_t value) {
    for (int b = 0; b < 4; ++b)
        image[at + static_cast<std::size_t>(b)] = static_cast<char>((value >> (8 * b)) & 0xff);
}

/// Rewrites what the (only) member of a zip image claims, in its local header and its
/// central directory entry alike, so that libzip's consistency check sees no difference.
std::string claimSizes(std::string image, std::optional<std::uint32_t> compressed,
                       std::optional<std::uint32_t> uncompressed) {
    const std::size_t central = image.find(std::string("PK\x01\x02", 4));
    EXPECT_NE(central, std::string::npos);
    if (compressed) {
        putLe32(image, 18, *compressed);
        putLe32(image, central + 20, *compressed);
    }
    if (uncompressed) {
        putLe32(image, 22, *uncompressed);
        putLe32(image, central + 24, *uncompressed);
    }
    return image;
}

Result<std::map<std::string, std::string>> membersOf(const TempDir& dir, const std::string& name,
                                                     const std::string& image) {
    const std::string path = dir.file(name);
    writeBytes(path, image);
    return readNpzMembers(path);
}

void expectNpzRejected(const Result<std::map<std::string, std::string>>& members,
                       const std::string& name, const std::string& what) {
    ASSERT_FALSE(members.ok()) << "accepted; expected: " << what;
    EXPECT_NE(members.error().find(name), std::string::npos) << members.error();
    EXPECT_NE(members.error().find(what), std::string::npos) << members.error();
}

TEST(Npz, MemberClaimingGigabytesIsRefusedBeforeAllocating) {
    TempDir dir{"attnlab_npz"};
    const std::string member = handNpy(floatDict("<f4", "(2, 3)"), rawBytes(kSix));
    writeZip(dir.file("d.npz"), {{"a.npy", member, true}});
    writeZip(dir.file("s.npz"), {{"a.npy", member, false}});
    const std::string deflated = *readFile(dir.file("d.npz"));
    const std::string stored = *readFile(dir.file("s.npz"));
    const std::uint32_t claim = 0xf0000000u; // 3.75 GB
    // Deflate cannot expand ~100 bytes into 3.75 GB.
    expectNpzRejected(membersOf(dir, "deflate.npz", claimSizes(deflated, std::nullopt, claim)),
                      "deflate.npz[a]", "more than deflate can expand");
    // A stored member is its own bytes.
    expectNpzRejected(membersOf(dir, "stored.npz", claimSizes(stored, std::nullopt, claim)),
                      "stored.npz[a]", "claims to hold");
    // Compressed bytes beyond the end of the archive (libzip itself refuses this one).
    expectNpzRejected(membersOf(dir, "both.npz", claimSizes(stored, claim, claim)), "both.npz",
                      "both.npz");
}

TEST(Npz, MemberSizeMustMatchItsNpyHeader) {
    TempDir dir{"attnlab_npz"};
    // Header says (1000000,) float32 = 4 MB; the member holds 24 bytes of data.
    writeZip(dir.file("m.npz"),
             {{"a.npy", handNpy(floatDict("<f4", "(1000000,)"), rawBytes(kSix)), true}});
    auto members = readNpzMembers(dir.file("m.npz"));
    expectNpzRejected(members, "m.npz[a]", "truncated data");
}

/// A deflated member whose compressed stream is damaged at its very end: only a reader
/// that decompresses all of it can notice (inflate error or CRC mismatch).
std::string damagedAtTheEnd(const TempDir& dir, const std::string& contents) {
    writeZip(dir.file("whole.npz"), {{"a.npy", contents, true}});
    std::string image = *readFile(dir.file("whole.npz"));
    const std::size_t data = 30 + 5; // local header + "a.npy"
    std::uint32_t compressed = 0;
    for (int b = 0; b < 4; ++b)
        compressed |= static_cast<std::uint32_t>(static_cast<unsigned char>(image[18 + b]))
                      << (8 * b);
    EXPECT_GT(compressed, 16u);
    for (std::size_t i = data + compressed - 4; i < data + compressed; ++i)
        image[i] = static_cast<char>(image[i] ^ 0xa5);
    return image;
}

TEST(Npz, MemberThatIsNotNpyIsRefusedAfterItsFirstBytes) {
    TempDir dir{"attnlab_npz"};
    // 4 MB that compress to a few KB; damaged at the end of the stream. A reader that
    // inflated all of it before looking at the magic would report the damage instead.
    const std::string notNpy(std::size_t(4) << 20, 'A');
    auto members = membersOf(dir, "big.npz", damagedAtTheEnd(dir, notNpy));
    expectNpzRejected(members, "big.npz[a]", "bad magic");
    // The same for a .npy whose header does not match the member's size.
    std::string lying = handNpy(floatDict("<f4", "(3,)"), std::string(std::size_t(4) << 20, 'B'));
    auto sized = membersOf(dir, "lying.npz", damagedAtTheEnd(dir, lying));
    expectNpzRejected(sized, "lying.npz[a]", "unexpected trailing data");
    // Control: undamaged, both are refused for the same reasons; and a damaged well-formed
    // member is caught by the CRC.
    const std::string good =
        handNpy(floatDict("<f4", "(1048576,)"), std::string(std::size_t(4) << 20, '\0'));
    auto damaged = membersOf(dir, "damaged.npz", damagedAtTheEnd(dir, good));
    ASSERT_FALSE(damaged.ok());
    EXPECT_EQ(damaged.error().find("bad magic"), std::string::npos) << damaged.error();
}

TEST(Npy, Int64ArrayHasNumpysLayout) {
    // numpy's format 1.0: magic, version, little-endian header length, a dict padded with
    // spaces and a newline to a multiple of 64 bytes, then the raw little-endian values.
    const std::vector<std::int64_t> values = {0, 1, -7, 1023, std::int64_t(1) << 40, -(1 << 23)};
    const std::string image = encodeNpyInt64({2, 3}, values);
    ASSERT_GE(image.size(), 10u);
    EXPECT_EQ(image.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t headerLength =
        static_cast<unsigned char>(image[8]) + 256u * static_cast<unsigned char>(image[9]);
    const std::size_t dataOffset = 10 + headerLength;
    EXPECT_EQ(dataOffset % 64, 0u);
    const std::string dict = image.substr(10, headerLength);
    EXPECT_EQ(dict.back(), '\n');
    EXPECT_NE(dict.find("'descr': '<i8'"), std::string::npos) << dict;
    EXPECT_NE(dict.find("'shape': (2, 3)"), std::string::npos) << dict;
    ASSERT_EQ(image.size(), dataOffset + values.size() * 8);
    for (std::size_t i = 0; i < values.size(); ++i) {
        std::uint64_t bits = 0;
        for (int b = 7; b >= 0; --b)
            bits = (bits << 8) | static_cast<unsigned char>(image[dataOffset + i * 8 + b]);
        EXPECT_EQ(static_cast<std::int64_t>(bits), values[i]) << i;
    }
}

TEST(Npy, UnicodeArrayRoundTripsUtf8WithTheLongestWidth) {
    // ASCII, a GPT-2 byte-level marker, CJK (3 bytes) and an emoji (4 bytes), and the empty
    // string: numpy's '<U' stores code points, so the width is the longest in code points.
    const std::vector<std::string> strings = {"the",
                                              "\xc4\xa0"
                                              "cat",
                                              "\xe6\xb3\xa8\xe6\x84\x8f", "\xf0\x9f\x98\x80", ""};
    const std::string image = encodeNpyUnicode(strings);
    EXPECT_NE(image.find("'descr': '<U4'"), std::string::npos);
    auto array = parseNpyStrings(image, "tokens.npy");
    ASSERT_TRUE(array) << array.error();
    EXPECT_EQ(array->shape, (std::vector<Index>{5}));
    EXPECT_EQ(array->values, strings);
}

TEST(Utf8, LossyDecodingReplacesEachBadByteAndKeepsTheRest) {
    // 0xff never starts a sequence; "\xe6\xb3" is a truncated 3-byte character; "\xc0\xaf" is an
    // overlong '/'; "\xed\xa0\x80" a surrogate: each of their bytes becomes U+FFFD.
    const std::u32string decoded = decodeUtf8Lossy("a\xff"
                                                   "b\xe6\xb3"
                                                   "c\xc0\xaf\xed\xa0\x80");
    EXPECT_EQ(decoded, U"a\ufffdb\ufffd\ufffdc\ufffd\ufffd\ufffd\ufffd\ufffd");
    // Every code point survives encode then decode.
    for (char32_t cp : {U'\0', U'\x7f', U'\x80', U'\x7ff', U'\x800', U'\xfffd', U'\xffff',
                        U'\x10000', U'\x10ffff'}) {
        std::string encoded;
        appendUtf8(encoded, cp);
        EXPECT_EQ(decodeUtf8Lossy(encoded), std::u32string(1, cp))
            << std::hex << static_cast<std::uint32_t>(cp);
    }
}

TEST(Npy, WritesNpzThatReadsBack) {
    TempDir dir{"attnlab_npy"};
    NpyArray a;
    a.shape = {2, 2};
    a.data = {1, 2, 3, 4};
    NpyArray b;
    b.shape = {3};
    b.data = {-1, 0, 1};
    const std::string path = dir.file("out.npz");
    ASSERT_FALSE(writeNpz(path, {{"a", a}, {"b", b}}, DType::Float64).has_value());
    auto arrays = readNpz(path);
    ASSERT_TRUE(arrays.ok()) << arrays.error();
    EXPECT_EQ(arrays->at("a").data, a.data);
    EXPECT_EQ(arrays->at("a").dtype, DType::Float64);
    EXPECT_EQ(arrays->at("b").shape, b.shape);
    EXPECT_EQ(dir.listing(), std::vector<std::string>{"out.npz"});
}

// Same input, same bytes: every zip header of an .npz dates its member 1980-01-01 00:00 (DOS
// time 0x0000, date 0x0021), as NumPy's savez does, never the time of writing. The headers are
// read from the bytes by the zip format's own layout (APPNOTE 4.3.7 and 4.3.12).
TEST(Npy, NpzMembersCarryNoWritingTime) {
    TempDir dir{"attnlab_npy"};
    NpyArray a;
    a.shape = {3};
    a.data = {1, 2, 3};
    const std::string path = dir.file("out.npz");
    ASSERT_FALSE(writeNpz(path, {{"a", a}, {"b", a}}, DType::Float32).has_value());
    std::ifstream in(path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    auto u16 = [&](std::size_t at) {
        return static_cast<unsigned>(static_cast<unsigned char>(bytes[at])) |
               static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 1])) << 8;
    };
    int local = 0, central = 0;
    for (std::size_t at = 0; at + 16 <= bytes.size(); ++at) {
        if (bytes.compare(at, 4, "PK\x03\x04") == 0) { // local header: time at 10, date at 12
            EXPECT_EQ(u16(at + 10), 0u);
            EXPECT_EQ(u16(at + 12), 0x21u);
            ++local;
        } else if (bytes.compare(at, 4, "PK\x01\x02") == 0) { // central: time 12, date 14
            EXPECT_EQ(u16(at + 12), 0u);
            EXPECT_EQ(u16(at + 14), 0x21u);
            ++central;
        }
    }
    EXPECT_EQ(local, 2);
    EXPECT_EQ(central, 2);
}

// ---- atomic writes ------------------------------------------------------------------------

TEST(Npy, FailedWriteLeavesNothingBehind) {
    TempDir dir{"attnlab_npy"};
    const auto status = writeFileAtomic(dir.file("no_such_dir/out.npy"), "data");
    ASSERT_TRUE(status.has_value());
    EXPECT_NE(status->message.find("out.npy"), std::string::npos) << status->message;
    EXPECT_TRUE(dir.listing().empty());
}

TEST(FileIo, StagedFilesCommitNothingWhenATargetIsAFolder) {
    TempDir dir{"attnlab_file_io"};
    ASSERT_FALSE(writeFileAtomic(dir.file("a.npy"), "old a").has_value());
    fs::create_directories(dir.file("folder"));
    {
        StagedFiles files;
        ASSERT_FALSE(files.stage(dir.file("a.npy"), "new a").has_value());
        ASSERT_FALSE(files.stage(dir.file("folder"), "new b").has_value());
        const Status committed = files.commit();
        ASSERT_TRUE(committed.has_value());
        EXPECT_NE(committed->message.find("folder"), std::string::npos) << committed->message;
        EXPECT_NE(committed->message.find("directory"), std::string::npos) << committed->message;
    }
    EXPECT_EQ(*readFile(dir.file("a.npy")), "old a");                        // not replaced
    EXPECT_EQ(dir.listing(), (std::vector<std::string>{"a.npy", "folder"})); // no temp left
    // The same target named twice is refused too, before any rename.
    StagedFiles twice;
    ASSERT_FALSE(twice.stage(dir.file("a.npy"), "1").has_value());
    ASSERT_FALSE(twice.stage(dir.file("a.npy"), "2").has_value());
    EXPECT_TRUE(twice.commit().has_value());
    EXPECT_EQ(*readFile(dir.file("a.npy")), "old a");
}

TEST(FileIo, ReadFileRefusesAFileOverTheBoundBeforeReadingIt) {
    TempDir dir{"attnlab_file_io"};
    const std::string path = dir.file("big.bin");
    { std::ofstream(path) << "x"; }
    fs::resize_file(path, std::uintmax_t(1) << 40); // 1 TB, sparse: nothing is written
    const auto read = readFile(path, 1 << 20);
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().find("big.bin"), std::string::npos) << read.error();
    EXPECT_NE(read.error().find("at most 1048576"), std::string::npos) << read.error();
}

TEST(Npy, AtomicWriteReplacesAnExistingFile) {
    TempDir dir{"attnlab_npy"};
    const std::string path = dir.file("f.txt");
    writeBytes(path, "old contents that are longer");
    ASSERT_FALSE(writeFileAtomic(path, "new").has_value());
    auto back = readFile(path);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, "new");
    EXPECT_EQ(dir.listing(), std::vector<std::string>{"f.txt"});
}

// ---- tensor views -------------------------------------------------------------------------

TEST(Npy, ToTensor4MapsRanksToBatchHeadSeqDim) {
    NpyArray a;
    a.shape = {3, 2};
    a.data = {0, 1, 2, 3, 4, 5};
    Tensor4 t2 = toTensor4(a);
    EXPECT_EQ(t2.batch, 1);
    EXPECT_EQ(t2.heads, 1);
    EXPECT_EQ(t2.seq, 3);
    EXPECT_EQ(t2.dim, 2);
    EXPECT_EQ(t2(0, 0, 2, 1), 5.0f);

    a.shape = {2, 3, 1};
    Tensor4 t3 = toTensor4(a);
    EXPECT_EQ(t3.batch, 2);
    EXPECT_EQ(t3.heads, 1);
    EXPECT_EQ(t3.seq, 3);
    EXPECT_EQ(t3(1, 0, 0, 0), 3.0f); // [b=1, s=0] is element 3 of [2, 3, 1]

    a.shape = {1, 2, 3, 1};
    Tensor4 t4 = toTensor4(a);
    EXPECT_EQ(t4.heads, 2);
    EXPECT_EQ(t4(0, 1, 2, 0), 5.0f);

    for (Index rank : {2, 3, 4}) {
        const Tensor4 source = rank == 2 ? t2 : rank == 3 ? t3 : t4;
        const NpyArray back = fromTensor4(source, rank, DType::Float64);
        EXPECT_EQ(back.rank(), rank);
        EXPECT_EQ(back.dtype, DType::Float64);
        EXPECT_EQ(toTensor4(back).data, source.data);
    }
    EXPECT_EQ(fromTensor4(t3, 3, DType::Float32).shape, (std::vector<Index>{2, 3, 1}));
    EXPECT_THROW((void)fromTensor4(t4, 3, DType::Float32), InvalidArgument); // H == 2
    EXPECT_THROW((void)fromTensor4(t3, 2, DType::Float32), InvalidArgument); // B == 2
}

} // namespace
} // namespace attnlab

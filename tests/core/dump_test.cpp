// Model dumps: every accepted shape and token source, the distribution warning, each bad
// input, and the aggregates against hand-computed or explicit-loop references. Every dump is
// written by the test itself: float arrays through writeNpy/writeNpz, float16 and numpy
// '<U' token arrays byte by byte, and zip archives by a minimal stored-zip writer here.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/io/dump.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/cell.h"
#include "attnlab/lab/dump_experiment.h"
#include "reference.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

void writeBytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A .npy image by hand, as numpy.lib.format writes it (version 1.0, 64-byte aligned).
std::string handNpy(const std::string& descr, const std::string& shape, const std::string& data) {
    std::string header =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    const std::size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header.push_back('\n');
    std::string out("\x93NUMPY\x01\x00", 8);
    out.push_back(static_cast<char>(header.size() & 0xff));
    out.push_back(static_cast<char>(header.size() >> 8));
    return out + header + data;
}

/// numpy's np.array(tokens) image: '<U n', each item n UTF-32LE code units, NUL padded.
std::string unicodeNpy(const std::vector<std::u32string>& tokens) {
    std::size_t width = 1;
    for (const auto& t : tokens)
        width = std::max(width, t.size());
    std::string data;
    for (const auto& t : tokens)
        for (std::size_t c = 0; c < width; ++c) {
            const std::uint32_t cp = c < t.size() ? static_cast<std::uint32_t>(t[c]) : 0;
            for (int b = 0; b < 4; ++b)
                data.push_back(static_cast<char>((cp >> (8 * b)) & 0xff));
        }
    return handNpy("<U" + std::to_string(width), "(" + std::to_string(tokens.size()) + ",)", data);
}

std::uint32_t crc32(const std::string& bytes) {
    std::uint32_t crc = 0xffffffffu;
    for (unsigned char byte : bytes) {
        crc ^= byte;
        for (int k = 0; k < 8; ++k)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

void put16(std::string& out, std::uint32_t v) {
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>((v >> 8) & 0xff));
}
void put32(std::string& out, std::uint32_t v) {
    put16(out, v & 0xffff);
    put16(out, v >> 16);
}

/// A minimal stored (uncompressed) zip, the layout np.savez writes: name -> bytes.
std::string storedZip(const std::map<std::string, std::string>& members) {
    std::string out;
    std::string central;
    for (const auto& [name, data] : members) {
        const auto offset = static_cast<std::uint32_t>(out.size());
        const std::uint32_t crc = crc32(data);
        const auto size = static_cast<std::uint32_t>(data.size());
        put32(out, 0x04034b50);
        put16(out, 20);
        put16(out, 0);
        put16(out, 0); // stored
        put16(out, 0);
        put16(out, 0x21);
        put32(out, crc);
        put32(out, size);
        put32(out, size);
        put16(out, static_cast<std::uint32_t>(name.size()));
        put16(out, 0);
        out += name + data;
        put32(central, 0x02014b50);
        put16(central, 20);
        put16(central, 20);
        put16(central, 0);
        put16(central, 0);
        put16(central, 0);
        put16(central, 0x21);
        put32(central, crc);
        put32(central, size);
        put32(central, size);
        put16(central, static_cast<std::uint32_t>(name.size()));
        put16(central, 0);
        put16(central, 0);
        put16(central, 0);
        put16(central, 0);
        put32(central, 0);
        put32(central, offset);
        central += name;
    }
    const auto centralOffset = static_cast<std::uint32_t>(out.size());
    out += central;
    put32(out, 0x06054b50);
    put16(out, 0);
    put16(out, 0);
    put16(out, static_cast<std::uint32_t>(members.size()));
    put16(out, static_cast<std::uint32_t>(members.size()));
    put32(out, static_cast<std::uint32_t>(central.size()));
    put32(out, centralOffset);
    put16(out, 0);
    return out;
}

/// rows x cols random distributions (each row positive, summing to 1 in double).
std::vector<float> randomRows(Index rows, Index cols, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(0.05, 1.0);
    std::vector<float> out(static_cast<std::size_t>(rows * cols));
    for (Index r = 0; r < rows; ++r) {
        std::vector<double> row(static_cast<std::size_t>(cols));
        double sum = 0;
        for (auto& x : row)
            sum += (x = dist(gen));
        for (Index j = 0; j < cols; ++j)
            out[static_cast<std::size_t>(r * cols + j)] =
                static_cast<float>(row[static_cast<std::size_t>(j)] / sum);
    }
    return out;
}

template <typename Values> NpyArray arrayOf(std::vector<Index> shape, const Values& data) {
    NpyArray a;
    a.shape = std::move(shape);
    a.data.assign(data.begin(), data.end());
    return a;
}

/// Row sum and minimum by plain loops (Eigen's AVX-512 reductions trip GCC 12's
/// -Wmaybe-uninitialized under -Werror).
template <typename M> double rowSumOf(const M& m, Index i) {
    double sum = 0;
    for (Index j = 0; j < m.cols(); ++j)
        sum += static_cast<double>(m(i, j));
    return sum;
}
template <typename M> double rowMinOf(const M& m, Index i) {
    double low = m(i, 0);
    for (Index j = 1; j < m.cols(); ++j)
        low = std::min(low, static_cast<double>(m(i, j)));
    return low;
}

Index product(const std::vector<Index>& shape) {
    Index n = 1;
    for (Index e : shape)
        n *= e;
    return n;
}

// ---- accepted shapes ----------------------------------------------------------------------

TEST(Dump, ReadsEveryRankFromNpyAndNpz) {
    TempDir dir{"attnlab_dump"};
    const std::vector<std::vector<Index>> shapes = {
        {5, 5}, {3, 5, 5}, {2, 3, 5, 5}, {2, 2, 3, 5, 5}};
    for (const auto& shape : shapes) {
        const std::vector<float> values = randomRows(product(shape) / 5, 5, 7);
        const NpyArray array = arrayOf(shape, values);
        const std::string npy = dir.file("w" + std::to_string(shape.size()) + ".npy");
        const std::string npz = dir.file("w" + std::to_string(shape.size()) + ".npz");
        ASSERT_FALSE(writeNpy(npy, array, DType::Float32));
        ASSERT_FALSE(writeNpz(npz, {{"attentions", array}}, DType::Float64));
        for (const std::string& path : {npy, npz}) {
            SCOPED_TRACE(path);
            auto dump = loadAttentionDump(path);
            ASSERT_TRUE(dump.ok()) << dump.error();
            const std::vector<Index> full = [&] {
                std::vector<Index> f(5 - shape.size(), 1);
                f.insert(f.end(), shape.begin(), shape.end());
                return f;
            }();
            EXPECT_EQ(dump->storedRank, static_cast<Index>(shape.size()));
            EXPECT_EQ(dump->batch, full[0]);
            EXPECT_EQ(dump->layers, full[1]);
            EXPECT_EQ(dump->heads, full[2]);
            EXPECT_EQ(dump->sq, 5);
            EXPECT_EQ(dump->sk, 5);
            EXPECT_TRUE(dump->warnings.empty());
            // Element (b, l, h, i, j) sits at the C-order index of the 5-D shape.
            for (Index b = 0; b < full[0]; ++b)
                for (Index l = 0; l < full[1]; ++l)
                    for (Index h = 0; h < full[2]; ++h)
                        for (Index i = 0; i < 5; ++i)
                            for (Index j = 0; j < 5; ++j) {
                                const Index flat =
                                    (((b * full[1] + l) * full[2] + h) * 5 + i) * 5 + j;
                                ASSERT_FLOAT_EQ(dump->head(b, l, h)(i, j),
                                                values[static_cast<std::size_t>(flat)]);
                            }
            EXPECT_EQ(dump->keyTokens(0), (std::vector<std::string>{"0", "1", "2", "3", "4"}));
        }
    }
}

TEST(Dump, WidensFloat16WrittenByHand) {
    TempDir dir{"attnlab_dump"};
    // [[0.5, 0.5], [0.25, 0.75]] as IEEE binary16: 0x3800, 0x3800, 0x3400, 0x3a00.
    const std::string data("\x00\x38\x00\x38\x00\x34\x00\x3a", 8);
    const std::string path = dir.file("half.npy");
    writeBytes(path, handNpy("<f2", "(2, 2)", data));
    auto dump = loadAttentionDump(path);
    ASSERT_TRUE(dump.ok()) << dump.error();
    EXPECT_EQ(dump->dtype, DType::Float16);
    EXPECT_EQ(dump->head(0, 0, 0)(0, 0), 0.5f);
    EXPECT_EQ(dump->head(0, 0, 0)(1, 0), 0.25f);
    EXPECT_EQ(dump->head(0, 0, 0)(1, 1), 0.75f);
    EXPECT_TRUE(dump->warnings.empty());
}

TEST(Dump, WidensBFloat16AndAllowsItsRounding) {
    TempDir dir{"attnlab_dump"};
    // ml_dtypes saves bfloat16 as '<V2'. [[0.5, 0.5], [0.25, 0.75]]: 0x3f00, 0x3f00, 0x3e80,
    // 0x3f40. A row [0.333984375, 0.66796875] (bfloat16 neighbours of 1/3 and 2/3: 0x3eab and
    // 0x3f2b) sums to 1.00195: off by more than 1e-3, but within bfloat16's rounding (2^-8).
    const std::string data("\x00\x3f\x00\x3f\x80\x3e\x40\x3f\xab\x3e\x2b\x3f", 12);
    const std::string path = dir.file("bf16.npy");
    // Rank 2 must be square: give it as [B, L, H, Sq, Sk] = [1, 1, 1, 3, 2].
    writeBytes(path, handNpy("<V2", "(1, 1, 1, 3, 2)", data));
    auto dump = loadAttentionDump(path);
    ASSERT_TRUE(dump.ok()) << dump.error();
    EXPECT_EQ(dump->dtype, DType::BFloat16);
    EXPECT_EQ(dump->head(0, 0, 0)(1, 0), 0.25f);
    EXPECT_EQ(dump->head(0, 0, 0)(1, 1), 0.75f);
    EXPECT_TRUE(dump->warnings.empty()) << dump->warnings[0];
    // The same sums in float32 are reported.
    ASSERT_FALSE(writeNpy(path, arrayOf({1, 1, 1, 3, 2}, dump->weights), DType::Float32));
    auto wide = loadAttentionDump(path);
    ASSERT_TRUE(wide.ok());
    EXPECT_EQ(wide->warnings.size(), 1u);
}

TEST(Dump, FindsTheOnlyFloatArrayWhenNotNamedAttentions) {
    TempDir dir{"attnlab_dump"};
    const std::string path = dir.file("other.npz");
    ASSERT_FALSE(
        writeNpz(path, {{"weights", arrayOf({2, 3, 3}, randomRows(6, 3, 1))}}, DType::Float32));
    auto dump = loadAttentionDump(path);
    ASSERT_TRUE(dump.ok()) << dump.error();
    EXPECT_EQ(dump->heads, 2);
    // "attention" (singular) is accepted too, and wins over other arrays.
    const std::string both = dir.file("both.npz");
    ASSERT_FALSE(writeNpz(both,
                          {{"attention", arrayOf({3, 3}, randomRows(3, 3, 2))},
                           {"extra", arrayOf({4, 4}, randomRows(4, 4, 3))}},
                          DType::Float32));
    auto second = loadAttentionDump(both);
    ASSERT_TRUE(second.ok()) << second.error();
    EXPECT_EQ(second->sq, 3);
}

// ---- tokens -------------------------------------------------------------------------------

TEST(Dump, TokensFromAUnicodeArrayInTheArchive) {
    TempDir dir{"attnlab_dump"};
    const std::string path = dir.file("tok.npz");
    const NpyArray weights = arrayOf({3, 3}, randomRows(3, 3, 4));
    // "le", "chat" with an accented and a CJK token: U+00E9 and U+732B.
    writeBytes(path, storedZip({{"attentions.npy", encodeNpy(weights, DType::Float32)},
                                {"tokens.npy", unicodeNpy({U"l\u00e9", U"chat", U"\u732b"})}}));
    auto dump = loadAttentionDump(path);
    ASSERT_TRUE(dump.ok()) << dump.error();
    EXPECT_EQ(dump->keyTokens(0), (std::vector<std::string>{"l\xc3\xa9", "chat", "\xe7\x8c\xab"}));
    EXPECT_EQ(dump->queryTokens(0), dump->keyTokens(0));
}

TEST(Dump, TokensMemberOfAHundredMillionEmptyStringsIsRefused) {
    // The 494-byte npz whose '<U0' x 10^8 tokens asked for 3 GB of strings.
    TempDir dir{"attnlab_dump"};
    const std::string path = dir.file("tok0.npz");
    const NpyArray weights = arrayOf({3, 3}, randomRows(3, 3, 4));
    writeBytes(path, storedZip({{"attentions.npy", encodeNpy(weights, DType::Float32)},
                                {"tokens.npy", handNpy("<U0", "(100000000,)", "")}}));
    auto dump = loadAttentionDump(path);
    ASSERT_FALSE(dump.ok());
    EXPECT_NE(dump.error().find("tok0.npz[tokens]"), std::string::npos) << dump.error();
    EXPECT_NE(dump.error().find("width 0"), std::string::npos) << dump.error();
    // Wide enough but more than the token limit: refused by count before decoding.
    writeBytes(path, storedZip({{"attentions.npy", encodeNpy(weights, DType::Float32)},
                                {"tokens.npy",
                                 handNpy("<U1", "(2000000,)", std::string(8000000, '\0'))}}));
    auto many = loadAttentionDump(path);
    ASSERT_FALSE(many.ok());
    EXPECT_NE(many.error().find("at most"), std::string::npos) << many.error();
}

TEST(Dump, ThousandsOfTinyHeadsAreRefusedWithTheLimit) {
    // 16 KB holding 4000 one-cell heads took 24 s in the heads view.
    TempDir dir{"attnlab_dump"};
    for (const auto& shape : {std::vector<Index>{1, 4000, 1, 1}, std::vector<Index>{2000, 2, 1, 1},
                              std::vector<Index>{200, 100, 1, 1}}) {
        Index count = 1;
        for (Index extent : shape)
            count *= extent;
        const NpyArray heads =
            arrayOf(shape, std::vector<float>(static_cast<std::size_t>(count), 1));
        const std::string path = dir.file("heads.npy");
        ASSERT_FALSE(writeNpy(path, heads, DType::Float32).has_value());
        auto dump = loadAttentionDump(path);
        ASSERT_FALSE(dump.ok()) << shape[0] << " x " << shape[1];
        EXPECT_NE(dump.error().find("heads in all are shown"), std::string::npos) << dump.error();
    }
    // A real model's size passes: 126 layers of 128 heads (Llama 3 405B), here of 1 x 1.
    const NpyArray big = arrayOf({126, 128, 1, 1}, std::vector<float>(126 * 128, 1));
    ASSERT_FALSE(writeNpy(dir.file("big.npy"), big, DType::Float32).has_value());
    auto ok = loadAttentionDump(dir.file("big.npy"));
    ASSERT_TRUE(ok.ok()) << ok.error();
    EXPECT_EQ(ok->layers * ok->heads, 126 * 128);
}

TEST(Dump, TokensFromJsonAndTextFiles) {
    TempDir dir{"attnlab_dump"};
    const std::string path = dir.file("w.npy");
    ASSERT_FALSE(writeNpy(path, arrayOf({3, 3}, randomRows(3, 3, 5)), DType::Float32));
    writeBytes(dir.file("t.json"), R"(["The", " cat", 42])");
    writeBytes(dir.file("t.txt"), "The\r\n cat\nsat\n"); // a final newline adds no token
    auto fromJson = loadAttentionDump(path, dir.file("t.json"));
    ASSERT_TRUE(fromJson.ok()) << fromJson.error();
    EXPECT_EQ(fromJson->keyTokens(0), (std::vector<std::string>{"The", " cat", "42"}));
    auto fromText = loadAttentionDump(path, dir.file("t.txt"));
    ASSERT_TRUE(fromText.ok()) << fromText.error();
    EXPECT_EQ(fromText->keyTokens(0), (std::vector<std::string>{"The", " cat", "sat"}));

    // A tokens file replaces the archive's tokens.
    const std::string npz = dir.file("w.npz");
    writeBytes(npz, storedZip({{"attentions.npy",
                                encodeNpy(arrayOf({3, 3}, randomRows(3, 3, 5)), DType::Float32)},
                               {"tokens.npy", unicodeNpy({U"a", U"b", U"c"})}}));
    auto replaced = loadAttentionDump(npz, dir.file("t.txt"));
    ASSERT_TRUE(replaced.ok()) << replaced.error();
    EXPECT_EQ(replaced->keyTokens(0)[2], "sat");
}

TEST(Dump, TokenCountMismatchNamesTheFileAndBothCounts) {
    TempDir dir{"attnlab_dump"};
    const std::string path = dir.file("w.npy");
    ASSERT_FALSE(writeNpy(path, arrayOf({4, 4}, randomRows(4, 4, 6)), DType::Float32));
    writeBytes(dir.file("t.txt"), "a\nb\nc\n");
    auto dump = loadAttentionDump(path, dir.file("t.txt"));
    ASSERT_FALSE(dump.ok());
    EXPECT_NE(dump.error().find("t.txt"), std::string::npos) << dump.error();
    EXPECT_NE(dump.error().find("3 tokens"), std::string::npos) << dump.error();
    EXPECT_NE(dump.error().find("S = 4"), std::string::npos) << dump.error();

    const std::string npz = dir.file("w.npz");
    writeBytes(npz, storedZip({{"attentions.npy",
                                encodeNpy(arrayOf({4, 4}, randomRows(4, 4, 6)), DType::Float32)},
                               {"tokens.npy", unicodeNpy({U"a", U"b"})}}));
    auto inArchive = loadAttentionDump(npz);
    ASSERT_FALSE(inArchive.ok());
    EXPECT_NE(inArchive.error().find("[tokens]"), std::string::npos) << inArchive.error();
}

TEST(Dump, BadTokenFilesAreErrors) {
    TempDir dir{"attnlab_dump"};
    writeBytes(dir.file("t.json"), R"({"tokens": ["a"]})");
    EXPECT_FALSE(loadTokens(dir.file("t.json")).ok());
    writeBytes(dir.file("u.json"), R"(["a", [1]])");
    EXPECT_FALSE(loadTokens(dir.file("u.json")).ok());
    EXPECT_FALSE(loadTokens(dir.file("missing.txt")).ok());
}

// ---- distributions ------------------------------------------------------------------------

TEST(Dump, RowsThatAreNotDistributionsWarnWithCountAndWorstRow) {
    TempDir dir{"attnlab_dump"};
    // [L=2, H=1, S=3, S=3]: layer 0 row 1 sums to 1.01, layer 1 row 2 has a negative weight
    // and sums to 0.5 (the worst), everything else is a distribution.
    std::vector<float> w = randomRows(6, 3, 8);
    w[1 * 3 + 0] += 0.01f;
    w[(3 + 2) * 3 + 0] = -0.2f;
    w[(3 + 2) * 3 + 1] = 0.3f;
    w[(3 + 2) * 3 + 2] = 0.4f;
    const std::string path = dir.file("bad.npy");
    ASSERT_FALSE(writeNpy(path, arrayOf({2, 1, 3, 3}, w), DType::Float32));
    auto dump = loadAttentionDump(path);
    ASSERT_TRUE(dump.ok()) << dump.error(); // a warning, never a refusal
    ASSERT_EQ(dump->warnings.size(), 1u);
    const std::string& warning = dump->warnings[0];
    EXPECT_NE(warning.find("2 of 6 rows"), std::string::npos) << warning;
    EXPECT_NE(warning.find("layer 1, head 0, query 2"), std::string::npos) << warning;
    EXPECT_NE(warning.find("bad.npy"), std::string::npos) << warning;

    // A sum off by less than 1e-3 is fine.
    std::vector<float> close = randomRows(3, 3, 9);
    close[0] += 5e-4f;
    ASSERT_FALSE(writeNpy(path, arrayOf({3, 3}, close), DType::Float32));
    auto fine = loadAttentionDump(path);
    ASSERT_TRUE(fine.ok());
    EXPECT_TRUE(fine->warnings.empty());
}

// ---- errors -------------------------------------------------------------------------------

TEST(Dump, CorruptArchiveIsAnErrorNamingTheFile) {
    TempDir dir{"attnlab_dump"};
    const std::string path = dir.file("w.npz");
    ASSERT_FALSE(
        writeNpz(path, {{"attentions", arrayOf({4, 4}, randomRows(4, 4, 10))}}, DType::Float32));
    std::string bytes = readBytes(path);
    bytes[bytes.size() / 3] ^= 0x5a; // inside the member's data: its CRC no longer matches
    writeBytes(path, bytes);
    auto flipped = loadAttentionDump(path);
    ASSERT_FALSE(flipped.ok());
    EXPECT_NE(flipped.error().find(path), std::string::npos) << flipped.error();

    writeBytes(path, bytes.substr(0, bytes.size() / 2)); // truncated: no central directory
    auto truncated = loadAttentionDump(path);
    ASSERT_FALSE(truncated.ok());
    EXPECT_NE(truncated.error().find(path), std::string::npos) << truncated.error();

    writeBytes(path, "PK this is not a zip archive");
    EXPECT_FALSE(loadAttentionDump(path).ok());
    EXPECT_FALSE(loadAttentionDump(dir.file("missing.npz")).ok());
}

TEST(Dump, InconsistentShapesAreErrors) {
    TempDir dir{"attnlab_dump"};
    const std::string path = dir.file("w.npy");
    ASSERT_FALSE(writeNpy(path, arrayOf({3, 4}, randomRows(3, 4, 11)), DType::Float32));
    auto nonSquare = loadAttentionDump(path);
    ASSERT_FALSE(nonSquare.ok());
    EXPECT_NE(nonSquare.error().find("square"), std::string::npos) << nonSquare.error();

    ASSERT_FALSE(writeNpy(path, arrayOf({1, 1, 1, 1, 2, 2}, randomRows(2, 2, 12)), DType::Float32));
    EXPECT_FALSE(loadAttentionDump(path).ok()); // rank 6

    ASSERT_FALSE(writeNpy(path, arrayOf({4}, randomRows(1, 4, 13)), DType::Float32));
    EXPECT_FALSE(loadAttentionDump(path).ok()); // rank 1

    ASSERT_FALSE(writeNpy(path, arrayOf({2, 0, 0}, std::vector<float>{}), DType::Float32));
    EXPECT_FALSE(loadAttentionDump(path).ok()); // empty

    const std::string npz = dir.file("two.npz");
    ASSERT_FALSE(writeNpz(npz,
                          {{"a", arrayOf({3, 3}, randomRows(3, 3, 14))},
                           {"b", arrayOf({3, 3}, randomRows(3, 3, 15))}},
                          DType::Float32));
    auto ambiguous = loadAttentionDump(npz);
    ASSERT_FALSE(ambiguous.ok());
    EXPECT_NE(ambiguous.error().find("attentions"), std::string::npos) << ambiguous.error();
}

TEST(Dump, IntegerDtypeAndNaNAreRefused) {
    TempDir dir{"attnlab_dump"};
    const std::string path = dir.file("int.npy");
    writeBytes(path, handNpy("<i4", "(2, 2)", std::string(16, '\0')));
    auto integer = loadAttentionDump(path);
    ASSERT_FALSE(integer.ok());
    EXPECT_NE(integer.error().find("int32"), std::string::npos) << integer.error();
    EXPECT_NE(integer.error().find(path), std::string::npos) << integer.error();

    const std::string npz = dir.file("int.npz");
    writeBytes(npz, storedZip({{"attentions.npy", handNpy("<i8", "(2, 2)", std::string(32, 0))}}));
    auto inArchive = loadAttentionDump(npz);
    ASSERT_FALSE(inArchive.ok());
    EXPECT_NE(inArchive.error().find("int64"), std::string::npos) << inArchive.error();

    std::vector<float> w = randomRows(3, 3, 16);
    w[4] = std::nanf("");
    ASSERT_FALSE(writeNpy(path, arrayOf({3, 3}, w), DType::Float32));
    auto nan = loadAttentionDump(path);
    ASSERT_FALSE(nan.ok());
    EXPECT_NE(nan.error().find("NaN"), std::string::npos) << nan.error();
}

// ---- aggregates ---------------------------------------------------------------------------

AttentionDump makeDump(Index b, Index l, Index h, Index s, std::uint32_t seed) {
    AttentionDump dump;
    dump.batch = b;
    dump.layers = l;
    dump.heads = h;
    dump.sq = dump.sk = s;
    const std::vector<float> rows = randomRows(b * l * h * s, s, seed);
    dump.weights.assign(rows.begin(), rows.end());
    return dump;
}

TEST(Dump, MeansOverHeadsAndLayersEqualExplicitSums) {
    const AttentionDump dump = makeDump(2, 3, 4, 5, 17);
    auto at = [&](Index b, Index l, Index h, Index i, Index j) {
        return static_cast<double>(
            dump.weights[static_cast<std::size_t>((((b * 3 + l) * 4 + h) * 5 + i) * 5 + j)]);
    };
    const Matrix heads = meanOverHeads(dump, 1, 2);
    const Matrix layers = meanOverLayers(dump, 1, 3);
    const Matrix all = meanOverLayers(dump, 1);
    for (Index i = 0; i < 5; ++i)
        for (Index j = 0; j < 5; ++j) {
            double sumHeads = 0, sumLayers = 0, sumAll = 0;
            for (Index h = 0; h < 4; ++h)
                sumHeads += at(1, 2, h, i, j);
            for (Index l = 0; l < 3; ++l) {
                sumLayers += at(1, l, 3, i, j);
                for (Index h = 0; h < 4; ++h)
                    sumAll += at(1, l, h, i, j);
            }
            EXPECT_NEAR(heads(i, j), sumHeads / 4, 1e-6);
            EXPECT_NEAR(layers(i, j), sumLayers / 3, 1e-6);
            EXPECT_NEAR(all(i, j), sumAll / 12, 1e-6);
        }
}

TEST(Dump, RolloutOfTwoLayersByHand) {
    // Layer 0 heads [[1,0],[1,0]] and [[1,0],[0,1]]: mean W0 = [[1,0],[.5,.5]].
    // Layer 1 heads both [[.5,.5],[0,1]] = W1.
    // A0 = .5 W0 + .5 I = [[1,0],[.25,.75]], A1 = [[.75,.25],[0,1]] (rows already sum to 1).
    // R1 = A1 A0 = [[.75 + .0625, .1875], [.25, .75]] = [[.8125, .1875], [.25, .75]].
    AttentionDump dump;
    dump.batch = 1;
    dump.layers = 2;
    dump.heads = 2;
    dump.sq = dump.sk = 2;
    dump.weights = {1, 0, 1, 0, /**/ 1, 0, 0, 1, /**/ .5f, .5f, 0, 1, /**/ .5f, .5f, 0, 1};
    const Matrix r0 = attentionRollout(dump, 0, 0);
    const Matrix r1 = attentionRollout(dump, 0);
    EXPECT_NEAR(r0(0, 0), 1.0, 1e-6);
    EXPECT_NEAR(r0(0, 1), 0.0, 1e-6);
    EXPECT_NEAR(r0(1, 0), 0.25, 1e-6);
    EXPECT_NEAR(r0(1, 1), 0.75, 1e-6);
    EXPECT_NEAR(r1(0, 0), 0.8125, 1e-6);
    EXPECT_NEAR(r1(0, 1), 0.1875, 1e-6);
    EXPECT_NEAR(r1(1, 0), 0.25, 1e-6);
    EXPECT_NEAR(r1(1, 1), 0.75, 1e-6);
}

TEST(Dump, RolloutRowsStayDistributionsAndNeedSquareWeights) {
    const AttentionDump dump = makeDump(1, 6, 3, 7, 18);
    const Matrix r = attentionRollout(dump, 0);
    for (Index i = 0; i < 7; ++i) {
        EXPECT_NEAR(rowSumOf(r, i), 1.0, 1e-5);
        EXPECT_GE(rowMinOf(r, i), 0.0);
    }
    AttentionDump wide = makeDump(1, 1, 1, 3, 19);
    wide.sk = 4;
    const std::vector<float> rows = randomRows(3, 4, 19);
    wide.weights.assign(rows.begin(), rows.end());
    EXPECT_THROW(attentionRollout(wide, 0), InvalidArgument);
}

TEST(Dump, StatisticsTableMatchesHeadStatsAndAnalyticHeads) {
    const Index s = 6;
    AttentionDump dump = makeDump(1, 2, 3, s, 20);
    // Layer 1 head 0: uniform rows; layer 1 head 1: every query on the first token.
    for (Index i = 0; i < s; ++i)
        for (Index j = 0; j < s; ++j) {
            dump.weights[static_cast<std::size_t>(((1 * 3 + 0) * s + i) * s + j)] = 1.0f / s;
            dump.weights[static_cast<std::size_t>(((1 * 3 + 1) * s + i) * s + j)] = j == 0;
        }
    const auto table = headStatisticsTable(dump, 0, 2);
    ASSERT_EQ(table.size(), 6u);
    for (const HeadSummary& row : table) {
        const HeadStats stats = headStats(dump.head(0, row.layer, row.head), MaskSpec{}, 0);
        EXPECT_DOUBLE_EQ(row.meanEntropy, stats.meanEntropy);
        double distance = 0, first = 0;
        for (Index i = 0; i < s; ++i) {
            distance += stats.meanDistance[static_cast<std::size_t>(i)];
            first += stats.firstTokenWeight[static_cast<std::size_t>(i)];
        }
        EXPECT_NEAR(row.meanDistance, distance / s, 1e-12);
        EXPECT_NEAR(row.firstTokenMass, first / s, 1e-12);
    }
    const HeadSummary& uniform = table[3];
    const HeadSummary& sink = table[4];
    ASSERT_EQ(uniform.layer, 1);
    ASSERT_EQ(uniform.head, 0);
    EXPECT_NEAR(uniform.meanEntropy, std::log(static_cast<double>(s)), 1e-6);
    EXPECT_NEAR(uniform.firstTokenMass, 1.0 / s, 1e-6);
    double expectedDistance = 0; // mean over i of mean over j of |i - j|
    for (Index i = 0; i < s; ++i)
        for (Index j = 0; j < s; ++j)
            expectedDistance += std::abs(static_cast<double>(i - j)) / (s * s);
    EXPECT_NEAR(uniform.meanDistance, expectedDistance, 1e-6);
    EXPECT_NEAR(sink.meanEntropy, 0.0, 1e-12);
    EXPECT_NEAR(sink.firstTokenMass, 1.0, 1e-12);
    EXPECT_NEAR(sink.meanDistance, (s - 1) / 2.0, 1e-12); // mean of i over 0..S-1
}

TEST(Dump, ExperimentOfOneLayerCarriesWeightsStatsAndShapesOnly) {
    AttentionDump dump = makeDump(2, 3, 4, 5, 21);
    dump.source = "/some/where/model.npz";
    const Experiment ex = dumpExperiment(dump, 1, 2);
    EXPECT_EQ(ex.headCount(), 4);
    EXPECT_EQ(ex.kvHeadCount(), 4);
    EXPECT_EQ(ex.sq(), 5);
    EXPECT_EQ(ex.sk(), 5);
    EXPECT_TRUE(ex.qkv.q.empty());
    EXPECT_TRUE(ex.qkv.k.empty());
    ASSERT_EQ(ex.stats.size(), 4u);
    ASSERT_EQ(ex.queryTokens.size(), 5u);
    for (Index h = 0; h < 4; ++h) {
        EXPECT_MATRIX_NEAR(Matrix(std::as_const(ex.attention.weights).head(0, h)),
                           Matrix(dump.head(1, 2, h)), 0.0);
        EXPECT_DOUBLE_EQ(ex.stats[static_cast<std::size_t>(h)].meanEntropy,
                         headStats(dump.head(1, 2, h), MaskSpec{}, 0).meanEntropy);
    }
    // The dump is its own source: named by the file, layer and batch, no invented Session.
    EXPECT_EQ(ex.source.kind, ExperimentSource::Kind::AttentionDump);
    EXPECT_NE(ex.source.name.find("model.npz"), std::string::npos);
    EXPECT_EQ(ex.source.layer, 2);
    EXPECT_EQ(ex.source.batch, 1);
    EXPECT_NE(ex.source.describe().find("layer 2"), std::string::npos);
    EXPECT_TRUE(ex.session.text == Session{}.text); // nothing written into a session
    EXPECT_THROW(dumpExperiment(dump, 2, 0), InvalidArgument);
}

// ---- Q/K/V dumps --------------------------------------------------------------------------

NpyArray tensorArray(const Tensor4& t, std::vector<Index> shape) {
    return arrayOf(std::move(shape), t.data);
}

TEST(Dump, QkvLayerUnderAnySpecMatchesTheReference) {
    TempDir dir{"attnlab_dump"};
    const Index layers = 2, heads = 4, kvHeads = 2, s = 6, d = 4;
    // Tensor4 (b = layer) has the same memory layout as [L, H, S, D].
    const Tensor4 q = ref::randomTensor(layers, heads, s, d, 30);
    const Tensor4 k = ref::randomTensor(layers, kvHeads, s, d, 31);
    const Tensor4 v = ref::randomTensor(layers, kvHeads, s, d, 32);
    const std::string path = dir.file("qkv.npz");
    writeBytes(
        path,
        storedZip({{"q.npy", encodeNpy(tensorArray(q, {layers, heads, s, d}), DType::Float32)},
                   {"k.npy", encodeNpy(tensorArray(k, {layers, kvHeads, s, d}), DType::Float32)},
                   {"v.npy", encodeNpy(tensorArray(v, {layers, kvHeads, s, d}), DType::Float32)},
                   {"tokens.npy", unicodeNpy({U"a", U"b", U"c", U"d", U"e", U"f"})}}));
    auto dump = loadQkvDump(path);
    ASSERT_TRUE(dump.ok()) << dump.error();
    EXPECT_EQ(dump->heads, heads);
    EXPECT_EQ(dump->kvHeads, kvHeads);

    QkvApply apply;
    apply.spec.mask.causalWindow = 2;
    const Experiment ex = applyToQkvLayer(*dump, 1, apply);
    EXPECT_EQ(ex.headCount(), heads);
    EXPECT_EQ(ex.keyTokens[5], "f");
    for (Index h = 0; h < heads; ++h) {
        const auto expected =
            ref::attention(q.head(1, h), k.head(1, h / 2), v.head(1, h / 2), apply.spec.mask, 0);
        EXPECT_MATRIX_NEAR(Matrix(std::as_const(ex.attention.weights).head(0, h)), expected.weights,
                           1e-5);
    }

    // GQA sharing down to one kv head: K and V are the mean of the two kv heads.
    QkvApply shared;
    shared.kvHeads = 1;
    const Experiment mqa = applyToQkvLayer(*dump, 0, shared);
    EXPECT_EQ(mqa.kvHeadCount(), 1);
    const MatrixD kMean = 0.5 * (k.head(0, 0).cast<double>() + k.head(0, 1).cast<double>());
    const MatrixD vMean = 0.5 * (v.head(0, 0).cast<double>() + v.head(0, 1).cast<double>());
    for (Index h = 0; h < heads; ++h) {
        const MatrixD qh = q.head(0, h).cast<double>();
        const auto expected = ref::attention(qh, kMean, vMean, MaskSpec{}, 0);
        EXPECT_MATRIX_NEAR(Matrix(std::as_const(mqa.attention.weights).head(0, h)),
                           expected.weights, 1e-5);
    }
    QkvApply bad;
    bad.kvHeads = 3;
    EXPECT_THROW(applyToQkvLayer(*dump, 0, bad), InvalidArgument);
    EXPECT_THROW(applyToQkvLayer(*dump, 2, QkvApply{}), InvalidArgument);

    // Linear attention on a real layer: the implied weights are still distributions.
    QkvApply linear;
    linear.spec.variant = Variant::Linear;
    const Experiment lin = applyToQkvLayer(*dump, 0, linear);
    for (Index i = 0; i < s; ++i)
        EXPECT_NEAR(rowSumOf(std::as_const(lin.attention.weights).head(0, 2), i), 1.0, 1e-4);
}

// A model's layer in the window holds no H x S x S: each head's map is computed when a view
// asks. It must be the map the whole layer's run gives, to the bit, under every spec the window
// can apply, at any thread count; the statistics, output and overviews taken on the way equal
// the held layer's.
TEST(Dump, AQkvLayersWeightsOnDemandAreTheWholeRunsBytes) {
    TempDir dir{"attnlab_dump"};
    // 520 positions: just past the 512 a side of an overview, so its blocks are 2 x 2.
    const Index heads = 4, kvHeads = 2, s = 520, d = 16;
    const Tensor4 q = ref::randomTensor(1, heads, s, d, 40);
    const Tensor4 k = ref::randomTensor(1, kvHeads, s, d, 41);
    const Tensor4 v = ref::randomTensor(1, kvHeads, s, d, 42);
    const std::string path = dir.file("qkv.npz");
    writeBytes(
        path,
        storedZip({{"q.npy", encodeNpy(tensorArray(q, {1, heads, s, d}), DType::Float32)},
                   {"k.npy", encodeNpy(tensorArray(k, {1, kvHeads, s, d}), DType::Float32)},
                   {"v.npy", encodeNpy(tensorArray(v, {1, kvHeads, s, d}), DType::Float32)}}));
    auto dump = loadQkvDump(path);
    ASSERT_TRUE(dump.ok()) << dump.error();

    BoolMatrix custom = BoolMatrix::Constant(s, s, true);
    for (Index i = 0; i < s; ++i)
        custom(i, (i * 7) % s) = false;
    std::vector<std::pair<std::string, QkvApply>> applies(8);
    applies[0].first = "causal softmax";
    applies[0].second.spec.mask.causal = true;
    applies[1].first = "flash, a window, temperature 2";
    applies[1].second.spec.variant = Variant::Flash;
    applies[1].second.spec.mask.causalWindow = 37;
    applies[1].second.temperature = 2;
    applies[2].first = "soft-capped, one kv head";
    applies[2].second.spec.softcap = 1.5;
    applies[2].second.kvHeads = 1;
    applies[3].first = "a custom mask and valid lengths";
    applies[3].second.spec.mask.custom = custom;
    applies[3].second.spec.mask.validLen = {480};
    applies[4].first = "linear";
    applies[4].second.spec.variant = Variant::Linear;
    applies[5].first = "additive";
    applies[5].second.spec.variant = Variant::Additive;
    applies[6].first = "per-layer windows";
    applies[6].second.layerWindows = {5};
    applies[7].first = "every key";
    for (auto& [name, apply] : applies) {
        for (int threads : {1, 2, 3}) {
            SCOPED_TRACE(name + ", " + std::to_string(threads) + " threads");
            apply.spec.threads = threads;
            // The window's model layer keeps no scores; a dump file's layer does.
            apply.keepScores = threads == 3;
            apply.weightsOnDemand = false;
            const Experiment held = applyToQkvLayer(*dump, 0, apply);
            apply.weightsOnDemand = true;
            apply.keptHead = threads == 2 ? 2 : -1; // asked first below: kept, not computed
            const Experiment computed = applyToQkvLayer(*dump, 0, apply);
            ASSERT_NE(computed.maps, nullptr);
            ASSERT_TRUE(computed.attention.weights.empty());
            ASSERT_EQ(computed.weightHeads(), heads);
            const BoolMatrix allowedCells = denseMask(held.mask, 0, s, s);
            const Index block = 2; // 520 positions: 260 cells a side
            ASSERT_EQ(computed.overviews.size(), static_cast<std::size_t>(heads));
            // Asked out of order, and one head twice: the kept head is not another's.
            bool seen[heads] = {};
            for (Index h : {2, 0, 3, 1, 2}) {
                const Matrix expected = std::as_const(held.attention.weights).head(0, h);
                const Matrix got = computed.headWeights(h);
                ASSERT_EQ(got.rows(), s);
                ASSERT_EQ(got.cols(), s);
                ASSERT_EQ(std::memcmp(got.data(), expected.data(),
                                      sizeof(float) * static_cast<std::size_t>(s * s)),
                          0)
                    << "head " << h;
                const auto at = static_cast<std::size_t>(h);
                EXPECT_EQ(computed.stats[at].entropy, held.stats[at].entropy);
                EXPECT_EQ(computed.stats[at].histogram, held.stats[at].histogram);
                if (std::exchange(seen[at], true)) continue; // its overview is checked
                // Each overview cell: the largest allowed weight of its 2 x 2 block, NaN
                // where all four are masked.
                const MatrixD& overview = computed.overviews[at];
                ASSERT_EQ(overview.rows(), s / block);
                ASSERT_EQ(overview.cols(), s / block);
                for (Index r = 0; r < s / block; ++r)
                    for (Index c = 0; c < s / block; ++c) {
                        double largest = -1;
                        for (Index i = r * block; i < (r + 1) * block; ++i)
                            for (Index j = c * block; j < (c + 1) * block; ++j)
                                if (allowedCells(i, j))
                                    largest = std::max<double>(largest, expected(i, j));
                        if (largest < 0)
                            ASSERT_TRUE(std::isnan(overview(r, c))) << r << ", " << c;
                        else
                            ASSERT_EQ(overview(r, c), largest) << r << ", " << c;
                    }
            }
            // A tooltip's cell reads the computed map.
            const auto cell = explainCell(computed, 1, 480, 479);
            const auto heldCell = explainCell(held, 1, 480, 479);
            ASSERT_TRUE(cell && heldCell);
            EXPECT_EQ(cell->storedWeight, heldCell->storedWeight);
            // In double from q.k where the held layer kept its float scores.
            EXPECT_NEAR(cell->rowSum, heldCell->rowSum, 1e-5 * heldCell->rowSum);
            EXPECT_TRUE(computed.output.cwiseEqual(held.output).all());
            EXPECT_EQ(computed.attention.emptyRows, held.attention.emptyRows);
        }
    }
    // Train-mode dropout draws by the head's index: such a layer is held whole.
    QkvApply dropped;
    dropped.spec.dropout = Dropout{0.25, 9};
    dropped.weightsOnDemand = true;
    const Experiment trained = applyToQkvLayer(*dump, 0, dropped);
    EXPECT_EQ(trained.maps, nullptr);
    EXPECT_FALSE(trained.attention.weights.empty());
}

TEST(Dump, QkvInconsistentShapesAndMissingKeysAreErrors) {
    TempDir dir{"attnlab_dump"};
    const std::string path = dir.file("qkv.npz");
    auto write = [&](std::vector<Index> qs, std::vector<Index> ks, std::vector<Index> vs,
                     bool withV = true) {
        std::map<std::string, NpyArray> arrays = {
            {"q", arrayOf(qs, std::vector<float>(static_cast<std::size_t>(product(qs)), 0.1f))},
            {"k", arrayOf(ks, std::vector<float>(static_cast<std::size_t>(product(ks)), 0.2f))}};
        if (withV)
            arrays["v"] = arrayOf(vs, std::vector<float>(static_cast<std::size_t>(product(vs)), 1));
        ASSERT_FALSE(writeNpz(path, arrays, DType::Float32));
    };
    write({3, 5, 4}, {3, 5, 4}, {3, 5, 2});
    auto ok = loadQkvDump(path);
    ASSERT_TRUE(ok.ok()) << ok.error();
    EXPECT_EQ(ok->layers, 1);
    EXPECT_EQ(ok->dimV, 2);

    write({3, 5, 4}, {3, 5, 8}, {3, 5, 4});
    auto dims = loadQkvDump(path);
    ASSERT_FALSE(dims.ok());
    EXPECT_NE(dims.error().find("inconsistent shapes"), std::string::npos) << dims.error();

    write({3, 5, 4}, {2, 5, 4}, {2, 5, 4});
    auto groups = loadQkvDump(path);
    ASSERT_FALSE(groups.ok());
    EXPECT_NE(groups.error().find("multiple"), std::string::npos) << groups.error();

    write({2, 3, 5, 4}, {1, 3, 5, 4}, {1, 3, 5, 4});
    EXPECT_FALSE(loadQkvDump(path).ok()); // layers differ

    write({3, 5, 4}, {3, 5, 4}, {3, 5, 4}, false);
    auto missing = loadQkvDump(path);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("\"v\""), std::string::npos) << missing.error();
}

} // namespace
} // namespace attnlab

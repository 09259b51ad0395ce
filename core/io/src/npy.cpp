#include "attnlab/io/npy.h"

#include "attnlab/base/half.h"
#include "attnlab/base/utf8.h"
#include "attnlab/io/file_io.h"
#include "attnlab/io/zip_archive.h"

#include <zip.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string_view>
#include <type_traits>

namespace attnlab {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader and writer assume a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
/// numpy pads the header so the data starts on a 64-byte boundary.
constexpr std::size_t kHeaderAlignment = 64;
/// numpy's own headers are far smaller; a longer one is refused before it is read.
constexpr std::size_t kMaxHeaderBytes = std::size_t(1) << 20;
/// The widest string element read (characters).
constexpr Index kMaxStringWidth = Index(1) << 20;

Error fail(const std::string& name, const std::string& what) {
    return Error{name + ": " + what};
}

/// A shape as a numpy tuple, as the .npy header writes it and numpy prints it: "(2, 3)", "(5,)".
std::string shapeTuple(const std::vector<Index>& shape) {
    std::ostringstream out;
    out << '(';
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) out << ", ";
        out << shape[i];
    }
    if (shape.size() == 1) out << ',';
    out << ')';
    return out.str();
}

std::uint32_t loadLe32(const unsigned char* p) {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
           (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

/// A strict reader of the Python literal numpy writes as the header:
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
    explicit HeaderParser(std::string_view text) : m_text(text) {}

    struct Header {
        std::string descr;
        bool fortranOrder = false;
        std::vector<Index> shape;
    };

    /// Returns an error message (without the file name) or nothing.
    std::optional<std::string> parse(Header& header) {
        bool haveDescr = false, haveOrder = false, haveShape = false;
        skipSpace();
        if (!eat('{')) return "malformed header: expected '{'";
        skipSpace();
        while (!eat('}')) {
            std::string key;
            if (auto e = parseString(key)) return e;
            skipSpace();
            if (!eat(':')) return "malformed header: expected ':' after '" + key + "'";
            skipSpace();
            if (key == "descr") {
                if (haveDescr) return std::string("malformed header: 'descr' given twice");
                haveDescr = true;
                if (peek() == '[')
                    return std::string("structured dtypes are not supported; save a plain "
                                       "float32 or float64 array");
                if (auto e = parseString(header.descr)) return e;
            } else if (key == "fortran_order") {
                if (haveOrder) return std::string("malformed header: 'fortran_order' given twice");
                haveOrder = true;
                if (consumeWord("True"))
                    header.fortranOrder = true;
                else if (consumeWord("False"))
                    header.fortranOrder = false;
                else
                    return std::string("malformed header: fortran_order must be True or False");
            } else if (key == "shape") {
                if (haveShape) return std::string("malformed header: 'shape' given twice");
                haveShape = true;
                if (auto e = parseShape(header.shape)) return e;
            } else {
                return "malformed header: unexpected key '" + key + "'";
            }
            skipSpace();
            if (eat(',')) {
                skipSpace();
                continue;
            }
            skipSpace();
            if (peek() != '}') return std::string("malformed header: expected ',' or '}'");
        }
        skipSpace();
        if (m_pos != m_text.size()) return std::string("malformed header: text after the '}'");
        if (!haveDescr) return std::string("malformed header: no 'descr'");
        if (!haveOrder) return std::string("malformed header: no 'fortran_order'");
        if (!haveShape) return std::string("malformed header: no 'shape'");
        return std::nullopt;
    }

private:
    char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }
    bool eat(char c) {
        if (peek() != c) return false;
        ++m_pos;
        return true;
    }
    void skipSpace() {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n' ||
                                         m_text[m_pos] == '\t' || m_text[m_pos] == '\r'))
            ++m_pos;
    }
    bool consumeWord(std::string_view word) {
        if (m_text.substr(m_pos, word.size()) != word) return false;
        const std::size_t after = m_pos + word.size();
        if (after < m_text.size() &&
            (std::isalnum(static_cast<unsigned char>(m_text[after])) || m_text[after] == '_'))
            return false;
        m_pos = after;
        return true;
    }
    std::optional<std::string> parseString(std::string& out) {
        const char quote = peek();
        if (quote != '\'' && quote != '"')
            return std::string("malformed header: expected a string");
        ++m_pos;
        const std::size_t end = m_text.find(quote, m_pos);
        if (end == std::string_view::npos)
            return std::string("malformed header: unterminated string");
        out.assign(m_text.substr(m_pos, end - m_pos));
        if (out.find('\\') != std::string::npos)
            return std::string("malformed header: escapes in strings are not supported");
        m_pos = end + 1;
        return std::nullopt;
    }
    std::optional<std::string> parseShape(std::vector<Index>& shape) {
        shape.clear();
        if (!eat('(')) return std::string("malformed header: shape must be a tuple");
        skipSpace();
        bool needComma = false; // a 1-tuple needs its trailing comma: (3,)
        while (!eat(')')) {
            bool negative = false;
            if (eat('-')) negative = true;
            if (!std::isdigit(static_cast<unsigned char>(peek())))
                return std::string("malformed header: shape entries must be integers");
            Index value = 0;
            bool overflow = false;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                const int digit = m_text[m_pos++] - '0';
                if (value > (std::numeric_limits<Index>::max() - digit) / 10)
                    overflow = true;
                else
                    value = value * 10 + digit;
            }
            eat('L'); // Python 2 longs
            if (negative && value != 0)
                return "negative dimension -" + std::to_string(value) + " in shape";
            if (overflow) return std::string("shape dimension too large");
            shape.push_back(value);
            skipSpace();
            if (eat(',')) {
                needComma = false;
                skipSpace();
                continue;
            }
            needComma = shape.size() == 1;
            skipSpace();
            if (peek() != ')') return std::string("malformed header: expected ',' or ')' in shape");
        }
        if (needComma) return std::string("malformed header: (n) is not a tuple, expected (n,)");
        return std::nullopt;
    }

    std::string_view m_text;
    std::size_t m_pos = 0;
};

/// What a descr names, or why it cannot be read.
std::optional<std::string> interpretDescr(const std::string& descr, const NpyReadOptions& options,
                                          DType& dtype) {
    if (descr.size() < 2) return "unknown dtype '" + descr + "'";
    const char order = descr[0];
    const char kind = descr[1];
    const std::string sizeText = descr.substr(2);
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return "unknown dtype '" + descr + "'";
    if (kind == 'O')
        return std::string("object arrays are not supported; save as float32 or float64");
    if (sizeText.empty() || sizeText.size() > 3 ||
        !std::all_of(sizeText.begin(), sizeText.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return "unknown dtype '" + descr + "'";
    const int size = std::stoi(sizeText);
    const std::string bits = std::to_string(size * 8);
    const std::string advice = "; save as float32 or float64";
    switch (kind) {
    case 'i':
        return "int" + bits + " is not supported" + advice;
    case 'u':
        return "uint" + bits + " is not supported" + advice;
    case 'b':
        return "bool is not supported" + advice;
    case 'c':
        return "complex" + bits + " is not supported" + advice;
    case 'O':
        return "object arrays are not supported" + advice;
    case 'S':
    case 'a':
    case 'U':
        return "string arrays are not supported" + advice;
    case 'M':
    case 'm':
        return "datetime arrays are not supported" + advice;
    case 'V':
        // ml_dtypes saves bfloat16 as a 2-byte void.
        if (size != 2) return "void/structured dtype '" + descr + "' is not supported" + advice;
        if (order == '>')
            return std::string("big-endian data is not supported; save little-endian");
        if (!options.allowHalf) return "bfloat16 (" + descr + ") is not supported here" + advice;
        dtype = DType::BFloat16;
        return std::nullopt;
    case 'f':
        break;
    default:
        return "unknown dtype '" + descr + "'";
    }
    if (size != 2 && size != 4 && size != 8) return "float" + bits + " is not supported" + advice;
    // '|' and '=' mean "native" to numpy, which is little-endian here.
    if (order == '>')
        return "big-endian data (" + descr + ") is not supported; save little-endian ('<f" +
               sizeText + "')";
    if (size == 2) {
        if (!options.allowHalf) return "float16 is not supported here" + advice;
        dtype = DType::Float16;
    } else {
        dtype = size == 4 ? DType::Float32 : DType::Float64;
    }
    return std::nullopt;
}

/// Bytes per element of a descr, -1 when the dtype has no fixed size here (objects, a
/// malformed descr): the readers that accept the dtype check it themselves.
Index itemBytesOf(const std::string& descr) {
    if (descr.size() < 3 || descr.size() > 9) return -1;
    const char kind = descr[1];
    if (std::string_view("fiucbVSaUMm").find(kind) == std::string_view::npos) return -1;
    std::size_t end = 2;
    Index size = 0;
    while (end < descr.size() && std::isdigit(static_cast<unsigned char>(descr[end])))
        size = size * 10 + (descr[end++] - '0');
    if (end == 2) return -1;
    if (end != descr.size() && !((kind == 'M' || kind == 'm') && descr[end] == '[')) return -1;
    return kind == 'U' ? 4 * size : size;
}

} // namespace

const char* dtypeName(DType t) {
    switch (t) {
    case DType::Float32:
        return "float32";
    case DType::Float64:
        return "float64";
    case DType::Float16:
        return "float16";
    case DType::BFloat16:
        return "bfloat16";
    }
    return "?";
}

Index dtypeBytes(DType t) {
    switch (t) {
    case DType::Float32:
        return 4;
    case DType::Float64:
        return 8;
    case DType::Float16:
    case DType::BFloat16:
        return 2;
    }
    return 0;
}

Index NpyArray::elementCount() const {
    Index count = 1;
    for (Index extent : shape)
        count *= extent;
    return count;
}

Result<std::size_t> npyHeaderSize(std::string_view prefix, const std::string& name) {
    if (prefix.size() < kMagicSize || prefix.substr(0, kMagicSize) != kMagic)
        return fail(name, "not a .npy file (bad magic; expected \\x93NUMPY)");
    if (prefix.size() < kMagicSize + 2) return fail(name, "truncated header");
    const auto* raw = reinterpret_cast<const unsigned char*>(prefix.data());
    const int major = raw[6];
    const int minor = raw[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return fail(name, "unsupported .npy format version " + std::to_string(major) + "." +
                              std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
    const std::size_t lengthBytes = major == 1 ? 2 : 4;
    const std::size_t prefixBytes = kMagicSize + 2 + lengthBytes;
    if (prefix.size() < prefixBytes) return fail(name, "truncated header");
    const std::size_t headerLength =
        major == 1 ? static_cast<std::size_t>(raw[8] | (raw[9] << 8)) : loadLe32(raw + 8);
    if (headerLength > kMaxHeaderBytes)
        return fail(name, "the header says it is " + std::to_string(headerLength) +
                              " bytes long; at most " + std::to_string(kMaxHeaderBytes) +
                              " are read");
    return prefixBytes + headerLength;
}

Result<NpyHeader> parseNpyHeader(std::string_view bytes, const std::string& name) {
    auto size = npyHeaderSize(bytes, name);
    if (!size) return Error{size.error()};
    const std::size_t prefixBytes = bytes[6] == 1 ? kMagicSize + 4 : kMagicSize + 6;
    if (bytes.size() < *size)
        return fail(name, "truncated header (it says " + std::to_string(*size - prefixBytes) +
                              " bytes, the file has " + std::to_string(bytes.size() - prefixBytes) +
                              ")");

    HeaderParser::Header dict;
    HeaderParser parser(bytes.substr(prefixBytes, *size - prefixBytes));
    if (auto message = parser.parse(dict)) return fail(name, *message);

    NpyHeader header;
    header.descr = std::move(dict.descr);
    header.fortranOrder = dict.fortranOrder;
    header.shape = std::move(dict.shape);
    header.dataOffset = *size;
    // The element count, overflow-checked: a product that wraps around would let a tiny file
    // claim a small count for an enormous shape.
    header.count = 1;
    for (Index extent : header.shape)
        if (__builtin_mul_overflow(header.count, extent, &header.count))
            return fail(name, "shape " + shapeTuple(header.shape) + " is too large");
    header.itemBytes = itemBytesOf(header.descr);
    if (header.itemBytes >= 0 &&
        __builtin_mul_overflow(header.count, header.itemBytes, &header.dataBytes))
        return fail(name, "shape " + shapeTuple(header.shape) + " is too large");
    return header;
}

namespace {

/// The data of a header that has a size, checked against the bytes present: nothing is
/// allocated for a shape the file does not hold.
std::optional<std::string> checkDataBytes(const NpyHeader& header, std::size_t present,
                                          const std::string& what) {
    const std::size_t available = present - header.dataOffset;
    if (static_cast<std::uint64_t>(header.dataBytes) == available) return std::nullopt;
    std::ostringstream out;
    out << (available < static_cast<std::uint64_t>(header.dataBytes) ? "truncated data: "
                                                                     : "unexpected trailing data: ")
        << "shape " << shapeTuple(header.shape) << " of " << what << " needs " << header.dataBytes
        << " bytes, the file has " << available;
    return out.str();
}

std::optional<std::string> checkRank(const std::vector<Index>& shape, Index minRank,
                                     Index maxRank) {
    const auto rank = static_cast<Index>(shape.size());
    if (rank >= minRank && rank <= maxRank) return std::nullopt;
    std::ostringstream out;
    out << "expected ";
    if (minRank == maxRank)
        out << minRank;
    else
        out << minRank << " to " << maxRank;
    out << " dimensions, got " << rank << " (shape " << shapeTuple(shape) << ")";
    return out.str();
}

/// The first value that is NaN or infinite in little-endian data of `dtype`, and what it is.
std::optional<std::string> firstNonFinite(const unsigned char* src, DType dtype, Index count) {
    for (Index i = 0; i < count; ++i) {
        double value = 0;
        switch (dtype) {
        case DType::Float32: {
            float f;
            std::memcpy(&f, src + i * 4, 4);
            value = f;
            break;
        }
        case DType::Float64:
            std::memcpy(&value, src + i * 8, 8);
            break;
        case DType::Float16:
        case DType::BFloat16: {
            const auto bits = static_cast<std::uint16_t>(src[i * 2] | (src[i * 2 + 1] << 8));
            value = dtype == DType::Float16 ? halfToFloat(bits) : bfloat16ToFloat(bits);
            break;
        }
        }
        if (!std::isfinite(value))
            return "value " + std::to_string(i) + " (in C order) is " +
                   (std::isnan(value) ? "NaN"
                    : value > 0       ? "+inf"
                                      : "-inf") +
                   "; only finite numbers are accepted";
    }
    return std::nullopt;
}

} // namespace

Result<NpyArray> parseNpy(const std::string& bytes, const std::string& name,
                          const NpyReadOptions& options) {
    auto header = parseNpyHeader(bytes, name);
    if (!header) return Error{header.error()};

    NpyArray array;
    if (auto message = interpretDescr(header->descr, options, array.dtype))
        return fail(name, *message);
    array.shape = header->shape;
    const Index rank = array.rank();
    if (header->fortranOrder && rank >= 2)
        return fail(name, "Fortran-order arrays are not supported; save a C-order array "
                          "(np.ascontiguousarray)");
    if (auto message = checkRank(array.shape, options.minRank, options.maxRank))
        return fail(name, *message);
    // Degenerate shapes are refused, not computed: (2^20, 0) holds no value but would ask
    // for 2^20 x 2^20 attention weights.
    if (!options.allowEmpty && header->count == 0)
        return fail(name, "shape " + shapeTuple(array.shape) +
                              " has an empty dimension; every dimension must be at least 1");
    const Index count = header->count;
    if (count > static_cast<Index>(std::vector<float>().max_size()))
        return fail(name, "shape " + shapeTuple(array.shape) + " is too large");
    if (auto message = checkDataBytes(*header, bytes.size(), dtypeName(array.dtype)))
        return fail(name, *message);
    if (options.requireFinite)
        if (auto message = firstNonFinite(reinterpret_cast<const unsigned char*>(bytes.data()) +
                                              header->dataOffset,
                                          array.dtype, count))
            return fail(name, *message);

    const auto* src = reinterpret_cast<const unsigned char*>(bytes.data()) + header->dataOffset;
    if (array.dtype == DType::Float64 && options.keepFloat64) {
        array.data64.resize(static_cast<std::size_t>(count));
        if (count > 0)
            std::memcpy(array.data64.data(), src, static_cast<std::size_t>(header->dataBytes));
        return array;
    }
    array.data.resize(static_cast<std::size_t>(count));
    float* dst = array.data.data();
    switch (array.dtype) {
    case DType::Float32:
        if (count > 0) std::memcpy(dst, src, static_cast<std::size_t>(header->dataBytes));
        break;
    case DType::Float64:
        for (Index i = 0; i < count; ++i) {
            double value;
            std::memcpy(&value, src + i * 8, 8);
            dst[i] = static_cast<float>(value);
        }
        break;
    case DType::Float16:
    case DType::BFloat16:
        for (Index i = 0; i < count; ++i) {
            const auto bits = static_cast<std::uint16_t>(src[i * 2] | (src[i * 2 + 1] << 8));
            dst[i] = array.dtype == DType::Float16 ? halfToFloat(bits) : bfloat16ToFloat(bits);
        }
        break;
    }
    return array;
}

Result<NpyStrings> parseNpyStrings(const std::string& bytes, const std::string& name,
                                   const NpyStringOptions& options) {
    auto header = parseNpyHeader(bytes, name);
    if (!header) return Error{header.error()};
    const std::string& descr = header->descr;
    const char kind = descr.size() >= 2 ? descr[1] : '?';
    if (kind == 'O')
        return fail(name, "a Python object array; save strings with np.array(values, dtype=str)");
    if ((kind != 'U' && kind != 'S' && kind != 'a') || header->itemBytes < 0)
        return fail(name, "expected a string array ('<U' or '|S'), not '" + descr + "'");
    if (descr[0] == '>' && kind == 'U') return fail(name, "big-endian strings are not supported");
    const Index width = kind == 'U' ? header->itemBytes / 4 : header->itemBytes;
    if (width > kMaxStringWidth)
        return fail(name, "string width " + std::to_string(width) + " is too large (at most " +
                              std::to_string(kMaxStringWidth) + ")");
    NpyStrings array;
    array.shape = header->shape;
    if (auto message = checkRank(array.shape, options.minRank, options.maxRank))
        return fail(name, *message);
    if (header->fortranOrder && array.shape.size() >= 2)
        return fail(name, "Fortran-order string arrays are not supported");
    const Index count = header->count;
    // Width 0 would let a few bytes claim any number of strings.
    if (width == 0 && count > 0)
        return fail(name, "string width 0 ('" + descr + "') holds nothing");
    if (count > options.maxCount)
        return fail(name, "shape " + shapeTuple(array.shape) + " holds " + std::to_string(count) +
                              " strings; at most " + std::to_string(options.maxCount) +
                              " are read here");
    if (auto message = checkDataBytes(*header, bytes.size(), "strings"))
        return fail(name, *message);

    const auto* raw = reinterpret_cast<const unsigned char*>(bytes.data()) + header->dataOffset;
    array.values.reserve(static_cast<std::size_t>(count));
    for (Index i = 0; i < count; ++i) {
        const unsigned char* item = raw + i * header->itemBytes;
        std::string value;
        if (kind == 'U') {
            for (Index c = 0; c < width; ++c) {
                const std::uint32_t cp = loadLe32(item + 4 * c);
                if (cp == 0) break;
                if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                    return fail(name, "invalid character in string " + std::to_string(i));
                appendUtf8(value, cp);
            }
        } else {
            const auto* chars = reinterpret_cast<const char*>(item);
            value.assign(chars,
                         static_cast<std::size_t>(std::find(chars, chars + width, '\0') - chars));
        }
        array.values.push_back(std::move(value));
    }
    return array;
}

Result<NpyArray> readNpy(const std::string& path, const NpyReadOptions& options) {
    auto bytes = readFile(path);
    if (!bytes) return Error{bytes.error()};
    return parseNpy(*bytes, path, options);
}

std::string npyHeader(const std::string& descr, const std::vector<Index>& shape) {
    std::string dict =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shapeTuple(shape) + ", }";
    // Version 1.0 stores the header length in 2 bytes; 2.0 in 4.
    std::size_t prefix = kMagicSize + 2 + 2;
    int major = 1;
    if (prefix + dict.size() + 1 > 0xffff) {
        major = 2;
        prefix = kMagicSize + 2 + 4;
    }
    const std::size_t unpadded = prefix + dict.size() + 1;
    const std::size_t padded =
        (unpadded + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
    dict.append(padded - unpadded, ' ');
    dict.push_back('\n');
    const std::size_t headerLength = dict.size();
    std::string out(kMagic, kMagicSize);
    out.push_back(static_cast<char>(major));
    out.push_back('\0');
    for (std::size_t i = 0; i < prefix - kMagicSize - 2; ++i)
        out.push_back(static_cast<char>((headerLength >> (8 * i)) & 0xff));
    return out + dict;
}

std::string encodeNpyInt64(const std::vector<Index>& shape,
                           const std::vector<std::int64_t>& values) {
    Index count = 1;
    for (Index extent : shape) {
        ATTN_CHECK(extent >= 0, "encodeNpyInt64: negative extent in shape " << shapeTuple(shape));
        count *= extent;
    }
    ATTN_CHECK(count == static_cast<Index>(values.size()),
               "encodeNpyInt64: shape " << shapeTuple(shape) << " holds " << count
                                        << " values but there are " << values.size());
    std::string out = npyHeader("<i8", shape);
    const std::size_t offset = out.size();
    out.resize(offset + values.size() * 8);
    if (!values.empty()) std::memcpy(out.data() + offset, values.data(), values.size() * 8);
    return out;
}

std::string encodeNpyUnicode(const std::vector<std::string>& strings) {
    std::vector<std::u32string> decoded;
    decoded.reserve(strings.size());
    std::size_t width = 1;
    for (const auto& s : strings) {
        decoded.push_back(decodeUtf8Lossy(s));
        width = std::max(width, decoded.back().size());
    }
    std::string out = npyHeader("<U" + std::to_string(width), {static_cast<Index>(strings.size())});
    const std::size_t offset = out.size();
    out.resize(offset + strings.size() * width * 4, '\0');
    for (std::size_t i = 0; i < decoded.size(); ++i)
        for (std::size_t c = 0; c < decoded[i].size(); ++c) {
            const auto code = static_cast<std::uint32_t>(decoded[i][c]);
            std::memcpy(out.data() + offset + (i * width + c) * 4, &code, 4);
        }
    return out;
}

std::string encodeNpy(const NpyArray& array, DType dtype) {
    ATTN_CHECK(dtype == DType::Float32 || dtype == DType::Float64,
               "encodeNpy writes float32 or float64, not " << dtypeName(dtype));
    for (Index extent : array.shape)
        ATTN_CHECK(extent >= 0, "encodeNpy: negative extent in shape " << shapeTuple(array.shape));
    const bool doubles = !array.data64.empty();
    const std::size_t values = doubles ? array.data64.size() : array.data.size();
    ATTN_CHECK(array.elementCount() == static_cast<Index>(values),
               "encodeNpy: shape " << shapeTuple(array.shape) << " holds " << array.elementCount()
                                   << " values but the array has " << values);

    const std::size_t itemBytes = static_cast<std::size_t>(dtypeBytes(dtype));
    std::string out = npyHeader(dtype == DType::Float32 ? "<f4" : "<f8", array.shape);
    out.reserve(out.size() + values * itemBytes);
    const std::size_t dataOffset = out.size();
    out.resize(dataOffset + values * itemBytes);
    char* dst = out.data() + dataOffset;
    if (doubles) {
        if (dtype == DType::Float64) {
            std::memcpy(dst, array.data64.data(), values * sizeof(double));
        } else {
            for (std::size_t i = 0; i < values; ++i) {
                const auto value = static_cast<float>(array.data64[i]);
                std::memcpy(dst + i * 4, &value, 4);
            }
        }
    } else if (dtype == DType::Float32) {
        if (!array.data.empty())
            std::memcpy(dst, array.data.data(), array.data.size() * sizeof(float));
    } else {
        for (std::size_t i = 0; i < array.data.size(); ++i) {
            const double value = array.data[i];
            std::memcpy(dst + i * 8, &value, 8);
        }
    }
    return out;
}

Status writeNpy(const std::string& path, const NpyArray& array, DType dtype) {
    return writeFileAtomic(path, encodeNpy(array, dtype));
}

namespace {

std::string zipMessage(zip_error_t* error) {
    const char* text = zip_error_strerror(error);
    return text ? text : "unknown zip error";
}

using ZipArchive = zip::Archive;
using ZipFile = zip::File;
using zip::kMaxDeflateRatio;

} // namespace

Result<std::map<std::string, std::string>> readNpzMembers(const std::string& path) {
    int code = 0;
    // Opened from the path, not from a copy in memory: a model dump can be hundreds of MB.
    ZipArchive archive(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
    if (!archive) {
        zip_error_t error;
        zip_error_init_with_code(&error, code);
        const std::string message = zipMessage(&error);
        zip_error_fini(&error);
        if (code == ZIP_ER_NOENT || code == ZIP_ER_OPEN || code == ZIP_ER_READ)
            return Error{"cannot read " + path + ": " + message};
        return Error{path + ": not a valid .npz (zip) archive: " + message};
    }
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return Error{"cannot read " + path + ": " + std::strerror(errno)};
    const auto archiveBytes = static_cast<zip_uint64_t>(info.st_size);

    std::map<std::string, std::string> members;
    const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
    for (zip_int64_t i = 0; i < entries; ++i) {
        zip_stat_t stat;
        zip_stat_init(&stat);
        constexpr zip_uint64_t kNeeded =
            ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
        if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &stat) != 0 ||
            (stat.valid & kNeeded) != kNeeded)
            return Error{path + ": corrupt archive entry " + std::to_string(i)};
        const std::string member = stat.name;
        constexpr std::string_view kSuffix = ".npy";
        if (member.size() <= kSuffix.size() ||
            member.compare(member.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
            continue;
        const std::string key = member.substr(0, member.size() - kSuffix.size());
        const std::string label = path + "[" + key + "]";

        // The sizes the archive claims, checked against the archive itself before anything
        // is read: a stored member is its own bytes, and deflate expands at most ~1032:1.
        if (stat.comp_size > archiveBytes)
            return Error{label + ": the member claims " + std::to_string(stat.comp_size) +
                         " compressed bytes but the archive has " + std::to_string(archiveBytes)};
        if (stat.comp_method == ZIP_CM_STORE) {
            if (stat.size != stat.comp_size)
                return Error{label + ": a stored member of " + std::to_string(stat.comp_size) +
                             " bytes claims to hold " + std::to_string(stat.size)};
        } else if (stat.comp_method == ZIP_CM_DEFLATE) {
            if (stat.size / kMaxDeflateRatio > stat.comp_size)
                return Error{label + ": the member claims " + std::to_string(stat.size) +
                             " bytes from " + std::to_string(stat.comp_size) +
                             " compressed bytes, more than deflate can expand to"};
        } else {
            return Error{label + ": compression method " + std::to_string(stat.comp_method) +
                         " is not supported (numpy writes stored or deflated members)"};
        }
        if (stat.size > std::string().max_size()) return Error{label + ": member too large"};

        ZipFile file(zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0));
        if (!file) return Error{label + ": cannot open the member: " + zip_strerror(archive.get())};
        // Memory grows with the bytes actually decompressed, never with a claim alone.
        std::string contents;
        auto readUpTo = [&](zip_uint64_t want) -> Status {
            constexpr std::size_t kChunk = std::size_t(1) << 20;
            while (contents.size() < want) {
                const std::size_t old = contents.size();
                const auto chunk =
                    static_cast<std::size_t>(std::min<zip_uint64_t>(want - old, kChunk));
                contents.resize(old + chunk);
                const zip_int64_t got = zip_fread(file.get(), contents.data() + old, chunk);
                if (got < 0) {
                    contents.resize(old);
                    return Error{label + ": corrupt member: " + zip_file_strerror(file.get())};
                }
                contents.resize(old + static_cast<std::size_t>(got));
                if (got == 0) break;
            }
            return std::nullopt;
        };

        // The .npy header first: a member that is not a .npy, or whose shape does not match
        // its size, is refused after its first bytes.
        if (auto error = readUpTo(std::min<zip_uint64_t>(stat.size, 12))) return *error;
        auto headerSize = npyHeaderSize(contents, label);
        if (!headerSize) return Error{headerSize.error()};
        if (auto error = readUpTo(std::min<zip_uint64_t>(stat.size, *headerSize))) return *error;
        auto header = parseNpyHeader(contents, label);
        if (!header) return Error{header.error()};
        if (header->dataBytes < 0) {
            // A dtype without a fixed size (a pickled object array): the header is all a
            // reader needs to refuse it by name.
            members.emplace(key, std::move(contents));
            continue;
        }
        const std::uint64_t dataPresent = stat.size - header->dataOffset;
        if (static_cast<std::uint64_t>(header->dataBytes) != dataPresent)
            return Error{label + ": " +
                         (dataPresent < static_cast<std::uint64_t>(header->dataBytes)
                              ? "truncated data: "
                              : "unexpected trailing data: ") +
                         "shape " + shapeTuple(header->shape) + " of '" + header->descr +
                         "' needs " + std::to_string(header->dataBytes) +
                         " bytes, the member has " + std::to_string(dataPresent)};
        if (stat.comp_method == ZIP_CM_STORE)
            contents.reserve(static_cast<std::size_t>(stat.size)); // its bytes are on disk
        if (auto error = readUpTo(stat.size)) return *error;
        if (contents.size() != stat.size) return Error{label + ": truncated member"};
        // Reading past the end makes libzip verify the CRC.
        char extra;
        if (zip_fread(file.get(), &extra, 1) != 0)
            return Error{label + ": corrupt member: " + zip_file_strerror(file.get())};
        members.emplace(key, std::move(contents));
    }
    return members;
}

Result<std::map<std::string, NpyArray>> readNpz(const std::string& path,
                                                const NpyReadOptions& options) {
    auto members = readNpzMembers(path);
    if (!members) return Error{members.error()};
    std::map<std::string, NpyArray> arrays;
    for (const auto& [key, bytes] : *members) {
        auto array = parseNpy(bytes, path + "[" + key + "]", options);
        if (!array) return Error{array.error()};
        arrays[key] = std::move(*array);
    }
    return arrays;
}

Status writeNpz(const std::string& path, const std::map<std::string, NpyArray>& arrays,
                DType dtype) {
    std::map<std::string, std::string> members;
    for (const auto& [key, array] : arrays)
        members[key] = encodeNpy(array, dtype);
    return writeNpzMembers(path, members);
}

namespace {

/// The time_t that a zip entry's DOS date and time read back as 1980-01-01 00:00 (libzip
/// converts through local time, so the epoch is taken in local time too).
time_t dosEpoch() {
    std::tm epoch{};
    epoch.tm_year = 80;
    epoch.tm_mday = 1;
    epoch.tm_isdst = -1;
    return std::mktime(&epoch);
}

} // namespace

namespace {

/// A streamed member as libzip reads it (zip_source_function): pieces are produced as libzip
/// asks for bytes, during zip_close. Exceptions stop at the callback: the first one's message
/// is kept, and libzip is told the read failed.
struct StreamedSource {
    const StreamedNpzMember* member = nullptr;
    std::string buffer;     // the current piece
    std::size_t taken = 0;  // bytes of it handed out
    std::size_t next = 0;   // the next piece to produce
    std::uint64_t given = 0;
    std::string failure;    // set when a piece threw or the sizes disagree
    zip_error_t error;

    zip_int64_t read(char* out, zip_uint64_t want) {
        zip_uint64_t done = 0;
        while (done < want) {
            if (taken == buffer.size()) {
                if (next == member->pieces) break;
                buffer.clear();
                taken = 0;
                member->piece(next++, buffer);
                continue;
            }
            const auto n = std::min<zip_uint64_t>(want - done, buffer.size() - taken);
            std::memcpy(out + done, buffer.data() + taken, static_cast<std::size_t>(n));
            taken += static_cast<std::size_t>(n);
            done += n;
        }
        given += done;
        if (done < want && given != member->bytes) {
            failure = "a streamed member gave " + std::to_string(given) + " of its " +
                      std::to_string(member->bytes) + " bytes";
            return -1;
        }
        return static_cast<zip_int64_t>(done);
    }

    static zip_int64_t callback(void* user, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
        auto* self = static_cast<StreamedSource*>(user);
        switch (cmd) {
        case ZIP_SOURCE_OPEN:
            self->buffer.clear();
            self->taken = self->next = 0;
            self->given = 0;
            return 0;
        case ZIP_SOURCE_READ:
            try {
                const zip_int64_t got = self->read(static_cast<char*>(data), len);
                if (got < 0) zip_error_set(&self->error, ZIP_ER_READ, 0);
                return got;
            } catch (const std::bad_alloc&) {
                self->failure = "not enough memory";
            } catch (const std::exception& e) {
                self->failure = e.what();
            }
            zip_error_set(&self->error, ZIP_ER_READ, 0);
            return -1;
        case ZIP_SOURCE_CLOSE:
        case ZIP_SOURCE_FREE:
            return 0;
        case ZIP_SOURCE_STAT: {
            auto* stat = static_cast<zip_stat_t*>(data);
            zip_stat_init(stat);
            stat->size = self->member->bytes;
            stat->valid |= ZIP_STAT_SIZE;
            return sizeof(zip_stat_t);
        }
        case ZIP_SOURCE_ERROR:
            return zip_error_to_data(&self->error, data, len);
        case ZIP_SOURCE_SUPPORTS:
            return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ,
                                                  ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                                  ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
        default:
            zip_error_set(&self->error, ZIP_ER_OPNOTSUPP, 0);
            return -1;
        }
    }
};

/// Adds `data` as NAME.npy (stored, dated 1980-01-01) to `archive`; an error message on failure.
std::optional<std::string> addNpzMember(zip_t* archive, const std::string& name,
                                        zip_source_t* data) {
    if (!data) return std::string(zip_strerror(archive));
    const zip_int64_t at = zip_file_add(archive, (name + ".npy").c_str(), data, ZIP_FL_ENC_UTF_8);
    if (at < 0) {
        zip_source_free(data);
        return std::string(zip_strerror(archive));
    }
    if (zip_set_file_compression(archive, static_cast<zip_uint64_t>(at), ZIP_CM_STORE, 0) != 0)
        return std::string(zip_strerror(archive));
    // Same input, same bytes: every member is dated 1980-01-01 00:00 as NumPy's savez dates
    // them, not the time of writing.
    if (zip_file_set_mtime(archive, static_cast<zip_uint64_t>(at), dosEpoch(), 0) != 0)
        return std::string(zip_strerror(archive));
    return std::nullopt;
}

/// Adds every member, ready and streamed (each source in `sources`, which must outlive the
/// archive's zip_close), in name order.
std::optional<std::string> addNpzMembers(zip_t* archive,
                                         const std::map<std::string, std::string>& members,
                                         const std::map<std::string, StreamedNpzMember>& streamed,
                                         std::vector<std::unique_ptr<StreamedSource>>& sources) {
    for (const auto& [name, member] : streamed)
        if (members.count(name)) return "two members named " + name;
    // Name order, ready and streamed members alike, as writeNpzMembers has always written.
    auto ready = members.begin();
    auto later = streamed.begin();
    while (ready != members.end() || later != streamed.end()) {
        const bool takeReady =
            later == streamed.end() || (ready != members.end() && ready->first < later->first);
        if (takeReady) {
            const std::string& member = ready->second;
            if (auto problem = addNpzMember(
                    archive, ready->first,
                    zip_source_buffer(archive, member.data(), member.size(), 0)))
                return problem;
            ++ready;
            continue;
        }
        auto source = std::make_unique<StreamedSource>();
        source->member = &later->second;
        zip_error_init(&source->error);
        zip_source_t* data = zip_source_function(archive, &StreamedSource::callback, source.get());
        sources.push_back(std::move(source));
        if (auto problem = addNpzMember(archive, later->first, data)) return problem;
        ++later;
    }
    return std::nullopt;
}

/// The first failure a streamed member reported, or libzip's message.
std::string closeMessage(zip_t* archive,
                         const std::vector<std::unique_ptr<StreamedSource>>& sources) {
    for (const auto& source : sources)
        if (!source->failure.empty()) return source->failure;
    return zip_strerror(archive);
}

/// The archive built in memory, then written whole: for an archive with no members, which
/// libzip would not leave on disk.
Status writeNpzInMemory(const std::string& path,
                        const std::map<std::string, std::string>& members) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
    if (!buffer) {
        const std::string message = zipMessage(&error);
        zip_error_fini(&error);
        return Error{"cannot write " + path + ": " + message};
    }
    zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
    if (!archive) {
        zip_source_free(buffer);
        const std::string message = zipMessage(&error);
        zip_error_fini(&error);
        return Error{"cannot write " + path + ": " + message};
    }
    zip_error_fini(&error);
    zip_source_keep(buffer); // still needed after zip_close to read the archive back

    auto failWith = [&](const std::string& message) -> Status {
        zip_discard(archive);
        zip_source_free(buffer);
        return Error{"cannot write " + path + ": " + message};
    };
    std::vector<std::unique_ptr<StreamedSource>> sources;
    if (auto problem = addNpzMembers(archive, members, {}, sources)) return failWith(*problem);
    if (zip_close(archive) != 0) return failWith(zip_strerror(archive));

    std::string image;
    if (zip_source_open(buffer) != 0) {
        zip_source_free(buffer);
        return Error{"cannot write " + path + ": cannot read back the archive"};
    }
    char chunk[1 << 16];
    zip_int64_t got;
    while ((got = zip_source_read(buffer, chunk, sizeof chunk)) > 0)
        image.append(chunk, static_cast<std::size_t>(got));
    zip_source_close(buffer);
    zip_source_free(buffer);
    if (got < 0) return Error{"cannot write " + path + ": cannot read back the archive"};
    return writeFileAtomic(path, image);
}

} // namespace

Status writeNpzMembers(const std::string& path, const std::map<std::string, std::string>& members) {
    return writeNpzMembers(path, members, {});
}

Status writeNpzMembers(const std::string& path, const std::map<std::string, std::string>& members,
                       const std::map<std::string, StreamedNpzMember>& streamed) {
    // libzip removes an archive left with no members: an empty one is written whole.
    if (members.empty() && streamed.empty()) return writeNpzInMemory(path, members);
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
        return Error{"cannot write " + path + ": it is a directory"};
    // The archive is written by libzip straight to a temporary file beside `path` (reading the
    // members from their buffers as it goes, so the archive is never a second copy in memory),
    // then renamed over `path`.
    Result<std::string> temp = writeTempBeside(path, std::string());
    if (!temp) return Error{temp.error()};
    int code = 0;
    zip_t* archive = zip_open(temp->c_str(), ZIP_TRUNCATE, &code);
    if (!archive) {
        zip_error_t error;
        zip_error_init_with_code(&error, code);
        const std::string message = zipMessage(&error);
        zip_error_fini(&error);
        ::unlink(temp->c_str());
        return Error{"cannot write " + path + ": " + message};
    }
    std::vector<std::unique_ptr<StreamedSource>> sources;
    if (auto problem = addNpzMembers(archive, members, streamed, sources)) {
        zip_discard(archive);
        ::unlink(temp->c_str());
        return Error{"cannot write " + path + ": " + *problem};
    }
    if (zip_close(archive) != 0) {
        const std::string message = closeMessage(archive, sources);
        zip_discard(archive);
        ::unlink(temp->c_str());
        return Error{"cannot write " + path + ": " + message};
    }
    if (std::rename(temp->c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temp->c_str());
        return Error{"cannot write " + path + ": " + std::strerror(error)};
    }
    return std::nullopt;
}

namespace {

/// The array's values as a Tensor4T<T>, from whichever of data / data64 holds them.
template <typename T> Tensor4T<T> toTensor(const NpyArray& array) {
    const Index rank = array.rank();
    ATTN_CHECK(rank >= 2 && rank <= 4,
               "toTensor4 needs rank 2, 3 or 4, got shape " << shapeTuple(array.shape));
    const bool doubles = !array.data64.empty();
    const std::size_t values = doubles ? array.data64.size() : array.data.size();
    ATTN_CHECK(array.elementCount() == static_cast<Index>(values),
               "toTensor4: shape " << shapeTuple(array.shape) << " does not match " << values
                                   << " values");
    const auto& s = array.shape;
    Tensor4T<T> t;
    t.batch = rank >= 3 ? s[0] : 1;
    t.heads = rank == 4 ? s[1] : 1;
    t.seq = s[static_cast<std::size_t>(rank - 2)];
    t.dim = s[static_cast<std::size_t>(rank - 1)];
    if (doubles)
        t.data.assign(array.data64.begin(), array.data64.end());
    else
        t.data.assign(array.data.begin(), array.data.end());
    return t;
}

template <typename T> NpyArray fromTensor(const Tensor4T<T>& t, Index rank, DType dtype) {
    ATTN_CHECK(rank >= 2 && rank <= 4, "fromTensor4 needs rank 2, 3 or 4, got " << rank);
    ATTN_CHECK(rank == 4 || t.heads == 1,
               "a rank-" << rank << " array needs H == 1, the tensor has " << t.heads);
    ATTN_CHECK(rank >= 3 || t.batch == 1,
               "a rank-2 array needs B == 1, the tensor has " << t.batch);
    NpyArray array;
    array.dtype = dtype;
    if (rank == 4)
        array.shape = {t.batch, t.heads, t.seq, t.dim};
    else if (rank == 3)
        array.shape = {t.batch, t.seq, t.dim};
    else
        array.shape = {t.seq, t.dim};
    if constexpr (std::is_same_v<T, double>)
        array.data64 = t.data;
    else
        array.data = t.data;
    return array;
}

} // namespace

Tensor4 toTensor4(const NpyArray& array) {
    return toTensor<float>(array);
}
Tensor4d toTensor4d(const NpyArray& array) {
    return toTensor<double>(array);
}
NpyArray fromTensor4(const Tensor4& t, Index rank, DType dtype) {
    return fromTensor(t, rank, dtype);
}
NpyArray fromTensor4(const Tensor4d& t, Index rank, DType dtype) {
    return fromTensor(t, rank, dtype);
}

} // namespace attnlab

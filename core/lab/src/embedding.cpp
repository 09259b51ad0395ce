#include "attnlab/lab/embedding.h"

#include <cmath>
#include <numbers>

namespace attnlab {

using seeded::counterWord;
using seeded::splitmix64;
using seeded::unitClosedZero;
using seeded::unitOpenZero;

namespace {

/// FNV-1a, 64 bit, over the bytes of a token.
std::uint64_t fnv1a(std::string_view text) {
    std::uint64_t hash = 0xcbf29ce484222325ull;
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 0x100000001b3ull;
    }
    return hash;
}

bool isAsciiSpace(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/// Length in bytes of the UTF-8 sequence starting at text[pos]; 1 for a stray or
/// truncated byte (which then becomes a token of its own rather than being lost).
std::size_t utf8Length(std::string_view text, std::size_t pos) {
    const auto lead = static_cast<unsigned char>(text[pos]);
    std::size_t length = 1;
    if ((lead & 0xE0u) == 0xC0u)
        length = 2;
    else if ((lead & 0xF0u) == 0xE0u)
        length = 3;
    else if ((lead & 0xF8u) == 0xF0u)
        length = 4;
    if (pos + length > text.size()) return 1;
    for (std::size_t k = 1; k < length; ++k)
        if ((static_cast<unsigned char>(text[pos + k]) & 0xC0u) != 0x80u) return 1;
    return length;
}

} // namespace

const char* tokenizerName(Tokenizer t) {
    switch (t) {
    case Tokenizer::Whitespace:
        return "whitespace";
    case Tokenizer::Character:
        return "character";
    }
    return "whitespace";
}

std::optional<Tokenizer> parseTokenizer(const std::string& name) {
    if (name == "whitespace") return Tokenizer::Whitespace;
    if (name == "character") return Tokenizer::Character;
    return std::nullopt;
}

std::vector<std::string> tokenize(std::string_view text, Tokenizer tokenizer) {
    std::vector<std::string> tokens;
    std::size_t pos = 0;
    if (tokenizer == Tokenizer::Whitespace) {
        while (pos < text.size()) {
            while (pos < text.size() && isAsciiSpace(static_cast<unsigned char>(text[pos])))
                ++pos;
            const std::size_t start = pos;
            while (pos < text.size() && !isAsciiSpace(static_cast<unsigned char>(text[pos])))
                ++pos;
            if (pos > start) tokens.emplace_back(text.substr(start, pos - start));
        }
        return tokens;
    }
    while (pos < text.size()) {
        const std::size_t length = utf8Length(text, pos);
        if (!(length == 1 && isAsciiSpace(static_cast<unsigned char>(text[pos]))))
            tokens.emplace_back(text.substr(pos, length));
        pos += length;
    }
    return tokens;
}

Matrix embedTokens(const std::vector<std::string>& tokens, Index dim, std::uint64_t seed) {
    ATTN_CHECK(dim >= 0, "embedding dimension must be >= 0 (got " << dim << ")");
    const auto rows = static_cast<Index>(tokens.size());
    Matrix x(rows, dim);
    const std::uint64_t seedKey = splitmix64(seed ^ 0x656d626564646e67ull); // "embeddng"
    for (Index s = 0; s < rows; ++s) {
        const std::uint64_t key = splitmix64(fnv1a(tokens[static_cast<std::size_t>(s)]) ^ seedKey);
        // Box-Muller: pair n of uniforms gives entries 2n (cosine) and 2n + 1 (sine).
        for (Index c = 0; c < dim; c += 2) {
            const auto pair = static_cast<std::uint64_t>(c / 2);
            const double u1 = unitOpenZero(counterWord(key, 2 * pair));
            const double u2 = unitClosedZero(counterWord(key, 2 * pair + 1));
            const double radius = std::sqrt(-2.0 * std::log(u1));
            const double angle = 2.0 * std::numbers::pi * u2;
            x(s, c) = static_cast<Scalar>(radius * std::cos(angle));
            if (c + 1 < dim) x(s, c + 1) = static_cast<Scalar>(radius * std::sin(angle));
        }
    }
    return x;
}

Matrix sinusoidalEncoding(Index seq, Index dim, Index positionOffset) {
    ATTN_CHECK(seq >= 0 && dim >= 0, "sinusoidal encoding needs seq >= 0 and dim >= 0 (got "
                                         << seq << ", " << dim << ")");
    Matrix pe(seq, dim);
    for (Index c = 0; c < dim; c += 2) {
        // 10000^(2i/d) with 2i = c.
        const double invFreq =
            std::pow(10000.0, -static_cast<double>(c) / static_cast<double>(dim));
        for (Index s = 0; s < seq; ++s) {
            const double angle = static_cast<double>(positionOffset + s) * invFreq;
            pe(s, c) = static_cast<Scalar>(std::sin(angle));
            if (c + 1 < dim) pe(s, c + 1) = static_cast<Scalar>(std::cos(angle));
        }
    }
    return pe;
}

Projections makeProjections(Index dModel, Index heads, Index kvHeads, std::uint64_t seed) {
    ATTN_CHECK(dModel >= 1, "d_model must be >= 1 (got " << dModel << ")");
    ATTN_CHECK(heads >= 1 && kvHeads >= 1,
               "heads and kv heads must be >= 1 (got " << heads << ", " << kvHeads << ")");
    ATTN_CHECK(dModel % heads == 0,
               "d_model " << dModel << " is not divisible by " << heads << " heads");
    ATTN_CHECK(heads % kvHeads == 0,
               "heads " << heads << " is not divisible by " << kvHeads << " kv heads");
    const Index dh = dModel / heads;
    Projections p;
    p.wq = seededMatrix(dModel, heads * dh, seed, 0);
    p.wk = seededMatrix(dModel, kvHeads * dh, seed, 1);
    p.wv = seededMatrix(dModel, kvHeads * dh, seed, 2);
    p.wo = seededMatrix(heads * dh, dModel, seed, 3);
    return p;
}

Tensor4 splitHeads(const Matrix& x, Index heads) {
    ATTN_CHECK(heads >= 1, "heads must be >= 1 (got " << heads << ")");
    ATTN_CHECK(x.cols() % heads == 0,
               "width " << x.cols() << " is not divisible by " << heads << " heads");
    const Index dh = x.cols() / heads;
    Tensor4 t(1, heads, x.rows(), dh);
    for (Index h = 0; h < heads; ++h)
        t.head(0, h) = x.middleCols(h * dh, dh);
    return t;
}

Matrix mergeHeads(const Tensor4& t, Index b) {
    ATTN_CHECK(b >= 0 && b < t.batch, "batch " << b << " out of range [0, " << t.batch << ")");
    Matrix x(t.seq, t.heads * t.dim);
    for (Index h = 0; h < t.heads; ++h)
        x.middleCols(h * t.dim, t.dim) = t.head(b, h);
    return x;
}

} // namespace attnlab

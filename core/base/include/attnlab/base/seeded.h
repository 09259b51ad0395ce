#pragma once
/// Reproducible pseudo-random numbers: the same seed gives the same values on every machine and
/// at any thread count (counter-based, no hidden state). The lab's embeddings and projections,
/// additive attention's parameters and the head-role probes draw from here.

#include <cstdint>

#include "attnlab/base/tensor.h"

namespace attnlab::seeded {

/// splitmix64 (Steele, Lea, Flood 2014): the golden-ratio step and the finaliser, a bijective
/// 64-bit mixer. splitmix64(s) is the word the generator with state s gives next.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// Counter-based generator: the n-th 64-bit word of the stream keyed by `key`.
constexpr std::uint64_t counterWord(std::uint64_t key, std::uint64_t n) {
    return splitmix64(key ^ splitmix64(n * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull));
}

/// Uniform double in (0, 1] from the top 53 bits (never 0, so log() is finite).
constexpr double unitOpenZero(std::uint64_t word) {
    return static_cast<double>((word >> 11) + 1) * 0x1.0p-53;
}

/// Uniform double in [0, 1).
constexpr double unitClosedZero(std::uint64_t word) {
    return static_cast<double>(word >> 11) * 0x1.0p-53;
}

} // namespace attnlab::seeded

namespace attnlab {

/// A reproducible [rows, cols] matrix, uniform in +-sqrt(6 / (rows + cols)) (Xavier),
/// from (seed, stream). The same arguments give the same matrix on every machine.
Matrix seededMatrix(Index rows, Index cols, std::uint64_t seed, std::uint64_t stream);

} // namespace attnlab

// The portable kernel target (simd_kernels.h): 16 floats as a plain array the compiler may
// vectorise for whatever CPU it builds for (SSE2, NEON ...), separate multiplies and adds (no
// FMA: a CPU without one would emulate it slowly), so its results agree with the SIMD
// targets' within rounding, not bit for bit.

#include <cstring>

#include "attnlab/base/simd_kernels.h"
#include "simd_targets.h"

namespace attnlab::simd::generic {
namespace {

constexpr Isa kIsa = Isa::Generic;
constexpr int kMicroRows = 4;
constexpr int kMicroPanels = 1;
constexpr int kFewRows = 1;      // a product of this many rows or fewer ...
constexpr int kFewRowPanels = 1; // ... takes this many panels at once
constexpr int kFmaLanes = 1;
constexpr int kFmaVectors = 3; // 48 chains of a multiply and an add

struct V {
    float lane[16];
};

inline V load(const float* p) {
    V v;
    std::memcpy(v.lane, p, sizeof v.lane);
    return v;
}
inline void store(float* p, V v) {
    std::memcpy(p, v.lane, sizeof v.lane);
}
inline V splat(float x) {
    V v;
    for (float& lane : v.lane)
        lane = x;
    return v;
}
#define ATTNLAB_GENERIC_LANEWISE(name, expression)                                                 \
    inline V name(V a, V b) {                                                                      \
        V v;                                                                                       \
        for (int i = 0; i < 16; ++i)                                                               \
            v.lane[i] = expression;                                                                \
        return v;                                                                                  \
    }
ATTNLAB_GENERIC_LANEWISE(add, a.lane[i] + b.lane[i])
ATTNLAB_GENERIC_LANEWISE(sub, a.lane[i] - b.lane[i])
ATTNLAB_GENERIC_LANEWISE(mul, a.lane[i] * b.lane[i])
ATTNLAB_GENERIC_LANEWISE(div, a.lane[i] / b.lane[i])
ATTNLAB_GENERIC_LANEWISE(max, a.lane[i] < b.lane[i] ? b.lane[i] : a.lane[i])
#undef ATTNLAB_GENERIC_LANEWISE
inline V negativeAbs(V x) {
    V v;
    for (int i = 0; i < 16; ++i)
        v.lane[i] = -__builtin_fabsf(x.lane[i]);
    return v;
}
inline V whereSignSet(V z, V a, V b) {
    V v;
    for (int i = 0; i < 16; ++i)
        v.lane[i] = __builtin_signbit(z.lane[i]) ? a.lane[i] : b.lane[i];
    return v;
}
inline V mulAdd(V a, V b, V c) {
    V v;
    for (int i = 0; i < 16; ++i)
        v.lane[i] = a.lane[i] * b.lane[i] + c.lane[i];
    return v;
}

/// The SIMD targets' 2^x with its steps written out: round to nearest even by adding and
/// subtracting 1.5 2^23 (exact for |x| < 2^22; x is clamped to -160 first, which -inf and
/// every x below -126 give 0 anyway), Horner, 2^n by the exponent bits.
inline V exp2NonPositiveV(V x) {
    V v;
    for (int i = 0; i < 16; ++i) {
        const float clamped = x.lane[i] < -160.0f ? -160.0f : x.lane[i];
        const float n = (clamped + 12582912.0f) - 12582912.0f;
        const float r = clamped - n;
        float p = kExp2Poly[0];
        for (int c = 1; c < 7; ++c)
            p = p * r + kExp2Poly[c];
        const auto exponent = static_cast<unsigned>(static_cast<int>(n) + 127) << 23;
        float scale;
        std::memcpy(&scale, &exponent, sizeof scale);
        v.lane[i] = x.lane[i] < -126.0f ? 0.0f : p * scale;
    }
    return v;
}

inline float reduceMax(V v) {
    float best = v.lane[0];
    for (float lane : v.lane)
        best = best < lane ? lane : best;
    return best;
}
inline float reduceAdd(V v) {
    float half[8];
    for (int i = 0; i < 8; ++i)
        half[i] = v.lane[i] + v.lane[i + 8];
    for (int width = 4; width >= 1; width /= 2)
        for (int i = 0; i < width; ++i)
            half[i] += half[i + width];
    return half[0];
}

/// No bulk path: the caller widens every value itself.
Index widenHalfFloats(const std::uint16_t*, float*, Index) {
    return 0;
}
Index widenBfloat16s(const std::uint16_t*, float*, Index) {
    return 0;
}

/// An 8 x 8 tile element by element.
inline void transposeTile(const float* in, Index ldIn, float* out, Index ldOut) {
    for (Index c = 0; c < 8; ++c)
        for (Index r = 0; r < 8; ++r)
            out[c * ldOut + r] = in[r * ldIn + c];
}

#include "simd_kernels.inc"

} // namespace

const Kernels& table() {
    return kTable;
}

} // namespace attnlab::simd::generic

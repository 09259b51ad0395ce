#include "attnlab/base/half.h"

#include <bit>
#include <cmath>

#include "attnlab/base/simd_kernels.h"

namespace attnlab {

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) { // zero or subnormal: mantissa x 2^-24 is exact in float
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 0x1f) // infinity, or a NaN made quiet with its payload
        return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13) |
                                    (mantissa ? 0x00400000u : 0u));
    return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

float bfloat16ToFloat(std::uint16_t b) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

void widenHalfFloats(const std::uint16_t* in, std::size_t count, float* out) {
    auto i = static_cast<std::size_t>(
        simd::kernels().widenHalfFloats(in, out, static_cast<simd::Index>(count)));
    for (; i < count; ++i)
        out[i] = halfToFloat(in[i]);
}

void widenBfloat16(const std::uint16_t* in, std::size_t count, float* out) {
    auto i = static_cast<std::size_t>(
        simd::kernels().widenBfloat16s(in, out, static_cast<simd::Index>(count)));
    for (; i < count; ++i)
        out[i] = bfloat16ToFloat(in[i]);
}

} // namespace attnlab

// The AVX2 + FMA kernel target (simd_kernels.h): 16 floats as two 256-bit vectors, a 6 x 16
// micro-kernel (12 accumulators, 2 panel vectors and a broadcast: 15 of the 16 ymm registers).
// Compiled with -mavx2 -mfma -mno-avx512f whatever the rest of the build uses
// (core/CMakeLists.txt); run only when isaSupported(Isa::Avx2).

#if defined(__x86_64__)

#include <immintrin.h>

#include "attnlab/base/simd_kernels.h"
#include "simd_targets.h"

namespace attnlab::simd::avx2 {
namespace {

constexpr Isa kIsa = Isa::Avx2;
constexpr int kMicroRows = 6;
constexpr int kMicroPanels = 1;
constexpr int kFewRows = 2;      // a product of this many rows or fewer ...
constexpr int kFewRowPanels = 2; // ... takes this many panels at once
constexpr int kFmaLanes = 8;
constexpr int kFmaVectors = 6; // 12 ymm chains

struct V {
    __m256 lo, hi;
};

inline V load(const float* p) {
    return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
}
inline void store(float* p, V v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
}
inline V splat(float x) {
    const __m256 v = _mm256_set1_ps(x);
    return {v, v};
}
inline V add(V a, V b) {
    return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)};
}
inline V sub(V a, V b) {
    return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)};
}
inline V mul(V a, V b) {
    return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)};
}
inline V max(V a, V b) {
    return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)};
}
inline V div(V a, V b) {
    return {_mm256_div_ps(a.lo, b.lo), _mm256_div_ps(a.hi, b.hi)};
}
inline V mulAdd(V a, V b, V c) {
    return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
}
inline V negativeAbs(V x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    return {_mm256_or_ps(x.lo, sign), _mm256_or_ps(x.hi, sign)};
}
inline V whereSignSet(V z, V a, V b) { // blendv picks by each lane's sign bit
    return {_mm256_blendv_ps(b.lo, a.lo, z.lo), _mm256_blendv_ps(b.hi, a.hi, z.hi)};
}

inline __m256 exp2Half(__m256 x) {
    const __m256 n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 r = _mm256_sub_ps(x, n);
    __m256 p = _mm256_set1_ps(kExp2Poly[0]);
#pragma GCC unroll 8
    for (int i = 1; i < 7; ++i)
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExp2Poly[i]));
    // 2^n through the exponent bits, for n >= -126; below (and for -inf, whose r is NaN),
    // garbage the mask turns into 0.
    const __m256i bits =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-126.0f), _CMP_LT_OQ);
    return _mm256_andnot_ps(tiny, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
}
inline V exp2NonPositiveV(V x) {
    return {exp2Half(x.lo), exp2Half(x.hi)};
}

#include "simd_x86.inc"

inline float reduceMax(V v) {
    return reduceHalves<max4>(_mm256_max_ps(v.lo, v.hi));
}
inline float reduceAdd(V v) {
    return reduceHalves<add4>(_mm256_add_ps(v.lo, v.hi));
}

#include "simd_kernels.inc"

} // namespace

const Kernels& table() {
    return kTable;
}

} // namespace attnlab::simd::avx2

#endif

// The AVX-512 kernel target (simd_kernels.h): 16 floats as one 512-bit vector, an 8 x 32
// micro-kernel (16 accumulators over two panels, 2 panel vectors, broadcasts folded into the
// FMAs: 19 of the 32 zmm registers). 8 rows divide the model's 64-output blocks, a 128-token
// prompt and the attention tiles (24 and 48 rows) without a remainder. Compiled with -mavx512f
// -mavx512vl -mavx512bw -mavx512dq (core/CMakeLists.txt); run only when isaSupported(Isa::Avx512).
// Same operations per element as simd_avx2.cpp, so the same bytes.

#if defined(__x86_64__)

// GCC 12 reports a false -Wuninitialized inside its own AVX-512 intrinsics (the
// _mm512_undefined_ps idiom).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <immintrin.h>

#include "attnlab/base/simd_kernels.h"
#include "simd_targets.h"

namespace attnlab::simd::avx512 {
namespace {

constexpr Isa kIsa = Isa::Avx512;
constexpr int kMicroRows = 8;
constexpr int kMicroPanels = 2;
constexpr int kFewRows = 4;      // a product of this many rows or fewer ...
constexpr int kFewRowPanels = 4; // ... takes this many panels at once
constexpr int kFmaLanes = 16;
constexpr int kFmaVectors = 12; // 12 zmm chains

using V = __m512;

inline V load(const float* p) {
    return _mm512_loadu_ps(p);
}
inline void store(float* p, V v) {
    _mm512_storeu_ps(p, v);
}
inline V splat(float x) {
    return _mm512_set1_ps(x);
}
inline V add(V a, V b) {
    return _mm512_add_ps(a, b);
}
inline V sub(V a, V b) {
    return _mm512_sub_ps(a, b);
}
inline V mul(V a, V b) {
    return _mm512_mul_ps(a, b);
}
inline V max(V a, V b) {
    return _mm512_max_ps(a, b);
}
inline V div(V a, V b) {
    return _mm512_div_ps(a, b);
}
inline V mulAdd(V a, V b, V c) {
    return _mm512_fmadd_ps(a, b, c);
}
inline V negativeAbs(V x) {
    return _mm512_or_ps(x, _mm512_set1_ps(-0.0f));
}
inline V whereSignSet(V z, V a, V b) {
    return _mm512_mask_blend_ps(_mm512_movepi32_mask(_mm512_castps_si512(z)), b, a);
}

/// As simd_avx2.cpp's, lane for lane: round to nearest even, the same Horner FMAs, 2^n by the
/// exponent bits and x < -126 zeroed.
inline V exp2NonPositiveV(V x) {
    const V n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const V r = _mm512_sub_ps(x, n);
    V p = _mm512_set1_ps(kExp2Poly[0]);
#pragma GCC unroll 8
    for (int i = 1; i < 7; ++i)
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExp2Poly[i]));
    const __m512i bits =
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    const __mmask16 normal = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-126.0f), _CMP_NLT_UQ);
    return _mm512_maskz_mul_ps(normal, p, _mm512_castsi512_ps(bits));
}

#include "simd_x86.inc"

/// The two 8-lane halves combined, then the same tree as simd_avx2.cpp.
inline float reduceMax(V v) {
    return reduceHalves<max4>(
        _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
}
inline float reduceAdd(V v) {
    return reduceHalves<add4>(
        _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
}

#include "simd_kernels.inc"

} // namespace

const Kernels& table() {
    return kTable;
}

} // namespace attnlab::simd::avx512

#endif

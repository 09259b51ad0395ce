#pragma once
/// The float kernels the fast paths share (attention's tiles, the model's projections), one
/// table per target of isa.h. Raw pointers and row-major strides, no Eigen: each target is a
/// translation unit compiled with its own instruction-set flags, and nothing inline may be
/// shared between them (src/simd_kernels.inc).
///
/// Width-independence: on every SIMD target each output element is computed by the same
/// sequence of float operations (an FMA chain over the depth in order; the same 2^x polynomial;
/// row sums reduced as two 8-lane halves added, then a fixed 8-lane tree), so AVX2 and AVX-512
/// give identical bytes. The generic target multiplies and adds separately (no FMA) and agrees
/// within rounding.

#include <cstddef>
#include <cstdint>

#include "attnlab/base/isa.h"

namespace attnlab::simd {

using Index = std::ptrdiff_t;

/// Columns of one packed panel: the unit every kernel works in.
inline constexpr Index kPanelWidth = 16;

/// 2^r for |r| <= 1/2 as 1 + r P(r), P's coefficients highest first (Cephes exp2f): every target
/// evaluates it by Horner's rule from kExp2Poly[0], and 2^x = 2^r 2^n with n = round(x).
inline constexpr float kExp2Poly[] = {1.535336188319500e-4f,
                                      1.339887440266574e-3f,
                                      9.618437357674640e-3f,
                                      5.550332471162809e-2f,
                                      2.402264791363012e-1f,
                                      6.931472028550421e-1f,
                                      1.0f};

/// What a GEMM does with C before adding A B.
enum class GemmStart {
    Zero,  ///< C = A B
    Scale, ///< C = diag(rowScale) C + A B
    Load,  ///< C = C + A B
};

struct Kernels {
    Isa isa;
    /// C[rows x 16 panels] (start) A[rows x depth] B. A row-major (lda); B `panels` panels of
    /// 16 columns, element (k, j) of panel p at b[p * panelStride + k * ldb + j]; C row-major
    /// (ldc). Each C element is one FMA chain over k = 0 .. depth-1 in order (the depth is
    /// blocked for the caches, C holding the partial sums), whatever the rows and panels.
    /// `then` (or null): the B of the product the caller runs next, with the same ldb and panel
    /// stride, whose first panels are asked into the cache while the last ones are worked on.
    void (*gemm)(GemmStart start, const float* a, Index lda, Index rows, const float* b, Index ldb,
                 Index panelStride, Index panels, Index depth, float* c, Index ldc,
                 const float* rowScale, const float* then);
    /// One online-softmax step of a row of `cols` (a multiple of 16) logits, in place: m_new =
    /// max(m, max s), s = exp(s - m_new) (shift 0 while m_new is -inf, so a row with no allowed key
    /// stays 0), l = exp(m - m_new) l + sum s. Returns exp(m - m_new).
    float (*onlineSoftmaxRow)(float* s, Index cols, float& rowMax, float& rowSum);
    /// s = exp(s - shift) * factor over `cols` (a multiple of 16) floats, s - shift <= 0.
    void (*expShiftedScaled)(float* s, Index cols, float shift, float factor);
    /// 2^x for n floats x <= 0 (or -inf). Relative error below 3e-7 for -126 <= x <= 0; below
    /// -126 exactly 0 (-inf included).
    void (*exp2NonPositive)(const float* in, float* out, Index n);
    /// An FMA throughput loop on this target's widest vectors (12 independent chains),
    /// `iterations` rounds; returns the FLOPs done (2 per lane per FMA). *sink keeps it alive.
    double (*fmaLoop)(long iterations, float* sink);
    /// Floats one FMA of fmaLoop works on (16, 8, 1).
    int fmaLanes;
    /// IEEE binary16 patterns to float32, exactly (F16C's VCVTPH2PS), for the longest prefix of
    /// the n values this target converts in bulk: returns how many it did (a multiple of 8;
    /// 0 on the generic target); the caller widens the rest one at a time.
    Index (*widenHalfFloats)(const std::uint16_t* in, float* out, Index n);
    /// bfloat16 patterns to float32 (the 16 bits above 16 zero bits: exact), for the longest
    /// prefix of the n values this target converts in bulk: returns how many it did (a multiple
    /// of 8; 0 on the generic target); the caller widens the rest one at a time.
    Index (*widenBfloat16s)(const std::uint16_t* in, float* out, Index n);
    /// out[c * ldOut + r] = in[r * ldIn + c] for r < rows, c < cols: a copy (the same bytes on
    /// every target), 8 x 8 tiles at a time where the target has shuffles. The nn.Linear
    /// product's packed inputs and its outputs back to rows (core/model/src/forward.cpp).
    void (*transpose)(const float* in, Index ldIn, Index rows, Index cols, float* out, Index ldOut);
    /// x = x sigmoid(a x + b x^3) over n floats in place: SiLU (a = 1, b = 0), quick GELU
    /// (1.702, 0) and GELU's tanh form, 0.5 x (1 + tanh u) = x sigmoid(2 u) for u = sqrt(2 / pi)
    /// (x + 0.044715 x^3). sigmoid(z) is e / (1 + e) for z < 0 and 1 / (1 + e) otherwise, e =
    /// exp(-|z|) through exp2NonPositive, so nothing overflows. Every float goes through the same
    /// operations wherever it sits (the last n mod 16 in a padded vector): a row gives the same
    /// bits whole or in blocks, and the same on both SIMD targets.
    void (*sigmoidGate)(float* x, Index n, float a, float b);
};

/// The table of activeIsa().
const Kernels& kernels();

/// The table of `isa`; throws InvalidArgument when !isaSupported(isa).
const Kernels& kernelsFor(Isa isa);

/// `rows` rows of `depth` floats, `ld` apart, as the GEMM's B: panels of 16 rows one after the
/// other, each [depth][16] (row 16 p + j at lane j of panel p), zero past the last row. x's rows
/// for nn.Linear's W x^T, K's for Q K^T; through the active table's transpose.
void packRowPanels(const float* in, Index ld, Index rows, Index depth, float* out);

} // namespace attnlab::simd

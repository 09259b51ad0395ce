// The float eval-mode fast path of softmax and flash attention (fast_attention.h).

#include "fast_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ATTNLAB_FAST_PATH 1
#else
#define ATTNLAB_FAST_PATH 0
#endif

#include "attnlab/base/parallel.h"
#include "kernels.h"

namespace attnlab::kernels {

#if ATTNLAB_FAST_PATH
namespace {

constexpr float kMinusInfF = -std::numeric_limits<float>::infinity();
constexpr float kLog2e = 1.44269504088896341f;
/// Columns of one packed panel, and of one micro-kernel call (two AVX2 vectors).
constexpr Index kPanel = 16;
/// Rows of one micro-kernel call: 6 x 2 accumulators + 2 panel vectors + 1 broadcast = 15 of
/// the 16 ymm registers.
constexpr int kMicroRows = 6;
/// Flash tiles: Q_i is 48 rows (8 micro-kernel row blocks), K_j / V_j 128 keys. A tile's
/// S (24 KB), the Q_i slice and one K panel stay in L1/L2.
constexpr Index kFlashRows = 48;
constexpr Index kFlashCols = 128;
/// Softmax: a row block of 24 query rows against every allowed key (S = 24 x Sk).
constexpr Index kSoftmaxRows = 24;

Index roundUp(Index n, Index multiple) {
    return (n + multiple - 1) / multiple * multiple;
}

/// Floats aligned to a cache line, grown on demand and never shrunk.
class AlignedFloats {
public:
    float* data() { return m_data.get(); }
    const float* data() const { return m_data.get(); }
    void reserve(Index count) {
        if (count <= m_capacity) return;
        const Index rounded = roundUp(std::max<Index>(count, 1), kPanel);
        void* memory = std::aligned_alloc(64, static_cast<std::size_t>(rounded) * sizeof(float));
        if (!memory) throw std::bad_alloc();
        m_data.reset(static_cast<float*>(memory));
        m_capacity = rounded;
    }

private:
    struct Free {
        void operator()(float* p) const { std::free(p); }
    };
    std::unique_ptr<float, Free> m_data;
    Index m_capacity = 0;
};

/// 2^x for x <= 0 or -inf only: the kernel weighs a logit s by 2^((s - max) log2 e). The
/// difference is taken before the multiplication so that huge logits lose no precision. Cephes
/// exp2f: x = n + r with n = round(x), |r| <= 1/2, 2^r = 1 + r P(r) with P of degree 5, times 2^n.
/// x below -126 gives 0 or a subnormal (exactly 0 below -150, -inf included), never garbage.
inline __m256 exp2NonPositive(__m256 x) {
#if defined(__AVX512VL__)
    // scalef(p, n) = p 2^n with the exponent range handled in hardware: a clamp at -160 keeps
    // r finite for -inf, and 2^-160 p rounds to exactly 0.
    x = _mm256_max_ps(x, _mm256_set1_ps(-160.0f));
#endif
    const __m256 n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 r = _mm256_sub_ps(x, n);
    __m256 p = _mm256_set1_ps(1.535336188319500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.339887440266574e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(9.618437357674640e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.550332471162809e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(2.402264791363012e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(6.931472028550421e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
#if defined(__AVX512VL__)
    return _mm256_scalef_ps(p, n);
#else
    // 2^n through the exponent bits, for n >= -126; below, garbage bits the mask zeroes (a
    // subnormal result flushed to 0).
    const __m256i bits =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-126.0f), _CMP_LT_OQ);
    return _mm256_andnot_ps(tiny, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
#endif
}

inline float horizontalMax(__m256 v) {
    __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    x = _mm_max_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
}

inline float horizontalSum(__m256 v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
}

/// C[R x 16] = A[R x depth] B[depth x 16], or with kAccumulate C = diag(rowScale) C + A B.
/// A is row-major (lda); B is one packed panel, 16 contiguous floats per depth step,
/// 64-byte aligned.
template <int R, bool kAccumulate>
inline void microKernel(const float* a, Index lda, const float* b, Index depth, float* c, Index ldc,
                        const float* rowScale) {
    __m256 left[R];
    __m256 right[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        if constexpr (kAccumulate) {
            const __m256 scale = _mm256_broadcast_ss(rowScale + r);
            left[r] = _mm256_mul_ps(_mm256_loadu_ps(c + r * ldc), scale);
            right[r] = _mm256_mul_ps(_mm256_loadu_ps(c + r * ldc + 8), scale);
        } else {
            left[r] = _mm256_setzero_ps();
            right[r] = _mm256_setzero_ps();
        }
    }
    for (Index k = 0; k < depth; ++k) {
        const __m256 b0 = _mm256_load_ps(b + k * kPanel);
        const __m256 b1 = _mm256_load_ps(b + k * kPanel + 8);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const __m256 av = _mm256_broadcast_ss(a + r * lda + k);
            left[r] = _mm256_fmadd_ps(av, b0, left[r]);
            right[r] = _mm256_fmadd_ps(av, b1, right[r]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(c + r * ldc, left[r]);
        _mm256_storeu_ps(c + r * ldc + 8, right[r]);
    }
}

/// C[rows x 16 panels] (=, or row-scaled +=) A[rows x depth] times `panels` packed panels of
/// B starting at b, `panelStride` floats apart. Panel by panel, so one B panel stays in L1
/// while every row block of A passes over it.
template <bool kAccumulate>
void gemmPanels(const float* a, Index lda, Index rows, const float* b, Index panelStride,
                Index panels, Index depth, float* c, Index ldc, const float* rowScale) {
    for (Index p = 0; p < panels; ++p) {
        const float* panel = b + p * panelStride;
        float* cp = c + p * kPanel;
        Index r = 0;
        for (; r + kMicroRows <= rows; r += kMicroRows)
            microKernel<kMicroRows, kAccumulate>(a + r * lda, lda, panel, depth, cp + r * ldc, ldc,
                                                 rowScale + r);
        const float* ar = a + r * lda;
        float* cr = cp + r * ldc;
        const float* sr = rowScale + r;
        switch (rows - r) {
        case 5:
            microKernel<5, kAccumulate>(ar, lda, panel, depth, cr, ldc, sr);
            break;
        case 4:
            microKernel<4, kAccumulate>(ar, lda, panel, depth, cr, ldc, sr);
            break;
        case 3:
            microKernel<3, kAccumulate>(ar, lda, panel, depth, cr, ldc, sr);
            break;
        case 2:
            microKernel<2, kAccumulate>(ar, lda, panel, depth, cr, ldc, sr);
            break;
        case 1:
            microKernel<1, kAccumulate>(ar, lda, panel, depth, cr, ldc, sr);
            break;
        default:
            break;
        }
    }
}

/// K [Sk, D] as panels of 16 keys, each [D][16] (key j of the panel at lane j), zero past Sk:
/// S = Q K^T then streams one contiguous 4 KB panel (D = 64) per 16 keys.
void packKeys(ConstMatrixMap k, Index paddedKeys, float* out) {
    const Index sk = k.rows();
    const Index dim = k.cols();
    for (Index p = 0; p < paddedKeys / kPanel; ++p)
        for (Index j = 0; j < kPanel; ++j) {
            const Index key = p * kPanel + j;
            float* column = out + p * dim * kPanel + j;
            for (Index d = 0; d < dim; ++d)
                column[d * kPanel] = key < sk ? k(key, d) : 0.0f;
        }
}

/// V [Sk, Dv] as panels of 16 output columns, each [paddedKeys][16], zero past Sk and Dv.
void packValues(ConstMatrixMap v, Index paddedKeys, Index paddedDv, float* out) {
    const Index sk = v.rows();
    const Index dv = v.cols();
    for (Index p = 0; p < paddedDv / kPanel; ++p)
        for (Index key = 0; key < paddedKeys; ++key) {
            float* row = out + (p * paddedKeys + key) * kPanel;
            for (Index j = 0; j < kPanel; ++j) {
                const Index col = p * kPanel + j;
                row[j] = key < sk && col < dv ? v(key, col) : 0.0f;
            }
        }
}

/// One online-softmax step of a tile row of `cols` (a multiple of 16) logits, in place:
/// m_new = max(m, rowmax s), P = exp(s - m_new) (shift 0 while m_new is -inf, so a row with no
/// allowed key stays 0), l = exp(m - m_new) l + rowsum P. Returns exp(m - m_new).
inline float onlineSoftmaxRow(float* s, Index cols, float& rowMax, float& rowSum) {
    __m256 max0 = _mm256_set1_ps(kMinusInfF);
    __m256 max1 = max0;
    for (Index c = 0; c < cols; c += kPanel) {
        max0 = _mm256_max_ps(max0, _mm256_load_ps(s + c));
        max1 = _mm256_max_ps(max1, _mm256_load_ps(s + c + 8));
    }
    const float newMax = std::max(rowMax, horizontalMax(_mm256_max_ps(max0, max1)));
    const float shift = newMax > kMinusInfF ? newMax : 0.0f;
    const float rescale = std::exp(rowMax - shift);
    const __m256 shiftVec = _mm256_set1_ps(shift);
    const __m256 log2e = _mm256_set1_ps(kLog2e);
    __m256 sum0 = _mm256_setzero_ps();
    __m256 sum1 = _mm256_setzero_ps();
    for (Index c = 0; c < cols; c += kPanel) {
        const __m256 p0 =
            exp2NonPositive(_mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(s + c), shiftVec), log2e));
        const __m256 p1 = exp2NonPositive(
            _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(s + c + 8), shiftVec), log2e));
        _mm256_store_ps(s + c, p0);
        _mm256_store_ps(s + c + 8, p1);
        sum0 = _mm256_add_ps(sum0, p0);
        sum1 = _mm256_add_ps(sum1, p1);
    }
    rowSum = rescale * rowSum + horizontalSum(_mm256_add_ps(sum0, sum1));
    rowMax = newMax;
    return rescale;
}

/// s = exp(s - shift) * factor over `cols` (a multiple of 16) floats.
inline void expShiftedScaled(float* s, Index cols, float shift, float factor) {
    const __m256 shiftVec = _mm256_set1_ps(shift);
    const __m256 log2e = _mm256_set1_ps(kLog2e);
    const __m256 factorVec = _mm256_set1_ps(factor);
    for (Index c = 0; c < cols; c += 8)
        _mm256_store_ps(s + c,
                        _mm256_mul_ps(exp2NonPositive(_mm256_mul_ps(
                                          _mm256_sub_ps(_mm256_load_ps(s + c), shiftVec), log2e)),
                                      factorVec));
}

/// Whether the tile rows x keys [k0, kEnd) holds at least one allowed cell.
bool tileHasAllowed(const std::vector<KeyRange>& ranges, Index rows, Index k0, Index kEnd) {
    for (Index i = 0; i < rows; ++i) {
        const KeyRange& r = ranges[static_cast<std::size_t>(i)];
        if (std::max(r.begin, k0) < std::min(r.end, kEnd)) return true;
    }
    return false;
}

/// Sets the cells of the tile rows x keys [k0, k0 + cols) outside each row's allowed keys
/// (the padding past Sk included) to -inf.
void maskTile(float* logits, Index ld, const std::vector<KeyRange>& ranges, Index rows, Index k0,
              Index cols) {
    for (Index i = 0; i < rows; ++i) {
        const KeyRange& r = ranges[static_cast<std::size_t>(i)];
        float* row = logits + i * ld;
        const Index allowBegin = std::clamp<Index>(r.begin - k0, 0, cols);
        const Index allowEnd = std::clamp<Index>(r.end - k0, allowBegin, cols);
        std::fill(row, row + allowBegin, kMinusInfF);
        std::fill(row + allowEnd, row + cols, kMinusInfF);
    }
}

/// The packed K and V of one (batch, kv head), made by the first query chunk that needs them.
struct PackedHead {
    std::once_flag once;
    AlignedFloats keys;   // [paddedKeys / 16][D][16]
    AlignedFloats values; // [paddedDv / 16][paddedKeys][16]
};

/// Per-thread tile buffers, reused across chunks and calls.
struct Scratch {
    AlignedFloats scaledQ; // [rows, D]
    AlignedFloats logits;  // [rows, tile columns]: S, then P
    AlignedFloats acc;     // [rows, paddedDv]: un-normalised O
    std::vector<float> rowMax, rowSum, rescale;
    std::vector<KeyRange> ranges;
};

struct RunShape {
    Index sq, sk, dim, dv;
    Index paddedKeys, paddedDv;
    Index tileRows, tileCols; // tileCols = paddedKeys for softmax: one kv tile per row block
    bool softmax;
};

/// Alg. 1 over the query rows [rowBegin, rowEnd) of one head: q tiles of tileRows, kv tiles of
/// tileCols aligned to 16 keys, tiles with no allowed cell skipped, O / l at the end.
/// Softmax writes the weights P / l when the job asks for them.
void runRows(const HeadJob& job, const RunShape& shape, const PackedHead& packed, Index rowBegin,
             Index rowEnd, Scratch& scratch) {
    const Index dim = shape.dim;
    const Index paddedDv = shape.paddedDv;
    const Index ldLogits = shape.tileCols;
    scratch.scaledQ.reserve(shape.tileRows * std::max<Index>(dim, 1));
    scratch.logits.reserve(shape.tileRows * ldLogits);
    scratch.acc.reserve(shape.tileRows * std::max<Index>(paddedDv, kPanel));
    scratch.rowMax.resize(static_cast<std::size_t>(shape.tileRows));
    scratch.rowSum.resize(static_cast<std::size_t>(shape.tileRows));
    scratch.rescale.resize(static_cast<std::size_t>(shape.tileRows));
    scratch.ranges.resize(static_cast<std::size_t>(shape.tileRows));
    float* scaledQ = scratch.scaledQ.data();
    float* logits = scratch.logits.data();
    float* acc = scratch.acc.data();
    float* rowMax = scratch.rowMax.data();
    float* rowSum = scratch.rowSum.data();
    float* rescale = scratch.rescale.data();
    MatrixMap output = job.out;

    for (Index q0 = rowBegin; q0 < rowEnd; q0 += shape.tileRows) {
        const Index br = std::min(shape.tileRows, rowEnd - q0);
        // The scale folds into Q once per tile.
        for (Index i = 0; i < br; ++i)
            for (Index d = 0; d < dim; ++d)
                scaledQ[i * dim + d] = job.q(q0 + i, d) * job.scale;
        Index keysLo = shape.sk;
        Index keysHi = 0;
        for (Index i = 0; i < br; ++i) {
            KeyRange range = keyRange(job.mask, job.batch, q0 + i, shape.sq, shape.sk);
            range.begin = std::clamp<Index>(range.begin, 0, shape.sk);
            range.end = std::clamp<Index>(range.end, range.begin, shape.sk);
            scratch.ranges[static_cast<std::size_t>(i)] = range;
            rowMax[i] = kMinusInfF;
            rowSum[i] = 0.0f;
            if (range.empty()) continue;
            keysLo = std::min(keysLo, range.begin);
            keysHi = std::max(keysHi, range.end);
        }
        const Index tilesBegin = keysLo / kPanel * kPanel;
        const Index tilesEnd = roundUp(keysHi, kPanel);
        bool started = false;
        Index lastTileEnd = tilesBegin;
        for (Index k0 = tilesBegin; k0 < tilesEnd; k0 += shape.tileCols) {
            const Index kEnd = std::min(k0 + shape.tileCols, tilesEnd);
            const Index cols = kEnd - k0;
            if (!tileHasAllowed(scratch.ranges, br, k0, kEnd)) continue;
            lastTileEnd = kEnd;
            // S = (scale Q_i) K_j^T
            gemmPanels<false>(scaledQ, dim, br, packed.keys.data() + k0 * dim, dim * kPanel,
                              cols / kPanel, dim, logits, ldLogits, rescale);
            maskTile(logits, ldLogits, scratch.ranges, br, k0, cols);
            for (Index i = 0; i < br; ++i)
                rescale[i] = onlineSoftmaxRow(logits + i * ldLogits, cols, rowMax[i], rowSum[i]);
            // O = diag(exp(m - m_new)) O + P V_j
            if (started)
                gemmPanels<true>(logits, ldLogits, br, packed.values.data() + k0 * kPanel,
                                 shape.paddedKeys * kPanel, paddedDv / kPanel, cols, acc, paddedDv,
                                 rescale);
            else
                gemmPanels<false>(logits, ldLogits, br, packed.values.data() + k0 * kPanel,
                                  shape.paddedKeys * kPanel, paddedDv / kPanel, cols, acc, paddedDv,
                                  rescale);
            started = true;
        }

        // O_i = diag(l)^-1 O_i; a row with l == 0 saw no allowed key: zero and flagged.
        for (Index i = 0; i < br; ++i) {
            const float inverse = rowSum[i] > 0.0f ? 1.0f / rowSum[i] : 0.0f;
            rescale[i] = inverse;
            for (Index d = 0; d < shape.dv; ++d)
                output(q0 + i, d) = started ? acc[i * paddedDv + d] * inverse : 0.0f;
            if (job.emptyRows && !(rowSum[i] > 0.0f)) job.emptyRows[q0 + i] = 1;
        }
        if (!shape.softmax && job.weights) {
            // Exact weights by a second pass: w = exp(s - m_final) / l_final, tile by tile.
            for (Index i = 0; i < br; ++i) {
                float* weights = job.weights + (q0 + i) * shape.sk;
                std::fill(weights, weights + std::min(tilesBegin, shape.sk), 0.0f);
                std::fill(weights + std::min(tilesEnd, shape.sk), weights + shape.sk, 0.0f);
            }
            for (Index k0 = tilesBegin; k0 < tilesEnd; k0 += shape.tileCols) {
                const Index kEnd = std::min(k0 + shape.tileCols, tilesEnd);
                const Index cols = kEnd - k0;
                const Index copyEnd = std::min(kEnd, shape.sk);
                if (!tileHasAllowed(scratch.ranges, br, k0, kEnd)) {
                    for (Index i = 0; i < br; ++i)
                        std::fill(job.weights + (q0 + i) * shape.sk + k0,
                                  job.weights + (q0 + i) * shape.sk + copyEnd, 0.0f);
                    continue;
                }
                gemmPanels<false>(scaledQ, dim, br, packed.keys.data() + k0 * dim, dim * kPanel,
                                  cols / kPanel, dim, logits, ldLogits, rescale);
                maskTile(logits, ldLogits, scratch.ranges, br, k0, cols);
                for (Index i = 0; i < br; ++i) {
                    float* row = logits + i * ldLogits;
                    const float shift = rowMax[i] > kMinusInfF ? rowMax[i] : 0.0f;
                    expShiftedScaled(row, cols, shift, rescale[i]);
                    std::copy(row, row + (copyEnd - k0), job.weights + (q0 + i) * shape.sk + k0);
                }
            }
        }
        if (shape.softmax && job.weights) {
            // The one kv tile [tilesBegin, lastTileEnd) holds P; weights are P / l, 0 elsewhere.
            const Index copyEnd = std::min(lastTileEnd, shape.sk);
            for (Index i = 0; i < br; ++i) {
                float* weights = job.weights + (q0 + i) * shape.sk;
                if (!started) {
                    std::fill(weights, weights + shape.sk, 0.0f);
                    continue;
                }
                const float* p = logits + i * ldLogits;
                std::fill(weights, weights + tilesBegin, 0.0f);
                for (Index c = tilesBegin; c < copyEnd; ++c)
                    weights[c] = p[c - tilesBegin] * rescale[i];
                std::fill(weights + copyEnd, weights + shape.sk, 0.0f);
            }
        }
    }
}

} // namespace

bool fastPathServes(const AttentionSpec& spec, bool tracing) {
    const bool variantFits = spec.variant == Variant::Softmax || spec.variant == Variant::Flash;
    return variantFits && !tracing && !spec.wantScores && !spec.dropout.active() &&
           !spec.mask.custom && !spec.softcap && !spec.scoreBias;
}

void attendFast(const Qkv& qkv, const AttentionSpec& spec, Attention& result) {
    const Index batch = qkv.q.batch;
    const Index heads = qkv.q.heads;
    const Index kvHeads = qkv.k.heads;
    RunShape shape{};
    shape.sq = qkv.q.seq;
    shape.sk = qkv.k.seq;
    shape.dim = qkv.q.dim;
    shape.dv = qkv.v.dim;
    shape.paddedKeys = roundUp(shape.sk, kPanel);
    shape.paddedDv = roundUp(shape.dv, kPanel);
    shape.softmax = spec.variant == Variant::Softmax;
    shape.tileRows = shape.softmax ? kSoftmaxRows : kFlashRows;
    shape.tileCols = shape.softmax ? std::max<Index>(shape.paddedKeys, kPanel) : kFlashCols;
    if (batch * heads == 0 || shape.sq == 0) return;

    // Work items are (batch, head, query chunk): enough of them that threads balance under a
    // causal mask, whose lower chunks cost more.
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    const Index threads = spec.threads > 0 ? spec.threads : static_cast<Index>(hardware);
    const Index tiles = (shape.sq + shape.tileRows - 1) / shape.tileRows;
    const Index wantedChunks = (8 * threads + batch * heads - 1) / (batch * heads);
    const Index chunks = std::clamp<Index>(wantedChunks, 1, tiles);
    const Index chunkRows = (tiles + chunks - 1) / chunks * shape.tileRows;
    const Index chunkCount = (shape.sq + chunkRows - 1) / chunkRows;

    std::unique_ptr<PackedHead[]> packed(
        new PackedHead[static_cast<std::size_t>(std::max<Index>(batch * kvHeads, 1))]);
    const auto cells = static_cast<std::size_t>(shape.sq * shape.sk);
    // A step of a few rows (one appended token) is not worth waking many threads for.
    const double workPerItem = static_cast<double>(std::min(chunkRows, shape.sq)) *
                               static_cast<double>(shape.sk) *
                               static_cast<double>(shape.dim + shape.paddedDv);
    detail::parallelFor(batch * heads * chunkCount, spec.threads, workPerItem, [&](Index item) {
        // Every head's last chunk first, then the next-to-last...: under a causal mask the
        // costly chunks go first and the cheap ones fill the gaps at the end.
        const Index pair = item % (batch * heads);
        const Index chunk = chunkCount - 1 - item / (batch * heads);
        const Index b = pair / heads;
        const Index h = pair % heads;
        const Index kvHead = kvHeadOf(h, heads, kvHeads);
        PackedHead& kv = packed[static_cast<std::size_t>(b * kvHeads + kvHead)];
        std::call_once(kv.once, [&] {
            kv.keys.reserve(shape.paddedKeys * std::max<Index>(shape.dim, 1));
            kv.values.reserve(shape.paddedKeys * std::max<Index>(shape.paddedDv, kPanel));
            packKeys(qkv.k.head(b, kvHead), shape.paddedKeys, kv.keys.data());
            packValues(qkv.v.head(b, kvHead), shape.paddedKeys, shape.paddedDv, kv.values.data());
        });
        const HeadJob job{qkv.q.head(b, h), qkv.k.head(b, kvHead), qkv.v.head(b, kvHead),
                          result.output.head(b, h),
                          spec.wantWeights
                              ? result.weights.data.data() + static_cast<std::size_t>(pair) * cells
                              : nullptr,
                          nullptr, spec.mask, b, static_cast<float>(result.scale),
                          // The mask does not depend on the head: head 0 reports the empty rows.
                          h == 0 ? result.emptyRows.data() + b * shape.sq : nullptr, nullptr};
        thread_local Scratch scratch;
        const Index rowBegin = chunk * chunkRows;
        runRows(job, shape, kv, rowBegin, std::min(rowBegin + chunkRows, shape.sq), scratch);
    });
}

void exp2NonPositiveFast(const float* in, float* out, Index n) {
    Index i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, exp2NonPositive(_mm256_loadu_ps(in + i)));
    if (i < n) {
        float lanes[8] = {};
        std::copy(in + i, in + n, lanes);
        _mm256_storeu_ps(lanes, exp2NonPositive(_mm256_loadu_ps(lanes)));
        std::copy(lanes, lanes + (n - i), out + i);
    }
}

#else // no AVX2 + FMA: the generic kernels serve every run

bool fastPathServes(const AttentionSpec&, bool) {
    return false;
}

void attendFast(const Qkv&, const AttentionSpec&, Attention&) {}

void exp2NonPositiveFast(const float* in, float* out, Index n) {
    for (Index i = 0; i < n; ++i)
        out[i] = std::exp2(in[i]);
}

#endif

} // namespace attnlab::kernels

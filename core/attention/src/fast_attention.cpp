// The float eval-mode fast path of softmax and flash attention (fast_attention.h).

#include "fast_attention.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "attnlab/base/parallel.h"
#include "attnlab/base/simd_kernels.h"
#include "attnlab/base/tensor.h"
#include "attnlab/base/threads.h"
#include "kernels.h"

namespace attnlab::kernels {

namespace {

using simd::GemmStart;

constexpr float kMinusInfF = -std::numeric_limits<float>::infinity();
/// Columns of one packed panel.
constexpr Index kPanel = simd::kPanelWidth;
/// Flash tiles: Q_i is 48 rows (8 micro-kernel row blocks), K_j / V_j 128 keys. A tile's
/// S (24 KB), the Q_i slice and one K panel stay in L1/L2.
constexpr Index kFlashRows = 48;
constexpr Index kFlashCols = 128;
/// Softmax: a row block of 24 query rows against every allowed key (S = 24 x Sk).
constexpr Index kSoftmaxRows = 24;

Index roundUp(Index n, Index multiple) {
    return (n + multiple - 1) / multiple * multiple;
}

/// v with room for `count` floats (whole panels) at a cache line, its old values dropped:
/// grown on demand and never shrunk, and new floats left unwritten (AlignedAllocator).
void growTo(AlignedVector<float>& v, Index count) {
    const auto wanted = static_cast<std::size_t>(roundUp(std::max<Index>(count, 1), kPanel));
    if (v.size() >= wanted) return;
    v.clear(); // nothing to copy into the larger buffer
    v.resize(wanted);
}

/// C[rows x 16 panels] (start) A[rows x depth] times `panels` packed panels of B starting at
/// b, each [depth][16], `panelStride` floats apart, on the active kernel target.
void gemmPanels(GemmStart start, const float* a, Index lda, Index rows, const float* b,
                Index panelStride, Index panels, Index depth, float* c, Index ldc,
                const float* rowScale) {
    simd::kernels().gemm(start, a, lda, rows, b, kPanel, panelStride, panels, depth, c, ldc,
                         rowScale, nullptr);
}

/// K [Sk, D] as panels of 16 keys, each [D][16] (key j of the panel at lane j), zero past Sk:
/// S = Q K^T then streams one contiguous 4 KB panel (D = 64) per 16 keys.
void packKeys(ConstMatrixMap k, float* out) {
    simd::packRowPanels(k.data(), k.cols(), k.rows(), k.cols(), out);
}

/// V [Sk, Dv] as panels of 16 output columns, each [paddedKeys][16], zero past Sk and Dv.
void packValues(ConstMatrixMap v, Index paddedKeys, Index paddedDv, float* out) {
    const Index sk = v.rows();
    const Index dv = v.cols();
    for (Index p = 0; p < paddedDv / kPanel; ++p) {
        const Index col = p * kPanel;
        const Index width = std::clamp<Index>(dv - col, 0, kPanel);
        float* panel = out + p * paddedKeys * kPanel;
        for (Index key = 0; key < sk; ++key) {
            const float* from = v.data() + key * dv + col;
            float* row = panel + key * kPanel;
            if (width == kPanel) {
                std::copy_n(from, kPanel, row);
            } else {
                std::copy_n(from, width, row);
                std::fill(row + width, row + kPanel, 0.0f);
            }
        }
        std::fill(panel + sk * kPanel, panel + paddedKeys * kPanel, 0.0f);
    }
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
    float* keys = nullptr;   // [paddedKeys / 16][D][16]
    float* values = nullptr; // [paddedDv / 16][paddedKeys][16]
};

/// Per-thread tile buffers, reused across chunks and calls.
struct Scratch {
    AlignedVector<float> scaledQ; // [rows, D]
    AlignedVector<float> logits;  // [rows, tile columns]: S, then P
    AlignedVector<float> acc;     // [rows, paddedDv]: un-normalised O
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
    growTo(scratch.scaledQ, shape.tileRows * std::max<Index>(dim, 1));
    growTo(scratch.logits, shape.tileRows * ldLogits);
    growTo(scratch.acc, shape.tileRows * std::max<Index>(paddedDv, kPanel));
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
    const simd::Kernels& kernels = simd::kernels();

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
            gemmPanels(GemmStart::Zero, scaledQ, dim, br, packed.keys + k0 * dim, dim * kPanel,
                       cols / kPanel, dim, logits, ldLogits, rescale);
            maskTile(logits, ldLogits, scratch.ranges, br, k0, cols);
            for (Index i = 0; i < br; ++i)
                rescale[i] =
                    kernels.onlineSoftmaxRow(logits + i * ldLogits, cols, rowMax[i], rowSum[i]);
            // O = diag(exp(m - m_new)) O + P V_j
            if (started)
                gemmPanels(GemmStart::Scale, logits, ldLogits, br, packed.values + k0 * kPanel,
                           shape.paddedKeys * kPanel, paddedDv / kPanel, cols, acc, paddedDv,
                           rescale);
            else
                gemmPanels(GemmStart::Zero, logits, ldLogits, br, packed.values + k0 * kPanel,
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
                gemmPanels(GemmStart::Zero, scaledQ, dim, br, packed.keys + k0 * dim, dim * kPanel,
                           cols / kPanel, dim, logits, ldLogits, rescale);
                maskTile(logits, ldLogits, scratch.ranges, br, k0, cols);
                for (Index i = 0; i < br; ++i) {
                    float* row = logits + i * ldLogits;
                    const float shift = rowMax[i] > kMinusInfF ? rowMax[i] : 0.0f;
                    kernels.expShiftedScaled(row, cols, shift, rescale[i]);
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

Index fastPathRowBlock(const AttentionSpec& spec) {
    return spec.variant == Variant::Softmax ? kSoftmaxRows : kFlashRows;
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
    const Index threads = resolveThreads(spec.threads);
    const Index tiles = (shape.sq + shape.tileRows - 1) / shape.tileRows;
    const Index wantedChunks = (8 * threads + batch * heads - 1) / (batch * heads);
    const Index chunks = std::clamp<Index>(wantedChunks, 1, tiles);
    const Index chunkRows = (tiles + chunks - 1) / chunks * shape.tileRows;
    const Index chunkCount = (shape.sq + chunkRows - 1) / chunkRows;

    // Every (batch, kv head)'s packed K and V in one buffer. Below the huge-page size it is
    // kept on the calling thread from call to call: a model's layers pack into the same pages
    // instead of faulting new ones in every layer. A larger one is freed after the call.
    const Index pairs = std::max<Index>(batch * kvHeads, 1);
    const Index keyFloats = roundUp(shape.paddedKeys * std::max<Index>(shape.dim, 1), kPanel);
    const Index valueFloats = shape.paddedKeys * std::max<Index>(shape.paddedDv, kPanel);
    const Index packFloats = pairs * (keyFloats + valueFloats);
    thread_local AlignedVector<float> keptPacks;
    AlignedVector<float> ownPacks;
    AlignedVector<float>& packs =
        static_cast<std::size_t>(packFloats) * sizeof(float) < detail::kHugePageBytes ? keptPacks
                                                                                      : ownPacks;
    growTo(packs, packFloats);
    std::unique_ptr<PackedHead[]> packed(new PackedHead[static_cast<std::size_t>(pairs)]);
    for (Index pair = 0; pair < pairs; ++pair) {
        packed[static_cast<std::size_t>(pair)].keys = packs.data() + pair * keyFloats;
        packed[static_cast<std::size_t>(pair)].values =
            packs.data() + pairs * keyFloats + pair * valueFloats;
    }
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
            packKeys(qkv.k.head(b, kvHead), kv.keys);
            packValues(qkv.v.head(b, kvHead), shape.paddedKeys, shape.paddedDv, kv.values);
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
    simd::kernels().exp2NonPositive(in, out, n);
}

} // namespace attnlab::kernels

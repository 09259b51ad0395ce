// The forward pass, one readable loop over layers (llama2.c's run.c is the model) that reads
// the architecture's traits, never its name: embed (scaled), then per block norm -> q/k/v ->
// (q/k norm, RoPE) -> attend() from the core -> output projection (-> norm) -> residual, and
// the MLP the same way, sequential or parallel; the final norm and lm head (scaled, capped)
// where logits are asked for. GEMMs run on threads in fixed blocks of output columns (same bytes
// at any thread count) through the kernels' GEMM; F16/BF16 weights are widened a block at a
// time inside them.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <numbers>
#include <numeric>
#include <set>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/base/parallel.h"
#include "attnlab/base/simd_kernels.h"
#include "attnlab/base/threads.h"
#include "attnlab/model/model.h"
#include "forward_seams.h"

namespace attnlab::model {
namespace {

/// Runs fn(begin, end, next) over [0, count) in blocks of kColumnBlock columns (after a first
/// block of `lead` columns where lead > 0), the blocks shared out over up to `threads` workers of
/// the pool (the calling thread one of them), as many as the work is worth (`workPerColumn`
/// multiply-adds a column). Each worker goes through a run of consecutive blocks in order
/// (parallelRuns), and `next` is where the block it will probably work on next begins (-1 where
/// none is left): a projection asks for that block's weights while it works on this one. The
/// blocks are the same whatever the thread count: with Eigen's GEMM, which chose its depth
/// blocking and so the order of each dot product's sum from the shape of the product it was
/// given, a split by thread count gave logits whose last bits depended on --threads; the
/// kernels' GEMM sums in order whatever the shape, and the fixed blocks keep each item's work
/// and panel the same.
template <typename Fn>
void parallelColumns(Index count, int threads, double workPerColumn, const Fn& fn, Index lead = 0) {
    constexpr Index kColumnBlock = 64;
    lead = std::min(lead, count);
    const Index first = lead > 0 ? 1 : 0;
    const Index blocks = first + (count - lead + kColumnBlock - 1) / kColumnBlock;
    auto beginOf = [&](Index block) {
        return block < first ? Index{0} : lead + (block - first) * kColumnBlock;
    };
    detail::parallelRuns(
        blocks, threads, workPerColumn * kColumnBlock, [&](Index block, Index next) {
            const Index begin = beginOf(block);
            const Index end = block < first ? lead : std::min(count, begin + kColumnBlock);
            fn(begin, end, next >= 0 ? beginOf(next) : Index{-1});
        });
}

/// Fewer rows than this (a few tokens appended through the KV cache) are not worth packing for:
/// packing reads and writes the weight's block once more, as much work as the product itself.
constexpr Index kPackedGemmRows = 16;

constexpr Index kPanel = simd::kPanelWidth;

/// A panel row's bytes: one 64-byte cache line.
constexpr auto kLine = static_cast<std::uintptr_t>(kPanel * sizeof(float));

Index panelsFor(Index columns) {
    return (columns + kPanel - 1) / kPanel;
}

/// y[:, begin, end) = x W_block^T or x W_block through Eigen on the block as it is (F32) or
/// widened into the thread's panel (F16/BF16): for a few rows, a matrix-vector product.
void projectFewRows(const Matrix& x, const Weight& w, Index begin, Index end, Matrix& y) {
    auto block = y.middleCols(begin, end - begin);
    if (w.isFloat32()) {
        const auto weight = w.matrix();
        if (w.inOut)
            block.noalias() = x * weight.middleCols(begin, end - begin);
        else
            block.noalias() = x * weight.middleRows(begin, end - begin).transpose();
        return;
    }
    thread_local Matrix panel; // at most kColumnBlock outputs x in, kept for the next call
    if (w.inOut) {
        panel.resize(w.rows, end - begin);
        w.widenColumns(begin, end - begin, panel.data());
        block.noalias() = x * panel;
    } else {
        panel.resize(end - begin, w.cols);
        w.widenRows(begin, end - begin, panel.data());
        block.noalias() = x * panel.transpose();
    }
}

/// m.resize(rows, cols), asking for huge pages where the buffer is large enough
/// (detail::kHugePageBytes), before anything writes it: every position's logits are tens of MB,
/// and 2 MB pages fault them in 500 times less often than 4 KB ones (3-4 % of GPT-2's forward
/// with its logits at 128 tokens).
void resizeFresh(Matrix& m, Index rows, Index cols) {
    const bool fresh = m.size() != rows * cols; // else Eigen keeps the buffer, already advised
    m.resize(rows, cols);
    if (fresh)
        detail::adviseHugePages(m.data(), static_cast<std::size_t>(m.size()) * sizeof(float));
}

/// The columns before a float32 Conv1D's first panel that starts on a cache line: the GEMM reads
/// such a weight in place, 16 columns of a row at a time, and transformers writes a tensor
/// wherever 8 bytes align it, so a panel from column 0 could straddle two lines in every row (8 %
/// of GPT-2's forward). project() gives these columns, with the last kPanel - lead ones, a block
/// of their own (projectWrapped) and starts the in-place panels after them. The sums, one FMA
/// chain per output, do not depend on where the blocks start.
Index columnsBeforeALine(const Weight& w) {
    if (!w.inOut || !w.isFloat32() || w.cols % kPanel != 0 || w.cols == 0) return 0;
    const auto address = reinterpret_cast<std::uintptr_t>(w.values.data());
    return static_cast<Index>((kLine - address % kLine) % kLine / sizeof(float));
}

/// Whether project takes the kernels' GEMM for this weight at any row count: a Conv1D of whole
/// panels, whose float32 weight is read in place as the panels (no packing: nothing to save on
/// a few rows) and whose 16-bit one is widened into them, as a few rows' product widens it too.
/// Its rows then have the same bits at any row count.
bool anyRowCount(const Weight& w) {
    return w.inOut && w.cols % kPanel == 0;
}

/// Conv1D [in, out]: y[:, begin, end) = x W_block. A float32 weight's whole panels are read in
/// place (its rows are B's rows), asking for the first panels of the block that begins at
/// `next` (where next >= 0) as the last ones are worked on; the rest, and a 16-bit block, are
/// widened into 16-column panels B [in][16 panels] in the thread's buffer, zero past end.
void projectConv1D(const Matrix& x, const Weight& w, Index begin, Index end, Index next, Matrix& y,
                   const simd::Kernels& kernels) {
    thread_local AlignedVector<float> packed; // in x kColumnBlock, kept for the next call
    thread_local AlignedVector<float> widened;
    thread_local Matrix tail; // a block narrower than its panels
    const Index rows = x.rows();
    const Index depth = w.rows;
    const Index inPlace = w.isFloat32() ? (end - begin) / kPanel * kPanel : 0;
    if (inPlace > 0) // the next block is in the same weight: a float32 one too
        kernels.gemm(simd::GemmStart::Zero, x.data(), depth, rows, w.values.data() + begin, w.cols,
                     kPanel, inPlace / kPanel, depth, y.data() + begin, y.cols(), nullptr,
                     next >= 0 ? w.values.data() + next : nullptr);
    begin += inPlace;
    const Index width = end - begin;
    if (width == 0) return;
    const Index ld = panelsFor(width) * kPanel;
    packed.resize(static_cast<std::size_t>(depth * ld));
    if (width == ld) {
        w.widenColumns(begin, width, packed.data());
    } else {
        widened.resize(static_cast<std::size_t>(depth * width));
        w.widenColumns(begin, width, widened.data());
        for (Index k = 0; k < depth; ++k) {
            float* row = packed.data() + k * ld;
            std::copy_n(widened.data() + k * width, width, row);
            std::fill(row + width, row + ld, 0.0f);
        }
        tail.resize(rows, ld);
    }
    kernels.gemm(simd::GemmStart::Zero, x.data(), depth, rows, packed.data(), ld, kPanel,
                 ld / kPanel, depth, width == ld ? y.data() + begin : tail.data(),
                 width == ld ? y.cols() : ld, nullptr, nullptr);
    if (width != ld) y.middleCols(begin, width) = tail.leftCols(width);
}

/// A float32 Conv1D read in place from `lead` columns in (columnsBeforeALine): its first lead
/// columns and its last kPanel - lead ones, y[:, 0, lead) and y[:, cols - kPanel + lead, cols),
/// as one panel. In the file a row's last columns and the next row's first are one line, so the
/// panel is copied from one line per row (copying the two ends apart, each a short copy from a
/// line of its own per row, took 1-2 % of GPT-2's forward as transformers lays it out).
void projectWrapped(const Matrix& x, const Weight& w, Index lead, Matrix& y,
                    const simd::Kernels& kernels) {
    thread_local AlignedVector<float> panel; // in x kPanel, kept for the next call
    thread_local Matrix out;
    const Index depth = w.rows;
    const Index cols = w.cols;
    const Index trail = kPanel - lead;
    panel.resize(static_cast<std::size_t>(depth * kPanel));
    for (Index k = 0; k < depth; ++k) {
        const float* row = w.values.data() + k * cols;
        float* to = panel.data() + k * kPanel;
        std::copy_n(row, lead, to);
        std::copy_n(row + cols - trail, trail, to + lead);
    }
    out.resize(x.rows(), kPanel);
    kernels.gemm(simd::GemmStart::Zero, x.data(), depth, x.rows(), panel.data(), kPanel, kPanel, 1,
                 depth, out.data(), kPanel, nullptr, nullptr);
    y.leftCols(lead) = out.leftCols(lead);
    y.rightCols(trail) = out.rightCols(trail);
}

/// x's rows as 16-row panels [row panels][in][16] (x^T, zero past the last row): the B of
/// y^T = W x^T, made once per projection and read by every block.
void packRows(const Matrix& x, AlignedVector<float>& packed) {
    packed.resize(static_cast<std::size_t>(panelsFor(x.rows()) * x.cols() * kPanel));
    simd::packRowPanels(x.data(), x.cols(), x.rows(), x.cols(), packed.data());
}

/// nn.Linear [out, in]: y[:, begin, end)^T = W_block x^T with the block's rows as A, in place
/// (F32) or widened into the thread's buffer, against x's packed rows; the [outputs, rows]
/// result is transposed into y. The same FMA chain per output as x W^T (a product does not
/// depend on the order of its factors).
void projectLinear(const Matrix& x, const AlignedVector<float>& packedRows, const Weight& w,
                   Index begin, Index end, Matrix& y, const simd::Kernels& kernels) {
    thread_local AlignedVector<float> widened; // kColumnBlock x in, kept for the next call
    thread_local AlignedVector<float> transposed;
    const Index rows = x.rows();
    const Index depth = w.cols;
    const Index width = end - begin;
    const Index ld = panelsFor(rows) * kPanel;
    const float* block = nullptr;
    if (w.isFloat32()) {
        block = w.values.data() + begin * depth;
    } else {
        widened.resize(static_cast<std::size_t>(width * depth));
        w.widenRows(begin, width, widened.data());
        block = widened.data();
    }
    transposed.resize(static_cast<std::size_t>(width * ld));
    kernels.gemm(simd::GemmStart::Zero, block, depth, width, packedRows.data(), kPanel,
                 depth * kPanel, ld / kPanel, depth, transposed.data(), ld, nullptr, nullptr);
    // Back to rows, 8 x 8 tiles at a time (3-4 % of a long text's forward element by element).
    kernels.transpose(transposed.data(), ld, width, rows, y.data() + begin, y.cols());
}

/// What a projection's column block does after its product and bias, on the same thread while the
/// block is in cache: fn(begin, end) on y's columns [begin, end), or nothing.
using ColumnsDone = std::function<void(Index begin, Index end)>;

/// y = x W^T (+ bias) for an nn.Linear weight W [out, in], or y = x W for a Conv1D [in, out],
/// in blocks of kColumnBlock outputs shared over the threads, each then given to `done`. From
/// kPackedGemmRows rows (any rows where anyRowCount) through the kernels' register-blocked GEMM
/// (attnlab/base/simd_kernels.h), F16/BF16 blocks widened into the thread's own buffer: each output
/// is one FMA chain over the inputs in order, so the result is the same at any thread count, equals
/// the product with a float32 copy of the weight bit for bit, and is the same on either SIMD
/// target. Fewer rows: Eigen on the block (projectFewRows), also the same at any thread count and
/// for the float32 copy.
void project(const Matrix& x, const Linear& p, Matrix& y, int threads,
             const ColumnsDone& done = {}) {
    const Weight& w = p.weight;
    const Index outputs = w.outputs();
    ATTN_CHECK(x.cols() == (w.inOut ? w.rows : w.cols), "project: " << x.cols()
                                                                    << " inputs for a weight of "
                                                                    << (w.inOut ? w.rows : w.cols));
    resizeFresh(y, x.rows(), outputs);
    const double workPerColumn = static_cast<double>(x.rows()) * static_cast<double>(x.cols());
    const simd::Kernels& kernels = simd::kernels();
    const bool packed = anyRowCount(w) || x.rows() >= kPackedGemmRows;
    AlignedVector<float> packedRows;
    if (packed && !w.inOut) packRows(x, packedRows);
    const Index lead = packed ? columnsBeforeALine(w) : 0;
    const Index trail = lead > 0 ? kPanel - lead : 0; // in the lead block too
    auto finish = [&](Index begin, Index end) {
        if (!p.bias.empty())
            y.middleCols(begin, end - begin).rowwise() +=
                p.bias.vector().segment(begin, end - begin).transpose();
        if (done) done(begin, end);
    };
    parallelColumns(
        outputs - trail, threads, workPerColumn,
        [&](Index begin, Index end, Index next) {
            if (lead > 0 && begin == 0) {
                projectWrapped(x, w, lead, y, kernels);
                finish(0, lead);
                finish(outputs - trail, outputs);
                return;
            }
            if (!packed)
                projectFewRows(x, w, begin, end, y);
            else if (w.inOut)
                projectConv1D(x, w, begin, end, next, y, kernels);
            else
                projectLinear(x, packedRows, w, begin, end, y, kernels);
            finish(begin, end);
        },
        lead);
}

/// The family's norm over each `width` segment of each row of x, in place: LayerNorm
/// ((x - mean) / sqrt(var + eps) * w + b, biased variance), RMSNorm (x / rms * w) or Gemma's
/// (x / rms * (1 + w)).
void normalize(Eigen::Ref<Matrix> x, const Norm& n, NormKind kind, double eps, Index width) {
    const auto weight = n.weight.vector().transpose().array();
    const float epsilon = static_cast<float>(eps);
    for (Index i = 0; i < x.rows(); ++i)
        for (Index at = 0; at < x.cols(); at += width) {
            auto segment = x.row(i).segment(at, width).array();
            switch (kind) {
            case NormKind::LayerNorm: {
                const float mean = segment.mean();
                const float variance = (segment - mean).square().mean();
                const float inv = 1.0f / std::sqrt(variance + epsilon);
                if (n.bias.empty())
                    segment = (segment - mean) * inv * weight;
                else
                    segment = (segment - mean) * inv * weight + n.bias.vector().transpose().array();
                break;
            }
            case NormKind::RmsNorm: {
                const float inv = 1.0f / std::sqrt(segment.square().mean() + epsilon);
                segment = segment * inv * weight;
                break;
            }
            case NormKind::RmsNormPlusOne: {
                const float inv = 1.0f / std::sqrt(segment.square().mean() + epsilon);
                segment = segment * inv * (1.0f + weight);
                break;
            }
            }
        }
}

/// out = norm(x) over whole rows.
void normalizeInto(const Matrix& x, const Norm& n, const ModelConfig& c, Matrix& out) {
    out = x;
    normalize(out, n, c.arch().norm, c.normEps, x.cols());
}

/// h = the attention's norm of every row of x (x itself where there is none): the input a
/// parallel block's attention and MLP share (Residual::ParallelSharedNorm).
void sharedNormOf(const Matrix& x, const LayerWeights& w, const ModelConfig& c, Matrix& h) {
    if (w.attnNormIn.empty())
        h = x;
    else
        normalizeInto(x, w.attnNormIn, c, h);
}

/// The main stack's residual rows through its final norm (where it has one), in place.
void applyFinalNorm(const Model& model, Matrix& rows) {
    const ModelConfig& c = model.config;
    if (!model.main.finalNorm.empty())
        normalize(rows, model.main.finalNorm, c.arch().norm, c.normEps, c.hidden);
}

/// The MLP's activation in place. The sigmoid-gated ones (GELU's tanh form, SiLU, quick GELU)
/// run on the kernels' sigmoidGate, row by row; erf and ReLU on Eigen, one element at a time
/// for erf. Each element's bits depend on its value alone, so a block of a projection's columns
/// (project's `done`) is activated to the same bits as the whole matrix.
void activate(Eigen::Ref<Matrix> x, Activation activation) {
    const auto gate = [&x](double a, double b) {
        const simd::Kernels& kernels = simd::kernels();
        for (Index i = 0; i < x.rows(); ++i)
            kernels.sigmoidGate(x.row(i).data(), x.cols(), static_cast<float>(a),
                                static_cast<float>(b));
    };
    switch (activation) {
    case Activation::GeluTanh: { // 0.5 x (1 + tanh(u)) = x sigmoid(2 u), u = c (x + 0.044715 x^3)
        const double twoC = 2.0 * std::sqrt(2.0 / std::numbers::pi);
        gate(twoC, twoC * 0.044715);
        break;
    }
    case Activation::GeluErf: { // 0.5 x (1 + erf(x / sqrt 2))
        const float invSqrt2 = static_cast<float>(1.0 / std::numbers::sqrt2);
        x.array() = x.array().unaryExpr(
            [invSqrt2](float v) { return 0.5f * v * (1.0f + std::erf(v * invSqrt2)); });
        break;
    }
    case Activation::Silu: // x sigmoid(x)
        gate(1.0, 0.0);
        break;
    case Activation::Relu:
        x.array() = x.array().max(0.0f);
        break;
    case Activation::QuickGelu: // x sigmoid(1.702 x)
        gate(1.702, 0.0);
        break;
    }
}

/// cap * tanh(x / cap) in place (Gemma 2's soft-capping).
void softcap(Eigen::Ref<Matrix> x, double cap) {
    const float c = static_cast<float>(cap);
    x.array() = (x.array() / c).tanh() * c;
}

/// Rotate-half RoPE (Hugging Face's apply_rotary_pos_emb) on the first rope.dim values of every
/// head of x [S, heads * hd], row s at position offset + s; cos and sin scaled by the rope's
/// attention factor.
void applyRope(Eigen::Ref<Matrix> x, Index headDim, const Rope& rope, Index offset, Index total) {
    const std::vector<double>& inverseFrequencies = rope.frequenciesFor(total);
    const Index half = rope.dim / 2;
    const float factor = static_cast<float>(rope.attentionFactor);
    std::vector<float> cosines(static_cast<std::size_t>(half));
    std::vector<float> sines(static_cast<std::size_t>(half));
    for (Index s = 0; s < x.rows(); ++s) {
        for (Index i = 0; i < half; ++i) {
            // float32 angle, as Hugging Face computes position x inv_freq
            const float angle = static_cast<float>(offset + s) *
                                static_cast<float>(inverseFrequencies[static_cast<size_t>(i)]);
            cosines[static_cast<std::size_t>(i)] = std::cos(angle) * factor;
            sines[static_cast<std::size_t>(i)] = std::sin(angle) * factor;
        }
        for (Index at = 0; at < x.cols(); at += headDim) {
            float* head = x.row(s).data() + at;
            for (Index i = 0; i < half; ++i) {
                const float a = head[i];
                const float b = head[i + half];
                const float c = cosines[static_cast<std::size_t>(i)];
                const float sn = sines[static_cast<std::size_t>(i)];
                head[i] = a * c - b * sn;
                head[i + half] = b * c + a * sn;
            }
        }
    }
}

/// q, k, v [S, H*hd] / [S, Hkv*hd] of a block's input h, by the family's Q/K/V layout.
void projectQkv(const Matrix& h, const LayerWeights& w, const ModelConfig& c, Matrix& q, Matrix& k,
                Matrix& v, int threads) {
    const Index hd = c.headDim;
    const Index qDim = c.heads * hd;
    const Index kvDim = c.kvHeads * hd;
    switch (c.arch().qkv) {
    case QkvLayout::Separate:
        project(h, w.q, q, threads);
        project(h, w.k, k, threads);
        project(h, w.v, v, threads);
        return;
    case QkvLayout::Fused: {
        Matrix qkv;
        project(h, w.qkv, qkv, threads);
        q = qkv.leftCols(qDim);
        k = qkv.middleCols(qDim, kvDim);
        v = qkv.rightCols(kvDim);
        return;
    }
    case QkvLayout::FusedPerHead: { // GPT-NeoX: view(S, H, 3 hd), then chunk(3)
        Matrix qkv;
        project(h, w.qkv, qkv, threads);
        q.resize(h.rows(), qDim);
        k.resize(h.rows(), kvDim);
        v.resize(h.rows(), kvDim);
        for (Index head = 0; head < c.heads; ++head) {
            q.middleCols(head * hd, hd) = qkv.middleCols(3 * head * hd, hd);
            k.middleCols(head * hd, hd) = qkv.middleCols((3 * head + 1) * hd, hd);
            v.middleCols(head * hd, hd) = qkv.middleCols((3 * head + 2) * hd, hd);
        }
        return;
    }
    }
}

/// The MLP of a block of rows h into out.
void mlpRows(const Matrix& h, const LayerWeights& w, const ModelConfig& c, Matrix& out,
             Matrix& up, Matrix& gate, int threads) {
    // The activation runs in the up projection's column blocks, on the thread that made each
    // block while it is in cache.
    switch (c.arch().mlp) {
    case MlpKind::Plain:
        project(h, w.up, up, threads, [&](Index begin, Index end) {
            activate(up.middleCols(begin, end - begin), c.activation);
        });
        project(up, w.down, out, threads);
        return;
    case MlpKind::Gated:
        project(h, w.gate, gate, threads);
        project(h, w.up, up, threads, [&](Index begin, Index end) { // act(gate) * up
            auto g = gate.middleCols(begin, end - begin);
            activate(g, c.activation);
            g.array() *= up.middleCols(begin, end - begin).array();
        });
        project(gate, w.down, out, threads);
        return;
    case MlpKind::GatedFused: { // gate_up_proj: [gate | up]
        project(h, w.gateUp, up, threads);
        gate = up.leftCols(c.intermediate);
        activate(gate, c.activation);
        gate.array() *= up.rightCols(c.intermediate).array();
        project(gate, w.down, out, threads);
        return;
    }
    }
}

/// Adds `out` (scaled by the residual multiplier) to x, then the post-LN norm where there is one.
void addResidual(Eigen::Ref<Matrix> x, Matrix& out, const Norm& after, const ModelConfig& c) {
    if (c.residualScale != 1.0) out *= static_cast<float>(c.residualScale);
    x += out;
    if (!after.empty()) normalize(x, after, c.arch().norm, c.normEps, c.hidden);
}

/// DINOv2's layer scale: each feature of each row times its factor.
void scaleFeatures(Matrix& rows, const Weight& scale) {
    rows.array().rowwise() *= scale.vector().transpose().array();
}

/// Rows per block of a layer's row-wise stages: q/k/v with their norms and RoPE, the output
/// projection with its residual, and the MLP with its residual. Their buffers (the MLP's
/// [rows, intermediate] activations are the largest of a layer, S x 4.5 hidden or more; the
/// projections' inputs, packed inputs and outputs are S x hidden each) stay a few MB at any
/// length: beside the run's q/k/v a layer holds x and the attention's output alone. The GEMM
/// sums each output in the same order for any number of rows from kPackedGemmRows on, so the
/// blocks change no bit (a last block is never shorter than that), and a block's packed rows
/// stay in the cache for the whole product. A block starts at a multiple of 256 rows, so its
/// rows have the whole matrix's alignment and Eigen's row reductions sum them alike.
constexpr Index kRowBlock = 256;

/// Calls body(begin, count) on the row blocks of `rows`: kRowBlock rows each, the last taking
/// the remainder where it would be shorter than kPackedGemmRows; one block up to kRowBlock +
/// kPackedGemmRows rows.
template <typename Body> void forRowBlocks(Index rows, Body&& body) {
    static_assert(kRowBlock >= kPackedGemmRows);
    if (rows <= kRowBlock + kPackedGemmRows) {
        body(Index{0}, rows);
        return;
    }
    for (Index begin = 0; begin < rows;) {
        Index count = std::min(kRowBlock, rows - begin);
        if (rows - begin - count < kPackedGemmRows) count = rows - begin;
        body(begin, count);
        begin += count;
    }
}

/// A block's buffers for the row-wise stages, kept from layer to layer (at most kRowBlock +
/// kPackedGemmRows rows each).
struct RowBlock {
    Matrix in, out, up, gate, q, k, v;
};

/// The layer's MLP over the rows of x and its residual, a block of rows at a time
/// (forRowBlocks): the block's input (x's rows, through the MLP's norm where the family has one,
/// or the rows of `shared`, the attention's norm that a parallel block shares), the MLP, its
/// output norm, then the residual as the family adds it: sequential, x += scale * out and the
/// norm after; parallel, x += attended + out (transformers adds the two first). Every step but
/// the GEMMs is row by row, and the GEMMs sum each output in the same order for any block, so
/// the result is the whole matrices' bit for bit while only one block's input, activations and
/// output live beside x. `recorded`: where each block's output goes (as added, for the lens),
/// or null.
void mlpResidual(Matrix& x, const Matrix* shared, const Matrix& attended, const LayerWeights& w,
                 const ModelConfig& c, Matrix* recorded, RowBlock& block, int threads) {
    const NormKind norm = c.arch().norm;
    if (recorded) recorded->resize(x.rows(), c.hidden);
    Matrix &in = block.in, &out = block.out, &up = block.up, &gate = block.gate;
    forRowBlocks(x.rows(), [&](Index begin, Index count) {
        auto rows = x.middleRows(begin, count);
        if (shared) {
            in = shared->middleRows(begin, count);
        } else {
            in = rows;
            if (!w.mlpNormIn.empty()) normalize(in, w.mlpNormIn, norm, c.normEps, c.hidden);
        }
        mlpRows(in, w, c, out, up, gate, threads);
        if (!w.mlpNormOut.empty()) normalize(out, w.mlpNormOut, norm, c.normEps, c.hidden);
        if (!w.mlpScale.empty()) scaleFeatures(out, w.mlpScale);
        if (c.residual == Residual::Sequential)
            addResidual(rows, out, w.mlpNormAfter, c);
        else
            rows += attended.middleRows(begin, count) + out;
        if (recorded) recorded->middleRows(begin, count) = out;
    });
}

/// Frees the S-sized buffers a layer has used up once they are a long text's (4 MB or more),
/// so that a stage's peak holds its own buffers alone, not every stage's of the layer before;
/// the next layer allocates them again. Smaller ones stay for the next layer: reusing them costs
/// nothing, and freeing them would have the allocator hand back and fault in their pages. So do
/// a RowBlock's, whose rows are at most kRowBlock + kPackedGemmRows at any length (the MLP's
/// activations were freed too, and every layer faulted their 10 MB in again: 160 000 more page
/// faults over a `bench --model` of Qwen2-0.5B at 1 024 tokens, with the peak RSS no lower).
constexpr Index kReleasedFloats = Index{1} << 20;

template <typename... Buffers> void release(Buffers&... buffers) {
    ((buffers.size() >= kReleasedFloats ? buffers.resize(0, 0) : void()), ...);
}

/// Rows [begin, begin + block.rows()) of `out` [1, heads, S, hd], by head, from block
/// [rows, heads * hd].
void scatterHeads(const Matrix& block, Index begin, Tensor4& out) {
    const Index hd = out.dim;
    for (Index h = 0; h < out.heads; ++h)
        out.head(0, h).middleRows(begin, block.rows()) = block.middleCols(h * hd, hd);
}

/// Columns [begin, end) of a fused q | k | v projection's block of rows [row, row + rows), each
/// into its head of q, k or v: what project() hands to `done` where nothing changes q or k
/// between the projection and the heads (no RoPE, no q/k norm). The same values as splitting the
/// whole block afterwards, copied while the columns are in cache and on the thread that made them.
void scatterFusedColumns(const Matrix& qkv, Index begin, Index end, Index row, Tensor4& q,
                         Tensor4& k, Tensor4& v) {
    const Index hd = q.dim;
    const Index qDim = q.heads * hd;
    const Index kvDim = k.heads * hd;
    for (Index c = begin; c < end;) {
        Tensor4& out = c < qDim ? q : c < qDim + kvDim ? k : v;
        const Index at = c < qDim ? c : c < qDim + kvDim ? c - qDim : c - qDim - kvDim;
        const Index head = at / hd;
        const Index col = at % hd;
        const Index n = std::min(end - c, hd - col);
        out.head(0, head).block(row, col, qkv.rows(), n) = qkv.middleCols(c, n);
        c += n;
    }
}

/// `fresh` [S_new, heads * hd] split by head: [1, heads, S_new, hd].
Tensor4 splitHeads(const Matrix& fresh, Index heads, Index headDim) {
    Tensor4 out = Tensor4::uninitialized(1, heads, fresh.rows(), headDim);
    scatterHeads(fresh, 0, out);
    return out;
}

/// How many leading positions of `previous` a run of `ids` reuses; 0: none (run from scratch).
Index reusablePositions(const ModelRun* previous, std::span<const std::int64_t> ids,
                        const RunOptions& options, const ModelConfig& config) {
    if (!previous || previous->ids.empty() || ids.empty()) return 0;
    if (config.kind == ModelKind::Encoder) return 0; // two-way: every position changes
    if (previous->ablatedHeads != options.ablatedHeads) return 0;
    const auto had = static_cast<Index>(previous->ids.size());
    const auto common = static_cast<Index>(commonPrefix(previous->ids, ids));
    // At least one fresh position: its logits are the run's.
    Index old = options.reuseCommonPrefix ? std::min(common, static_cast<Index>(ids.size()) - 1)
                : common == had && had < static_cast<Index>(ids.size()) ? had
                                                                        : 0;
    if (options.reuseAtMost >= 0) old = std::min(old, options.reuseAtMost);
    if (old <= 0) return 0;
    const auto layers = static_cast<std::size_t>(config.layers);
    if (previous->k.size() != layers || previous->v.size() != layers ||
        previous->q.size() != layers || previous->passes.empty())
        return 0;
    if (config.kind == ModelKind::EncoderDecoder && previous->crossQ.size() != layers) return 0;
    if (previous->finalHidden.rows() != had || previous->finalHidden.cols() != config.hidden)
        return 0;
    // A longrope model switches its frequencies when the run outgrows the pretrained length:
    // positions cached under the short factors cannot be reused under the long ones.
    for (const Rope& rope : config.ropes)
        if (&rope.frequenciesFor(had) != &rope.frequenciesFor(static_cast<Index>(ids.size())) ||
            &rope.frequenciesFor(old) != &rope.frequenciesFor(static_cast<Index>(ids.size())))
            return 0;
    const bool shaped = previous->k.front().heads() == config.kvHeads &&
                        previous->k.front().dim() == config.headDim &&
                        previous->k.front().seq() == had &&
                        previous->q.front().heads() == config.heads;
    return shaped ? old : 0;
}

/// The passes of `previous` that begin before `old`, then the new one at `old`.
std::vector<Index> passesAfter(const ModelRun* previous, Index old) {
    std::vector<Index> passes;
    if (previous)
        for (Index start : previous->passes)
            if (start < old) passes.push_back(start);
    passes.push_back(old);
    return passes;
}

} // namespace

std::vector<double> ropeInverseFrequencies(const ModelConfig& config) {
    return config.ropes.empty() ? std::vector<double>{} : config.ropes.front().inverseFrequencies;
}

Status validateRun(const ModelConfig& config, std::span<const std::int64_t> ids,
                   const RunOptions& options) {
    if (ids.empty()) return Error{"no token ids to run"};
    for (std::size_t i = 0; i < ids.size() && !config.vision(); ++i) // an image's are places
        if (ids[i] < 0 || ids[i] >= config.vocab)
            return Error{"token id " + std::to_string(ids[i]) + " at position " +
                         std::to_string(i) + " is outside the vocabulary [0, " +
                         std::to_string(config.vocab) + ")"};
    for (const std::int64_t id : options.logitIds)
        if (id < 0 || id >= config.vocab)
            return Error{"the logit of id " + std::to_string(id) +
                         " is outside the vocabulary [0, " + std::to_string(config.vocab) + ")"};
    const auto count = static_cast<Index>(ids.size());
    if (count > config.maxPositions)
        return Error{std::to_string(count) + " tokens are more than the model's " +
                     std::to_string(config.maxPositions) + " positions"};
    for (const auto& [layer, head] : options.ablatedHeads)
        if (layer < 0 || layer >= config.layers || head < 0 || head >= config.heads)
            return Error{"ablated head (" + std::to_string(layer) + ", " + std::to_string(head) +
                         ") is outside the model's " + std::to_string(config.layers) +
                         " layers x " + std::to_string(config.heads) + " heads"};
    if (options.patch) {
        for (const auto& [at, rows] : options.patch->heads)
            if (at.first < 0 || at.first >= config.layers || at.second < 0 ||
                at.second >= config.heads || rows.rows() != count || rows.cols() != config.headDim)
                return Error{"patched head (" + std::to_string(at.first) + ", " +
                             std::to_string(at.second) + ") is outside the model or not [" +
                             std::to_string(count) + ", " + std::to_string(config.headDim) + "]"};
        for (const auto& [at, row] : options.patch->residual)
            if (at.first < 0 || at.first > config.layers || at.second < 0 || at.second >= count ||
                row.size() != config.hidden)
                return Error{"patched residual (" + std::to_string(at.first) + ", " +
                             std::to_string(at.second) + ") is outside the model's " +
                             std::to_string(config.layers + 1) + " rows x " +
                             std::to_string(count) + " positions or not " +
                             std::to_string(config.hidden) + " wide"};
    }
    return std::nullopt;
}

namespace {

/// T5's _relative_position_bucket of `relative` = key - query (float32 logs, truncated).
Index relativeBucket(Index relative, bool bidirectional, Index buckets, Index maxDistance) {
    Index bucket = 0;
    if (bidirectional) {
        buckets /= 2;
        if (relative > 0) bucket += buckets;
        relative = relative < 0 ? -relative : relative;
    } else {
        relative = relative < 0 ? -relative : 0;
    }
    const Index maxExact = buckets / 2;
    if (relative < maxExact) return bucket + relative;
    const float ratio = std::log(static_cast<float>(relative) / static_cast<float>(maxExact)) /
                        static_cast<float>(std::log(static_cast<double>(maxDistance) /
                                                    static_cast<double>(maxExact)));
    const Index large =
        maxExact + static_cast<Index>(ratio * static_cast<float>(buckets - maxExact));
    return bucket + std::min(large, buckets - 1);
}

/// T5's position bias [1, count, rows, keys] of heads [first, first + count) for queries at
/// positions old.. and keys 0..keys-1.
std::shared_ptr<const Tensor4> relativeBias(const ModelConfig& c, const Weight& table,
                                            Index firstHead, Index count, Index old, Index rows,
                                            Index keys, bool bidirectional) {
    auto bias = std::make_shared<Tensor4>(1, count, rows, keys);
    const auto values = table.matrix(); // [buckets, H]
    for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < keys; ++j) {
            const Index bucket = relativeBucket(j - (old + i), bidirectional, c.relativeBuckets,
                                                c.relativeMaxDistance);
            for (Index h = 0; h < count; ++h)
                bias->head(0, h)(i, j) = values(bucket, firstHead + h);
        }
    return bias;
}

} // namespace

bool causalAttention(const ModelConfig& c, AttentionOf of) {
    return of == AttentionOf::Self && c.kind != ModelKind::Encoder;
}

AttentionSpec attentionSpecOf(const ModelConfig& c, AttentionOf of, Index layer) {
    AttentionSpec spec;
    spec.wantWeights = false;
    spec.scale = c.attentionScale;
    if (of == AttentionOf::Cross) return spec; // no soft-capping, no position bias
    if (c.attentionSoftcap > 0) spec.softcap = c.attentionSoftcap;
    if (causalAttention(c, of)) {
        const LayerAttention& own = c.layerAttention[static_cast<std::size_t>(layer)];
        if (own.window > 0)
            spec.mask.causalWindow = own.window - 1; // i - W < j <= i
        else
            spec.mask.causal = true;
    }
    return spec;
}

bool positionBiased(const ModelConfig& c, AttentionOf of) {
    return of != AttentionOf::Cross && c.arch().positions == Positions::RelativeBuckets;
}

std::shared_ptr<const Tensor4> scoreBiasOf(const Model& model, AttentionOf of, Index firstHead,
                                           Index count, Index first, Index rows, Index keys) {
    const ModelConfig& c = model.config;
    if (!positionBiased(c, of)) return nullptr;
    const Weight& table =
        of == AttentionOf::Encoder ? model.encoder.relativeBias : model.main.relativeBias;
    return relativeBias(c, table, firstHead, count, first, rows, keys, !causalAttention(c, of));
}

namespace {

/// The embeddings of ids[old..] entering a stack: tokens (scaled), positions (learned, with the
/// family's offset, or sinusoidal), BERT's token type 0, then the stack's embedding norm.
Matrix embed(const Model& model, const StackWeights& stack, std::span<const std::int64_t> ids,
             Index old) {
    const ModelConfig& c = model.config;
    const Index fresh = static_cast<Index>(ids.size()) - old;
    Matrix x(fresh, c.hidden);
    for (Index i = 0; i < fresh; ++i) // only the rows read are widened
        model.tokenEmbedding.widenRows(static_cast<Index>(ids[static_cast<std::size_t>(old + i)]),
                                       1, x.row(i).data());
    if (c.embeddingScale != 1.0) x *= static_cast<float>(c.embeddingScale);
    const Index offset = static_cast<Index>(c.arch().positionOffset);
    if (!stack.positions.empty()) {
        RowVector position(c.hidden);
        for (Index i = 0; i < fresh; ++i) {
            stack.positions.widenRows(old + i + offset, 1, position.data());
            x.row(i) += position;
        }
    }
    if (c.arch().positions == Positions::Sinusoidal) {
        // Marian: sin(p / 10000^(2i/D)) in the first half of the features, cos in the second.
        const Index half = (c.hidden + 1) / 2;
        for (Index i = 0; i < fresh; ++i) {
            const auto p = static_cast<double>(old + i);
            for (Index f = 0; f < c.hidden; ++f) {
                const Index pair = f < half ? 2 * f : 2 * (f - half) + 1;
                const double angle = p / std::pow(10000.0, static_cast<double>(2 * (pair / 2)) /
                                                               static_cast<double>(c.hidden));
                x(i, f) += static_cast<float>(f < half ? std::sin(angle) : std::cos(angle));
            }
        }
    }
    if (!stack.tokenTypes.empty()) x.rowwise() += stack.tokenTypes.matrix().row(0);
    if (!stack.embedNorm.empty()) normalize(x, stack.embedNorm, c.arch().norm, c.normEps, c.hidden);
    return x;
}

/// Rows [begin, begin + count) of an attention's output with the heads side by side [count,
/// H * hd], ablated heads zeroed.
void mergeHeads(const Attention& attention, const ModelConfig& c, Index layer,
                const std::set<std::pair<Index, Index>>* ablated, Index begin, Index count,
                Matrix& mixed) {
    const Index hd = c.headDim;
    mixed.resize(count, c.heads * hd);
    for (Index head = 0; head < c.heads; ++head) {
        if (ablated && ablated->count({layer, head}))
            mixed.middleCols(head * hd, hd).setZero();
        else
            mixed.middleCols(head * hd, hd) =
                attention.output.head(0, head).middleRows(begin, count);
    }
}

// Activation patching and recording for the lens (RunOptions::patch, ::record; lens.cpp).

/// The patch's residual rows entering `layer` (layer L: the stack's output) at x's positions.
void patchResidual(const ActivationPatch& patch, Index layer, Index old, Eigen::Ref<Matrix> x) {
    for (auto at = patch.residual.lower_bound({layer, 0});
         at != patch.residual.end() && at->first.first == layer; ++at) {
        const Index row = at->first.second - old;
        ATTN_CHECK(row >= 0 && row < x.rows(),
                   "activation patch: position " << at->first.second << " is not a fresh one");
        x.row(row) = at->second;
    }
}

/// The patch's head outputs (before the output projection) of `layer` at mixed's positions,
/// the first of them `first`.
void patchHeads(const ActivationPatch& patch, Index layer, Index first, Index hd, Matrix& mixed) {
    for (auto at = patch.heads.lower_bound({layer, 0});
         at != patch.heads.end() && at->first.first == layer; ++at) {
        ATTN_CHECK(at->second.rows() >= first + mixed.rows() && at->second.cols() == hd,
                   "activation patch: head " << layer << ":" << at->first.second << " has "
                                             << at->second.rows() << " x " << at->second.cols()
                                             << " values");
        mixed.middleCols(at->first.second * hd, hd) = at->second.middleRows(first, mixed.rows());
    }
}

/// Each head's output at the last position through its slice of the output projection (the
/// heads spread over the rows of one block-diagonal input, so one GEMM), and the bias, both
/// times `scale` as the residual adds them.
void recordHeadOutputs(RunRecording& record, const Linear& o, const Weight& layerScale,
                       const ModelConfig& c, float scale, int threads) {
    const Matrix& mixed = record.headInputs.back();
    const Index hd = c.headDim;
    Matrix spread = Matrix::Zero(c.heads, mixed.cols());
    for (Index head = 0; head < c.heads; ++head)
        spread.row(head).segment(head * hd, hd) =
            mixed.row(mixed.rows() - 1).segment(head * hd, hd);
    Matrix perHead;
    project(spread, Linear{o.weight, Weight{}}, perHead, threads);
    RowVector bias = RowVector::Zero(c.hidden);
    if (!o.bias.empty()) bias = o.bias.vector().transpose();
    if (!layerScale.empty()) { // DINOv2: as the forward scales the block's output
        scaleFeatures(perHead, layerScale);
        bias.array() *= layerScale.vector().transpose().array();
    }
    record.headOutputs.push_back(perHead * scale);
    bias *= scale;
    record.attentionBias.push_back(std::move(bias));
}

/// Rows [begin, begin + count) of the self-attention's input: x's through the attention's norm
/// (where the family has one), or `shared`'s, the norm a parallel block shares with its MLP.
void attentionInput(const Matrix& x, const Matrix* shared, const LayerWeights& w,
                    const ModelConfig& c, Index begin, Index count, Matrix& in) {
    if (shared) {
        in = shared->middleRows(begin, count);
        return;
    }
    in = x.middleRows(begin, count);
    if (!w.attnNormIn.empty()) normalize(in, w.attnNormIn, c.arch().norm, c.normEps, c.hidden);
}

/// A block's q, k and v [rows, heads * hd] from its attention input: the projections and the
/// q/k norms (RoPE is the caller's: it depends on the rows' positions).
void qkvOfBlock(const Matrix& in, const LayerWeights& w, const ModelConfig& c, RowBlock& block,
                int threads) {
    const Architecture& a = c.arch();
    projectQkv(in, w, c, block.q, block.k, block.v, threads);
    if (a.qkNorm == QkNorm::None) return;
    const bool perHead = a.qkNorm == QkNorm::PerHead;
    normalize(block.q, w.qNorm, a.norm, c.normEps, perHead ? c.headDim : block.q.cols());
    normalize(block.k, w.kNorm, a.norm, c.normEps, perHead ? c.headDim : block.k.cols());
}

/// The heads' outputs `mixed` of rows [begin, begin + mixed.rows()) through the output
/// projection, its norm and layer scale, added to x's rows (a sequential block) or kept in
/// `attended`'s to add beside the MLP's (a parallel one).
void attentionResidual(const Matrix& mixed, const LayerWeights& w, const ModelConfig& c, Matrix& x,
                       Matrix& attended, Index begin, RowBlock& block, int threads) {
    const Index count = mixed.rows();
    project(mixed, w.o, block.out, threads);
    if (!w.attnNormOut.empty())
        normalize(block.out, w.attnNormOut, c.arch().norm, c.normEps, c.hidden);
    if (!w.attnScale.empty()) scaleFeatures(block.out, w.attnScale);
    if (c.residual == Residual::Sequential)
        addResidual(x.middleRows(begin, count), block.out, w.attnNormAfter, c);
    else
        attended.middleRows(begin, count) = block.out;
}

enum class Pass { Main, Encoder };

/// One stack's layers over x (the rows of positions old..), recording into run: the main
/// stack its attention, q/k/v (the cache) and cross-attention; the encoder its attention.
/// False when cancelled.
bool runStack(const Model& model, Pass pass, Matrix& x, Index old, ModelRun& run,
              const ModelRun* previous, const RunOptions& options, int threads,
              const seams::Resume* resume = nullptr) {
    const ModelConfig& c = model.config;
    const bool main = pass == Pass::Main;
    const StackWeights& stack = main ? model.main : model.encoder;
    const bool cross = main && c.kind == ModelKind::EncoderDecoder;
    const Index fresh = x.rows();
    const Index total = old + fresh;
    const Index hd = c.headDim;
    const std::set<std::pair<Index, Index>>* ablated = main ? &options.ablatedHeads : nullptr;
    const ActivationPatch* patch = main ? options.patch : nullptr;
    RunRecording* record = main ? options.record : nullptr;

    const AttentionOf of = main ? AttentionOf::Self : AttentionOf::Encoder;
    // The position bias depends on the positions alone: one for every layer.
    const std::shared_ptr<const Tensor4> bias =
        scoreBiasOf(model, of, 0, c.heads, old, fresh, total);

    Matrix h, q, mixed, attended; // h: the attention's norm where the MLP shares it; q: cross's
    RowBlock block;
    // An extension's contiguous K and V for the kernel, the same size in every layer.
    Tensor4 keyCopy, valueCopy;
    // The heads' outputs, S x H x hd, in the same storage in every layer.
    Attention attention;
    const auto layers = static_cast<Index>(stack.layers.size());
    // A resumed run: the layers below `first` are the run it resumes (x enters `first`).
    const Index first = resume ? resume->first : 0;
    for (Index l = 0; l < first; ++l) {
        const auto lu = static_cast<std::size_t>(l);
        run.q.push_back(resume->below->q[lu]);
        run.k.push_back(resume->below->k[lu]);
        run.v.push_back(resume->below->v[lu]);
    }
    for (Index l = first; l < layers; ++l) {
        if (options.cancel && options.cancel->load()) return false;
        if (main && options.progress)
            options.progress(static_cast<double>(l) / static_cast<double>(layers));
        const LayerWeights& w = stack.layers[static_cast<std::size_t>(l)];
        const std::size_t lu = static_cast<std::size_t>(l);
        const LayerAttention layer = main ? c.layerAttention[lu] : LayerAttention{};
        if (patch) patchResidual(*patch, l, old, x);
        if (record) record->residual.push_back(x);

        // Self-attention's q, k and v, a block of rows at a time (forRowBlocks): the block's
        // input (norm(x) where the family has one; h whole where the MLP shares it), the
        // projections, q/k norm and RoPE, written by head.
        const bool sharedNorm = c.residual == Residual::ParallelSharedNorm;
        if (sharedNorm) sharedNormOf(x, w, c, h);
        Tensor4 freshQ = Tensor4::uninitialized(1, c.heads, fresh, hd);
        Tensor4 freshK = Tensor4::uninitialized(1, c.kvHeads, fresh, hd);
        Tensor4 freshV = Tensor4::uninitialized(1, c.kvHeads, fresh, hd);
        const bool rotated = layer.rope >= 0 && c.usesRope();
        const bool scatterInBlocks =
            c.arch().qkv == QkvLayout::Fused && c.arch().qkNorm == QkNorm::None && !rotated;
        forRowBlocks(fresh, [&](Index begin, Index count) {
            Matrix& in = block.in;
            attentionInput(x, sharedNorm ? &h : nullptr, w, c, begin, count, in);
            if (scatterInBlocks) {
                Matrix& qkv = block.q;
                project(in, w.qkv, qkv, threads, [&](Index from, Index to) {
                    scatterFusedColumns(qkv, from, to, begin, freshQ, freshK, freshV);
                });
                return;
            }
            qkvOfBlock(in, w, c, block, threads);
            if (rotated) {
                const Rope& rope = c.ropes[static_cast<std::size_t>(layer.rope)];
                applyRope(block.q, hd, rope, old + begin, total);
                applyRope(block.k, hd, rope, old + begin, total);
            }
            scatterHeads(block.q, begin, freshQ);
            scatterHeads(block.k, begin, freshK);
            scatterHeads(block.v, begin, freshV);
        });

        Qkv heads;
        heads.q = std::move(freshQ);
        // An extension: the cached keys and values with the fresh ones after them (the cache
        // shares the previous run's blocks; the kernel reads one contiguous copy of the layer).
        HeadCache keys, values;
        if (previous) {
            keys = HeadCache::extended(previous->k[lu], old, std::move(freshK));
            values = HeadCache::extended(previous->v[lu], old, std::move(freshV));
            keys.tensorInto(keyCopy);
            values.tensorInto(valueCopy);
            heads.k = std::move(keyCopy);
            heads.v = std::move(valueCopy);
        } else {
            heads.k = std::move(freshK);
            heads.v = std::move(freshV);
        }
        AttentionSpec spec = attentionSpecOf(c, of, l);
        spec.threads = threads;
        spec.scoreBias = bias;
        double* timed = main ? options.attentionSeconds : nullptr;
        const auto attendStart =
            timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
        attend(heads, spec, attention);
        if (timed)
            *timed += std::chrono::duration<double>(std::chrono::steady_clock::now() - attendStart)
                          .count();
        if (previous) { // the copies' storage serves the next layer
            keyCopy = std::move(heads.k);
            valueCopy = std::move(heads.v);
        }

        // Keep what reproduces the attention (attention_maps.h): q and k as the kernel read
        // them, and v (the cache); the weights themselves are not kept.
        if (main) {
            // A run from scratch keeps the heads the attention read; an extension adds them to
            // the cached ones.
            if (previous) {
                run.q.push_back(HeadCache::extended(previous->q[lu], old, std::move(heads.q)));
                run.k.push_back(std::move(keys));
                run.v.push_back(std::move(values));
            } else {
                run.q.push_back(HeadCache(std::move(heads.q)));
                run.k.push_back(HeadCache(std::move(heads.k)));
                run.v.push_back(HeadCache(std::move(heads.v)));
            }
        } else {
            run.encoderQ.push_back(std::move(heads.q));
            run.encoderK.push_back(std::move(heads.k));
        }

        // The heads' outputs through the output projection (and its norm) into the residual, a
        // block of rows at a time: added to x (sequential), or kept to add beside the MLP's.
        const bool sequential = c.residual == Residual::Sequential;
        if (record) record->headInputs.emplace_back(fresh, c.heads * hd);
        if (!sequential) attended.resize(fresh, c.hidden);
        forRowBlocks(fresh, [&](Index begin, Index count) {
            mergeHeads(attention, c, l, ablated, begin, count, mixed);
            if (patch) patchHeads(*patch, l, old + begin, hd, mixed);
            if (record) record->headInputs.back().middleRows(begin, count) = mixed;
            attentionResidual(mixed, w, c, x, attended, begin, block, threads);
        });

        // The cross-attention's residual (sequential); then the MLP and its residual, after them
        // (sequential) or beside them (parallel), a block of rows at a time.
        if (sequential) {
            if (cross) {
                // Cross-attention: queries from the target, keys and values from the source.
                if (w.crossNormIn.empty())
                    h = x;
                else
                    normalizeInto(x, w.crossNormIn, c, h);
                project(h, w.crossQ, q, threads);
                Qkv toSource;
                toSource.q = splitHeads(q, c.heads, hd);
                toSource.k = run.crossK[lu];
                toSource.v = run.crossV[lu];
                AttentionSpec crossSpec = attentionSpecOf(c, AttentionOf::Cross, l);
                crossSpec.threads = threads;
                const Attention reading = attend(toSource, crossSpec);
                run.crossQ.push_back(
                    previous ? HeadCache::extended(previous->crossQ[lu], old, std::move(toSource.q))
                             : HeadCache(std::move(toSource.q)));
                mergeHeads(reading, c, l, nullptr, 0, fresh, mixed);
                project(mixed, w.crossO, attended, threads);
                addResidual(x, attended, w.crossNormAfter, c);
                release(q, h, mixed, attended);
            }
        }
        Matrix* recorded = record ? &record->mlpOutputs.emplace_back() : nullptr;
        mlpResidual(x, sharedNorm ? &h : nullptr, attended, w, c, recorded, block, threads);
        release(h, attended);
        if (record) {
            const bool scaled = sequential;
            recordHeadOutputs(*record, w.o, w.attnScale, c,
                              scaled ? static_cast<float>(c.residualScale) : 1.0f, threads);
        }
    }
    return true;
}

/// The logits of hidden rows: BERT's head transform, the lm head and its bias — every id's, or
/// with `ids` (RunOptions::logitIds) those ids' alone in that order, a dot product each with
/// the id's row of the head — then Granite's scaling and Gemma 2's soft-capping.
void logitsOf(const Model& model, const Matrix& hidden, Matrix& out, int threads,
              std::span<const std::int64_t> ids = {}) {
    const ModelConfig& c = model.config;
    Matrix transformed;
    const Matrix* h = &hidden;
    if (!model.headTransform.empty()) {
        project(hidden, model.headTransform, transformed, threads);
        activate(transformed, c.activation);
        normalize(transformed, model.headNorm, c.arch().norm, c.normEps, c.hidden);
        h = &transformed;
    }
    if (ids.empty()) {
        project(*h, model.lmHead, out, threads);
    } else {
        out.resize(h->rows(), static_cast<Index>(ids.size()));
        RowVector row(c.hidden);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const auto id = static_cast<Index>(ids[i]);
            model.lmHead.weight.widenOutput(id, row.data());
            out.col(static_cast<Index>(i)) = *h * row.transpose();
            if (!model.lmHead.bias.empty())
                out.col(static_cast<Index>(i)).array() += model.lmHead.bias.values[id];
        }
    }
    if (c.logitScale != 1.0) out *= static_cast<float>(c.logitScale);
    if (c.finalSoftcap > 0) softcap(out, c.finalSoftcap);
}

/// The main stack's final norm, the hidden states kept and the logits asked for.
void finish(const Model& model, Matrix& x, Index old, ModelRun& run, const ModelRun* previous,
            const RunOptions& options, int threads) {
    const ModelConfig& c = model.config;
    const Index fresh = x.rows();
    const Index total = old + fresh;
    // Final norm of every position (cheap, and kept so an extension can ask for old logits).
    applyFinalNorm(model, x);
    if (previous) {
        run.finalHidden.resize(total, c.hidden);
        run.finalHidden.topRows(old) = previous->finalHidden.topRows(old);
        run.finalHidden.bottomRows(fresh) = x;
    } else {
        run.finalHidden = std::move(x); // not a second S x D beside it
    }

    run.logitRows = options.logits;
    if (options.logits == LogitRows::Last) {
        logitsOf(model, run.finalHidden.bottomRows(1), run.logits, threads, options.logitIds);
    } else if (options.logits == LogitRows::All) {
        if (previous && previous->logitRows == LogitRows::All &&
            previous->logits.rows() == previous->finalHidden.rows()) {
            Matrix fresher;
            logitsOf(model, x, fresher, threads);
            resizeFresh(run.logits, total, c.vocab);
            run.logits.topRows(old) = previous->logits.topRows(old);
            run.logits.bottomRows(fresh) = fresher;
        } else {
            logitsOf(model, run.finalHidden, run.logits, threads);
        }
    }
}

/// The main stack over ids[old..] (a decoder, an encoder, or a translation's decoder), then
/// its final norm and logits: the finished run, or "cancelled".
Result<ModelRun> runMain(const Model& model, std::span<const std::int64_t> ids, Index old,
                         ModelRun run, const ModelRun* previous, const RunOptions& options,
                         int threads, const seams::Resume* resume = nullptr) {
    Matrix x = resume ? Matrix(resume->entering->bottomRows(static_cast<Index>(ids.size()) - old))
                      : embed(model, model.main, ids, old);
    if (!runStack(model, Pass::Main, x, old, run, previous, options, threads, resume) ||
        (options.cancel && options.cancel->load()))
        return Error{"cancelled"};
    if (options.patch) patchResidual(*options.patch, model.config.layers, old, x);
    if (options.record) options.record->residual.push_back(x);
    finish(model, x, old, run, previous, options, threads);
    return run;
}

} // namespace

std::size_t commonPrefix(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
    return static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first -
                                    a.begin());
}

namespace {

/// runModel and resumeRun: a single sequence's run, from the embedding or resumed.
Result<ModelRun> runOne(const Model& model, std::span<const std::int64_t> ids,
                        const RunOptions& options, const ModelRun* previous,
                        const seams::Resume* resume) {
    const ModelConfig& c = model.config;
    if (auto problem = validateRun(c, ids, options)) return Error{*problem};
    const int threads = resolveThreads(options.threads);
    const Index old = reusablePositions(previous, ids, options, c);
    if (old == 0) previous = nullptr;

    ModelRun run;
    run.ids.assign(ids.begin(), ids.end());
    run.ablatedHeads = options.ablatedHeads;
    run.extended = previous != nullptr;
    run.reusedPositions = old;
    run.passes = passesAfter(previous, old);
    return runMain(model, ids, old, std::move(run), previous, options, threads, resume);
}

} // namespace

Result<ModelRun> runModel(const Model& model, std::span<const std::int64_t> ids,
                          const RunOptions& options, const ModelRun* previous) {
    const ModelConfig& c = model.config;
    if (c.kind == ModelKind::EncoderDecoder)
        return Error{model.name + " is an encoder-decoder (" + std::string(c.arch().displayName) +
                     "): give a source and a target"};
    if (c.vision())
        return Error{model.name + " is an image model (" + std::string(c.arch().displayName) +
                     "): it reads an image, not tokens"};
    return runOne(model, ids, options, previous, nullptr);
}

namespace {

/// torch's antialiased bicubic filter (Keys, a = -0.5, as Pillow's), in float as torch computes
/// it for float32 tensors.
float antialiasedCubic(float x) {
    constexpr float a = -0.5f;
    x = std::abs(x);
    if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
    if (x < 2.0f) return ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a;
    return 0.0f;
}

/// What torch's interpolate(mode="bicubic", align_corners=False, antialias=True) reads for each
/// of `out` outputs from `in` inputs along one axis: the first input and the normalised weights.
struct Taps {
    Index first = 0;
    std::vector<float> weights;
};

std::vector<Taps> antialiasedTaps(Index in, Index out) {
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    const float support = scale >= 1.0f ? 2.0f * scale : 2.0f;
    const float invScale = scale >= 1.0f ? 1.0f / scale : 1.0f;
    std::vector<Taps> taps(static_cast<std::size_t>(out));
    for (Index i = 0; i < out; ++i) {
        const float center = scale * (static_cast<float>(i) + 0.5f);
        const Index first = std::max<Index>(static_cast<Index>(center - support + 0.5f), 0);
        const Index count =
            std::min<Index>(static_cast<Index>(center + support + 0.5f), in) - first;
        Taps& t = taps[static_cast<std::size_t>(i)];
        t.first = first;
        float total = 0.0f;
        for (Index j = 0; j < count; ++j) {
            const float w =
                antialiasedCubic((static_cast<float>(j + first) - center + 0.5f) * invScale);
            t.weights.push_back(w);
            total += w;
        }
        if (total != 0.0f)
            for (float& w : t.weights)
                w /= total;
    }
    return taps;
}

/// The learned positions of the image's tokens [T, D]: the table's rows, or (DINOv2, an image
/// whose grid is not the table's) the leading rows, then the patches' grid resized as
/// Dinov2Embeddings.interpolate_pos_encoding does it: along the columns, then the rows.
Matrix positionsOf(const Model& model) {
    const ModelConfig& c = model.config;
    const Index lead = c.leadingTokens;
    const Index grid = c.patchGrid();
    const Index table = c.positionGrid;
    if (grid == table) return model.main.positions.widen();
    ATTN_CHECK(c.arch().vision.interpolatedPositions,
               "positionsOf: a " << grid << " grid of a " << table << " table");
    Matrix rows(table * table + lead, c.hidden);
    model.main.positions.widenRows(0, rows.rows(), rows.data());
    const std::vector<Taps> taps = antialiasedTaps(table, grid);
    Matrix across(table * grid, c.hidden); // [table rows][grid columns]
    for (Index r = 0; r < table; ++r)
        for (Index col = 0; col < grid; ++col) {
            const Taps& t = taps[static_cast<std::size_t>(col)];
            auto out = across.row(r * grid + col);
            out.setZero();
            for (std::size_t j = 0; j < t.weights.size(); ++j)
                out += t.weights[j] * rows.row(lead + r * table + t.first + static_cast<Index>(j));
        }
    Matrix positions(grid * grid + lead, c.hidden);
    positions.topRows(lead) = rows.topRows(lead);
    for (Index r = 0; r < grid; ++r)
        for (Index col = 0; col < grid; ++col) {
            const Taps& t = taps[static_cast<std::size_t>(r)];
            auto out = positions.row(lead + r * grid + col);
            out.setZero();
            for (std::size_t j = 0; j < t.weights.size(); ++j)
                out += t.weights[j] * across.row((t.first + static_cast<Index>(j)) * grid + col);
        }
    return positions;
}

} // namespace

Result<ModelRun> runImage(const Model& model, std::span<const float> pixels,
                          const RunOptions& options) {
    const ModelConfig& c = model.config;
    if (!c.vision())
        return Error{model.name + " reads tokens (" + std::string(c.arch().displayName) +
                     "), not an image"};
    const Index side = c.imageSize;
    const Index p = c.patchSize;
    const Index grid = c.patchGrid();
    if (static_cast<Index>(pixels.size()) != c.channels * side * side)
        return Error{model.name + " reads " + std::to_string(c.channels) + " x " +
                     std::to_string(side) + " x " + std::to_string(side) +
                     " pixel values; the image has " + std::to_string(pixels.size())};
    const Index lead = c.leadingTokens;
    const Index tokens = grid * grid + lead;
    const std::vector<std::int64_t> ids(static_cast<std::size_t>(tokens), 0);
    if (auto problem = validateRun(c, ids, options)) return Error{*problem};
    const int threads = resolveThreads(options.threads);

    // The patch convolution (stride = kernel = P) as one projection of every patch's pixels,
    // laid out as the kernel is: channel, then row, then column within the patch.
    Matrix patches(grid * grid, c.channels * p * p);
    for (Index row = 0; row < grid; ++row)
        for (Index col = 0; col < grid; ++col)
            for (Index ch = 0; ch < c.channels; ++ch)
                for (Index i = 0; i < p; ++i)
                    for (Index j = 0; j < p; ++j)
                        patches(row * grid + col, (ch * p + i) * p + j) =
                            pixels[static_cast<std::size_t>((ch * side + row * p + i) * side +
                                                            col * p + j)];
    Matrix projected;
    project(patches, model.patchEmbedding, projected, threads);
    Matrix x(tokens, c.hidden);
    x.row(0) = model.classToken.matrix().row(0);
    if (lead > 1) x.row(1) = model.distillationToken.matrix().row(0);
    x.bottomRows(tokens - lead) = projected;
    x += positionsOf(model);
    if (!model.main.embedNorm.empty()) // CLIP's pre_layrnorm
        normalize(x, model.main.embedNorm, c.arch().norm, c.normEps, c.hidden);

    ModelRun run;
    run.ids = ids;
    run.ablatedHeads = options.ablatedHeads;
    run.passes = {0};
    if (!runStack(model, Pass::Main, x, 0, run, nullptr, options, threads) ||
        (options.cancel && options.cancel->load()))
        return Error{"cancelled"};
    if (options.patch) patchResidual(*options.patch, c.layers, 0, x);
    if (options.record) options.record->residual.push_back(x);
    RunOptions noLogits = options;
    noLogits.logits = LogitRows::None;
    finish(model, x, 0, run, nullptr, noLogits, threads);
    const Matrix cls = run.finalHidden.topRows(1);
    if (!model.classifies()) {
        // The image's embedding: the class token's final state, CLIP's normed and projected.
        run.imageEmbedding = cls;
        if (!model.poolNorm.empty())
            normalize(run.imageEmbedding, model.poolNorm, c.arch().norm, c.normEps, c.hidden);
        if (!model.projection.empty()) {
            Matrix embedding;
            project(run.imageEmbedding, model.projection, embedding, threads);
            run.imageEmbedding = std::move(embedding);
        }
        return run;
    }
    if (c.arch().vision.headReadsPatchMean) {
        // DINOv2: the classifier reads the class token beside the mean of the patches.
        Matrix both(1, 2 * c.hidden);
        both.leftCols(c.hidden) = cls;
        both.rightCols(c.hidden) = run.finalHidden.bottomRows(tokens - lead).colwise().mean();
        logitsOf(model, both, run.logits, threads);
    } else {
        logitsOf(model, cls, run.logits, threads);
    }
    if (!model.distillationHead.weight.empty()) {
        // DeiT with its teacher's head: the mean of the class and distillation tokens' logits.
        Matrix distilled;
        project(run.finalHidden.middleRows(1, 1), model.distillationHead, distilled, threads);
        run.logits = (run.logits + distilled) * 0.5f;
    }
    run.logitRows = LogitRows::Last;
    return run;
}

Result<ModelRun> seams::resumeRun(const Model& model, std::span<const std::int64_t> ids,
                                  const RunOptions& options, const ModelRun* previous,
                                  const Resume& resume) {
    const ModelConfig& c = model.config;
    ATTN_CHECK(c.kind != ModelKind::EncoderDecoder && resume.below && resume.entering &&
                   resume.first >= 0 && resume.first <= c.layers &&
                   std::equal(ids.begin(), ids.end(), resume.below->ids.begin(),
                              resume.below->ids.end()) &&
                   resume.below->q.size() == static_cast<std::size_t>(c.layers) &&
                   resume.entering->rows() == static_cast<Index>(ids.size()) &&
                   resume.entering->cols() == c.hidden,
               "resumeRun: the run resumed is not a whole run of these ids");
    return runOne(model, ids, options, previous, &resume);
}

bool seams::batchable(const ModelConfig& c) {
    return c.kind == ModelKind::Decoder && !c.vision() && !positionBiased(c, AttentionOf::Self);
}

namespace {

/// Whether every projection of the main stack gives a row the same bits at any row count
/// (anyRowCount), so that runs of a few rows may share a product with longer ones.
bool projectionsAnyRowCount(const Model& model) {
    for (const LayerWeights& w : model.main.layers)
        for (const Linear* p : {&w.q, &w.k, &w.v, &w.qkv, &w.o, &w.up, &w.gate, &w.gateUp, &w.down})
            if (!p->weight.empty() && !anyRowCount(p->weight)) return false;
    return true;
}

/// Rows of a batch of resumed runs (resumeBatch): more runs are not batched together. The
/// layer's products run 256 rows at a time (forRowBlocks) and read the weights once per block
/// anyway, so a larger batch would save little; this one keeps a batch's buffers (x, q, k, v
/// and the heads' outputs: 1024 x (2 D + (H + 2 Hkv) hd) floats) at 16 MB for GPT-2 small and
/// 29 MB for a 1 B model.
constexpr Index kBatchRows = 1024;

/// The runs of one batch, stacked in x's rows: run i's fresh positions old_i.. from row
/// begins[i], each run's first row at a multiple of `align` rows so that its rows lie in memory
/// as a lone run's do (Eigen's row reductions sum alike); the rows between runs are zeros.
Result<Matrix> runBatch(const Model& model, std::span<const std::int64_t> ids,
                        const RunOptions& options, const ModelRun* prefix, const Matrix& entering,
                        Index first, std::span<const seams::BatchedRun> runs, int threads) {
    const ModelConfig& c = model.config;
    const Index length = static_cast<Index>(ids.size());
    const Index hd = c.headDim;
    const Index align = kPanel / std::gcd(c.hidden, kPanel);
    std::vector<Index> begins;
    Index total = 0;
    for (const seams::BatchedRun& run : runs) {
        total = (total + align - 1) / align * align;
        begins.push_back(total);
        total += length - run.old;
    }
    auto rowsOf = [&](Matrix& m, std::size_t i) {
        return m.middleRows(begins[i], length - runs[i].old);
    };
    Matrix x = Matrix::Zero(total, c.hidden);
    for (std::size_t i = 0; i < runs.size(); ++i)
        rowsOf(x, i) = entering.bottomRows(length - runs[i].old);

    const bool sharedNorm = c.residual == Residual::ParallelSharedNorm;
    Matrix h, attended, mixed, merged;
    Matrix q(total, c.heads * hd), k(total, c.kvHeads * hd), v(total, c.kvHeads * hd);
    RowBlock block;
    for (Index l = first; l < c.layers; ++l) {
        if (options.cancel && options.cancel->load()) return Error{"cancelled"};
        const auto lu = static_cast<std::size_t>(l);
        const LayerWeights& w = model.main.layers[lu];
        for (std::size_t i = 0; i < runs.size(); ++i)
            if (runs[i].patch) patchResidual(*runs[i].patch, l, runs[i].old, rowsOf(x, i));
        if (sharedNorm) sharedNormOf(x, w, c, h);
        forRowBlocks(total, [&](Index begin, Index count) {
            attentionInput(x, sharedNorm ? &h : nullptr, w, c, begin, count, block.in);
            qkvOfBlock(block.in, w, c, block, threads);
            q.middleRows(begin, count) = block.q;
            k.middleRows(begin, count) = block.k;
            v.middleRows(begin, count) = block.v;
        });
        const LayerAttention layer = c.layerAttention[lu];
        AttentionSpec spec = attentionSpecOf(c, AttentionOf::Self, l);
        spec.threads = threads;
        mixed.setZero(total, c.heads * hd);
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const Index old = runs[i].old;
            if (layer.rope >= 0 && c.usesRope()) {
                const Rope& rope = c.ropes[static_cast<std::size_t>(layer.rope)];
                applyRope(rowsOf(q, i), hd, rope, old, length);
                applyRope(rowsOf(k, i), hd, rope, old, length);
            }
            Qkv heads;
            heads.q = splitHeads(rowsOf(q, i), c.heads, hd);
            heads.k = splitHeads(rowsOf(k, i), c.kvHeads, hd);
            heads.v = splitHeads(rowsOf(v, i), c.kvHeads, hd);
            if (old > 0) { // as an extension of the prefix reads them: its keys, then the fresh
                HeadCache::extended(prefix->k[lu], old, std::move(heads.k)).tensorInto(heads.k);
                HeadCache::extended(prefix->v[lu], old, std::move(heads.v)).tensorInto(heads.v);
            }
            const Attention attention = attend(heads, spec);
            mergeHeads(attention, c, l, &options.ablatedHeads, 0, length - old, merged);
            if (runs[i].patch) patchHeads(*runs[i].patch, l, old, hd, merged);
            rowsOf(mixed, i) = merged;
        }
        if (c.residual != Residual::Sequential) attended.setZero(total, c.hidden);
        forRowBlocks(total, [&](Index begin, Index count) {
            merged = mixed.middleRows(begin, count);
            attentionResidual(merged, w, c, x, attended, begin, block, threads);
        });
        mlpResidual(x, sharedNorm ? &h : nullptr, attended, w, c, nullptr, block, threads);
    }
    for (std::size_t i = 0; i < runs.size(); ++i)
        if (runs[i].patch) patchResidual(*runs[i].patch, c.layers, runs[i].old, rowsOf(x, i));
    applyFinalNorm(model, x);
    Matrix logits(static_cast<Index>(runs.size()), static_cast<Index>(options.logitIds.size()));
    Matrix row;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        logitsOf(model, x.row(begins[i] + length - runs[i].old - 1), row, threads,
                 options.logitIds);
        logits.row(static_cast<Index>(i)) = row;
    }
    return logits;
}

} // namespace

Result<seams::Batch> seams::resumeBatch(const Model& model, std::span<const std::int64_t> ids,
                                        const RunOptions& options, const ModelRun* prefix,
                                        const Matrix& entering, Index first,
                                        std::span<const BatchedRun> asked) {
    const ModelConfig& c = model.config;
    const Index length = static_cast<Index>(ids.size());
    ATTN_CHECK(batchable(c) && !options.record && !options.logitIds.empty() && first >= 0 &&
                   first <= c.layers && entering.rows() == length && entering.cols() == c.hidden,
               "resumeBatch: not a batch of resumed runs");
    if (auto problem = validateRun(c, ids, options)) return Error{*problem};
    // Each run reads what runModel would read of the prefix under its reuseAtMost.
    RunOptions reading = options;
    reading.reuseCommonPrefix = true;
    const Index reusable = reusablePositions(prefix, ids, reading, c);
    std::vector<BatchedRun> runs(asked.begin(), asked.end());
    Batch batch;
    for (BatchedRun& run : runs) {
        run.old = std::clamp(run.old, Index{0}, reusable);
        batch.reusedPositions += run.old;
    }
    const int threads = resolveThreads(options.threads);
    const bool anyRows = projectionsAnyRowCount(model);
    batch.logits.resize(static_cast<Index>(runs.size()),
                        static_cast<Index>(options.logitIds.size()));
    // Consecutive runs together up to kBatchRows rows; a short run alone where its rows would
    // take another product than they do alone.
    auto fits = [&](const BatchedRun& run) {
        return anyRows || length - run.old >= kPackedGemmRows;
    };
    std::size_t from = 0;
    while (from < runs.size()) {
        std::size_t to = from + 1;
        if (fits(runs[from])) {
            Index rows = length - runs[from].old;
            while (to < runs.size() && fits(runs[to]) && rows + length - runs[to].old <= kBatchRows)
                rows += length - runs[to++].old;
        }
        auto part = runBatch(model, ids, options, prefix, entering, first,
                             std::span(runs).subspan(from, to - from), threads);
        if (!part) return Error{part.error()};
        batch.logits.middleRows(static_cast<Index>(from), part->rows()) = *part;
        from = to;
    }
    return batch;
}

Result<ModelRun> runTranslation(const Model& model, std::span<const std::int64_t> source,
                                std::span<const std::int64_t> target, const RunOptions& options,
                                const ModelRun* previous) {
    const ModelConfig& c = model.config;
    if (c.kind != ModelKind::EncoderDecoder)
        return Error{model.name + " is not an encoder-decoder: it runs one sequence"};
    RunOptions sourceOptions = options;
    sourceOptions.ablatedHeads.clear(); // ablation names decoder heads
    if (auto problem = validateRun(c, source, sourceOptions))
        return Error{"source: " + problem->message};
    if (auto problem = validateRun(c, target, options)) return Error{"target: " + problem->message};
    const int threads = resolveThreads(options.threads);
    const bool sameSource = previous && previous->sourceIds.size() == source.size() &&
                            std::equal(source.begin(), source.end(), previous->sourceIds.begin()) &&
                            previous->crossK.size() == static_cast<std::size_t>(c.layers) &&
                            previous->encoderHidden.rows() == static_cast<Index>(source.size());
    const Index old = sameSource ? reusablePositions(previous, target, options, c) : 0;
    const ModelRun* cache = old > 0 ? previous : nullptr;

    ModelRun run;
    run.ids.assign(target.begin(), target.end());
    run.sourceIds.assign(source.begin(), source.end());
    run.ablatedHeads = options.ablatedHeads;
    run.extended = cache != nullptr;
    run.reusedPositions = old;
    run.passes = passesAfter(cache, old);
    if (sameSource) {
        // The encoder's output and the cross K/V depend on the source alone.
        run.encoderQ = previous->encoderQ;
        run.encoderK = previous->encoderK;
        run.encoderHidden = previous->encoderHidden;
        run.crossK = previous->crossK;
        run.crossV = previous->crossV;
    } else {
        Matrix e = embed(model, model.encoder, source, 0);
        if (!runStack(model, Pass::Encoder, e, 0, run, nullptr, sourceOptions, threads))
            return Error{"cancelled"};
        if (!model.encoder.finalNorm.empty())
            normalize(e, model.encoder.finalNorm, c.arch().norm, c.normEps, c.hidden);
        run.encoderHidden = std::move(e);
        Matrix projected;
        for (const LayerWeights& w : model.main.layers) {
            project(run.encoderHidden, w.crossK, projected, threads);
            run.crossK.push_back(splitHeads(projected, c.kvHeads, c.headDim));
            project(run.encoderHidden, w.crossV, projected, threads);
            run.crossV.push_back(splitHeads(projected, c.kvHeads, c.headDim));
        }
    }
    return runMain(model, target, old, std::move(run), cache, options, threads);
}

// The forward's own final norm and unembedding, for the lens, and its projection, for tests
// (forward_seams.h).
namespace seams {

void project(const Matrix& x, const Linear& p, Matrix& y, int threads) {
    ::attnlab::model::project(x, p, y, threads);
}

void finalNorm(const Model& model, Matrix& rows) {
    applyFinalNorm(model, rows);
}

void logits(const Model& model, const Matrix& hidden, Matrix& out, int threads) {
    logitsOf(model, hidden, out, resolveThreads(threads));
}

MatrixD frozenDirectLogits(const Model& model, const Matrix& terms, const RowVector& finalResidual,
                           std::span<const std::int64_t> tokens) {
    const ModelConfig& c = model.config;
    const Norm& n = model.main.finalNorm;
    MatrixD normed = terms.cast<double>();
    RowVectorT<double> constant = RowVectorT<double>::Zero(c.hidden);
    if (!n.empty()) {
        const Eigen::ArrayXd r = finalResidual.cast<double>().transpose().array();
        RowVectorT<double> weight = n.weight.vector().cast<double>().transpose();
        double inv = 0;
        switch (c.arch().norm) {
        case NormKind::LayerNorm:
            inv = 1.0 / std::sqrt((r - r.mean()).square().mean() + c.normEps);
            for (Index i = 0; i < normed.rows(); ++i)
                normed.row(i).array() -= normed.row(i).mean(); // centring is linear
            if (!n.bias.empty()) constant = n.bias.vector().cast<double>().transpose();
            break;
        case NormKind::RmsNorm:
            inv = 1.0 / std::sqrt(r.square().mean() + c.normEps);
            break;
        case NormKind::RmsNormPlusOne:
            inv = 1.0 / std::sqrt(r.square().mean() + c.normEps);
            weight.array() += 1.0;
            break;
        }
        normed = normed.array().rowwise() * (inv * weight).array();
    }
    // The unembedding of each token, widened from the checkpoint's precision (F16/BF16 stay
    // 16-bit in memory): a column of a [D, V] Conv1D head, a row of an nn.Linear one.
    const Weight& head = model.lmHead.weight;
    std::vector<float> widened(static_cast<std::size_t>(c.hidden));
    MatrixD out(normed.rows() + 1, static_cast<Index>(tokens.size()));
    for (std::size_t k = 0; k < tokens.size(); ++k) {
        const Index t = static_cast<Index>(tokens[k]);
        head.widenOutput(t, widened.data());
        const VectorD u = Eigen::Map<const Vector>(widened.data(), c.hidden).cast<double>();
        const auto column = static_cast<Index>(k);
        out.col(column).head(normed.rows()) = normed * u;
        out(normed.rows(), column) =
            constant.dot(u.transpose()) +
            (model.lmHead.bias.empty()
                 ? 0.0
                 : static_cast<double>(model.lmHead.bias.values[static_cast<std::size_t>(t)]));
    }
    return out * c.logitScale;
}

} // namespace seams

} // namespace attnlab::model

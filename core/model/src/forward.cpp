// The forward pass, one readable loop over layers (llama2.c's run.c is the model) that reads
// the architecture's traits, never its name: embed (scaled), then per block norm -> q/k/v ->
// (q/k norm, RoPE) -> attend() from the core -> output projection (-> norm) -> residual, and
// the MLP the same way, sequential or parallel; the final norm and lm head (scaled, capped)
// where logits are asked for. GEMMs run on threads in fixed blocks of output columns (same bytes
// at any thread count).

#include <algorithm>
#include <cmath>
#include <numbers>
#include <thread>

#include "attnlab/attention/attention.h"
#include "attnlab/model/model.h"

namespace attnlab::model {
namespace {

/// More recorded attention than this (floats, over all layers) is a request no machine serves.
constexpr double kMaxRecordedFloats = 2.0e9;

int resolveThreads(int threads) {
    if (threads > 0) return threads;
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

/// Runs fn(begin, end) over [0, count) in blocks of kColumnBlock columns, the blocks shared out
/// over up to `threads` threads (the calling thread one of them). The blocks are the same
/// whatever the thread count: Eigen chooses its depth blocking, and so the order of each dot
/// product's sum, from the shape of the product it is given, so a split by thread count gave
/// logits whose last bits depended on --threads.
template <typename Fn> void parallelColumns(Index count, int threads, const Fn& fn) {
    constexpr Index kColumnBlock = 64;
    const Index blocks = (count + kColumnBlock - 1) / kColumnBlock;
    const Index workers = std::max<Index>(1, std::min<Index>(threads, blocks));
    auto work = [&fn, count, blocks, workers](Index first) {
        for (Index block = first; block < blocks; block += workers) {
            const Index begin = block * kColumnBlock;
            fn(begin, std::min(count, begin + kColumnBlock));
        }
    };
    std::vector<std::thread> pool;
    for (Index w = 1; w < workers; ++w)
        pool.emplace_back(work, w);
    work(0);
    for (auto& worker : pool)
        worker.join();
}

/// y = x W^T (+ bias) for an nn.Linear weight W [out, in], or y = x W for a Conv1D [in, out].
void project(const Matrix& x, const Linear& p, Matrix& y, int threads) {
    const Weight& w = p.weight;
    const Index outputs = w.outputs();
    y.resize(x.rows(), outputs);
    const auto weight = w.matrix();
    parallelColumns(outputs, threads, [&](Index begin, Index end) {
        auto block = y.middleCols(begin, end - begin);
        if (w.inOut)
            block.noalias() = x * weight.middleCols(begin, end - begin);
        else
            block.noalias() = x * weight.middleRows(begin, end - begin).transpose();
        if (!p.bias.empty())
            block.rowwise() += p.bias.vector().segment(begin, end - begin).transpose();
    });
}

/// The family's norm over each `width` segment of each row of x, in place: LayerNorm
/// ((x - mean) / sqrt(var + eps) * w + b, biased variance), RMSNorm (x / rms * w) or Gemma's
/// (x / rms * (1 + w)).
void normalize(Matrix& x, const Norm& n, NormKind kind, double eps, Index width) {
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

/// The MLP's activation in place.
void activate(Matrix& x, Activation activation) {
    auto a = x.array();
    switch (activation) {
    case Activation::GeluTanh: { // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        const float c = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
        a = 0.5f * a * (1.0f + (c * (a + 0.044715f * a.cube())).tanh());
        break;
    }
    case Activation::GeluErf: { // 0.5 x (1 + erf(x / sqrt 2))
        const float invSqrt2 = static_cast<float>(1.0 / std::numbers::sqrt2);
        a = a.unaryExpr([invSqrt2](float v) { return 0.5f * v * (1.0f + std::erf(v * invSqrt2)); });
        break;
    }
    case Activation::Silu:
        a = a / (1.0f + (-a).exp());
        break;
    case Activation::Relu:
        a = a.max(0.0f);
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
void applyRope(Matrix& x, Index headDim, const Rope& rope, Index offset, Index total) {
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
void projectQkv(const Matrix& h, const LayerWeights& w, const ModelConfig& c, Matrix& q,
                Matrix& k, Matrix& v, int threads) {
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

/// The MLP of h into out.
void mlp(const Matrix& h, const LayerWeights& w, const ModelConfig& c, Matrix& out,
         Matrix& up, Matrix& gate, int threads) {
    switch (c.arch().mlp) {
    case MlpKind::Plain:
        project(h, w.up, up, threads);
        activate(up, c.activation);
        project(up, w.down, out, threads);
        return;
    case MlpKind::Gated:
        project(h, w.gate, gate, threads);
        project(h, w.up, up, threads);
        activate(gate, c.activation);
        gate.array() *= up.array();
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

/// A [1, heads, total, hd] tensor holding `previous`'s first rows (when given) and then the
/// rows of `fresh` [S_new, heads * hd] split by head.
Tensor4 appendHeads(const Tensor4* previous, const Matrix& fresh, Index heads, Index headDim) {
    const Index old = previous ? previous->seq : 0;
    Tensor4 out(1, heads, old + fresh.rows(), headDim);
    for (Index h = 0; h < heads; ++h) {
        auto head = out.head(0, h);
        if (previous) head.topRows(old) = previous->head(0, h);
        head.bottomRows(fresh.rows()) = fresh.middleCols(h * headDim, headDim);
    }
    return out;
}

bool canExtend(const ModelRun* previous, std::span<const std::int64_t> ids,
               const RunOptions& options, const ModelConfig& config) {
    if (!previous || previous->ids.empty() || previous->ids.size() >= ids.size()) return false;
    if (!std::equal(previous->ids.begin(), previous->ids.end(), ids.begin())) return false;
    if (previous->ablatedHeads != options.ablatedHeads) return false;
    const auto layers = static_cast<std::size_t>(config.layers);
    if (previous->k.size() != layers || previous->v.size() != layers ||
        previous->attentions.size() != layers)
        return false;
    if (options.recordQkv && previous->q.size() != layers) return false;
    const Index old = static_cast<Index>(previous->ids.size());
    if (previous->finalHidden.rows() != old || previous->finalHidden.cols() != config.hidden)
        return false;
    // A longrope model switches its frequencies when the run outgrows the pretrained length:
    // positions cached under the short factors cannot be reused under the long ones.
    for (const Rope& rope : config.ropes)
        if (&rope.frequenciesFor(old) != &rope.frequenciesFor(static_cast<Index>(ids.size())))
            return false;
    return previous->k.front().heads == config.kvHeads &&
           previous->k.front().dim == config.headDim && previous->k.front().seq == old &&
           previous->attentions.front().heads == config.heads;
}

} // namespace

std::vector<double> ropeInverseFrequencies(const ModelConfig& config) {
    return config.ropes.empty() ? std::vector<double>{} : config.ropes.front().inverseFrequencies;
}

std::optional<std::string> validateRun(const ModelConfig& config, std::span<const std::int64_t> ids,
                                       const RunOptions& options) {
    if (ids.empty()) return "no token ids to run";
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= config.vocab)
            return "token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                   " is outside the vocabulary [0, " + std::to_string(config.vocab) + ")";
    const auto count = static_cast<Index>(ids.size());
    if (count > config.maxPositions)
        return std::to_string(count) + " tokens are more than the model's " +
               std::to_string(config.maxPositions) + " positions";
    const double recorded = static_cast<double>(config.layers) * static_cast<double>(config.heads) *
                            static_cast<double>(count) * static_cast<double>(count);
    if (recorded > kMaxRecordedFloats)
        return std::to_string(count) + " tokens are too many to record every layer's attention";
    for (const auto& [layer, head] : options.ablatedHeads)
        if (layer < 0 || layer >= config.layers || head < 0 || head >= config.heads)
            return "ablated head (" + std::to_string(layer) + ", " + std::to_string(head) +
                   ") is outside the model's " + std::to_string(config.layers) + " layers x " +
                   std::to_string(config.heads) + " heads";
    return std::nullopt;
}

Result<ModelRun> runModel(const Model& model, std::span<const std::int64_t> ids,
                          const RunOptions& options, const ModelRun* previous) {
    const ModelConfig& c = model.config;
    const Architecture& a = c.arch();
    if (auto problem = validateRun(c, ids, options)) return Error{*problem};
    const int threads = resolveThreads(options.threads);
    const bool extend = canExtend(previous, ids, options, c);
    if (!extend) previous = nullptr;
    const Index old = previous ? static_cast<Index>(previous->ids.size()) : 0;
    const Index total = static_cast<Index>(ids.size());
    const Index fresh = total - old;
    const Index hd = c.headDim;
    const float residualScale = static_cast<float>(c.residualScale);

    ModelRun run;
    run.ids.assign(ids.begin(), ids.end());
    run.ablatedHeads = options.ablatedHeads;
    run.extended = extend;
    run.reusedPositions = old;
    auto cancelled = [&] { return options.cancel && options.cancel->load(); };

    // Embeddings of the new positions (scaled in float32, as the embedding's dtype).
    Matrix x(fresh, c.hidden);
    const auto embedding = model.tokenEmbedding.matrix();
    for (Index i = 0; i < fresh; ++i) {
        x.row(i) = embedding.row(static_cast<Index>(ids[static_cast<std::size_t>(old + i)]));
        if (!model.positionEmbedding.empty())
            x.row(i) += model.positionEmbedding.matrix().row(old + i);
    }
    if (c.embeddingScale != 1.0) x *= static_cast<float>(c.embeddingScale);

    AttentionSpec spec;
    spec.wantWeights = true;
    spec.threads = threads;
    spec.scale = c.attentionScale;
    if (c.attentionSoftcap > 0) spec.softcap = c.attentionSoftcap;

    Matrix h, q, k, v, mixed, attended, mlpIn, mlpOut, up, gate;
    for (Index l = 0; l < c.layers; ++l) {
        if (cancelled()) return Error{"cancelled"};
        const LayerWeights& w = model.layers[static_cast<std::size_t>(l)];
        const std::size_t lu = static_cast<std::size_t>(l);
        const LayerAttention& layer = c.layerAttention[lu];

        // Attention block: h = norm(x) (where the family has one); q, k, v; q/k norm; RoPE.
        if (w.attnNormIn.empty())
            h = x;
        else
            normalizeInto(x, w.attnNormIn, c, h);
        projectQkv(h, w, c, q, k, v, threads);
        if (a.qkNorm != QkNorm::None) {
            const bool perHead = a.qkNorm == QkNorm::PerHead;
            normalize(q, w.qNorm, a.norm, c.normEps, perHead ? hd : q.cols());
            normalize(k, w.kNorm, a.norm, c.normEps, perHead ? hd : k.cols());
        }
        if (layer.rope >= 0 && c.usesRope()) {
            const Rope& rope = c.ropes[static_cast<std::size_t>(layer.rope)];
            applyRope(q, hd, rope, old, total);
            applyRope(k, hd, rope, old, total);
        }

        Qkv heads;
        heads.q = appendHeads(nullptr, q, c.heads, hd);
        heads.k = appendHeads(previous ? &previous->k[lu] : nullptr, k, c.kvHeads, hd);
        heads.v = appendHeads(previous ? &previous->v[lu] : nullptr, v, c.kvHeads, hd);
        spec.mask = MaskSpec{};
        if (layer.window > 0)
            spec.mask.causalWindow = layer.window - 1; // i - W < j <= i
        else
            spec.mask.causal = true;
        Attention attention = attend(heads, spec);

        // Record: attention rows [H, total, total], q (asked), k and v (the cache).
        Tensor4 weights(1, c.heads, total, total);
        for (Index head = 0; head < c.heads; ++head) {
            auto all = weights.head(0, head);
            if (previous) all.topLeftCorner(old, old) = previous->attentions[lu].head(0, head);
            all.bottomRows(fresh) = attention.weights.head(0, head);
        }
        run.attentions.push_back(std::move(weights));
        if (options.recordQkv)
            run.q.push_back(appendHeads(previous ? &previous->q[lu] : nullptr, q, c.heads, hd));
        run.k.push_back(std::move(heads.k));
        run.v.push_back(std::move(heads.v));

        mixed.resize(fresh, c.heads * hd);
        for (Index head = 0; head < c.heads; ++head) {
            if (options.ablatedHeads.count({l, head}))
                mixed.middleCols(head * hd, hd).setZero();
            else
                mixed.middleCols(head * hd, hd) = attention.output.head(0, head);
        }
        project(mixed, w.o, attended, threads);
        if (!w.attnNormOut.empty()) normalize(attended, w.attnNormOut, a.norm, c.normEps, c.hidden);

        // MLP block, after the attention's residual (sequential) or beside it (parallel).
        switch (c.residual) {
        case Residual::Sequential:
            if (residualScale != 1.0f) attended *= residualScale;
            x += attended;
            if (w.mlpNormIn.empty())
                mlpIn = x;
            else
                normalizeInto(x, w.mlpNormIn, c, mlpIn);
            break;
        case Residual::ParallelSharedNorm:
            mlpIn = std::move(h);
            break;
        case Residual::ParallelTwoNorms:
            normalizeInto(x, w.mlpNormIn, c, mlpIn);
            break;
        }
        mlp(mlpIn, w, c, mlpOut, up, gate, threads);
        if (!w.mlpNormOut.empty()) normalize(mlpOut, w.mlpNormOut, a.norm, c.normEps, c.hidden);
        if (c.residual == Residual::Sequential) {
            if (residualScale != 1.0f) mlpOut *= residualScale;
            x += mlpOut;
        } else {
            x += attended + mlpOut; // transformers adds attn + mlp first, then the residual
        }
    }
    if (cancelled()) return Error{"cancelled"};

    // Final norm of every position (cheap, and kept so an extension can ask for old logits).
    Matrix normed;
    normalizeInto(x, model.finalNorm, c, normed);
    run.finalHidden.resize(total, c.hidden);
    if (previous) run.finalHidden.topRows(old) = previous->finalHidden;
    run.finalHidden.bottomRows(fresh) = normed;

    // Logits: lm head, then Granite's scaling and Gemma 2's soft-capping.
    auto logitsOf = [&](const Matrix& hidden, Matrix& out) {
        project(hidden, model.lmHead, out, threads);
        if (c.logitScale != 1.0) out *= static_cast<float>(c.logitScale);
        if (c.finalSoftcap > 0) softcap(out, c.finalSoftcap);
    };
    run.logitRows = options.logits;
    if (options.logits == LogitRows::Last) {
        logitsOf(run.finalHidden.bottomRows(1), run.logits);
    } else if (options.logits == LogitRows::All) {
        if (previous && previous->logitRows == LogitRows::All && previous->logits.rows() == old) {
            Matrix fresher;
            logitsOf(normed, fresher);
            run.logits.resize(total, c.vocab);
            run.logits.topRows(old) = previous->logits;
            run.logits.bottomRows(fresh) = fresher;
        } else {
            logitsOf(run.finalHidden, run.logits);
        }
    }
    return run;
}

} // namespace attnlab::model

// The forward pass, one readable loop over layers (llama2.c's run.c is the model): embed,
// then per block norm -> q/k/v -> (q/k norm, RoPE) -> attend() from the core -> output
// projection -> norm -> MLP, each with its residual; the final norm and lm head only where
// logits are asked for. GEMMs run on threads in fixed blocks of output columns (same bytes at any
// thread count).

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

/// y = x W^T (+ bias) for an nn.Linear weight W [out, in].
void linear(const Matrix& x, const Weight& w, const Weight& bias, Matrix& y, int threads) {
    y.resize(x.rows(), w.rows);
    const auto weight = w.matrix();
    parallelColumns(w.rows, threads, [&](Index begin, Index end) {
        auto block = y.middleCols(begin, end - begin);
        block.noalias() = x * weight.middleRows(begin, end - begin).transpose();
        if (!bias.empty()) block.rowwise() += bias.vector().segment(begin, end - begin).transpose();
    });
}

/// y = x W (+ bias) for a GPT-2 Conv1D weight W [in, out].
void conv1d(const Matrix& x, const Weight& w, const Weight& bias, Matrix& y, int threads) {
    y.resize(x.rows(), w.cols);
    const auto weight = w.matrix();
    parallelColumns(w.cols, threads, [&](Index begin, Index end) {
        auto block = y.middleCols(begin, end - begin);
        block.noalias() = x * weight.middleCols(begin, end - begin);
        if (!bias.empty()) block.rowwise() += bias.vector().segment(begin, end - begin).transpose();
    });
}

/// LayerNorm over each row: (x - mean) / sqrt(var + eps) * w + b (biased variance).
void layerNorm(const Matrix& x, const Weight& w, const Weight& b, double eps, Matrix& out) {
    out.resize(x.rows(), x.cols());
    const auto weight = w.vector().transpose().array();
    const auto bias = b.vector().transpose().array();
    for (Index i = 0; i < x.rows(); ++i) {
        const auto row = x.row(i).array();
        const float mean = row.mean();
        const float variance = (row - mean).square().mean();
        const float inv = 1.0f / std::sqrt(variance + static_cast<float>(eps));
        out.row(i).array() = (row - mean) * inv * weight + bias;
    }
}

/// RMSNorm over each row (or each `width` segment of it): x / sqrt(mean(x^2) + eps) * w.
void rmsNorm(Matrix& x, const Weight& w, double eps, Index width) {
    const auto weight = w.vector().transpose().array();
    for (Index i = 0; i < x.rows(); ++i)
        for (Index at = 0; at < x.cols(); at += width) {
            auto segment = x.row(i).segment(at, width).array();
            const float inv = 1.0f / std::sqrt(segment.square().mean() + static_cast<float>(eps));
            segment = segment * inv * weight;
        }
}

void rmsNormInto(const Matrix& x, const Weight& w, double eps, Matrix& out) {
    out = x;
    rmsNorm(out, w, eps, x.cols());
}

/// GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void geluNew(Matrix& x) {
    const float c = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
    x.array() = 0.5f * x.array() * (1.0f + (c * (x.array() + 0.044715f * x.array().cube())).tanh());
}

/// Rotate-half RoPE (Hugging Face's apply_rotary_pos_emb) on every head of x [S, heads * hd],
/// row s at position offset + s.
void applyRotateHalf(Matrix& x, Index headDim, const std::vector<double>& inverseFrequencies,
                     Index offset) {
    const Index half = headDim / 2;
    std::vector<float> cosines(static_cast<std::size_t>(half));
    std::vector<float> sines(static_cast<std::size_t>(half));
    for (Index s = 0; s < x.rows(); ++s) {
        for (Index i = 0; i < half; ++i) {
            // float32 angle, as Hugging Face computes position x inv_freq
            const float angle = static_cast<float>(offset + s) *
                                static_cast<float>(inverseFrequencies[static_cast<size_t>(i)]);
            cosines[static_cast<std::size_t>(i)] = std::cos(angle);
            sines[static_cast<std::size_t>(i)] = std::sin(angle);
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
    return previous->k.front().heads == config.kvHeads &&
           previous->k.front().dim == config.headDim && previous->k.front().seq == old &&
           previous->attentions.front().heads == config.heads;
}

} // namespace

std::vector<double> ropeInverseFrequencies(const ModelConfig& config) {
    const Index half = config.headDim / 2;
    std::vector<double> inverse(static_cast<std::size_t>(half));
    for (Index i = 0; i < half; ++i) {
        // Hugging Face: 1 / theta^(arange(0, hd, 2) / hd), in float32
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(config.headDim);
        inverse[static_cast<std::size_t>(i)] =
            static_cast<float>(1.0 / std::pow(config.ropeTheta, static_cast<double>(exponent)));
    }
    const RopeScaling& scaling = config.ropeScaling;
    if (scaling.type == RopeScalingType::Linear) {
        for (auto& f : inverse)
            f /= scaling.factor;
    } else if (scaling.type == RopeScalingType::Llama3) {
        // Llama 3.1's _compute_llama3_parameters
        const double lowWavelength = scaling.originalMaxPositions / scaling.lowFreqFactor;
        const double highWavelength = scaling.originalMaxPositions / scaling.highFreqFactor;
        for (auto& f : inverse) {
            const double wavelength = 2 * std::numbers::pi / f;
            if (wavelength < highWavelength) continue;
            if (wavelength > lowWavelength) {
                f /= scaling.factor;
                continue;
            }
            const double smooth =
                (scaling.originalMaxPositions / wavelength - scaling.lowFreqFactor) /
                (scaling.highFreqFactor - scaling.lowFreqFactor);
            f = (1 - smooth) * f / scaling.factor + smooth * f;
        }
    }
    return inverse;
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
    if (auto problem = validateRun(c, ids, options)) return Error{*problem};
    const int threads = resolveThreads(options.threads);
    const bool extend = canExtend(previous, ids, options, c);
    if (!extend) previous = nullptr;
    const Index old = previous ? static_cast<Index>(previous->ids.size()) : 0;
    const Index total = static_cast<Index>(ids.size());
    const Index fresh = total - old;
    const Index hd = c.headDim;
    const std::vector<double> inverseFrequencies =
        c.llamaFamily() ? ropeInverseFrequencies(c) : std::vector<double>{};

    ModelRun run;
    run.ids.assign(ids.begin(), ids.end());
    run.ablatedHeads = options.ablatedHeads;
    run.extended = extend;
    run.reusedPositions = old;
    auto cancelled = [&] { return options.cancel && options.cancel->load(); };

    // Embeddings of the new positions.
    Matrix x(fresh, c.hidden);
    const auto embedding = model.tokenEmbedding.matrix();
    for (Index i = 0; i < fresh; ++i) {
        x.row(i) = embedding.row(static_cast<Index>(ids[static_cast<std::size_t>(old + i)]));
        if (!model.positionEmbedding.empty())
            x.row(i) += model.positionEmbedding.matrix().row(old + i);
    }

    AttentionSpec spec;
    spec.mask.causal = true;
    if (c.slidingWindow > 0) spec.mask.causalWindow = c.slidingWindow - 1; // i - W < j <= i
    spec.wantWeights = true;
    spec.threads = threads;

    Matrix h, q, k, v, mixed, projected, up, gate;
    for (Index l = 0; l < c.layers; ++l) {
        if (cancelled()) return Error{"cancelled"};
        const LayerWeights& w = model.layers[static_cast<std::size_t>(l)];
        const std::size_t lu = static_cast<std::size_t>(l);

        // Attention block: h = norm(x); q, k, v; attend; x += o(concat heads).
        if (c.llamaFamily()) {
            rmsNormInto(x, w.norm1, c.normEps, h);
            linear(h, w.q, w.qBias, q, threads);
            linear(h, w.k, w.kBias, k, threads);
            linear(h, w.v, w.vBias, v, threads);
            if (c.qkNorm) {
                rmsNorm(q, w.qNorm, c.normEps, hd);
                rmsNorm(k, w.kNorm, c.normEps, hd);
            }
            applyRotateHalf(q, hd, inverseFrequencies, old);
            applyRotateHalf(k, hd, inverseFrequencies, old);
        } else {
            layerNorm(x, w.norm1, w.norm1Bias, c.normEps, h);
            Matrix qkv;
            conv1d(h, w.attnQkv, w.attnQkvBias, qkv, threads);
            q = qkv.leftCols(c.hidden);
            k = qkv.middleCols(c.hidden, c.hidden);
            v = qkv.rightCols(c.hidden);
        }

        Qkv heads;
        heads.q = appendHeads(nullptr, q, c.heads, hd);
        heads.k = appendHeads(previous ? &previous->k[lu] : nullptr, k, c.kvHeads, hd);
        heads.v = appendHeads(previous ? &previous->v[lu] : nullptr, v, c.kvHeads, hd);
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
        if (c.llamaFamily())
            linear(mixed, w.o, w.oBias, projected, threads);
        else
            conv1d(mixed, w.o, w.oBias, projected, threads);
        x += projected;

        // MLP block: x += mlp(norm(x)).
        if (c.llamaFamily()) {
            rmsNormInto(x, w.norm2, c.normEps, h);
            linear(h, w.gate, Weight{}, gate, threads);
            linear(h, w.up, Weight{}, up, threads);
            gate.array() = gate.array() / (1.0f + (-gate.array()).exp()) * up.array(); // SwiGLU
            linear(gate, w.down, Weight{}, projected, threads);
        } else {
            layerNorm(x, w.norm2, w.norm2Bias, c.normEps, h);
            conv1d(h, w.mlpIn, w.mlpInBias, up, threads);
            geluNew(up);
            conv1d(up, w.mlpOut, w.mlpOutBias, projected, threads);
        }
        x += projected;
    }
    if (cancelled()) return Error{"cancelled"};

    // Final norm of every position (cheap, and kept so an extension can ask for old logits).
    Matrix normed;
    if (c.llamaFamily())
        rmsNormInto(x, model.finalNorm, c.normEps, normed);
    else
        layerNorm(x, model.finalNorm, model.finalNormBias, c.normEps, normed);
    run.finalHidden.resize(total, c.hidden);
    if (previous) run.finalHidden.topRows(old) = previous->finalHidden;
    run.finalHidden.bottomRows(fresh) = normed;

    run.logitRows = options.logits;
    if (options.logits == LogitRows::Last) {
        linear(run.finalHidden.bottomRows(1), model.lmHead, Weight{}, run.logits, threads);
    } else if (options.logits == LogitRows::All) {
        if (previous && previous->logitRows == LogitRows::All && previous->logits.rows() == old) {
            Matrix fresher;
            linear(normed, model.lmHead, Weight{}, fresher, threads);
            run.logits.resize(total, c.vocab);
            run.logits.topRows(old) = previous->logits;
            run.logits.bottomRows(fresh) = fresher;
        } else {
            linear(run.finalHidden, model.lmHead, Weight{}, run.logits, threads);
        }
    }
    return run;
}

} // namespace attnlab::model

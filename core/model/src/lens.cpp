// The logit lens, direct logit attribution and activation patching (lens.h): each is one or
// more forward passes with the residual stream recorded or patched (RunOptions::record, ::patch)
// and the forward's own final norm and unembedding (forward_seams.h).

#include "attnlab/model/lens.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "forward_seams.h"

namespace attnlab::model {
namespace {

/// The metric logit(a) - logit(b) of a row of the metric's two logits (RunOptions::logitIds =
/// {a, b}): a run's last position, or a batch's run.
double logitDifference(const Matrix& logits, Index row = 0) {
    return static_cast<double>(logits(row, 0)) - static_cast<double>(logits(row, 1));
}

Status tokenProblem(const ModelConfig& config, std::int64_t token, const char* what) {
    if (token >= 0 && token < config.vocab) return std::nullopt;
    std::ostringstream message;
    message << what << " token " << token << " is not in the vocabulary (ids 0.."
            << config.vocab - 1 << ")";
    return Error{message.str()};
}

bool cancelled(const RunOptions& base) {
    return base.cancel && base.cancel->load();
}

/// Runs ids with base's ablation, threads and cancel, recording the residual stream's terms
/// into `record` and keeping `logits` rows: the one forward the lens and the attribution read.
Result<ModelRun> recordedRun(const Model& model, std::span<const std::int64_t> ids,
                             const RunOptions& base, LogitRows logits, RunRecording& record) {
    RunOptions options = base;
    options.logits = logits;
    options.patch = nullptr;
    options.record = &record;
    return runModel(model, ids, options);
}

} // namespace

Status logitLensRows(const Model& model, std::span<const std::int64_t> ids, const RunOptions& base,
                     const std::function<void(Index row, Matrix& logits)>& each) {
    RunRecording record;
    auto run = recordedRun(model, ids, base, LogitRows::None, record);
    if (!run) return Error{run.error()};
    Matrix logits;
    for (std::size_t row = 0; row < record.residual.size(); ++row) {
        if (cancelled(base)) return Error{"cancelled"};
        Matrix& residual = record.residual[row];
        seams::finalNorm(model, residual);
        seams::logits(model, residual, logits, base.threads);
        each(static_cast<Index>(row), logits);
    }
    return std::nullopt;
}

Result<LogitLens> logitLens(const Model& model, std::span<const std::int64_t> ids,
                            const RunOptions& base) {
    LogitLens lens;
    if (Status failed = logitLensRows(model, ids, base, [&](Index, Matrix& logits) {
            lens.logits.push_back(std::move(logits)); // not a copy of each layer's [S, V]
        }))
        return Error{*failed};
    return lens;
}

Matrix probabilities(const Matrix& logits) {
    Matrix out(logits.rows(), logits.cols());
    for (Index i = 0; i < logits.rows(); ++i) {
        const Eigen::ArrayXd row = logits.row(i).transpose().cast<double>().array();
        const Eigen::ArrayXd e = (row - row.maxCoeff()).exp();
        out.row(i) = (e / e.sum()).cast<float>().matrix().transpose();
    }
    return out;
}

std::vector<RankedToken> topTokens(const Eigen::Ref<const RowVector>& probabilities, Index k) {
    const Index count = std::clamp<Index>(k, 0, probabilities.size());
    std::vector<Index> order(static_cast<std::size_t>(probabilities.size()));
    std::iota(order.begin(), order.end(), Index{0});
    std::partial_sort(order.begin(), order.begin() + count, order.end(), [&](Index a, Index b) {
        return probabilities(a) > probabilities(b) ||
               (probabilities(a) == probabilities(b) && a < b);
    });
    std::vector<RankedToken> top;
    for (Index i = 0; i < count; ++i) {
        const Index id = order[static_cast<std::size_t>(i)];
        top.push_back({static_cast<std::int64_t>(id), probabilities(id)});
    }
    return top;
}

Status attributionRefusal(const Model& model) {
    const ModelConfig& c = model.config;
    const std::string who = model.name + " (" + std::string(c.arch().displayName) + ")";
    if (c.kind == ModelKind::EncoderDecoder)
        return Error{who +
                     " is an encoder-decoder: direct logit attribution reads a decoder's stack"};
    const LayerWeights& first = model.main.layers.front();
    if (!first.attnNormAfter.empty() || !first.mlpNormAfter.empty())
        return Error{who +
                     " normalises the residual after every block (post-LN), so the terms of " +
                     "the residual stream do not add up to the logit"};
    if (!first.attnNormOut.empty())
        return Error{who +
                     " normalises the attention output before adding it to the residual, so " +
                     "the heads' outputs do not add up to the logit"};
    if (!model.headTransform.empty())
        return Error{who + " has a nonlinear head (dense, activation, norm) after the final norm"};
    if (c.finalSoftcap > 0)
        return Error{who + " soft-caps its logits (tanh), so the terms do not add up to the logit"};
    return std::nullopt;
}

Result<Attribution> directLogitAttribution(const Model& model, std::span<const std::int64_t> ids,
                                           const AttributionOptions& asked,
                                           const RunOptions& base) {
    if (auto refusal = attributionRefusal(model)) return Error{*refusal};
    const ModelConfig& c = model.config;
    for (const auto& [token, what] :
         {std::pair{asked.target, "target"}, std::pair{asked.contrast, "contrast"}})
        if (token)
            if (auto problem = tokenProblem(c, *token, what)) return *problem;
    RunRecording record;
    auto run = recordedRun(model, ids, base, LogitRows::Last, record);
    if (!run) return Error{run.error()};

    Attribution parts;
    const auto last = run->logits.row(0);
    Index predicted = 0;
    last.maxCoeff(&predicted);
    parts.target = asked.target.value_or(static_cast<std::int64_t>(predicted));
    parts.contrast = asked.contrast;

    // The terms of the last position's final residual, one row each: the embedding, every head,
    // every MLP, every attention output bias.
    const Index layers = c.layers, heads = c.heads;
    const Index at = static_cast<Index>(ids.size()) - 1;
    Matrix terms(1 + layers * heads + 2 * layers, c.hidden);
    terms.row(0) = record.residual.front().row(at);
    for (Index l = 0; l < layers; ++l) {
        const auto lu = static_cast<std::size_t>(l);
        terms.middleRows(1 + l * heads, heads) = record.headOutputs[lu];
        terms.row(1 + layers * heads + l) = record.mlpOutputs[lu].row(at);
        terms.row(1 + layers * heads + layers + l) = record.attentionBias[lu];
    }
    std::vector<std::int64_t> tokens{parts.target};
    if (parts.contrast) tokens.push_back(*parts.contrast);
    const RowVector finalResidual = record.residual.back().row(at);
    const MatrixD direct = seams::frozenDirectLogits(model, terms, finalResidual, tokens);
    const Eigen::VectorXd values =
        parts.contrast ? Eigen::VectorXd(direct.col(0) - direct.col(1)) : direct.col(0);

    parts.embedding = values(0);
    parts.heads.resize(layers, heads);
    for (Index l = 0; l < layers; ++l)
        for (Index h = 0; h < heads; ++h)
            parts.heads(l, h) = values(1 + l * heads + h);
    parts.mlp = values.segment(1 + layers * heads, layers);
    parts.bias = values.segment(1 + layers * heads + layers, layers).sum() + values(terms.rows());
    parts.logit =
        static_cast<double>(last(static_cast<Index>(parts.target))) -
        (parts.contrast ? static_cast<double>(last(static_cast<Index>(*parts.contrast))) : 0.0);
    const Eigen::ArrayXd r = finalResidual.transpose().cast<double>().array();
    parts.finalScale = model.main.finalNorm.empty() ? 1.0
                       : c.arch().norm == NormKind::LayerNorm
                           ? 1.0 / std::sqrt((r - r.mean()).square().mean() + c.normEps)
                           : 1.0 / std::sqrt(r.square().mean() + c.normEps);
    return parts;
}

Status validatePatching(const ModelConfig& config, std::span<const std::int64_t> clean,
                        std::span<const std::int64_t> corrupted, const LogitDifference& metric) {
    if (clean.size() != corrupted.size()) {
        std::ostringstream message;
        message << "the clean prompt is " << clean.size() << " tokens and the corrupted one "
                << corrupted.size() << ": patching needs the same length";
        return Error{message.str()};
    }
    if (auto problem = tokenProblem(config, metric.a, "metric")) return problem;
    if (auto problem = tokenProblem(config, metric.b, "metric")) return problem;
    if (metric.a == metric.b)
        return Error{"the metric's two tokens are the same: their difference is 0"};
    return std::nullopt;
}

Result<Patching> activationPatching(const Model& model, std::span<const std::int64_t> clean,
                                    std::span<const std::int64_t> corrupted,
                                    const PatchingOptions& asked, const RunOptions& base) {
    const ModelConfig& c = model.config;
    if (auto problem = validatePatching(c, clean, corrupted, asked.metric)) return Error{*problem};
    if (auto problem = validateRun(c, clean, base)) return Error{*problem};
    if (auto problem = validateRun(c, corrupted, base)) return Error{*problem};

    RunOptions options = base;
    options.record = nullptr;
    options.patch = nullptr;
    options.logits = LogitRows::Last;
    options.logitIds = {asked.metric.a, asked.metric.b}; // not the whole LM head, run after run
    RunRecording cleanRecord;
    RunOptions recording = options;
    recording.record = &cleanRecord;
    auto cleanRun = runModel(model, clean, recording);
    if (!cleanRun) return Error{cleanRun.error()};
    // The corrupted run's residual entering each layer: a patched run starts at the layer it
    // patches (nothing below that layer changes).
    RunRecording corruptedRecord;
    RunOptions corruptedOptions = options;
    if (asked.resumeAtLayer) corruptedOptions.record = &corruptedRecord;
    auto corruptedRun = runModel(model, corrupted, corruptedOptions);
    if (!corruptedRun) return Error{corruptedRun.error()};

    Patching result;
    result.clean = logitDifference(cleanRun->logits);
    result.corrupted = logitDifference(corruptedRun->logits);
    const double span = result.clean - result.corrupted;
    if (!(std::abs(span) > 1e-6 * std::max(1.0, std::abs(result.clean)))) {
        std::ostringstream message;
        message << "the clean and corrupted prompts give the same logit difference ("
                << result.clean << "): there is nothing to restore";
        return Error{message.str()};
    }
    const Index length = static_cast<Index>(clean.size());
    while (result.sharedPrefix < length &&
           clean[static_cast<std::size_t>(result.sharedPrefix)] ==
               corrupted[static_cast<std::size_t>(result.sharedPrefix)])
        ++result.sharedPrefix;
    const Index shared = result.sharedPrefix;
    const bool reuse = asked.reusePrefix && c.kind == ModelKind::Decoder;

    // A patched run reads the corrupted run's cache of the positions its patch cannot change
    // (RunOptions::reuseAtMost): those before the first differing token, or before the patched
    // position.
    auto reusable = [&](Index positions) { return reuse ? positions : Index{0}; };
    const Index layers = c.layers, heads = c.heads, hd = c.headDim;
    const Index total = (asked.heads ? layers * heads : 0) +
                        (asked.residual ? (layers + 1) * (length - shared) : 0);
    Index done = 0;
    auto patched = [&](const ActivationPatch& patch, Index old, Index layer) -> Result<double> {
        if (cancelled(base)) return Error{"cancelled"};
        RunOptions patching = options;
        patching.patch = &patch;
        patching.reuseCommonPrefix = true;
        patching.reuseAtMost = old;
        const ModelRun* from = old > 0 ? &*corruptedRun : nullptr;
        auto run =
            asked.resumeAtLayer
                ? seams::resumeRun(
                      model, corrupted, patching, from,
                      {.below = &*corruptedRun,
                       .entering = &corruptedRecord.residual[static_cast<std::size_t>(layer)],
                       .first = layer})
                : runModel(model, corrupted, patching, from);
        if (!run) return Error{run.error()};
        ++result.runs;
        result.reusedPositions += run->reusedPositions;
        if (asked.progress) asked.progress(++done, total);
        return (logitDifference(run->logits) - result.corrupted) / span;
    };
    // Runs resumed at one layer share its weights: computed as one batch (seams::resumeBatch),
    // each layer's weights are read once for all of them. Their metric is each run's alone.
    const bool batched = asked.batch && asked.resumeAtLayer && seams::batchable(c);
    auto batch = [&](const std::vector<ActivationPatch>& patches, const std::vector<Index>& olds,
                     Index layer) -> Result<std::vector<double>> {
        if (cancelled(base)) return Error{"cancelled"};
        std::vector<seams::BatchedRun> runs;
        for (std::size_t i = 0; i < patches.size(); ++i)
            runs.push_back({&patches[i], olds[i]});
        auto computed = seams::resumeBatch(
            model, corrupted, options, &*corruptedRun,
            corruptedRecord.residual[static_cast<std::size_t>(layer)], layer, runs);
        if (!computed) return Error{computed.error()};
        const Matrix& logits = computed->logits;
        std::vector<double> effects;
        for (Index i = 0; i < logits.rows(); ++i)
            effects.push_back((logitDifference(logits, i) - result.corrupted) / span);
        result.runs += logits.rows();
        result.reusedPositions += computed->reusedPositions;
        done += logits.rows();
        if (asked.progress) asked.progress(done, total);
        return effects;
    };
    // The effects of one layer's patched runs: as a batch, or one run at a time.
    auto effectsOf = [&](const std::vector<ActivationPatch>& patches,
                         const std::vector<Index>& olds,
                         Index layer) -> Result<std::vector<double>> {
        if (batched) return batch(patches, olds, layer);
        std::vector<double> effects;
        for (std::size_t i = 0; i < patches.size(); ++i) {
            auto effect = patched(patches[i], olds[i], layer);
            if (!effect) return Error{effect.error()};
            effects.push_back(*effect);
        }
        return effects;
    };

    if (asked.heads) {
        result.heads.setZero(layers, heads);
        for (Index l = 0; l < layers; ++l) {
            std::vector<ActivationPatch> patches(static_cast<std::size_t>(heads));
            for (Index h = 0; h < heads; ++h)
                patches[static_cast<std::size_t>(h)].heads[{l, h}] =
                    cleanRecord.headInputs[static_cast<std::size_t>(l)].middleCols(h * hd, hd);
            auto effects =
                effectsOf(patches, std::vector<Index>(patches.size(), reusable(shared)), l);
            if (!effects) return Error{effects.error()};
            for (Index h = 0; h < heads; ++h)
                result.heads(l, h) = (*effects)[static_cast<std::size_t>(h)];
        }
    }
    if (asked.residual) {
        // Before the first differing token the two residuals are the same: the effect is 0.
        result.residual.setZero(layers + 1, length);
        for (Index l = 0; l <= layers && shared < length; ++l) {
            std::vector<ActivationPatch> patches;
            std::vector<Index> olds;
            for (Index position = shared; position < length; ++position) {
                patches.emplace_back().residual[{l, position}] =
                    cleanRecord.residual[static_cast<std::size_t>(l)].row(position);
                olds.push_back(reusable(position));
            }
            auto effects = effectsOf(patches, olds, l);
            if (!effects) return Error{effects.error()};
            for (Index position = shared; position < length; ++position)
                result.residual(l, position) =
                    (*effects)[static_cast<std::size_t>(position - shared)];
        }
    }
    return result;
}

namespace {

/// A token's text on one line: JSON-quoted, so newlines and quotes show as escapes.
std::string quoted(const std::string& piece) {
    return nlohmann::json(piece).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

TokenReading readToken(const std::string& text, const Tokenizer* tokenizer,
                       const ModelConfig& config) {
    TokenReading reading;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), reading.id);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
        if (!tokenizer) {
            reading.problem = TokenReading::Problem::NoTokenizer;
            return reading;
        }
        const Encoding encoding = tokenizer->encode(text, false);
        if (encoding.ids.size() != 1) {
            reading.problem = TokenReading::Problem::NotOneToken;
            reading.count = static_cast<Index>(encoding.ids.size());
            for (const std::string& piece : encoding.display)
                reading.pieces += (reading.pieces.empty() ? "" : " ") + quoted(piece);
            return reading;
        }
        reading.id = encoding.ids.front();
    }
    if (reading.id < 0 || reading.id >= config.vocab)
        reading.problem = TokenReading::Problem::OutsideVocabulary;
    return reading;
}

Result<std::int64_t> namedToken(const std::string& text, const Tokenizer* tokenizer,
                                const ModelConfig& config) {
    const TokenReading reading = readToken(text, tokenizer, config);
    using Problem = TokenReading::Problem;
    if (reading.problem == Problem::None) return reading.id;
    if (reading.problem == Problem::NoTokenizer)
        return Error{"'" + text + "' is not an id, and the model has no tokenizer.json to " +
                     "read it as text"};
    if (reading.problem == Problem::NotOneToken)
        return Error{quoted(text) + " is " + std::to_string(reading.count) + " tokens (" +
                     reading.pieces + "), not one"};
    return *tokenProblem(config, reading.id, "the"); // outside the vocabulary
}

} // namespace attnlab::model

// Decoding an encoder-decoder one token at a time on runTranslation's cache.

#include "attnlab/model/translate.h"

#include <random>

#include "attnlab/model/attention_maps.h"

namespace attnlab::model {

Result<Translation> translate(const Model& model, std::span<const std::int64_t> source,
                              const TranslateOptions& translateOptions, const RunOptions& options,
                              const ModelRun* previous) {
    const ModelConfig& c = model.config;
    if (c.kind != ModelKind::EncoderDecoder || !c.decoderStartTokenId)
        return Error{model.name + " is not an encoder-decoder: nothing to translate"};
    if (auto problem = validateSampling(translateOptions.sampling)) return Error{*problem};
    std::mt19937_64 draw(translateOptions.seed);
    RunOptions stepOptions = options;
    stepOptions.logits = LogitRows::Last;

    Translation out;
    std::vector<std::int64_t> target{*c.decoderStartTokenId};
    // `previous` lends its encoder output when its source is this one.
    std::optional<ModelRun> run;
    const ModelRun* cache = previous;
    for (Index step = 0; step < translateOptions.maxTokens; ++step) {
        auto next = runTranslation(model, source, target, stepOptions, run ? &*run : cache);
        if (!next) return Error{next.error()};
        run = std::move(*next);
        const Matrix& logits = run->logits;
        const std::vector<float> row(logits.data() + (logits.rows() - 1) * logits.cols(),
                                     logits.data() + logits.rows() * logits.cols());
        const auto distribution = nextTokenDistribution(row, translateOptions.sampling);
        if (distribution.empty())
            return Error{"the logits are not finite at step " + std::to_string(step)};
        const std::int64_t id =
            translateOptions.sampling.temperature == 0
                ? distribution.front().id
                : sampleToken(distribution, std::uniform_real_distribution<double>(0, 1)(draw));
        TranslationStep done;
        done.id = id;
        for (const auto& entry : distribution)
            if (entry.id == id) done.probability = entry.modelProbability;
        // The last layer's cross-attention of the last row, summed over the heads.
        const AttentionShape cross = attentionShape(model, *run, AttentionOf::Cross);
        RowVector reads = RowVector::Zero(cross.keys);
        for (Index h = 0; h < cross.heads; ++h)
            reads += attentionRows(model, *run, cross.layers - 1, h, cross.queries - 1, 1,
                                   AttentionOf::Cross);
        reads.maxCoeff(&done.reads);
        out.steps.push_back(done);
        out.generated.push_back(id);
        if ((c.eosTokenId && id == *c.eosTokenId) || step + 1 == translateOptions.maxTokens) break;
        target.push_back(id);
    }
    if (options.logits == LogitRows::All) {
        auto full = runTranslation(model, source, target, options, &*run);
        if (!full) return Error{full.error()};
        run = std::move(*full);
    }
    out.run = std::move(*run);
    return out;
}

} // namespace attnlab::model

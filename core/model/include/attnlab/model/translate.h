#pragma once
/// Translation with an encoder-decoder (runTranslation in model.h): decoding from the decoder
/// start token one token at a time, each step extending the previous run (the encoder and the
/// cross K/V computed once), greedy or sampled, until </s> or a length limit.
///
///   auto result = translate(model, sourceIds, {.maxTokens = 32});
///   result->generated        // the target ids, </s> included when it came
///   attentionMap(model, result->run, l, h, AttentionOf::Cross)  // [St, Ss]: row i
///                                                                // produced generated[i]

#include <cstdint>
#include <span>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/model/model.h"
#include "attnlab/model/sampling.h"

namespace attnlab::model {

struct TranslateOptions {
    Index maxTokens = 64;          ///< at most this many tokens are generated
    SamplingOptions sampling{0.0}; ///< temperature 0: greedy
    std::uint64_t seed = 0;        ///< the draws of a sampled decoding
};

struct TranslationStep {
    std::int64_t id = 0;
    double probability = 0; ///< the model's own (temperature 1, no cut)
    Index reads = 0;        ///< the source position the step's query reads most (last layer,
                            ///< mean of the heads)
};

struct Translation {
    /// The run whose decoder input is the start token and every generated token but the
    /// last: its row i is the query that produced generated[i] (logits of the last row only
    /// unless RunOptions asked for all).
    ModelRun run;
    std::vector<std::int64_t> generated;
    std::vector<TranslationStep> steps;
};

/// Decodes `source`. `previous`, a translation of the same source, lends its encoder output
/// and the decoder cache of the prefix the two decodings share. Errors: runTranslation's, or
/// "cancelled" (RunOptions::cancel).
Result<Translation> translate(const Model& model, std::span<const std::int64_t> source,
                              const TranslateOptions& translateOptions,
                              const RunOptions& options = {}, const ModelRun* previous = nullptr);

/// The ids a run was asked for: a translation's source, else its ids.
inline std::span<const std::int64_t> inputIdsOf(const ModelRun& run) {
    return run.sourceIds.empty() ? std::span<const std::int64_t>(run.ids)
                                 : std::span<const std::int64_t>(run.sourceIds);
}

} // namespace attnlab::model

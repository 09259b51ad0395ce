#pragma once
/// The next-token distribution of one row of logits under the usual sampling controls, in the
/// order Hugging Face's generate() applies them: temperature, then top-k, then top-p.
///
///   p_T(v)   = softmax(logits / T)(v)                       (T = temperature > 0)
///   top-k    keeps the k tokens with the highest p_T (k = 0: all)
///   top-p    of those, keeps the smallest set of highest-probability tokens whose p_T mass,
///            renormalised over the top-k set, is >= p (Holtzman et al. 2020, "nucleus")
///   result   the kept tokens with p_T renormalised over them: what sampling draws from
///
/// T = 0 is greedy decoding: the argmax alone, with probability 1. Ties between equal
/// probabilities go to the lower id everywhere (sorting, top-k and top-p cuts, the argmax).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attnlab/base/result.h"

namespace attnlab::model {

struct SamplingOptions {
    double temperature = 1.0; ///< >= 0 and finite; 0 = argmax
    std::int64_t topK = 0;    ///< >= 0; 0 = no top-k cut
    double topP = 1.0;        ///< in (0, 1]; 1 = no nucleus cut
};

/// Why `options` are not usable, as one sentence naming the control; nullopt when fine.
Status validateSampling(const SamplingOptions& options);

struct TokenProbability {
    std::int64_t id = 0;
    double probability = 0;      ///< under the options, renormalised over the kept tokens
    double modelProbability = 0; ///< softmax(logits) at temperature 1, no cut: the model's own
};

/// softmax(logits) at temperature 1, in double: the model's own distribution over [V]. Empty for
/// an empty row, a NaN or +inf logit, or a row of only -inf.
std::vector<double> modelProbabilities(std::span<const float> logits);

/// The kept tokens of `logits` (one row, [V]) under `options`, highest probability first.
/// Computed in double. A token whose p_T is 0 (a -inf logit, or exp underflow at a very low
/// temperature) is never kept; an empty row, a NaN or +inf logit, or a row of only -inf gives
/// an empty list.
/// Throws InvalidArgument when validateSampling(options) finds a problem.
std::vector<TokenProbability> nextTokenDistribution(std::span<const float> logits,
                                                    const SamplingOptions& options);

/// The token a draw `uniform` in [0, 1) picks from `distribution` by inverse CDF (in the
/// list's order); the last token when rounding leaves uniform beyond the total. Throws
/// InvalidArgument for an empty distribution.
std::int64_t sampleToken(std::span<const TokenProbability> distribution, double uniform);

} // namespace attnlab::model

#include "attnlab/model/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "attnlab/base/check.h"

namespace attnlab::model {

Status validateSampling(const SamplingOptions& options) {
    if (!std::isfinite(options.temperature) || options.temperature < 0)
        return Error{"temperature must be a finite number >= 0 (0 = greedy), got " +
                     std::to_string(options.temperature)};
    if (options.topK < 0)
        return Error{"top-k must be >= 0 (0 = no cut), got " + std::to_string(options.topK)};
    if (!(options.topP > 0 && options.topP <= 1))
        return Error{"top-p must be in (0, 1], got " + std::to_string(options.topP)};
    return std::nullopt;
}

namespace {

/// The largest logit in double; nullopt for an empty row, a NaN or +inf, or only -inf.
std::optional<double> finiteMax(std::span<const float> logits) {
    double maxLogit = -std::numeric_limits<double>::infinity();
    for (const float logit : logits) {
        if (std::isnan(logit) || logit == std::numeric_limits<float>::infinity())
            return std::nullopt;
        maxLogit = std::max(maxLogit, static_cast<double>(logit));
    }
    if (maxLogit == -std::numeric_limits<double>::infinity()) return std::nullopt;
    return maxLogit;
}

} // namespace

std::vector<double> modelProbabilities(std::span<const float> logits) {
    const std::optional<double> maxLogit = finiteMax(logits);
    if (!maxLogit) return {};
    std::vector<double> probabilities(logits.size());
    double sum = 0;
    for (std::size_t id = 0; id < logits.size(); ++id)
        sum += probabilities[id] = std::exp(static_cast<double>(logits[id]) - *maxLogit);
    for (double& p : probabilities)
        p /= sum;
    return probabilities;
}

std::vector<TokenProbability> nextTokenDistribution(std::span<const float> logits,
                                                    const SamplingOptions& options) {
    if (auto problem = validateSampling(options)) ATTN_CHECK(false, problem->message);
    const std::size_t vocab = logits.size();
    const std::optional<double> finite = finiteMax(logits);
    if (!finite) return {};
    const double maxLogit = *finite;

    // The model's own distribution (temperature 1, no cut).
    const std::vector<double> model = modelProbabilities(logits);
    const auto modelProbability = [&](std::size_t id) { return model[id]; };
    // Highest logit first, lower id first among equals: the order of p_T for every T > 0.
    const auto before = [&](std::size_t a, std::size_t b) {
        return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
    };

    if (options.temperature == 0) {
        std::size_t best = 0;
        for (std::size_t id = 1; id < vocab; ++id)
            if (before(id, best)) best = id;
        return {{static_cast<std::int64_t>(best), 1.0, modelProbability(best)}};
    }

    std::vector<double> scaled(vocab);
    for (std::size_t id = 0; id < vocab; ++id)
        scaled[id] = std::exp((static_cast<double>(logits[id]) - maxLogit) / options.temperature);
    std::vector<std::size_t> order;
    order.reserve(vocab);
    for (std::size_t id = 0; id < vocab; ++id)
        if (scaled[id] > 0) order.push_back(id);
    // Top-k: only the k best need ordering.
    std::size_t kept = order.size();
    if (options.topK > 0 && static_cast<std::uint64_t>(options.topK) < kept) {
        kept = static_cast<std::size_t>(options.topK);
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kept),
                          order.end(), before);
        order.resize(kept);
    } else {
        std::sort(order.begin(), order.end(), before);
    }
    // Top-p over the top-k set, renormalised: the smallest prefix with mass >= p.
    double keptMass = 0;
    for (const std::size_t id : order)
        keptMass += scaled[id];
    if (options.topP < 1) {
        double cumulative = 0;
        std::size_t prefix = 0;
        while (prefix < order.size()) {
            cumulative += scaled[order[prefix]];
            ++prefix;
            if (cumulative / keptMass >= options.topP) break;
        }
        order.resize(prefix);
    }
    double total = 0;
    for (const std::size_t id : order)
        total += scaled[id];
    std::vector<TokenProbability> out;
    out.reserve(order.size());
    for (const std::size_t id : order)
        out.push_back({static_cast<std::int64_t>(id), scaled[id] / total, modelProbability(id)});
    return out;
}

std::int64_t sampleToken(std::span<const TokenProbability> distribution, double uniform) {
    ATTN_CHECK(!distribution.empty(), "sampleToken: the distribution is empty");
    double cumulative = 0;
    for (const TokenProbability& token : distribution) {
        cumulative += token.probability;
        if (uniform < cumulative) return token.id;
    }
    return distribution.back().id;
}

} // namespace attnlab::model

#include "attnlab/model/head_roles.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/base/seeded.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"

namespace attnlab::model {

namespace {

/// T(i) for every query: the positions that followed an earlier occurrence of ids[i], leaving
/// out the query itself.
std::vector<std::vector<Index>> inductionTargets(std::span<const std::int64_t> ids) {
    const Index s = static_cast<Index>(ids.size());
    std::vector<std::vector<Index>> targets(static_cast<std::size_t>(s));
    for (Index i = 2; i < s; ++i)
        for (Index j = 0; j + 2 <= i; ++j)
            if (ids[static_cast<std::size_t>(j)] == ids[static_cast<std::size_t>(i)])
                targets[static_cast<std::size_t>(i)].push_back(j + 1);
    return targets;
}

HeadRole roleOf(ConstMatrixMap weights, const std::vector<std::vector<Index>>& targets) {
    HeadRole role;
    const Index s = weights.rows();
    double previous = 0, first = 0, self = 0, distance = 0, induction = 0;
    for (Index i = 1; i < s; ++i) {
        previous += weights(i, i - 1);
        first += weights(i, 0);
        self += weights(i, i);
        double rowDistance = 0;
        for (Index j = 0; j < s; ++j)
            rowDistance +=
                static_cast<double>(weights(i, j)) * static_cast<double>(std::abs(i - j));
        distance += rowDistance;
        const auto& targetsOfQuery = targets[static_cast<std::size_t>(i)];
        if (!targetsOfQuery.empty()) {
            double mass = 0;
            for (const Index t : targetsOfQuery)
                mass += weights(i, t);
            induction += mass;
            ++role.inductionQueries;
        }
    }
    role.queries = std::max<Index>(s - 1, 0);
    if (role.queries > 0) {
        const double n = static_cast<double>(role.queries);
        role.previousToken = previous / n;
        role.firstToken = first / n;
        role.self = self / n;
        role.meanDistance = distance / n;
    }
    if (role.inductionQueries > 0)
        role.induction = induction / static_cast<double>(role.inductionQueries);
    return role;
}

} // namespace

std::vector<HeadRole> headRoles(std::span<const Tensor4> attentions,
                                std::span<const std::int64_t> ids) {
    const Index s = static_cast<Index>(ids.size());
    const Index heads = attentions.empty() ? 0 : attentions.front().heads;
    for (std::size_t layer = 0; layer < attentions.size(); ++layer) {
        const Tensor4& a = attentions[layer];
        ATTN_CHECK(a.batch == 1 && a.heads == heads && a.seq == s && a.dim == s,
                   "headRoles: layer " << layer << " is [" << a.batch << ", " << a.heads << ", "
                                       << a.seq << ", " << a.dim << "], expected [1, " << heads
                                       << ", " << s << ", " << s << "]");
    }
    const auto targets = inductionTargets(ids);
    std::vector<HeadRole> roles;
    roles.reserve(attentions.size() * static_cast<std::size_t>(heads));
    for (std::size_t layer = 0; layer < attentions.size(); ++layer)
        for (Index head = 0; head < heads; ++head) {
            HeadRole role = roleOf(attentions[layer].head(0, head), targets);
            role.layer = static_cast<Index>(layer);
            role.head = head;
            roles.push_back(role);
        }
    return roles;
}

std::vector<HeadRole> headRoles(const Model& model, const ModelRun& run, int threads) {
    // One head's map alive at a time: memory S^2, not L H S^2.
    const auto targets = inductionTargets(run.ids);
    std::vector<HeadRole> roles;
    forEachHeadMap(
        model, run, AttentionOf::Self,
        [&](Index layer, Index head, const Matrix& map) {
            HeadRole role = roleOf(ConstMatrixMap(map.data(), map.rows(), map.cols()), targets);
            role.layer = layer;
            role.head = head;
            roles.push_back(role);
        },
        threads);
    return roles;
}

double roleScore(const HeadRole& role, RoleScore score) {
    switch (score) {
    case RoleScore::PreviousToken:
        return role.previousToken;
    case RoleScore::Induction:
        return role.induction;
    case RoleScore::FirstToken:
        return role.firstToken;
    case RoleScore::Self:
        return role.self;
    case RoleScore::MeanDistance:
        return role.meanDistance;
    }
    return 0;
}

std::vector<HeadRole> rankHeads(std::vector<HeadRole> roles, RoleScore score) {
    const auto key = [score](const HeadRole& role) {
        if (score == RoleScore::Induction && role.inductionQueries == 0)
            return -std::numeric_limits<double>::infinity();
        return roleScore(role, score);
    };
    std::stable_sort(roles.begin(), roles.end(),
                     [&](const HeadRole& a, const HeadRole& b) { return key(a) > key(b); });
    return roles;
}

namespace {

/// splitmix64 (Steele, Lea & Flood 2014): a fixed, portable stream of 64-bit words.
struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next() {
        const std::uint64_t word = seeded::splitmix64(state);
        state += 0x9e3779b97f4a7c15ull;
        return word;
    }
    /// Uniform in [0, bound) by rejection (no modulo bias); bound >= 1.
    std::uint64_t below(std::uint64_t bound) {
        const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                                    std::numeric_limits<std::uint64_t>::max() % bound;
        for (;;) {
            const std::uint64_t word = next();
            if (word < limit) return word % bound;
        }
    }
};

} // namespace

Result<std::vector<std::int64_t>> inductionProbe(const ModelConfig& config, Index length,
                                                 std::uint64_t seed) {
    if (length < 1)
        return Error{"the probe needs at least one token to repeat, got " + std::to_string(length)};
    std::vector<std::int64_t> excluded;
    for (const auto& id : {config.bosTokenId, config.eosTokenId})
        if (id && *id >= 0 && *id < config.vocab &&
            std::find(excluded.begin(), excluded.end(), *id) == excluded.end())
            excluded.push_back(*id);
    std::sort(excluded.begin(), excluded.end());
    const Index drawable = config.vocab - static_cast<Index>(excluded.size());
    if (drawable < 1) return Error{"the vocabulary has no token to draw the probe from"};
    const bool bos =
        config.bosTokenId && *config.bosTokenId >= 0 && *config.bosTokenId < config.vocab;
    // length is checked before it is doubled: 2 * length overflows for a length near 2^62.
    if (length > config.maxPositions)
        return Error{"a probe of " + std::to_string(length) + " tokens repeated twice is over " +
                     std::to_string(config.maxPositions) + " positions, the most the model takes"};
    const Index total = (bos ? 1 : 0) + 2 * length;
    if (total > config.maxPositions)
        return Error{"a probe of " + std::to_string(length) + " tokens repeated twice" +
                     (bos ? " after BOS" : "") + " is " + std::to_string(total) +
                     " positions; the model takes at most " + std::to_string(config.maxPositions)};
    SplitMix64 random{seed};
    std::vector<std::int64_t> ids;
    ids.reserve(static_cast<std::size_t>(total));
    if (bos) ids.push_back(*config.bosTokenId);
    for (Index n = 0; n < length; ++n) {
        // The k-th drawable id: skip the excluded ids at or below it, in increasing order.
        std::int64_t id =
            static_cast<std::int64_t>(random.below(static_cast<std::uint64_t>(drawable)));
        for (const std::int64_t skip : excluded)
            if (id >= skip) ++id;
        ids.push_back(id);
    }
    const std::size_t start = bos ? 1 : 0;
    for (Index n = 0; n < length; ++n)
        ids.push_back(ids[start + static_cast<std::size_t>(n)]);
    return ids;
}

} // namespace attnlab::model

#pragma once
/// Head roles: what each attention head of a model run does, as five numbers per (layer, head)
/// measured from its attention weights, and the standard probe that reveals induction heads.
///
///   auto probe = inductionProbe(model.config, 32, seed);   // BOS + r + r, r random
///   auto run = runModel(model, *probe);
///   auto roles = headRoles(model, *run);                   // layer-major, one per head
///
/// Every score of a head averages over its *deciding queries*, the queries i = 1 .. S-1
/// (query 0 of a causal model can only attend to itself, so it says nothing about the head).
/// With w the head's [S, S] attention weights (row i sums to 1 over the keys it may see):
///
///   previous-token   mean_i  w[i, i-1]
///   induction        mean over the induction queries i of  sum_{t in T(i)} w[i, t],
///                    T(i) = { j + 1 : 0 <= j <= i - 2, ids[j] == ids[i] }: the tokens that
///                    followed an earlier occurrence of the token at i (j + 1 = i, the query
///                    itself, is left out). The induction queries are those with T(i)
///                    non-empty. On the probe (BOS, r, r with r free of repeats) they are the
///                    second copy of r and T(i) = { i - |r| + 1 } (Olsson et al. 2022).
///   first-token      mean_i  w[i, 0]                 (the attention sink's mass)
///   self             mean_i  w[i, i]
///   mean distance    mean_i  sum_j w[i, j] |i - j|   (in tokens; 1 for a previous-token head)
///
/// All scores lie in [0, 1] except the distance, in [0, S-1]. A run of one token has no
/// deciding query: every score is 0 and `queries` is 0. A sequence without a repeated token
/// has no induction query: induction is 0 and `inductionQueries` is 0 (shown as "no repeat",
/// not as a score).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/model/config.h"

namespace attnlab::model {

struct ModelRun;
class Model;

/// The five role scores of one head (see the file comment for the exact definitions).
struct HeadRole {
    Index layer = 0;
    Index head = 0;
    double previousToken = 0;
    double induction = 0;
    double firstToken = 0;
    double self = 0;
    double meanDistance = 0;
    Index queries = 0;          ///< deciding queries averaged over (S - 1, or 0 when S <= 1)
    Index inductionQueries = 0; ///< queries with an induction target; 0: induction undefined
};

/// The roles of every head of `run`, layer-major ((0,0), (0,1), ... (L-1,H-1)), from one
/// head's map at a time (attention_maps.h): memory S^2, time L H S^2 hd.
std::vector<HeadRole> headRoles(const Model& model, const ModelRun& run, int threads = 0);
/// The same from per-layer attention weights [1, H, S, S] and the S token ids they were
/// computed on (an attention dump of `attnlab model` plus its ids). Throws InvalidArgument when
/// a layer is not [1, H, S, S] with S == ids.size() or the layers differ in H.
std::vector<HeadRole> headRoles(std::span<const Tensor4> attentions,
                                std::span<const std::int64_t> ids);

/// The role scores a table can be sorted by.
enum class RoleScore { PreviousToken, Induction, FirstToken, Self, MeanDistance };
/// `role`'s value of `score`.
double roleScore(const HeadRole& role, RoleScore score);
/// `roles` sorted by `score`, highest first; ties keep layer-major order. For induction, heads
/// of a run without induction queries sort last.
std::vector<HeadRole> rankHeads(std::vector<HeadRole> roles, RoleScore score);

/// The standard induction probe for `config`: its BOS token when the config names one, then
/// `length` tokens drawn uniformly and independently from the vocabulary [0, vocab) leaving
/// out the config's BOS and EOS ids, then the same `length` tokens again. The draw is a
/// fixed function of `seed` (splitmix64 with rejection sampling), the same on every platform.
/// Errors: length < 1, a vocabulary with no token to draw, or more positions than the model
/// takes (1 + 2 * length > max_position_embeddings), each as one sentence.
Result<std::vector<std::int64_t>> inductionProbe(const ModelConfig& config, Index length,
                                                 std::uint64_t seed);

} // namespace attnlab::model

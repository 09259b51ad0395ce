#pragma once
/// A model run as the lab shows it, next to runModel's own reuse of a cache: the run cut back
/// to the positions a new run can reuse, and the run as the dumps every view reads (each
/// layer's q/k/v, the attention weights the model computed) with the mask under which its q
/// and k give that attention back.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "attnlab/io/dump.h"
#include "attnlab/model/model.h"

namespace attnlab::model {

/// How many leading ids two id lists share.
std::size_t commonPrefix(std::span<const std::int64_t> a, std::span<const std::int64_t> b);

/// The first `keep` positions of a run, as if only they had been run: what its KV cache holds
/// before the first id that changed (typing changes the last token more often than it adds
/// one). Attention, q/k/v and the final hidden states are cut; logits are not kept.
/// Requires 0 < keep <= run.ids.size().
ModelRun truncatedRun(const ModelRun& run, Index keep);

/// The run `previous` cut back to what a run of `ids` with the same ablated heads can reuse
/// (their common prefix), or nullptr when nothing can be reused.
std::shared_ptr<const ModelRun> reusablePrefix(std::shared_ptr<const ModelRun> previous,
                                               std::span<const std::int64_t> ids,
                                               const RunOptions& options);

/// The spec under which re-running the model's q and k gives back its own attention: softmax,
/// causal (a sliding-window model: its window), the model's scale and soft-capping. Where the
/// layers' windows differ, each layer's own (QkvApply::layerWindows).
QkvApply nativeApply(const ModelConfig& config);

/// True when re-running the model's q/k under `apply` gives its own attention back, so the
/// weights it recorded can be shown as they are.
bool reproducesModel(const QkvApply& apply, const ModelConfig& config);

/// Every layer's q/k/v of a run as one Q/K/V dump, and its attention weights (the whole record,
/// computed from q and k: attention_maps.h) as one attention dump [1, L, H, S, S]; `tokens`
/// label the positions.
QkvDump qkvDumpOf(const Model& model, const ModelRun& run, std::vector<std::string> tokens);

/// One of a translation run's three attentions as an attention dump: "cross" [1, L, H, St, Ss]
/// (keys: source tokens, queries: target tokens), "encoder" (source) or "decoder" (target).
AttentionDump translationDumpOf(const Model& model, const ModelRun& run, const std::string& kind,
                                std::vector<std::string> sourceTokens,
                                std::vector<std::string> targetTokens);
/// `record`, when given, is the run's attentionRecord (computed once for several readers).
AttentionDump attentionDumpOf(const Model& model, const ModelRun& run,
                              std::vector<std::string> tokens,
                              const std::vector<Tensor4>* record = nullptr);

} // namespace attnlab::model

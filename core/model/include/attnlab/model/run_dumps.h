#pragma once
/// A model run as the lab shows it, next to runModel's own reuse of a cache: the run cut back
/// to the positions a new run can reuse, and the run as the dumps every view reads (each
/// layer's q/k/v, the attention weights the model computed, both read from the run when
/// asked) with the mask under which its q and k give that attention back.

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

/// A run as the dumps every view reads, sharing the run instead of copying it: its q/k/v as a
/// Q/K/V dump whose layers are read from the run when asked, and its attention as an
/// attention dump [1, L, H, S, S] whose maps are computed when asked (attention_maps.h:
/// byte-equal to the forward's own weights, one head's S x S at a time, never the record).
/// `tokens` label the positions.
QkvDump qkvDumpOf(std::shared_ptr<const Model> model, std::shared_ptr<const ModelRun> run,
                  std::vector<std::string> tokens);
AttentionDump attentionDumpOf(std::shared_ptr<const Model> model,
                              std::shared_ptr<const ModelRun> run,
                              std::vector<std::string> tokens);

/// One of a translation run's three attentions as an attention dump computed when asked:
/// "cross" [1, L, H, St, Ss] (keys: source tokens, queries: target tokens), "encoder"
/// (source) or "decoder" (target).
AttentionDump translationDumpOf(std::shared_ptr<const Model> model,
                                std::shared_ptr<const ModelRun> run, const std::string& kind,
                                std::vector<std::string> sourceTokens,
                                std::vector<std::string> targetTokens);

} // namespace attnlab::model

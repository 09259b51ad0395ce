#pragma once
/// A model run as the lab shows it: the run as the dumps every view reads (each
/// layer's q/k/v, the attention weights the model computed, both read from the run when
/// asked) with the mask under which its q and k give that attention back.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "attnlab/io/dump.h"
#include "attnlab/lab/dump_experiment.h"
#include "attnlab/model/model.h"

namespace attnlab::model {

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

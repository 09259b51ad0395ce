#pragma once
/// A model run as an .npz: `attentions` float32 [L, H, S, S] (the attention-dump layout, so
/// File > Open Attention Dump and `render --dump` read it unchanged), `ids` int64 [S], `tokens`
/// '<U' [S]; on request `logits` float32 [S, V] and `q` [L, H, S, hd], `k`/`v` [L, Hkv, S, hd]
/// (the Q/K/V-dump layout).

#include <map>
#include <string>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/model/model.h"

namespace attnlab::model {

struct RunNpzContents {
    bool logits = false; ///< run.logits must then hold every row
    bool qkv = false;    ///< run.q must then be recorded
};

/// The members (name without ".npy" -> .npy image) of a run's .npz.
std::map<std::string, std::string> runNpzMembers(const ModelRun& run,
                                                 const std::vector<std::string>& tokens,
                                                 const RunNpzContents& contents);

/// Writes the run's .npz atomically (nothing is left at `path` on failure).
Status writeRunNpz(const std::string& path, const ModelRun& run,
                   const std::vector<std::string>& tokens, const RunNpzContents& contents);

/// A translation run (runTranslation) as an .npz: `encoder_attentions` [L, H, Ss, Ss],
/// `decoder_attentions` [L, H, St, St], `cross_attentions` [L, H, St, Ss], `ids` int64 [Ss]
/// (the source), `decoder_ids` int64 [St] (the decoder's input), `tokens` [Ss] and
/// `decoder_tokens` [St]; with `logits`, logits float32 [St, V]. loadAttentionDump reads each
/// of the three attentions.
std::map<std::string, std::string> translationNpzMembers(const ModelRun& run,
                                                         const std::vector<std::string>& sourceTokens,
                                                         const std::vector<std::string>& targetTokens,
                                                         bool logits);
Status writeTranslationNpz(const std::string& path, const ModelRun& run,
                           const std::vector<std::string>& sourceTokens,
                           const std::vector<std::string>& targetTokens, bool logits);

} // namespace attnlab::model

#pragma once
/// A model run as an .npz: `attentions` float32 [L, H, S, S] (the attention-dump layout, so
/// File > Open Attention Dump and `render --dump` read it unchanged) or, for chosen heads,
/// `attentions` [n, S, S] with `attention_heads` int64 [n, 2] (layer, head); `ids` int64 [S],
/// `tokens` '<U' [S]; on request `logits` float32 [S, V] and `q` [L, H, S, hd], `k`/`v`
/// [L, Hkv, S, hd] (the Q/K/V-dump layout). Attention maps are computed from the run's q and k
/// as the archive is written, one head at a time (attention_maps.h): the archive never sits
/// whole in memory.

#include <string>
#include <utility>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/model/model.h"

namespace attnlab::model {

struct RunNpzContents {
    bool logits = false; ///< run.logits must then hold every row
    bool qkv = false;
    /// The (layer, head) maps to write, in this order; empty: every head, [L, H, S, S].
    std::vector<std::pair<Index, Index>> heads;
    int threads = 0; ///< computing the maps; 0 = hardware concurrency
};

/// Bytes of the attention maps `contents` asks of the run (float32 values, header excluded).
double runNpzAttentionBytes(Index tokens, const ModelConfig& config,
                            const RunNpzContents& contents);

/// Writes the run's .npz atomically (nothing is left at `path` on failure).
Status writeRunNpz(const std::string& path, const Model& model, const ModelRun& run,
                   const std::vector<std::string>& tokens, const RunNpzContents& contents);

/// A translation run (runTranslation) as an .npz: `encoder_attentions` [L, H, Ss, Ss],
/// `decoder_attentions` [L, H, St, St], `cross_attentions` [L, H, St, Ss], `ids` int64 [Ss]
/// (the source), `decoder_ids` int64 [St] (the decoder's input), `tokens` [Ss] and
/// `decoder_tokens` [St]; with `logits`, logits float32 [St, V]. loadAttentionDump reads each
/// of the three attentions.
Status writeTranslationNpz(const std::string& path, const Model& model, const ModelRun& run,
                           const std::vector<std::string>& sourceTokens,
                           const std::vector<std::string>& targetTokens, bool logits,
                           int threads = 0);

} // namespace attnlab::model

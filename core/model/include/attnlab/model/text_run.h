#pragma once
/// A text's ids through a model the way its kind reads a text: the one entry the window, the
/// command line (`attnlab model`, `render --model`) and `bench --model` run a text through.
/// A decoder runs its forward and an encoder its two-way forward (runModel); an
/// encoder-decoder translates the text (translate.h), the ids being the source. A previous
/// run is reused as far as the new ids share it: a word typed, retyped or deleted at the end
/// costs its own positions (RunOptions::reuseCommonPrefix), a translation of the same source
/// reuses the encoder and the decoder's shared steps.
///
///   TextRunOptions options;
///   options.run.logits = textLogits(model.config);
///   auto text = runText(model, ids, options, previous);
///   text->run                                  // q/k/v per layer: maps on demand
///   text->generated                            // a translation's written tokens

#include <cstdint>
#include <span>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/model/model.h"
#include "attnlab/model/translate.h"

namespace attnlab::model {

struct TextRunOptions {
    /// Ablated heads, threads, cancel, progress and the logits kept (textLogits for what a
    /// text's reader shows). reuseCommonPrefix is always on: a run reuses what it shares.
    RunOptions run;
    /// An encoder-decoder: how the target is decoded from the text.
    TranslateOptions decoding;
};

struct TextRun {
    /// The run the views read: a translation's decoder over its written tokens (sourceIds:
    /// the text), else the text's own.
    ModelRun run;
    /// An encoder-decoder: the tokens written, and each step's probability and source read.
    std::vector<std::int64_t> generated;
    std::vector<TranslationStep> steps;
};

/// The logits a reader of a text asks for: every position's for an encoder (a [MASK] may be
/// anywhere), the last position's otherwise (the next token, the translation's last step).
LogitRows textLogits(const ModelConfig& config);

/// Runs `ids` as `model`'s kind reads a text (above). Errors: runModel's, translate's, or
/// "cancelled".
Result<TextRun> runText(const Model& model, std::span<const std::int64_t> ids,
                        const TextRunOptions& options = {}, const ModelRun* previous = nullptr);

} // namespace attnlab::model

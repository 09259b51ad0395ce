#pragma once
/// Where a prediction comes from, read off the residual stream of a decoder's forward pass:
///
///   auto lens = logitLens(model, ids);             // L + 1 rows of next-token logits [S, V]
///   auto parts = directLogitAttribution(model, ids, {.target = 1234});
///   parts->heads(layer, head)                     // that head's share of the last logit
///   auto patched = activationPatching(model, clean, corrupted, {.metric = {a, b}});
///   patched->heads(layer, head)                   // 0: no effect, 1: restores the clean run
///
/// The logit lens (nostalgebraist 2020) puts the residual stream after the embedding and after
/// every layer through the model's own final norm and unembedding. Direct logit attribution
/// (TransformerLens's `logit_attrs` / `decompose_resid`) splits the last position's final
/// residual into the terms added to it, and reads each through the final norm with the scale of
/// the final residual frozen, so the terms add up to the logit exactly. Activation patching
/// (Meng et al. 2022; Wang et al. 2022, IOI) runs the corrupted prompt with one head's output or
/// one residual cell taken from the clean run and reports the logit difference it restores.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/model/model.h"
#include "attnlab/tokenizer/tokenizer.h"

namespace attnlab::model {

/// The residual stream read as next-token predictions.
struct LogitLens {
    /// L + 1 entries [S, V]: after the embedding, then after each layer; the last equals the
    /// model's own logits.
    std::vector<Matrix> logits;
    Index layers() const { return static_cast<Index>(logits.size()) - 1; }
};

/// Runs ids (checked by validateRun) with `base`'s ablation and threads and reads every layer's
/// residual through the final norm (each with its own scale) and the unembedding, as the model
/// reads its last layer. Errors: validateRun's, an encoder-decoder, or "cancelled".
Result<LogitLens> logitLens(const Model& model, std::span<const std::int64_t> ids,
                            const RunOptions& base = {});

/// The same rows one layer at a time: `each(row, logits)` gets row 0 (after the embedding) to
/// row L (the model's logits), each [S, V] and the callee's to keep (move) or drop, so a view
/// that keeps a few tokens per cell never holds (L + 1) S V floats (441 MB for Qwen2-0.5B at 29
/// tokens).
Status logitLensRows(const Model& model, std::span<const std::int64_t> ids, const RunOptions& base,
                     const std::function<void(Index row, Matrix& logits)>& each);

/// The softmax of each row of logits [R, V] (max subtracted, computed in double).
Matrix probabilities(const Matrix& logits);

struct RankedToken {
    std::int64_t id = 0;
    float probability = 0;
};

/// The k most probable tokens of a row of probabilities, most probable first (ties: lower id
/// first); k is clamped to the row's length.
std::vector<RankedToken> topTokens(const Eigen::Ref<const RowVector>& probabilities, Index k);

/// What a token a person names reads as (the rule of namedToken), with a failure's facts apart
/// so that the window can word it in the user's language.
struct TokenReading {
    enum class Problem : std::uint8_t { None, NoTokenizer, NotOneToken, OutsideVocabulary };
    Problem problem = Problem::None;
    std::int64_t id = 0; ///< None: the token; OutsideVocabulary: the id named
    Index count = 0;     ///< NotOneToken: how many tokens the text is
    /// NotOneToken: those tokens, each JSON-quoted (newlines and quotes as escapes), spaced.
    std::string pieces;
};

/// A token a person names for the attribution's target or contrast or the patching metric (the
/// command line's --attribution and --metric, the window's Attribution and Patch tabs): a whole
/// number is an id; any other text must be exactly one token of `tokenizer` (null: the model
/// has none); the id must be in the vocabulary.
TokenReading readToken(const std::string& text, const Tokenizer* tokenizer,
                       const ModelConfig& config);

/// readToken with its failure in one English line, saying what the text reads as
/// ("\"weather\" is 4 tokens (\"w\" \"e\" \"at\" \"her\"), not one") or that an id is outside
/// the vocabulary.
Result<std::int64_t> namedToken(const std::string& text, const Tokenizer* tokenizer,
                                const ModelConfig& config);

struct AttributionOptions {
    std::optional<std::int64_t> target{}; ///< default: the model's prediction at the last position
    std::optional<std::int64_t> contrast{}; ///< when given, the logit difference target - contrast
};

/// The last position's logit (difference) split into the terms the residual stream adds up.
struct Attribution {
    std::int64_t target = 0;
    std::optional<std::int64_t> contrast;
    Eigen::MatrixXd heads; ///< [L, H]: each head's output through its slice of W_O
    Eigen::VectorXd mlp;   ///< [L]: each MLP's output (its biases included)
    double embedding = 0;  ///< token embedding (scaled) plus positions
    double bias = 0;       ///< the attention output biases, the final norm's and lm head's biases
    double logit = 0;      ///< the model's own final logit (difference)
    double finalScale = 0; ///< the frozen 1 / std (LayerNorm) or 1 / rms of the final residual
    double total() const { return heads.sum() + mlp.sum() + embedding + bias; }
};

/// Why direct logit attribution cannot add up exactly for this model (post-LN blocks, a norm on
/// the attention or MLP output before the residual, a nonlinear head after the final norm, an
/// encoder-decoder), or nullopt when it can.
Status attributionRefusal(const Model& model);

/// Direct logit attribution at the last position of ids. Errors: attributionRefusal's reason,
/// validateRun's, a target or contrast outside the vocabulary, or "cancelled".
Result<Attribution> directLogitAttribution(const Model& model, std::span<const std::int64_t> ids,
                                           const AttributionOptions& options = {},
                                           const RunOptions& base = {});

struct LogitDifference {
    std::int64_t a = 0, b = 0; ///< metric: logit(a) - logit(b) at the last position
};

struct PatchingOptions {
    LogitDifference metric;
    bool heads = true;    ///< patch each head's output, [L, H]
    bool residual = true; ///< patch the residual entering each layer at each position, [L + 1, S]
    /// Start each patched run from the corrupted run's cache of the positions the patch cannot
    /// change (those before the first differing token, or before the patched position).
    bool reusePrefix = true;
    /// Start each patched run at the layer it patches, from the corrupted run's residual there
    /// (a patch changes nothing below its layer): on average half the layers.
    bool resumeAtLayer = true;
    /// Run the patched runs that resume at one layer together (a decoder without a position
    /// bias): each layer's weights are read once for the batch, not once per run. The same
    /// bytes as one run at a time.
    bool batch = true;
    /// Called as patched runs finish (one at a time, or a batch's at once) with the runs done
    /// and the runs in all (from the calling thread).
    std::function<void(Index done, Index total)> progress{};
};

/// Effects (patched - corrupted) / (clean - corrupted) of the metric: 0 leaves the corrupted
/// run's difference, 1 restores the clean one.
struct Patching {
    Eigen::MatrixXd heads;    ///< [L, H], empty when not asked
    Eigen::MatrixXd residual; ///< [L + 1, S], empty when not asked; row L: before the final norm
    double clean = 0, corrupted = 0; ///< the metric on either prompt
    Index sharedPrefix = 0;          ///< leading tokens the two prompts share
    Index runs = 0;            ///< patched forward passes run (cells a patch cannot change skipped)
    Index reusedPositions = 0; ///< positions read from a cache over all of them
};

/// Checks a patching request: the same token count, tokens and metric in the vocabulary, and
/// prompts whose metric differs (else there is nothing to restore). nullopt when fine.
Status validatePatching(const ModelConfig& config, std::span<const std::int64_t> clean,
                        std::span<const std::int64_t> corrupted, const LogitDifference& metric);

/// Activation patching from the clean run into the corrupted one. `base` gives the threads, the
/// ablated heads (in every run) and `cancel` (checked between runs and layers). Errors:
/// validatePatching's, validateRun's, "the clean and corrupted prompts give the same logit
/// difference ...", or "cancelled".
Result<Patching> activationPatching(const Model& model, std::span<const std::int64_t> clean,
                                    std::span<const std::int64_t> corrupted,
                                    const PatchingOptions& options, const RunOptions& base = {});

} // namespace attnlab::model

#pragma once
/// Model dumps: attention weights and Q/K/V tensors saved from a real model (docs/dumps.md),
/// read from their files, and their aggregates (mean over heads or layers, attention
/// rollout). What the lab makes of them (an Experiment per layer, the head statistics table)
/// is attnlab/lab/dump_experiment.h.

#include <memory>
#include <string>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"

namespace attnlab {

/// Where a dump that holds no weights gets each head's map when it is asked for: a model's
/// run keeps q and k, not L x H x S^2 weights (attention_maps.h), and a Q/K/V dump re-run
/// under another spec is computed a layer at a time (appliedDump). Called from any thread.
class HeadMaps {
public:
    virtual ~HeadMaps() = default;
    /// The [Sq, Sk] map of batch b, layer l, head h (in range: AttentionDump::head checks).
    virtual Matrix head(Index b, Index l, Index h) const = 0;
};

/// Attention weights of a whole model, [B, L, H, Sq, Sk] contiguous (Sk fastest), or the
/// source that computes them a head at a time (`maps`, with `weights` empty).
/// Lower ranks are promoted: [S, S] is B = L = H = 1, [H, S, S] is B = L = 1,
/// [L, H, S, S] is B = 1.
struct AttentionDump {
    std::string source;           ///< the file it was read from (messages, titles)
    Index storedRank = 0;         ///< rank of the array in the file (2..5)
    DType dtype = DType::Float32; ///< dtype in the file (values are float here)
    Index batch = 0;
    Index layers = 0;
    Index heads = 0;
    Index sq = 0;
    Index sk = 0;
    AlignedVector<float> weights;      ///< [B, L, H, Sq, Sk]; empty when `maps` is set
    /// Computes each head's map when asked (a model's run); null: the maps are `weights`.
    std::shared_ptr<const HeadMaps> maps;
    std::vector<std::string> tokens;   ///< Sk tokens, or B * Sk when given per batch entry
    std::vector<std::string> warnings; ///< rows that are not distributions, etc.
    /// Which attention of a translation run this is: "encoder", "decoder" or "cross" (queries
    /// from the target, keys from the source); empty for a model's one attention.
    std::string kind;
    /// The Sq query tokens when they are not the keys' (cross-attention: the target's).
    std::vector<std::string> queryTokenList;

    Index headStride() const { return sq * sk; }
    /// The [Sq, Sk] weights of batch b, layer l, head h: a copy of the stored head, or the
    /// head computed by `maps` (memory Sq x Sk either way, never the whole dump).
    Matrix head(Index b, Index l, Index h) const;
    /// Whether the weights are held (a file) rather than computed when asked (a model's run).
    bool holdsWeights() const { return maps == nullptr; }
    /// The Sk key tokens of batch b (the shared list, or batch b's row). Positions "0".."Sk-1"
    /// when the dump has no tokens.
    std::vector<std::string> keyTokens(Index b) const;
    /// The Sq query tokens of batch b: the last Sq key tokens (query i sits at i + Sk - Sq).
    std::vector<std::string> queryTokens(Index b) const;
};

/// Reads an attention dump: a .npy of rank 2..5, or an .npz whose weights are under
/// "attentions", "attention" or are its only float array, with optional "tokens" (a numpy
/// unicode '<U' array of shape [Sk] or [B, Sk]). float16/bfloat16 are widened; other dtypes,
/// NaN/inf, a corrupt archive, bad shapes or a wrong token count are errors naming the file.
/// Rows that are not distributions (negative, or sums off by more than 1e-3, or the dtype's
/// rounding for bfloat16) give a warning with the count and the worst row, never an error.
/// `tokensPath` (.json list or .txt one per line), when given, replaces tokens in the npz.
///
/// A translation run (`attnlab model` on an encoder-decoder) holds three attentions:
/// `encoder_attentions` [L, H, Ss, Ss], `decoder_attentions` [L, H, St, St] and
/// `cross_attentions` [L, H, St, Ss], with `tokens` (source) and `decoder_tokens` (target).
/// `kind` picks one ("encoder", "decoder", "cross"; empty: cross); the dump's tokens follow
/// (cross: source keys, target queries). A kind asked of another file is an error.
Result<AttentionDump> loadAttentionDump(const std::string& path,
                                        const std::string& tokensPath = {},
                                        const std::string& kind = {});

/// The attentions a translation run holds, in the order they are offered.
inline constexpr const char* kTranslationAttentions[] = {"cross", "encoder", "decoder"};

/// Tokens from a .json list of strings (numbers are written as text) or a text file with one
/// token per line (a final newline does not add a token; "\r\n" is accepted). A file over
/// 16 MiB, or with more than maxCount (at most 2^20) tokens, is refused.
Result<std::vector<std::string>> loadTokens(const std::string& path, Index maxCount = Index(1)
                                                                                      << 20);

/// Checks that every row of the dump is a distribution; returns a warning (count and worst
/// row) or an empty string. All-zero rows count as rows with no allowed key, not as errors.
std::string checkDistributions(const AttentionDump& dump, double tolerance = 1e-3);

/// Mean over heads of (b, l): [Sq, Sk].
Matrix meanOverHeads(const AttentionDump& dump, Index b, Index l);
/// Mean over layers of head h of batch b, or of the head mean when h < 0: [Sq, Sk].
Matrix meanOverLayers(const AttentionDump& dump, Index b, Index h = -1);
/// Attention rollout (Abnar & Zuidema 2020, eq. 1) of batch b through layers 0..last:
///   A_l = rownorm(0.5 * mean_h W_{l,h} + 0.5 * I),  R_0 = A_0,  R_l = A_l R_{l-1}.
/// Row i of R_l is how much each input token flows into position i after layer l.
/// Needs Sq == Sk (throws InvalidArgument otherwise); last < 0 means the last layer.
Matrix attentionRollout(const AttentionDump& dump, Index b, Index last = -1);


/// Where a Q/K/V dump that holds no arrays reads a layer when it is asked for (a model's run
/// keeps every layer's q/k/v; the dump shares them instead of copying). Any thread.
class QkvLayers {
public:
    virtual ~QkvLayers() = default;
    /// Layer l as a Qkv of batch 1 (in range: QkvDump::layer checks).
    virtual Qkv layer(Index l) const = 0;
};

/// Q, K, V of a model: q [L, H, Sq, D], k [L, Hkv, Sk, D], v [L, Hkv, Sk, Dv] (lower ranks
/// promoted as for AttentionDump), H % Hkv == 0 (GQA when Hkv < H).
struct QkvDump {
    std::string source;
    Index layers = 0;
    Index heads = 0;
    Index kvHeads = 0;
    Index sq = 0;
    Index sk = 0;
    Index dim = 0;
    Index dimV = 0;
    AlignedVector<float> q;
    AlignedVector<float> k;
    AlignedVector<float> v;
    /// Reads each layer when asked (a model's run), with q, k and v empty; null: the arrays.
    std::shared_ptr<const QkvLayers> layerSource;
    std::vector<std::string> tokens; ///< Sk tokens
    std::vector<std::string> warnings;

    /// Layer l as a Qkv of batch 1 (copies one layer).
    Qkv layer(Index l) const;
    std::vector<std::string> keyTokens() const;
    std::vector<std::string> queryTokens() const;
};

/// Reads an .npz with keys q, k, v (and optional tokens); errors name the file and key.
Result<QkvDump> loadQkvDump(const std::string& path, const std::string& tokensPath = {});


} // namespace attnlab

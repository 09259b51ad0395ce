#pragma once
/// Session: everything a person set up (tokens, model, variant, mask, view state), as a
/// plain value that round-trips through versioned JSON. Experiment: what run() computed.

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/kv_cache.h"
#include "attnlab/attention/rope.h"
#include "attnlab/base/result.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/stats.h"

namespace attnlab {

enum class Positional { None, Sinusoidal, RopeInterleaved, RopeHalf };
const char* positionalName(Positional p);
std::optional<Positional> parsePositional(const std::string& name);

/// Settings of the views that are worth saving with a session.
struct ViewState {
    std::string view = "heatmap"; ///< the active view
    std::string colormap = "viridis";
    std::string theme = "light";
    std::string show = "weights"; ///< weights|scores|scaled|mask|output|q|k|v
    Index head = 0;               ///< focused head
    Index query = -1;             ///< selected query row, -1 none
    bool cellValues = true;
    /// How weights map to colours: "fixed" (0 to 1), "data" (the smallest to the largest
    /// value shown), "row" (each row over its own largest), "log" (log10 of the weight) or
    /// "range" (colorLow to colorHigh, chosen; weights outside take the end colours).
    /// A long text's weights (~1/S) are one flat colour on 0..1; the others show them.
    std::string colorScale = "fixed";
    /// The "range" scale's ends: finite, colorLow < colorHigh (colorRangeProblem).
    double colorLow = 0;
    double colorHigh = 1;
    Index flashStep = 0;
    Index kvStep = 0;
};

/// The names ViewState::colorScale takes, in the order the window offers them.
inline constexpr std::string_view kColorScales[] = {"fixed", "data", "row", "log", "range"};
bool isColorScale(std::string_view name);
/// Why [low, high] cannot be the "range" colour scale (an end not finite, or low >= high), as
/// a phrase naming both values; nullopt when it can.
Status colorRangeProblem(double low, double high);

/// A whole experiment set-up. Defaults give a readable classroom example.
struct Session {
    /// 2 added attention.dropout, attention.dropout_seed and attention.mode (train/eval);
    /// a version-1 file has none of them and loads in eval mode, exactly as before.
    static constexpr int kVersion = 2;
    static constexpr Index kMaxTokens = 4096;
    /// Bounds checked before tokenizing or computing anything, so a hostile file stays cheap.
    static constexpr std::size_t kMaxTextBytes = std::size_t(1) << 20;  ///< text and source
    static constexpr std::size_t kMaxFileBytes = std::size_t(64) << 20; ///< a session file
    /// The scale is 0 or its magnitude lies in [kMinScale, kMaxScale]; the temperature lies in
    /// [kMinTemperature, kMaxTemperature]: scale / temperature is then a normal float.
    static constexpr double kMinScale = 1e-6;
    static constexpr double kMaxScale = 1e6;
    static constexpr double kMinTemperature = 1e-6;
    static constexpr double kMaxTemperature = 1e6;

    std::string title;
    std::string text = "the cat sat on the mat";
    std::string sourceText; ///< non-empty: cross-attention, keys/values from this text
    Tokenizer tokenizer = Tokenizer::Whitespace;
    Index dModel = 16;
    Index heads = 1;
    Index kvHeads = 1; ///< GQA when < heads, MQA when 1
    Positional positional = Positional::None;
    double ropeBase = 10000.0;
    std::uint64_t seed = 0;
    bool identityProjections = false; ///< Q = K = V = X (split into heads), as in the seeds
    Variant variant = Variant::Softmax;
    MaskSpec mask;               ///< validLen has one entry (the session has one batch)
    std::optional<double> scale; ///< replaces 1/sqrt(d_head)
    double temperature = 1.0;    ///< logits are divided by it
    Index qBlock = 2;
    Index kvBlock = 2;
    Index kvPrefill = -1; ///< >= 0: run as KV-cache prefill + decode
    /// Attention dropout: in train mode each weight drops with probability dropoutRate (the
    /// rest scaled by 1 / (1 - rate)), the pattern fixed by dropoutSeed; eval mode (the
    /// default) never drops, whatever the rate.
    bool train = false;
    double dropoutRate = 0.1; ///< in [0, 1)
    std::uint64_t dropoutSeed = 0;
    ViewState viewState;
};

/// Token counts of a session: queries (the text) and keys (the source text, or the text).
struct SequenceLengths {
    Index queries = 0;
    Index keys = 0;
};
SequenceLengths sequenceLengths(const Session& session);
/// The mask run() applies: the session's masks, plus causal when a KV cache decodes (one
/// token at a time, each seeing only the cache before it).
MaskSpec effectiveMask(const Session& session);
/// The prefill "Use a KV cache" picks when none is set: half the tokens, at least 1.
Index defaultKvPrefill(const Session& session);

/// Where an Experiment came from. A lab session; one layer of an attention or Q/K/V dump; or
/// (the model layer) one layer of a real model run on a text. Views and tooltips name it from
/// here and never from an invented Session.
struct ExperimentSource {
    enum class Kind { Session, AttentionDump, QkvDump, Model };
    Kind kind = Kind::Session;
    std::string name; ///< the session's title, or the dump file's / model's name
    Index layer = -1; ///< dumps and models: the layer shown (-1 for a session)
    Index batch = -1; ///< dumps: the batch entry when the file holds several (-1 otherwise)
    Index head = -1;  ///< a source of a single head (-1: every head of the layer)
    /// Which attention of a translation model: "cross", "encoder" or "decoder" (empty: the
    /// model's one attention).
    std::string attention;

    /// "session", "gpt2.npz, layer 5", "gpt2.npz, layer 5, batch 1",
    /// "opus.npz, cross-attention, layer 1".
    std::string describe() const;
    bool isSession() const { return kind == Kind::Session; }
};

/// One layer's attention weights computed a head at a time when asked: a model's layer on a
/// long text, whose every head's S x S the window does not hold. It holds no Q/K/V: each call
/// is given the layer's, the Experiment's own (`Experiment::qkv`, which it was made with).
class LayerMaps {
public:
    virtual ~LayerMaps() = default;
    /// [Sq, Sk] weights of query head `head`: the bytes the whole layer's run gives.
    virtual Matrix weights(const Qkv& qkv, Index head) const = 0;
    /// One weight of head `head` (a tooltip's), without a copy of its map.
    virtual Scalar weight(const Qkv& qkv, Index head, Index row, Index column) const = 0;
};

/// Everything the views draw. Batch is always 1. It describes itself: the variant, the mask
/// in force, the scale and temperature and where it came from, so no view re-derives them.
struct Experiment {
    ExperimentSource source;
    /// The settings a lab session ran with (kind Session only; default for other sources).
    Session session;
    Variant variant = Variant::Softmax; ///< the variant that produced the weights
    MaskSpec mask;                      ///< the mask in force (a KV cache's causal included)
    double baseScale = 0;               ///< 1/sqrt(d_head) or the user's scale
    double temperature = 1.0;           ///< the logits are divided by it
    Positional positional = Positional::None;
    double ropeBase = 10000.0;
    Index kvPrefill = -1; ///< >= 0: decoded through a KV cache after this many rows
    std::vector<std::string> queryTokens;
    std::vector<std::string> keyTokens;
    Matrix xq;           ///< [Sq, dModel] embeddings (+ sinusoidal positions)
    Matrix xkv;          ///< [Sk, dModel]
    Qkv qkv;             ///< per head, after RoPE
    /// Weights (after dropout) filled, and scores unless a model's layer; a model's layer
    /// holds neither: `maps` computes a head's weights when a view asks.
    Attention attention;
    std::shared_ptr<const LayerMaps> maps;
    /// With `maps`: each head's blockMax overview, block overviewBlock(max(Sq, Sk)) and the
    /// mask in force, taken while the layer ran (the heads grid draws them).
    std::vector<MatrixD> overviews;
    /// The dropout in force: the session's rate and seed in train mode, rate 0 in eval mode
    /// (and for linear attention, which forms no weights to drop).
    Dropout dropout;
    /// Seed 000 §4.2's last step: the heads' outputs concatenated in head order,
    /// merged = Concat(z_1, ..., z_h) [Sq, H * d_v], then output = merged @ wo [Sq, dModel].
    Matrix merged;
    Matrix wo;                    ///< [H * d_v, dModel]; empty with identity projections
    Matrix output;                ///< [Sq, dModel]: merged heads @ Wo (merged heads when identity)
    std::vector<HeadStats> stats; ///< per query head
    std::optional<KvCacheTrace> kvTrace;
    std::vector<std::string> warnings;
    double scale = 0;        ///< baseScale / temperature: what multiplies q.k
    /// Gemma 2's soft-capping of the scaled scores, cap * tanh(s / cap), where the run had it.
    std::optional<double> softcap;
    /// A scaled score s as the kernel's softmax sees it: soft-capped where the run was.
    double capped(double s) const { return softcap ? *softcap * std::tanh(s / *softcap) : s; }
    /// Rows [first, first + count) of head h's dot products q_i . k_j in double, before the
    /// scale: [count, Sk] (count < 0: to the last query). Empty without q and k of one width.
    MatrixD rawScores(Index head, Index first = 0, Index count = -1) const;
    /// The same rows of scaled scores as the kernel saw them (before the mask): the stored
    /// scores where kept, else rawScores x scale, soft-capped.
    MatrixD scaledScores(Index head, Index first = 0, Index count = -1) const;
    double milliseconds = 0; ///< wall time of run()

    Index headCount() const { return qkv.q.heads; }
    /// Whether weights are held or computed when asked (a session's run always has them).
    bool hasWeights() const { return !attention.weights.empty() || maps != nullptr; }
    /// Heads with weights: attention.weights' heads, or every query head with `maps`.
    Index weightHeads() const { return maps ? headCount() : attention.weights.heads; }
    /// [Sq, Sk] weights of head h, held or computed; empty when there are none.
    Matrix headWeights(Index head) const;
    Index kvHeadCount() const { return qkv.k.heads; }
    /// The kv head that query head `head` reads (kvHeadOf in attention.h).
    Index kvHeadOf(Index head) const { return attnlab::kvHeadOf(head, headCount(), kvHeadCount()); }
    Index sq() const { return qkv.q.seq; }
    Index sk() const { return qkv.k.seq; }
    /// Whether Q and K are held (a dump of weights holds none: no q.k to show or explain).
    bool hasQk() const { return qkv.q.dim > 0 && !qkv.q.empty() && !qkv.k.empty(); }
    /// Whether the weights are a softmax of the scaled scores (softmax and flash).
    bool usesSoftmax() const { return variant == Variant::Softmax || variant == Variant::Flash; }
    /// Whether train-mode dropout zeroed the allowed weight (row, column) of query head h.
    bool isDropped(Index head, Index row, Index column) const {
        return attnlab::isDropped(dropout, 0, head, row, column);
    }
};

/// Every problem with a session, each a sentence for the person who made it; empty when fine.
std::vector<std::string> validate(const Session& session);

/// Computes an Experiment. Throws InvalidArgument when validate() is not empty.
Experiment run(const Session& session);

/// Versioned JSON (docs/session-format.md documents the schema). Unknown keys are ignored;
/// a missing key keeps its default; a newer version or a wrong type is an error.
std::string sessionToJson(const Session& session);
Result<Session> sessionFromJson(const std::string& json);
Result<Session> loadSession(const std::string& path);
Status saveSession(const std::string& path, const Session& session);

} // namespace attnlab

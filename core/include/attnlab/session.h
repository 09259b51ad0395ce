#pragma once
/// Session: everything a person set up (tokens, model, variant, mask, view state), as a
/// plain value that round-trips through versioned JSON. Experiment: what run() computed.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/embedding.h"
#include "attnlab/kv_cache.h"
#include "attnlab/result.h"
#include "attnlab/rope.h"
#include "attnlab/stats.h"

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
    Index flashStep = 0;
    Index kvStep = 0;
};

/// A whole experiment set-up. Defaults give a readable classroom example.
struct Session {
    static constexpr int kVersion = 1;
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
    ViewState viewState;
};

/// Everything the views draw. Batch is always 1 for a session.
struct Experiment {
    Session session;
    std::vector<std::string> queryTokens;
    std::vector<std::string> keyTokens;
    Matrix xq;                    ///< [Sq, dModel] embeddings (+ sinusoidal positions)
    Matrix xkv;                   ///< [Sk, dModel]
    Qkv qkv;                      ///< per head, after RoPE
    Attention attention;          ///< weights and scores always filled
    Matrix output;                ///< [Sq, dModel]: merged heads @ Wo (merged heads when identity)
    std::vector<HeadStats> stats; ///< per query head
    std::optional<KvCacheTrace> kvTrace;
    std::vector<std::string> warnings;
    double scale = 0;        ///< the scale used
    double milliseconds = 0; ///< wall time of run()

    Index headCount() const { return qkv.q.heads; }
    Index kvHeadCount() const { return qkv.k.heads; }
    Index sq() const { return qkv.q.seq; }
    Index sk() const { return qkv.k.seq; }
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

// run(): a Session to an Experiment (tokens, embeddings, projections, RoPE, attention,
// statistics, warnings); the facts every part derives from a Session (token counts, the mask
// in force, the default KV-cache prefill), each computed here and nowhere else; and how an
// Experiment names its source.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "attnlab/lab/session.h"
#include "session_detail.h"

namespace attnlab {

namespace {

std::string plural(Index count, const char* one, const char* many) {
    return std::to_string(count) + " " + (count == 1 ? one : many);
}

} // namespace

SequenceLengths sequenceLengths(const Session& session) {
    SequenceLengths lengths;
    lengths.queries = static_cast<Index>(tokenize(session.text, session.tokenizer).size());
    // A source text with no tokens is self-attention, as in run().
    const auto keys = static_cast<Index>(tokenize(session.sourceText, session.tokenizer).size());
    lengths.keys = keys > 0 ? keys : lengths.queries;
    return lengths;
}

MaskSpec effectiveMask(const Session& session) {
    MaskSpec mask = session.mask;
    if (session.kvPrefill >= 0) mask.causal = true;
    return mask;
}

Index defaultKvPrefill(const Session& session) {
    return std::max<Index>(1, sequenceLengths(session).queries / 2);
}

std::string ExperimentSource::describe() const {
    if (kind == Kind::Session) return name.empty() ? std::string("session") : name;
    std::string text = name;
    if (attention == "cross") text += ", cross-attention";
    if (attention == "encoder" || attention == "decoder") text += ", " + attention + " self-attention";
    if (layer >= 0) text += ", layer " + std::to_string(layer);
    if (batch >= 0) text += ", batch " + std::to_string(batch);
    if (head >= 0) text += ", head " + std::to_string(head);
    return text;
}

Matrix Experiment::headWeights(Index head) const {
    if (head < 0 || head >= weightHeads()) return Matrix(0, 0);
    if (maps) return maps->weights(qkv, head);
    return std::as_const(attention.weights).head(0, head);
}

namespace {

/// Rows [first, first + count) of a [rows, ...] block, clamped to it; count < 0: to the end.
std::pair<Index, Index> rowsIn(Index rows, Index first, Index count) {
    first = std::clamp<Index>(first, 0, rows);
    return {first, count < 0 ? rows - first : std::min(count, rows - first)};
}

} // namespace

MatrixD Experiment::rawScores(Index head, Index first, Index count) const {
    if (qkv.q.empty() || qkv.k.empty() || qkv.q.dim != qkv.k.dim || head < 0 || head >= qkv.q.heads)
        return MatrixD(0, 0);
    const auto [from, rows] = rowsIn(qkv.q.seq, first, count);
    const MatrixD q = qkv.q.head(0, head).middleRows(from, rows).cast<double>();
    const MatrixD k = qkv.k.head(0, kvHeadOf(head)).cast<double>();
    MatrixD scores(rows, k.rows());
    scores.noalias() = q * k.transpose();
    return scores;
}

MatrixD Experiment::scaledScores(Index head, Index first, Index count) const {
    const Tensor4& scores = attention.scores;
    if (!scores.empty() && head >= 0 && head < scores.heads) {
        const auto [from, rows] = rowsIn(scores.seq, first, count);
        return scores.head(0, head).middleRows(from, rows).cast<double>();
    }
    // scale is baseScale / temperature already: divide by T once, there.
    MatrixD scaled = rawScores(head, first, count) * scale;
    if (softcap) scaled = scaled.unaryExpr([this](double s) { return capped(s); });
    return scaled;
}

Experiment run(const Session& session) {
    const auto started = std::chrono::steady_clock::now();
    const auto problems = validate(session);
    if (!problems.empty()) {
        std::string joined;
        for (const auto& p : problems)
            joined += (joined.empty() ? "" : " ") + p;
        ATTN_CHECK(false, joined);
    }

    Experiment ex;
    ex.session = session;
    ex.queryTokens = tokenize(session.text, session.tokenizer);
    auto sources = tokenize(session.sourceText, session.tokenizer);
    const bool cross = !sources.empty();
    ex.keyTokens = cross ? std::move(sources) : ex.queryTokens;
    const auto sq = static_cast<Index>(ex.queryTokens.size());
    const auto sk = static_cast<Index>(ex.keyTokens.size());
    const Index heads = session.heads;
    const Index kvHeads = session.kvHeads;
    const Index dh = session.dModel / heads;

    // Text -> vectors. Equal tokens get equal rows (in either sequence).
    ex.xq = embedTokens(ex.queryTokens, session.dModel, session.seed);
    ex.xkv = cross ? embedTokens(ex.keyTokens, session.dModel, session.seed) : ex.xq;
    if (session.positional == Positional::Sinusoidal) {
        ex.xq += sinusoidalEncoding(sq, session.dModel);
        ex.xkv += sinusoidalEncoding(sk, session.dModel);
    }

    std::optional<Projections> projections;
    if (session.identityProjections) {
        // Q = K = V = X split into heads, as the seeds' self-attention demos. With GQA there
        // are fewer kv heads than slices of X: kv head g takes the slice of query head
        // g * H / Hkv, the first query head of the group that reads it (so that head still
        // compares each token with itself).
        ex.qkv.q = splitHeads(ex.xq, heads);
        const Tensor4 allKv = splitHeads(ex.xkv, heads);
        const Index group = heads / kvHeads;
        ex.qkv.k = Tensor4(1, kvHeads, sk, dh);
        for (Index g = 0; g < kvHeads; ++g)
            ex.qkv.k.head(0, g) = allKv.head(0, g * group);
        ex.qkv.v = ex.qkv.k;
    } else {
        projections = makeProjections(session.dModel, heads, kvHeads, session.seed);
        Matrix projected(sq, heads * dh);
        projected.noalias() = ex.xq * projections->wq;
        ex.qkv.q = splitHeads(projected, heads);
        projected.resize(sk, kvHeads * dh);
        projected.noalias() = ex.xkv * projections->wk;
        ex.qkv.k = splitHeads(projected, kvHeads);
        projected.noalias() = ex.xkv * projections->wv;
        ex.qkv.v = splitHeads(projected, kvHeads);
    }

    if (detail::usesRope(session.positional)) {
        const RopeStyle style = session.positional == Positional::RopeInterleaved
                                    ? RopeStyle::Interleaved
                                    : RopeStyle::Half;
        // Query i sits at position i + Sk - Sq (docs/architecture.md, bottom-right alignment).
        applyRope(ex.qkv.q, style, session.ropeBase, sk - sq);
        applyRope(ex.qkv.k, style, session.ropeBase, 0);
    }

    ex.source.kind = ExperimentSource::Kind::Session;
    ex.source.name = session.title;
    ex.variant = session.variant;
    ex.mask = effectiveMask(session);
    ex.positional = session.positional;
    ex.ropeBase = session.ropeBase;
    ex.kvPrefill = session.kvPrefill;
    ex.baseScale = session.scale.value_or(1.0 / std::sqrt(static_cast<double>(dh)));
    ex.temperature = session.temperature;
    ex.scale = ex.baseScale / ex.temperature;

    AttentionSpec spec;
    spec.variant = session.variant;
    spec.mask = session.mask;
    spec.scale = ex.scale;
    spec.qBlock = session.qBlock;
    spec.kvBlock = session.kvBlock;
    spec.wantWeights = true;
    spec.wantScores = true;
    // No FlashTrace: nobody in the window reads all heads' tiles. The stepper walks the
    // focused head (flash_walk.h); `attnlab compute --trace` asks attend() itself.
    spec.wantFlashTrace = false;
    spec.additiveSeed = session.seed;
    spec.threads = 0;
    // Linear attention forms no weights to drop: it runs in eval mode (a warning says so).
    const bool dropoutApplies = session.train && session.dropoutRate > 0;
    if (dropoutApplies && session.variant != Variant::Linear)
        spec.dropout = Dropout{session.dropoutRate, session.dropoutSeed};
    ex.dropout = spec.dropout;

    if (session.kvPrefill >= 0) {
        KvCacheTrace trace;
        ex.attention = attendKvCache(ex.qkv, spec, session.kvPrefill, 4, &trace);
        ex.kvTrace = std::move(trace);
        if (!session.mask.causal)
            ex.warnings.push_back("The KV cache decodes one token at a time, so attention is "
                                  "causal here even though the causal mask is off.");
    } else {
        ex.attention = attend(ex.qkv, spec);
    }

    // Seed 000 §4.2: z = Concat(z_1, ..., z_h) W^O (identity projections: no W^O).
    ex.merged = mergeHeads(ex.attention.output);
    if (projections) {
        ex.wo = std::move(projections->wo);
        ex.output.resize(sq, session.dModel);
        ex.output.noalias() = ex.merged * ex.wo;
    } else {
        ex.output = ex.merged;
    }

    ex.stats.reserve(static_cast<std::size_t>(heads));
    for (Index h = 0; h < heads; ++h)
        ex.stats.push_back(headStats(std::as_const(ex.attention.weights).head(0, h), ex.mask, 0));

    // Things a person should know about what they are looking at.
    if ((session.variant == Variant::Linear || session.variant == Variant::Additive) &&
        (session.scale || session.temperature != 1.0))
        ex.warnings.push_back(std::string(session.variant == Variant::Linear
                                              ? "Linear attention"
                                              : "Additive attention") +
                              " does not scale its scores, so the scale and temperature have "
                              "no effect.");
    if (dropoutApplies && session.variant == Variant::Linear)
        ex.warnings.push_back("Linear attention never forms its weights, so dropout has nothing "
                              "to drop: it runs as in eval mode.");
    Index emptyRows = 0;
    for (unsigned char flag : ex.attention.emptyRows)
        emptyRows += flag ? 1 : 0;
    if (emptyRows > 0)
        ex.warnings.push_back(plural(emptyRows, "query row sees", "query rows see") +
                              " no key under this mask; " + (emptyRows == 1 ? "its" : "their") +
                              " weights and output are zero.");
    if (!session.mask.validLen.empty() && session.mask.validLen.front() >= sk)
        ex.warnings.push_back("The valid length (" + std::to_string(session.mask.validLen.front()) +
                              ") is not less than the number of keys (" + std::to_string(sk) +
                              "), so padding masks nothing.");
    if (session.identityProjections && kvHeads < heads)
        ex.warnings.push_back("With identity projections, each KV head is the slice of X that "
                              "belongs to the first query head of its group.");
    if (detail::usesRope(session.positional) && cross && sq != sk)
        ex.warnings.push_back("With cross-attention, RoPE places query i at position i + " +
                              std::to_string(sk - sq) + " (aligned to the end of the source).");

    ex.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    return ex;
}

} // namespace attnlab

// validate(): every problem with a session as a sentence for the person who made it, checked
// before anything is tokenized or computed (limits first, so a hostile file stays cheap).

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/lab/session.h"
#include "session_detail.h"

namespace attnlab {

namespace {

/// Most weights (heads x Sq x Sk) a session may ask for: run() keeps the weights and the
/// scores, 2 x 4 bytes each, so this is 1 GiB at most -- enough for the longest session
/// (Session::kMaxTokens = 4096) with 8 heads.
constexpr Index kMaxWeightCells = Index(1) << 27;
constexpr Index kMaxDModel = 8192;
constexpr Index kMaxHeads = 256;

/// Tokens of the source text; empty when the session is self-attention.
std::vector<std::string> sourceTokens(const Session& session) {
    return tokenize(session.sourceText, session.tokenizer);
}

/// A double as a person writes it: 1e-06, 0.5, 1e+308.
std::string number(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
}

} // namespace

const char* positionalName(Positional p) {
    switch (p) {
    case Positional::None:
        return "none";
    case Positional::Sinusoidal:
        return "sinusoidal";
    case Positional::RopeInterleaved:
        return "rope-interleaved";
    case Positional::RopeHalf:
        return "rope-half";
    }
    return "none";
}

std::optional<Positional> parsePositional(const std::string& name) {
    for (Positional p : {Positional::None, Positional::Sinusoidal, Positional::RopeInterleaved,
                         Positional::RopeHalf})
        if (name == positionalName(p)) return p;
    return std::nullopt;
}

bool isColorScale(std::string_view name) {
    return std::find(std::begin(kColorScales), std::end(kColorScales), name) !=
           std::end(kColorScales);
}

Status colorRangeProblem(double low, double high) {
    if (!std::isfinite(low) || !std::isfinite(high))
        return Error{"both ends must be finite numbers, got " + number(low) + " and " +
                     number(high)};
    if (!(low < high))
        return Error{"the low end " + number(low) + " must be less than the high end " +
                     number(high)};
    return std::nullopt;
}

std::vector<std::string> validate(const Session& session) {
    std::vector<std::string> problems;
    auto say = [&problems](const std::string& sentence) { problems.push_back(sentence); };

    // The raw length first: tokenizing a huge text only to count its tokens costs far more
    // memory than the text (a 30 MB text is 30 M one-character tokens).
    bool textTooLong = false;
    for (const bool source : {false, true}) {
        const std::string& text = source ? session.sourceText : session.text;
        if (text.size() > Session::kMaxTextBytes) {
            say(std::string(source ? "The source text" : "The text") + " is " +
                std::to_string(text.size()) + " bytes long; at most " +
                std::to_string(Session::kMaxTextBytes) + " are allowed.");
            textTooLong = true;
        }
    }
    if (textTooLong) return problems;

    const auto queries = tokenize(session.text, session.tokenizer);
    const auto sources = sourceTokens(session);
    const bool cross = !sources.empty();
    const auto sq = static_cast<Index>(queries.size());
    const Index sk = cross ? static_cast<Index>(sources.size()) : sq;

    if (queries.empty()) say("Type at least one token.");
    if (sq > Session::kMaxTokens)
        say("The text has " + std::to_string(sq) + " tokens; at most " +
            std::to_string(Session::kMaxTokens) + " are allowed.");
    if (cross && sk > Session::kMaxTokens)
        say("The source text has " + std::to_string(sk) + " tokens; at most " +
            std::to_string(Session::kMaxTokens) + " are allowed.");

    bool shapeOk = true;
    if (session.dModel < 1 || session.dModel > kMaxDModel) {
        say("d_model must be between 1 and " + std::to_string(kMaxDModel) + " (it is " +
            std::to_string(session.dModel) + ").");
        shapeOk = false;
    }
    if (session.heads < 1 || session.heads > kMaxHeads) {
        say("The number of heads must be between 1 and " + std::to_string(kMaxHeads) + " (it is " +
            std::to_string(session.heads) + ").");
        shapeOk = false;
    }
    if (session.kvHeads < 1) {
        say("The number of KV heads must be at least 1 (it is " + std::to_string(session.kvHeads) +
            ").");
        shapeOk = false;
    }
    if (shapeOk && session.dModel % session.heads != 0) {
        say("d_model (" + std::to_string(session.dModel) +
            ") must be divisible by the number of heads (" + std::to_string(session.heads) + ").");
        shapeOk = false;
    }
    if (session.heads >= 1 && session.kvHeads >= 1 && session.heads % session.kvHeads != 0) {
        say("The number of heads (" + std::to_string(session.heads) +
            ") must be divisible by the number of KV heads (" + std::to_string(session.kvHeads) +
            ").");
        shapeOk = false;
    }
    if (shapeOk && detail::usesRope(session.positional) &&
        (session.dModel / session.heads) % 2 != 0)
        say("RoPE rotates pairs of dimensions, so the head dimension must be even; d_model / "
            "heads = " +
            std::to_string(session.dModel) + " / " + std::to_string(session.heads) + " = " +
            std::to_string(session.dModel / session.heads) + ".");
    if (detail::usesRope(session.positional) &&
        !(session.ropeBase > 0 && std::isfinite(session.ropeBase)))
        say("The RoPE base must be a number greater than 0.");

    const MaskSpec& mask = session.mask;
    if (mask.window < -1)
        say("The window must be 0 or more, or -1 for no window (it is " +
            std::to_string(mask.window) + ").");
    if (mask.causalWindow < -1)
        say("The causal window must be 0 or more, or -1 for no causal window (it is " +
            std::to_string(mask.causalWindow) + ").");
    if (mask.validLen.size() > 1)
        say("A session holds one sentence, so the valid length takes one value (it has " +
            std::to_string(mask.validLen.size()) + ").");
    for (Index len : mask.validLen)
        if (len < 0) say("The valid length must be 0 or more (it is " + std::to_string(len) + ").");
    if (mask.custom && !queries.empty() &&
        (mask.custom->rows() != sq || mask.custom->cols() != sk)) {
        std::ostringstream out;
        out << "The custom mask is " << mask.custom->rows() << " x " << mask.custom->cols()
            << " but the attention matrix is " << sq << " x " << sk << " (queries x keys).";
        say(out.str());
    }

    if (session.qBlock < 1)
        say("The query block size must be at least 1 (it is " + std::to_string(session.qBlock) +
            ").");
    if (session.kvBlock < 1)
        say("The key/value block size must be at least 1 (it is " +
            std::to_string(session.kvBlock) + ").");
    // Bounded so that scale / temperature is a normal float: 1e308 or a temperature of
    // 5e-324 would give infinite logits and NaN weights.
    if (!(session.temperature > 0) || !std::isfinite(session.temperature))
        say("The temperature must be a number greater than 0.");
    else if (session.temperature < Session::kMinTemperature ||
             session.temperature > Session::kMaxTemperature)
        say("The temperature must be between " + number(Session::kMinTemperature) + " and " +
            number(Session::kMaxTemperature) + " (it is " + number(session.temperature) + ").");
    if (session.scale && !std::isfinite(*session.scale))
        say("The scale must be a finite number.");
    else if (session.scale && *session.scale != 0 &&
             !(std::abs(*session.scale) >= Session::kMinScale &&
               std::abs(*session.scale) <= Session::kMaxScale))
        say("The scale must be 0 or between " + number(Session::kMinScale) + " and " +
            number(Session::kMaxScale) + " in magnitude (it is " + number(*session.scale) + ").");

    if (!(session.dropoutRate >= 0 && session.dropoutRate < 1))
        say("The dropout rate must be at least 0 and less than 1 (it is " +
            number(session.dropoutRate) + ").");

    if (session.kvPrefill < -1)
        say("The KV-cache prefill must be 0 or more, or -1 for no KV cache (it is " +
            std::to_string(session.kvPrefill) + ").");
    if (session.kvPrefill >= 0 && cross)
        say("The KV cache decodes a sequence against itself: clear the source text (cross-"
            "attention) or turn the KV cache off.");
    else if (session.kvPrefill > sq)
        say("The KV-cache prefill (" + std::to_string(session.kvPrefill) +
            ") cannot be more than the number of tokens (" + std::to_string(sq) + ").");

    if (shapeOk && session.heads <= kMaxHeads && sq <= Session::kMaxTokens &&
        sk <= Session::kMaxTokens && session.heads * sq * sk > kMaxWeightCells)
        say(std::to_string(session.heads) + " heads x " + std::to_string(sq) + " x " +
            std::to_string(sk) + " attention weights are more than AttnLab keeps in memory (" +
            std::to_string(kMaxWeightCells) + "); use fewer tokens or heads.");
    return problems;
}

} // namespace attnlab

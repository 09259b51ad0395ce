// The facts every part derives from a Session (token counts, the mask in force, the default
// KV-cache prefill), each computed here and nowhere else, and how an Experiment names its
// source.

#include <algorithm>

#include "attnlab/session.h"

namespace attnlab {

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
    if (layer >= 0) text += ", layer " + std::to_string(layer);
    if (batch >= 0) text += ", batch " + std::to_string(batch);
    if (head >= 0) text += ", head " + std::to_string(head);
    return text;
}

} // namespace attnlab

// A model run as an .npz: the attention-dump and Q/K/V-dump layouts plus ids and tokens.

#include "attnlab/model/run_npz.h"

#include <cstring>

#include "attnlab/base/check.h"
#include "attnlab/io/npy.h"

namespace attnlab::model {
namespace {

/// A float32 .npy image of `count` values at `data` with `shape`, appended to `out`.
void appendFloats(std::string& out, const float* data, std::size_t count) {
    const std::size_t at = out.size();
    out.resize(at + count * sizeof(float));
    if (count > 0) std::memcpy(out.data() + at, data, count * sizeof(float));
}

/// [L, ...] of the per-layer tensors, encoded straight from them (no gathered copy).
std::string floatMember(const std::vector<Tensor4>& layers) {
    const Tensor4& first = layers.front();
    std::string out = npyHeader("<f4", {static_cast<Index>(layers.size()), first.heads,
                                        first.seq, first.dim});
    out.reserve(out.size() + layers.size() * first.size() * sizeof(float));
    for (const auto& layer : layers) {
        ATTN_CHECK(layer.sameShape(first), "run npz: the layers' tensors differ in shape");
        appendFloats(out, layer.data.data(), layer.size());
    }
    return out;
}

std::string logitsMember(const ModelRun& run) {
    ATTN_CHECK(run.logits.rows() == static_cast<Index>(run.ids.size()),
               "run npz: logits were not computed for every row");
    std::string out = npyHeader("<f4", {run.logits.rows(), run.logits.cols()});
    appendFloats(out, run.logits.data(), static_cast<std::size_t>(run.logits.size()));
    return out;
}

} // namespace

std::map<std::string, std::string> runNpzMembers(const ModelRun& run,
                                                 const std::vector<std::string>& tokens,
                                                 const RunNpzContents& contents) {
    ATTN_CHECK(!run.attentions.empty(), "runNpzMembers: the run has no layers");
    ATTN_CHECK(tokens.size() == run.ids.size(),
               "runNpzMembers: " << tokens.size() << " tokens for " << run.ids.size() << " ids");
    std::map<std::string, std::string> members;
    members["attentions"] = floatMember(run.attentions);
    members["ids"] = encodeNpyInt64({static_cast<Index>(run.ids.size())}, run.ids);
    members["tokens"] = encodeNpyUnicode(tokens);
    if (contents.logits) members["logits"] = logitsMember(run);
    if (contents.qkv) {
        ATTN_CHECK(run.q.size() == run.attentions.size(), "runNpzMembers: q was not recorded");
        members["q"] = floatMember(run.q);
        members["k"] = floatMember(run.k);
        members["v"] = floatMember(run.v);
    }
    return members;
}

Status writeRunNpz(const std::string& path, const ModelRun& run,
                   const std::vector<std::string>& tokens, const RunNpzContents& contents) {
    return writeNpzMembers(path, runNpzMembers(run, tokens, contents));
}

std::map<std::string, std::string> translationNpzMembers(const ModelRun& run,
                                                         const std::vector<std::string>& sourceTokens,
                                                         const std::vector<std::string>& targetTokens,
                                                         bool logits) {
    ATTN_CHECK(!run.encoderAttentions.empty() && !run.crossAttentions.empty(),
               "translationNpzMembers: not a translation run");
    ATTN_CHECK(sourceTokens.size() == run.sourceIds.size() && targetTokens.size() == run.ids.size(),
               "translationNpzMembers: the tokens do not match the ids");
    std::map<std::string, std::string> members;
    members["encoder_attentions"] = floatMember(run.encoderAttentions);
    members["decoder_attentions"] = floatMember(run.attentions);
    members["cross_attentions"] = floatMember(run.crossAttentions);
    members["ids"] = encodeNpyInt64({static_cast<Index>(run.sourceIds.size())}, run.sourceIds);
    members["decoder_ids"] = encodeNpyInt64({static_cast<Index>(run.ids.size())}, run.ids);
    members["tokens"] = encodeNpyUnicode(sourceTokens);
    members["decoder_tokens"] = encodeNpyUnicode(targetTokens);
    if (logits) members["logits"] = logitsMember(run);
    return members;
}

Status writeTranslationNpz(const std::string& path, const ModelRun& run,
                           const std::vector<std::string>& sourceTokens,
                           const std::vector<std::string>& targetTokens, bool logits) {
    return writeNpzMembers(path, translationNpzMembers(run, sourceTokens, targetTokens, logits));
}

} // namespace attnlab::model

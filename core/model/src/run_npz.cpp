// A model run as an .npz: the attention-dump and Q/K/V-dump layouts plus ids and tokens.

#include "attnlab/model/run_npz.h"

#include <cstring>
#include <map>

#include "attnlab/base/check.h"
#include "attnlab/io/npy.h"
#include "attnlab/model/attention_maps.h"

namespace attnlab::model {
namespace {

/// A float32 .npy image of `count` values at `data` with `shape`, appended to `out`.
void appendFloats(std::string& out, const float* data, std::size_t count) {
    const std::size_t at = out.size();
    out.resize(at + count * sizeof(float));
    if (count > 0) std::memcpy(out.data() + at, data, count * sizeof(float));
}

/// [L, H, S, hd] of a run's per-layer cache, a layer's contiguous copy at a time.
std::string floatMember(const std::vector<HeadCache>& layers) {
    const HeadCache& first = layers.front();
    std::string out = npyHeader("<f4", {static_cast<Index>(layers.size()), first.heads(),
                                        first.seq(), first.dim()});
    out.reserve(out.size() + layers.size() * first.floats() * sizeof(float));
    for (const HeadCache& layer : layers) {
        const Tensor4 t = layer.tensor();
        ATTN_CHECK(t.heads == first.heads() && t.seq == first.seq() && t.dim == first.dim(),
                   "run npz: the layers' tensors differ in shape");
        appendFloats(out, t.data.data(), t.size());
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

/// The maps of `heads` (every head when empty) of `of` as one float32 member, [L, H, Sq, Sk]
/// or [n, Sq, Sk], computed a head at a time while the archive is written.
StreamedNpzMember mapsMember(const Model& model, const ModelRun& run, AttentionOf of,
                             std::vector<std::pair<Index, Index>> heads, int threads) {
    const AttentionShape shape = attentionShape(model, run, of);
    ATTN_CHECK(shape.layers > 0, "run npz: the run has no such attention");
    std::vector<Index> dims{shape.layers, shape.heads, shape.queries, shape.keys};
    if (heads.empty()) {
        for (Index l = 0; l < shape.layers; ++l)
            for (Index h = 0; h < shape.heads; ++h)
                heads.emplace_back(l, h);
    } else {
        dims = {static_cast<Index>(heads.size()), shape.queries, shape.keys};
    }
    const std::string header = npyHeader("<f4", dims);
    StreamedNpzMember member;
    member.bytes = header.size() + static_cast<std::uint64_t>(heads.size()) *
                                       static_cast<std::uint64_t>(shape.queries) *
                                       static_cast<std::uint64_t>(shape.keys) * sizeof(float);
    member.pieces = heads.size() + 1;
    member.piece = [&model, &run, of, heads, header, threads](std::size_t i, std::string& out) {
        if (i == 0) {
            out = header;
            return;
        }
        const auto [layer, head] = heads[i - 1];
        const Matrix map = attentionMap(model, run, layer, head, of, threads);
        appendFloats(out, map.data(), static_cast<std::size_t>(map.size()));
    };
    return member;
}

} // namespace

double runNpzAttentionBytes(Index tokens, const ModelConfig& config,
                            const RunNpzContents& contents) {
    const auto s = static_cast<double>(tokens);
    const double maps = contents.heads.empty()
                            ? static_cast<double>(config.layers) * static_cast<double>(config.heads)
                            : static_cast<double>(contents.heads.size());
    return maps * s * s * sizeof(float);
}

Status writeRunNpz(const std::string& path, const Model& model, const ModelRun& run,
                   const std::vector<std::string>& tokens, const RunNpzContents& contents) {
    ATTN_CHECK(!run.q.empty(), "writeRunNpz: the run has no layers");
    ATTN_CHECK(tokens.size() == run.ids.size(),
               "writeRunNpz: " << tokens.size() << " tokens for " << run.ids.size() << " ids");
    std::map<std::string, std::string> members;
    members["ids"] = encodeNpyInt64({static_cast<Index>(run.ids.size())}, run.ids);
    members["tokens"] = encodeNpyUnicode(tokens);
    if (contents.logits) members["logits"] = logitsMember(run);
    if (contents.qkv) {
        members["q"] = floatMember(run.q);
        members["k"] = floatMember(run.k);
        members["v"] = floatMember(run.v);
    }
    if (!contents.heads.empty()) {
        std::vector<std::int64_t> pairs;
        for (const auto& [layer, head] : contents.heads) {
            pairs.push_back(layer);
            pairs.push_back(head);
        }
        members["attention_heads"] =
            encodeNpyInt64({static_cast<Index>(contents.heads.size()), 2}, pairs);
    }
    std::map<std::string, StreamedNpzMember> streamed;
    streamed["attentions"] =
        mapsMember(model, run, AttentionOf::Self, contents.heads, contents.threads);
    return writeNpzMembers(path, members, streamed);
}

Status writeTranslationNpz(const std::string& path, const Model& model, const ModelRun& run,
                           const std::vector<std::string>& sourceTokens,
                           const std::vector<std::string>& targetTokens, bool logits,
                           int threads) {
    ATTN_CHECK(!run.encoderQ.empty() && !run.crossQ.empty(),
               "writeTranslationNpz: not a translation run");
    ATTN_CHECK(sourceTokens.size() == run.sourceIds.size() && targetTokens.size() == run.ids.size(),
               "writeTranslationNpz: the tokens do not match the ids");
    std::map<std::string, std::string> members;
    members["ids"] = encodeNpyInt64({static_cast<Index>(run.sourceIds.size())}, run.sourceIds);
    members["decoder_ids"] = encodeNpyInt64({static_cast<Index>(run.ids.size())}, run.ids);
    members["tokens"] = encodeNpyUnicode(sourceTokens);
    members["decoder_tokens"] = encodeNpyUnicode(targetTokens);
    if (logits) members["logits"] = logitsMember(run);
    std::map<std::string, StreamedNpzMember> streamed;
    streamed["encoder_attentions"] = mapsMember(model, run, AttentionOf::Encoder, {}, threads);
    streamed["decoder_attentions"] = mapsMember(model, run, AttentionOf::Self, {}, threads);
    streamed["cross_attentions"] = mapsMember(model, run, AttentionOf::Cross, {}, threads);
    return writeNpzMembers(path, members, streamed);
}

} // namespace attnlab::model

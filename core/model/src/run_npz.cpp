// A model run as an .npz: the attention-dump and Q/K/V-dump layouts plus ids and tokens.

#include "attnlab/model/run_npz.h"

#include <cstring>

#include "attnlab/npy.h"

namespace attnlab::model {
namespace {

/// A .npy (format 1.0) image: magic, version, header dict padded to 64 bytes, raw data.
std::string npyImage(const std::string& descr, const std::vector<Index>& shape,
                     const std::string& data) {
    std::string shapeText = "(";
    for (std::size_t i = 0; i < shape.size(); ++i)
        shapeText +=
            std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    shapeText += ")";
    std::string dict =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shapeText + ", }";
    const std::size_t prefix = 10; // magic (6), version (2), header length (2)
    const std::size_t unpadded = prefix + dict.size() + 1;
    dict.append((unpadded + 63) / 64 * 64 - unpadded, ' ');
    dict.push_back('\n');
    std::string out = "\x93NUMPY";
    out.push_back('\x01');
    out.push_back('\x00');
    out.push_back(static_cast<char>(dict.size() & 0xff));
    out.push_back(static_cast<char>((dict.size() >> 8) & 0xff));
    return out + dict + data;
}

/// UTF-8 to code points; an invalid or truncated sequence gives U+FFFD for its first byte.
std::u32string decodeUtf8(const std::string& text) {
    std::u32string out;
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    for (std::size_t i = 0; i < n;) {
        const unsigned char lead = bytes[i];
        std::size_t length = lead < 0x80           ? 1
                             : (lead >> 5) == 0x6  ? 2
                             : (lead >> 4) == 0xe  ? 3
                             : (lead >> 3) == 0x1e ? 4
                                                   : 0;
        char32_t code = length == 1   ? lead
                        : length == 2 ? lead & 0x1f
                        : length == 3 ? lead & 0x0f
                                      : lead & 0x07;
        bool valid = length > 0 && i + length <= n;
        for (std::size_t k = 1; valid && k < length; ++k) {
            if ((bytes[i + k] & 0xc0) != 0x80) valid = false;
            code = (code << 6) | (bytes[i + k] & 0x3f);
        }
        if (valid && (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ||
                      (length == 2 && code < 0x80) || (length == 3 && code < 0x800) ||
                      (length == 4 && code < 0x10000)))
            valid = false;
        if (!valid) {
            out.push_back(0xfffd);
            ++i;
        } else {
            out.push_back(code);
            i += length;
        }
    }
    return out;
}

std::string floatMember(const std::vector<Tensor4>& layers) {
    NpyArray array;
    const Tensor4& first = layers.front();
    array.shape = {static_cast<Index>(layers.size()), first.heads, first.seq, first.dim};
    array.data.reserve(layers.size() * first.size());
    for (const auto& layer : layers)
        array.data.insert(array.data.end(), layer.data.begin(), layer.data.end());
    return encodeNpy(array, DType::Float32);
}

} // namespace

std::string encodeNpyInt64(const std::vector<Index>& shape,
                           const std::vector<std::int64_t>& values) {
    std::string data(values.size() * 8, '\0');
    if (!values.empty()) std::memcpy(data.data(), values.data(), data.size());
    return npyImage("<i8", shape, data);
}

std::string encodeNpyUnicode(const std::vector<std::string>& strings) {
    std::vector<std::u32string> decoded;
    std::size_t width = 1;
    for (const auto& s : strings) {
        decoded.push_back(decodeUtf8(s));
        width = std::max(width, decoded.back().size());
    }
    std::string data(strings.size() * width * 4, '\0');
    for (std::size_t i = 0; i < decoded.size(); ++i)
        for (std::size_t c = 0; c < decoded[i].size(); ++c) {
            const auto code = static_cast<std::uint32_t>(decoded[i][c]);
            std::memcpy(data.data() + (i * width + c) * 4, &code, 4);
        }
    return npyImage("<U" + std::to_string(width), {static_cast<Index>(strings.size())}, data);
}

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
    if (contents.logits) {
        ATTN_CHECK(run.logits.rows() == static_cast<Index>(run.ids.size()),
                   "runNpzMembers: logits were not computed for every row");
        NpyArray logits;
        logits.shape = {run.logits.rows(), run.logits.cols()};
        logits.data.assign(run.logits.data(), run.logits.data() + run.logits.size());
        members["logits"] = encodeNpy(logits, DType::Float32);
    }
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

} // namespace attnlab::model

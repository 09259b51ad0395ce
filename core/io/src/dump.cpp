// Model dumps: reading attention and Q/K/V archives, aggregates, statistics, experiments.

#include "attnlab/io/dump.h"

#include "attnlab/io/file_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

namespace attnlab {

namespace {

std::string baseName(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string lowerExtension(const std::string& path) {
    const std::string base = baseName(path);
    const std::size_t dot = base.find_last_of('.');
    if (dot == std::string::npos) return {};
    std::string ext = base.substr(dot + 1);
    for (char& c : ext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext;
}

/// The first bytes of a file (to tell .npy from .npz by content, not by name).
Result<std::string> filePrefix(const std::string& path, std::size_t count) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{"cannot open " + path + ": " + std::strerror(errno)};
    std::string bytes(count, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(count));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
    return bytes;
}

/// Most tokens read from a tokens file or member: far beyond any S whose S x S weights fit
/// in memory, and a bound on what a hostile file of empty lines can cost.
constexpr Index kMaxTokenCount = Index(1) << 20;
/// A tokens file larger than this is refused before it is read.
constexpr std::size_t kMaxTokensFileBytes = std::size_t(16) << 20;
/// Most heads in one layer, most layers, and most heads in all, a dump may have: real
/// models have at most 128 heads a layer and ~16000 in all (126 x 128). More one-cell heads
/// make a file of a few KB that the heads and model views would draw head by head for tens
/// of seconds (4000 one-cell heads: 24 s).
constexpr Index kMaxDumpHeads = 256;
constexpr Index kMaxDumpLayers = 1024;
constexpr Index kMaxDumpHeadsTotal = 16384;

/// Why a dump's layers x heads is refused, or nothing.
std::optional<std::string> tooManyHeads(Index layers, Index heads) {
    if (heads <= kMaxDumpHeads && layers <= kMaxDumpLayers && layers * heads <= kMaxDumpHeadsTotal)
        return std::nullopt;
    return std::to_string(layers) + " layers of " + std::to_string(heads) + " heads; at most " +
           std::to_string(kMaxDumpHeads) + " heads a layer, " + std::to_string(kMaxDumpLayers) +
           " layers and " + std::to_string(kMaxDumpHeadsTotal) + " heads in all are shown";
}

/// A string array of tokens, as a numpy archive holds them.
using StringArray = NpyStrings;

NpyReadOptions floatOptions(Index minRank, Index maxRank) {
    NpyReadOptions options;
    options.allowHalf = true;
    options.minRank = minRank;
    options.maxRank = maxRank;
    return options;
}

/// Promotes a rank-2..5 shape to [B, L, H, Sq, Sk].
std::vector<Index> promote(const std::vector<Index>& shape, std::size_t rank) {
    std::vector<Index> out(rank - shape.size(), 1);
    out.insert(out.end(), shape.begin(), shape.end());
    return out;
}

/// Tokens from the npz "tokens" member (already parsed) or a tokens file; checks the count.
Status attachTokens(const std::string& label, const StringArray& tokens, Index batch, Index sk,
                    std::vector<std::string>& out) {
    const Index given = tokens.shape.back();
    if (tokens.shape.size() == 2 && tokens.shape[0] != batch && tokens.shape[0] != 1)
        return Error{label + ": tokens have " + std::to_string(tokens.shape[0]) +
                     " batch rows but the dump has B = " + std::to_string(batch)};
    if (given != sk)
        return Error{label + ": " + std::to_string(given) +
                     " tokens but the attention has S = " + std::to_string(sk) + " keys"};
    out = tokens.values;
    if (tokens.shape.size() == 2 && tokens.shape[0] == 1) out.resize(static_cast<std::size_t>(sk));
    return std::nullopt;
}

/// Takes the "tokens" member out of an archive's members (it is never the weights).
std::optional<std::string> takeTokensMember(std::map<std::string, std::string>& members) {
    auto it = members.find("tokens");
    if (it == members.end()) return std::nullopt;
    std::string bytes = std::move(it->second);
    members.erase(it);
    return bytes;
}

/// Tokens from a file (when tokensPath is given) or the archive's member; nothing when
/// neither has any. At most maxCount are read: the count is checked before decoding.
Result<std::optional<StringArray>> readTokens(const std::string& path,
                                              const std::optional<std::string>& member,
                                              const std::string& tokensPath, Index maxCount) {
    if (!tokensPath.empty()) {
        auto list = loadTokens(tokensPath, maxCount);
        if (!list) return Error{list.error()};
        StringArray array;
        array.shape = {static_cast<Index>(list->size())};
        array.values = std::move(*list);
        return std::optional<StringArray>(std::move(array));
    }
    if (!member) return std::optional<StringArray>();
    NpyStringOptions options;
    options.minRank = 1;
    options.maxRank = 2;
    options.maxCount = maxCount;
    auto parsed = parseNpyStrings(*member, path + "[tokens]", options);
    if (!parsed) {
        // The common mistake gets its fix.
        if (parsed.error().find("object array") != std::string::npos)
            return Error{path + "[tokens]: tokens are a Python object array; save them with "
                                "np.array(tokens, dtype=str)"};
        return Error{parsed.error()};
    }
    return std::optional<StringArray>(std::move(*parsed));
}

std::vector<std::string> positionTokens(Index count) {
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(count));
    for (Index i = 0; i < count; ++i)
        out.push_back(std::to_string(i));
    return out;
}

Status checkFinite(const AlignedVector<float>& values, const std::string& label) {
    const Eigen::Map<const Eigen::ArrayXf> all(values.data(), static_cast<Index>(values.size()));
    if (all.allFinite()) return std::nullopt;
    Index at = 0;
    while (at < all.size() && std::isfinite(all[at]))
        ++at;
    return Error{label + ": value " + std::to_string(at) + " is " +
                 (std::isnan(all[at]) ? "NaN" : "infinite") +
                 "; the dump must hold finite numbers"};
}

} // namespace

Matrix AttentionDump::head(Index b, Index l, Index h) const {
    ATTN_CHECK(b >= 0 && b < batch && l >= 0 && l < layers && h >= 0 && h < heads,
               "dump head (" << b << ", " << l << ", " << h << ") outside [" << batch << ", "
                             << layers << ", " << heads << "]");
    if (maps) {
        Matrix computed = maps->head(b, l, h);
        ATTN_CHECK(computed.rows() == sq && computed.cols() == sk,
                   "computed head is " << computed.rows() << " x " << computed.cols()
                                       << ", the dump is " << sq << " x " << sk);
        return computed;
    }
    return ConstMatrixMap(weights.data() + ((b * layers + l) * heads + h) * headStride(), sq, sk);
}

std::vector<std::string> AttentionDump::keyTokens(Index b) const {
    if (tokens.empty()) return positionTokens(sk);
    if (static_cast<Index>(tokens.size()) == sk) return tokens;
    const auto begin = tokens.begin() + static_cast<std::ptrdiff_t>(b * sk);
    return std::vector<std::string>(begin, begin + static_cast<std::ptrdiff_t>(sk));
}

std::vector<std::string> AttentionDump::queryTokens(Index b) const {
    if (static_cast<Index>(queryTokenList.size()) == sq) return queryTokenList;
    std::vector<std::string> keys = keyTokens(b);
    if (sq >= sk) {
        keys.resize(static_cast<std::size_t>(sq));
        return keys;
    }
    return std::vector<std::string>(keys.end() - static_cast<std::ptrdiff_t>(sq), keys.end());
}

Result<std::vector<std::string>> loadTokens(const std::string& path, Index maxCount) {
    auto text = readFile(path, kMaxTokensFileBytes);
    if (!text) return Error{text.error()};
    maxCount = std::min(maxCount, kMaxTokenCount);
    auto tooMany = [&] {
        return Error{path + ": more than " + std::to_string(maxCount) + " tokens"};
    };
    std::vector<std::string> tokens;
    if (lowerExtension(path) == "json") {
        nlohmann::json json;
        try {
            json = nlohmann::json::parse(*text);
        } catch (const nlohmann::json::exception& error) {
            return Error{path + ": not valid JSON: " + error.what()};
        }
        if (!json.is_array())
            return Error{path + ": expected a JSON list of tokens, e.g. [\"The\", \" cat\"]"};
        if (static_cast<Index>(json.size()) > maxCount) return tooMany();
        for (std::size_t i = 0; i < json.size(); ++i) {
            const auto& item = json[i];
            if (item.is_string())
                tokens.push_back(item.get<std::string>());
            else if (item.is_number_integer())
                tokens.push_back(item.dump()); // unsigned or signed, as written
            else
                return Error{path + ": token " + std::to_string(i) +
                             " is not a string or an integer"};
        }
        return tokens;
    }
    std::size_t start = 0;
    while (start < text->size()) {
        if (static_cast<Index>(tokens.size()) >= maxCount) return tooMany();
        std::size_t end = text->find('\n', start);
        if (end == std::string::npos) end = text->size();
        std::string line = text->substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        tokens.push_back(std::move(line));
        start = end + 1;
    }
    return tokens;
}

std::string checkDistributions(const AttentionDump& dump, double tolerance) {
    const Index rows = dump.batch * dump.layers * dump.heads * dump.sq;
    if (rows == 0 || dump.sk == 0) return {};
    Index bad = 0;
    Index zero = 0;
    Index worst = -1;
    double worstError = -1;
    // One pass per row: the sum in double, the smallest weight.
    auto rowSum = [&](Index r) {
        const float* row = dump.weights.data() + r * dump.sk;
        double sum = 0;
        for (Index j = 0; j < dump.sk; ++j)
            sum += row[j];
        return sum;
    };
    auto rowMin = [&](Index r) {
        const float* row = dump.weights.data() + r * dump.sk;
        float low = row[0];
        for (Index j = 1; j < dump.sk; ++j)
            low = std::min(low, row[j]);
        return static_cast<double>(low);
    };
    for (Index r = 0; r < rows; ++r) {
        const double sum = rowSum(r);
        const double low = rowMin(r);
        if (sum == 0 && low == 0) {
            ++zero;
            continue;
        }
        const double error = std::max(std::abs(sum - 1.0), -low);
        if (low < 0 || std::abs(sum - 1.0) > tolerance) {
            ++bad;
            if (error > worstError) {
                worstError = error;
                worst = r;
            }
        }
    }
    std::ostringstream out;
    if (bad > 0) {
        const Index i = worst % dump.sq;
        const Index h = (worst / dump.sq) % dump.heads;
        const Index l = (worst / dump.sq / dump.heads) % dump.layers;
        const Index b = worst / dump.sq / dump.heads / dump.layers;
        out << bad << " of " << rows
            << " rows are not distributions (a negative weight, or a sum off by more than "
            << tolerance << "); worst: ";
        if (dump.batch > 1) out << "batch " << b << ", ";
        out << "layer " << l << ", head " << h << ", query " << i << " sums to " << rowSum(worst)
            << " (smallest weight " << rowMin(worst) << ")";
    }
    if (zero > 0) {
        if (bad > 0) out << "; ";
        out << zero << " of " << rows << " rows are all zero (shown as rows with no key)";
    }
    return out.str();
}

Result<AttentionDump> loadAttentionDump(const std::string& path, const std::string& tokensPath,
                                        const std::string& kind) {
    auto prefix = filePrefix(path, 6);
    if (!prefix) return Error{prefix.error()};
    AttentionDump dump;
    dump.source = path;
    NpyArray array;
    std::string label = path;
    std::optional<std::string> tokensMember;
    std::optional<std::string> queryTokensMember;
    const bool npz = prefix->compare(0, 2, "PK") == 0 || lowerExtension(path) == "npz";
    if (!kind.empty() && std::find_if(std::begin(kTranslationAttentions),
                                      std::end(kTranslationAttentions), [&](const char* k) {
                                          return kind == k;
                                      }) == std::end(kTranslationAttentions))
        return Error{"attention '" + kind + "': give encoder, decoder or cross"};
    if (npz) {
        auto members = readNpzMembers(path);
        if (!members) return Error{members.error()};
        std::string key;
        if (members->count("cross_attentions")) {
            // A translation run: the attention asked for, and its tokens.
            dump.kind = kind.empty() ? "cross" : kind;
            key = dump.kind + "_attentions";
            if (!members->count(key)) return Error{path + ": no '" + key + "' in the archive"};
            auto take = [&](const char* name) -> std::optional<std::string> {
                auto it = members->find(name);
                if (it == members->end()) return std::nullopt;
                return std::move(it->second);
            };
            std::optional<std::string> source = take("tokens");
            std::optional<std::string> target = take("decoder_tokens");
            tokensMember = dump.kind == "decoder" ? target : source;
            if (dump.kind == "cross") queryTokensMember = target;
        } else {
            if (!kind.empty())
                return Error{path + ": has one attention, not a translation run's " + kind +
                             " attention"};
            tokensMember = takeTokensMember(*members);
        }
        for (const char* name : {"attentions", "attention"})
            if (key.empty() && members->count(name)) {
                key = name;
                break;
            }
        if (key.empty()) {
            // The only float array in the archive.
            std::vector<std::string> floats;
            std::string firstError;
            for (auto& [name, bytes] : *members) {
                auto parsed = parseNpy(bytes, path + "[" + name + "]", floatOptions(2, 5));
                if (parsed) {
                    floats.push_back(name);
                    array = std::move(*parsed);
                    key = name;
                } else if (firstError.empty()) {
                    firstError = parsed.error();
                }
            }
            if (floats.size() > 1) {
                std::string names;
                for (const auto& n : floats)
                    names += (names.empty() ? "" : ", ") + n;
                return Error{path + ": several arrays (" + names +
                             ") and none is named \"attentions\"; save the weights under "
                             "\"attentions\""};
            }
            if (floats.empty()) {
                if (members->size() == 1) return Error{firstError};
                return Error{path + (members->empty()
                                         ? std::string(": the archive holds no arrays")
                                         : ": no float array of rank 2 to 5; save the weights "
                                           "under \"attentions\"")};
            }
        } else {
            auto parsed = parseNpy(members->at(key), path + "[" + key + "]", floatOptions(2, 5));
            if (!parsed) return Error{parsed.error()};
            array = std::move(*parsed);
        }
        label = path + "[" + key + "]";
    } else {
        auto parsed = readNpy(path, floatOptions(2, 5));
        if (!parsed) return Error{parsed.error()};
        array = std::move(*parsed);
    }

    const std::vector<Index> shape = promote(array.shape, 5);
    for (Index extent : shape)
        if (extent <= 0)
            return Error{label + ": shape " + shapeText(array.shape) + " has an empty dimension"};
    dump.storedRank = array.rank();
    dump.dtype = array.dtype;
    dump.batch = shape[0];
    dump.layers = shape[1];
    dump.heads = shape[2];
    dump.sq = shape[3];
    dump.sk = shape[4];
    if (auto why = tooManyHeads(dump.layers, dump.heads))
        return Error{label + ": shape " + shapeText(array.shape) + " has " + *why};
    if (dump.storedRank == 2 && dump.sq != dump.sk)
        return Error{label + ": a rank-2 attention dump must be square [S, S], got " +
                     shapeText(array.shape)};
    dump.weights = std::move(array.data);
    if (auto bad = checkFinite(dump.weights, label)) return Error{bad->message};
    // At most kMaxTokenCount tokens are decoded (the count is checked first); a count that
    // does not match the weights is then refused naming both.
    auto tokens = readTokens(path, tokensMember, tokensPath, kMaxTokenCount);
    if (!tokens) return Error{tokens.error()};
    if (*tokens) {
        const std::string tokensLabel = tokensPath.empty() ? path + "[tokens]" : tokensPath;
        if (auto bad = attachTokens(tokensLabel, **tokens, dump.batch, dump.sk, dump.tokens))
            return Error{bad->message};
    }
    if (queryTokensMember) {
        auto queries = readTokens(path, queryTokensMember, "", kMaxTokenCount);
        if (!queries) return Error{queries.error()};
        if (*queries) {
            std::vector<std::string> list;
            if (auto bad = attachTokens(path + "[decoder_tokens]", **queries, 1, dump.sq, list))
                return Error{bad->message};
            dump.queryTokenList = std::move(list);
        }
    }
    // bfloat16 keeps 8 significant bits: its rounding alone can move a row sum by 2^-8.
    const double tolerance = dump.dtype == DType::BFloat16 ? std::ldexp(1.0, -8) : 1e-3;
    std::string warning = checkDistributions(dump, tolerance);
    if (!warning.empty()) dump.warnings.push_back(baseName(path) + ": " + warning);
    return dump;
}

Matrix meanOverHeads(const AttentionDump& dump, Index b, Index l) {
    Matrix mean = Matrix::Zero(dump.sq, dump.sk);
    for (Index h = 0; h < dump.heads; ++h)
        mean += dump.head(b, l, h);
    if (dump.heads > 0) mean /= static_cast<Scalar>(dump.heads);
    return mean;
}

Matrix meanOverLayers(const AttentionDump& dump, Index b, Index h) {
    Matrix mean = Matrix::Zero(dump.sq, dump.sk);
    for (Index l = 0; l < dump.layers; ++l)
        mean += h < 0 ? meanOverHeads(dump, b, l) : Matrix(dump.head(b, l, h));
    if (dump.layers > 0) mean /= static_cast<Scalar>(dump.layers);
    return mean;
}

Matrix attentionRollout(const AttentionDump& dump, Index b, Index last) {
    ATTN_CHECK(dump.sq == dump.sk, "attention rollout needs square weights (Sq == Sk), got "
                                       << dump.sq << " x " << dump.sk);
    if (last < 0) last = dump.layers - 1;
    ATTN_CHECK(last < dump.layers, "rollout up to layer " << last << " of " << dump.layers);
    const Index s = dump.sq;
    Matrix rollout = Matrix::Identity(s, s);
    Matrix product(s, s);
    for (Index l = 0; l <= last; ++l) {
        Matrix a = 0.5f * meanOverHeads(dump, b, l);
        a.diagonal().array() += 0.5f;
        for (Index i = 0; i < s; ++i) {
            double sum = 0;
            for (Index j = 0; j < s; ++j)
                sum += a(i, j);
            if (sum != 0) a.row(i) /= static_cast<Scalar>(sum);
        }
        product.noalias() = a * rollout;
        rollout.swap(product);
    }
    return rollout;
}

// ---------------------------------------------------------------------------------------------
// Q/K/V dumps

Qkv QkvDump::layer(Index l) const {
    ATTN_CHECK(l >= 0 && l < layers, "layer " << l << " outside [0, " << layers << ")");
    if (layerSource) return layerSource->layer(l);
    Qkv out;
    out.q = Tensor4(1, heads, sq, dim);
    out.k = Tensor4(1, kvHeads, sk, dim);
    out.v = Tensor4(1, kvHeads, sk, dimV);
    auto copyLayer = [l](const AlignedVector<float>& from, Tensor4& to) {
        const auto size = static_cast<std::ptrdiff_t>(to.data.size());
        std::copy(from.begin() + l * size, from.begin() + (l + 1) * size, to.data.begin());
    };
    copyLayer(q, out.q);
    copyLayer(k, out.k);
    copyLayer(v, out.v);
    return out;
}

std::vector<std::string> QkvDump::keyTokens() const {
    return tokens.empty() ? positionTokens(sk) : tokens;
}

std::vector<std::string> QkvDump::queryTokens() const {
    std::vector<std::string> keys = keyTokens();
    if (sq >= sk) {
        keys.resize(static_cast<std::size_t>(sq));
        return keys;
    }
    return std::vector<std::string>(keys.end() - static_cast<std::ptrdiff_t>(sq), keys.end());
}

Result<QkvDump> loadQkvDump(const std::string& path, const std::string& tokensPath) {
    auto members = readNpzMembers(path);
    if (!members) return Error{members.error()};
    const std::optional<std::string> tokensMember = takeTokensMember(*members);
    QkvDump dump;
    dump.source = path;
    std::vector<Index> shapes[3];
    AlignedVector<float>* targets[3] = {&dump.q, &dump.k, &dump.v};
    const char* keys[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
        const std::string label = path + "[" + keys[i] + "]";
        auto it = members->find(keys[i]);
        if (it == members->end())
            return Error{path + ": no \"" + keys[i] + "\" array (a Q/K/V dump needs q, k and v)"};
        auto parsed = parseNpy(it->second, label, floatOptions(2, 4));
        members->erase(it);
        if (!parsed) return Error{parsed.error()};
        for (Index extent : parsed->shape)
            if (extent <= 0)
                return Error{label + ": shape " + shapeText(parsed->shape) +
                             " has an empty dimension"};
        if (auto bad = checkFinite(parsed->data, label)) return Error{bad->message};
        shapes[i] = promote(parsed->shape, 4);
        *targets[i] = std::move(parsed->data);
    }
    const auto& qs = shapes[0];
    const auto& ks = shapes[1];
    const auto& vs = shapes[2];
    auto inconsistent = [&](const std::string& what) {
        return Error{path + ": inconsistent shapes q " + shapeText(qs) + ", k " + shapeText(ks) +
                     ", v " + shapeText(vs) + ": " + what};
    };
    if (qs[0] != ks[0] || qs[0] != vs[0]) return inconsistent("different numbers of layers");
    if (ks[1] != vs[1]) return inconsistent("k and v have different numbers of heads");
    if (qs[1] % ks[1] != 0)
        return inconsistent("q heads (" + std::to_string(qs[1]) +
                            ") must be a multiple of k/v heads (" + std::to_string(ks[1]) + ")");
    if (ks[2] != vs[2]) return inconsistent("k and v have different sequence lengths");
    if (qs[3] != ks[3]) return inconsistent("q and k have different head dimensions");
    dump.layers = qs[0];
    dump.heads = qs[1];
    dump.kvHeads = ks[1];
    dump.sq = qs[2];
    dump.sk = ks[2];
    dump.dim = qs[3];
    dump.dimV = vs[3];
    if (auto why = tooManyHeads(dump.layers, dump.heads)) return Error{path + "[q]: " + *why};
    auto found = readTokens(path, tokensMember, tokensPath, kMaxTokenCount);
    if (!found) return Error{found.error()};
    if (*found) {
        const std::string tokensLabel = tokensPath.empty() ? path + "[tokens]" : tokensPath;
        if (auto bad = attachTokens(tokensLabel, **found, 1, dump.sk, dump.tokens))
            return Error{bad->message};
    }
    return dump;
}

} // namespace attnlab

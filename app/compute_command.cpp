// `attnlab compute`: attention over Q, K, V read from .npy files, written to .npy (and on
// request the weights as .npy and a trace as JSON). docs/compute.md is the
// contract. Every problem with the input becomes one line on stderr and exit status 2;
// everything is computed before anything is written, every file goes to a temporary name
// first, and the renames happen only when all writes succeeded.

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/dropout.h"
#include "attnlab/attention/flash_trace.h"
#include "attnlab/attention/kv_cache.h"
#include "attnlab/attention/mask.h"
#include "attnlab/attention/rope.h"
#include "attnlab/io/file_io.h"
#include "attnlab/io/npy.h"
#include "cli_options.h"
#include "commands.h"

namespace attnlab::app {
namespace {

constexpr const char* kUsage =
    "usage: attnlab compute --q Q.npy --k K.npy --v V.npy --out O.npy [options]\n"
    "\n"
    "Q, K, V: float32 or float64 .npy, all of rank 2 [S, D], 3 [B, S, D] or 4 [B, H, S, D].\n"
    "K and V may have fewer heads than Q (grouped-query attention, H % Hkv == 0).\n"
    "The output has Q's rank and dtype, with last dimension Dv. float32 inputs are computed\n"
    "in float32; if any input is float64, everything is computed in float64.\n"
    "\n"
    "  --weights W.npy            also write the attention weights [..., Sq, Sk]\n"
    "  --trace T.json             write the FlashAttention tile trace (--variant flash)\n"
    "                             or the KV-cache trace (--kv-cache-prefill)\n"
    "  --variant NAME             softmax (default), flash, linear, additive\n"
    "  --mask KIND[,KIND...]      none (default), causal, padding, window, causal-window\n"
    "  --valid-len N[,N...]       padding: keys j < N allowed; one value or one per batch entry\n"
    "  --window W                 window: |p - j| <= W; causal-window: 0 <= p - j <= W\n"
    "  --scale X                  replaces the default 1/sqrt(D)\n"
    "  --block-size B             flash: key/value tile columns (default 64)\n"
    "  --q-block-size B           flash: query tile rows (default 64)\n"
    "  --rope interleaved|half    rotate Q and K before attention\n"
    "  --rope-base X              RoPE base (default 10000)\n"
    "  --kv-cache-prefill N       causal self-attention as a prefill of N rows, then one\n"
    "                             decoded row at a time\n"
    "  --additive-params P.npz    additive: wq [units, D], wk [units, D], v [units]\n"
    "                             (default: seeded parameters)\n"
    "  --dropout P                train-mode attention dropout: each weight is zeroed with\n"
    "                             probability P in [0, 1), the rest scaled by 1/(1 - P);\n"
    "                             --weights and the output are after dropout (default 0: eval)\n"
    "  --dropout-seed N           the drop pattern's seed (default 0); a cell's fate depends\n"
    "                             only on (N, batch, head, query, key)\n"
    "  --output-projection        write Concat(heads) @ W^O instead of the per-head outputs:\n"
    "  --wo W.npy                 W^O of shape [H*Dv, d_out]; the output is [B, S, d_out]\n"
    "                             ([S, d_out] for rank-2 Q)\n"
    "  --threads N                worker threads (default: all cores)\n"
    "  --help                     show this text\n"
    "\n"
    "Options take their value as --opt VALUE or --opt=VALUE. Bad input exits with status 2\n"
    "and one line on stderr; nothing is written then.\n";

/// More workers than this is a typo, not a machine.
constexpr Index kMaxThreads = 4096;

bool isDirectory(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

/// B * H * Sq * Sk weights (when written) and B * H * Sq * Dv outputs, overflow-checked
/// before anything is allocated for them.
void checkOutputSizes(Index batch, Index heads, Index sq, Index sk, Index dv, bool weights) {
    Index rows = 0, cells = 0, outputs = 0;
    const bool overflow =
        __builtin_mul_overflow(batch, heads, &rows) || __builtin_mul_overflow(rows, sq, &rows) ||
        __builtin_mul_overflow(rows, sk, &cells) || __builtin_mul_overflow(rows, dv, &outputs);
    constexpr Index kMaxValues = Index(1) << 40; // 4 TB of float32: beyond any machine
    if (overflow || outputs > kMaxValues || (weights && cells > kMaxValues)) {
        std::ostringstream out;
        out << "B x H x Sq x " << (weights ? "Sk" : "Dv") << " = " << batch << " x " << heads
            << " x " << sq << " x " << (weights ? sk : dv)
            << " values are more than can be held in memory";
        fail(out.str());
    }
}

// ---- the command line ---------------------------------------------------------------------

constexpr OptionSpec kOptions[] = {
    {"q", true},
    {"k", true},
    {"v", true},
    {"out", true},
    {"weights", true},
    {"trace", true},
    {"variant", true},
    {"mask", true},
    {"valid-len", true},
    {"window", true},
    {"scale", true},
    {"block-size", true},
    {"q-block-size", true},
    {"rope", true},
    {"rope-base", true},
    {"kv-cache-prefill", true},
    {"threads", true},
    {"additive-params", true},
    {"dropout", true},
    {"dropout-seed", true},
    {"output-projection", false},
    {"wo", true},
    {"help", false},
};

// ---- reading ------------------------------------------------------------------------------

struct Input {
    std::string path;
    Index rank = 0;
    DType dtype = DType::Float32;
    NpyArray array; ///< float32 values in data, float64 values unrounded in data64
    Index batch = 1, heads = 1, seq = 0, dim = 0; ///< the array seen as [B, H, S, D]
};

Input readInput(const std::string& path) {
    NpyReadOptions options;
    options.allowHalf = false;
    options.keepFloat64 = true; // float64 inputs are computed in double from their own values
    options.minRank = 2;
    options.maxRank = 4;
    options.requireFinite = true; // NaN or inf would come out as silent zeros or NaN
    auto array = readNpy(path, options);
    if (!array) fail(array.error());
    Input input;
    input.path = path;
    input.rank = array->rank();
    input.dtype = array->dtype;
    const std::vector<Index>& shape = array->shape;
    if (input.rank >= 3) input.batch = shape[0];
    if (input.rank == 4) input.heads = shape[1];
    input.seq = shape[static_cast<std::size_t>(input.rank - 2)];
    input.dim = shape[static_cast<std::size_t>(input.rank - 1)];
    input.array = std::move(*array);
    return input;
}

/// The input's values as a [B, H, S, D] tensor of T; the array is released.
template <typename T> Tensor4T<T> takeTensor(Input& input) {
    Tensor4T<T> tensor;
    if constexpr (std::is_same_v<T, double>)
        tensor = toTensor4d(input.array);
    else
        tensor = toTensor4(input.array);
    input.array = NpyArray{};
    return tensor;
}

/// The shape checks of docs/compute.md, each naming the files involved.
void checkShapes(const Input& q, const Input& k, const Input& v) {
    for (const Input* other : {&k, &v})
        if (other->rank != q.rank)
            fail(other->path + " has " + std::to_string(other->rank) + " dimensions but " + q.path +
                 " has " + std::to_string(q.rank) + "; Q, K and V need the same rank");
    std::ostringstream out;
    const Input& tq = q;
    const Input& tk = k;
    const Input& tv = v;
    for (const Input* other : {&k, &v})
        if (other->batch != tq.batch) {
            out << "batch sizes differ: " << q.path << " has B = " << tq.batch << ", "
                << other->path << " has B = " << other->batch;
            fail(out.str());
        }
    if (tk.heads != tv.heads) {
        out << k.path << " has " << tk.heads << " heads but " << v.path << " has " << tv.heads
            << "; K and V need the same number of heads";
        fail(out.str());
    }
    if (tk.seq != tv.seq) {
        out << k.path << " has S = " << tk.seq << " but " << v.path << " has S = " << tv.seq
            << "; K and V need the same sequence length";
        fail(out.str());
    }
    if (tq.dim != tk.dim) {
        out << q.path << " has D = " << tq.dim << " but " << k.path << " has D = " << tk.dim
            << "; Q and K need the same feature size";
        fail(out.str());
    }
    if (tk.heads == 0 || tq.heads % tk.heads != 0) {
        out << q.path << " has " << tq.heads << " heads, not a multiple of the " << tk.heads
            << " key/value heads of " << k.path << " (H % Hkv must be 0)";
        fail(out.str());
    }
}

AdditiveParamsD readAdditiveParams(const std::string& path, Index dq, Index dk) {
    NpyReadOptions options;
    options.keepFloat64 = true;
    options.minRank = 1;
    options.maxRank = 2;
    options.requireFinite = true;
    auto arrays = readNpz(path, options);
    if (!arrays) fail(arrays.error());
    auto member = [&](const char* key, Index rank) -> const NpyArray& {
        const auto it = arrays->find(key);
        if (it == arrays->end())
            fail(path + ": no array '" + key +
                 "' (expected wq [units, D], wk [units, D], "
                 "v [units])");
        if (it->second.rank() != rank)
            fail(path + "[" + key + "]: expected " + std::to_string(rank) + " dimensions, got " +
                 std::to_string(it->second.rank()));
        return it->second;
    };
    const NpyArray& wq = member("wq", 2);
    const NpyArray& wk = member("wk", 2);
    const NpyArray& v = member("v", 1);
    const Index units = wq.shape[0];
    std::ostringstream out;
    if (wq.shape[1] != dq) {
        out << path << "[wq]: has " << wq.shape[1] << " columns but Q has D = " << dq;
        fail(out.str());
    }
    if (wk.shape[1] != dk) {
        out << path << "[wk]: has " << wk.shape[1] << " columns but K has D = " << dk;
        fail(out.str());
    }
    if (wk.shape[0] != units || v.shape[0] != units) {
        out << path << ": wq has " << units << " units but wk has " << wk.shape[0] << " and v has "
            << v.shape[0];
        fail(out.str());
    }
    if (units < 1) fail(path + ": the parameters have no units");
    // Every value as a double: float64 members unrounded, float32 ones widened exactly.
    auto values = [](const NpyArray& array) {
        return array.data64.empty()
                   ? VectorD(Eigen::Map<const Vector>(array.data.data(),
                                                      static_cast<Index>(array.data.size()))
                                 .cast<double>())
                   : VectorD(Eigen::Map<const VectorD>(array.data64.data(),
                                                       static_cast<Index>(array.data64.size())));
    };
    AdditiveParamsD params;
    params.wq = ConstMatrixMapD(values(wq).data(), units, dq);
    params.wk = ConstMatrixMapD(values(wk).data(), units, dk);
    params.v = values(v);
    return params;
}

// ---- writing ------------------------------------------------------------------------------

/// The .npy image of t viewed at `rank`; consumes t so that at most one extra copy of a
/// large weights tensor exists at a time.
template <typename T> std::string encodeTensor(Tensor4T<T>&& t, Index rank, DType dtype) {
    Tensor4T<T> shapeOnly;
    shapeOnly.batch = t.batch;
    shapeOnly.heads = t.heads;
    shapeOnly.seq = t.seq;
    shapeOnly.dim = t.dim;
    NpyArray array = fromTensor4(shapeOnly, rank, dtype); // checks the rank fits
    if constexpr (std::is_same_v<T, double>)
        array.data64 = std::move(t.data);
    else
        array.data = std::move(t.data);
    t = Tensor4T<T>{};
    return encodeNpy(array, dtype);
}

/// Reads W^O [H * Dv, d_out] for --output-projection and checks it against the heads'
/// outputs that it multiplies.
Input readOutputProjection(const std::string& path, Index heads, Index dv) {
    NpyReadOptions options;
    options.allowHalf = false;
    options.keepFloat64 = true;
    options.minRank = 2;
    options.maxRank = 2;
    options.requireFinite = true;
    auto array = readNpy(path, options);
    if (!array) fail(array.error());
    Input input;
    input.path = path;
    input.rank = 2;
    input.dtype = array->dtype;
    input.seq = array->shape[0];
    input.dim = array->shape[1];
    input.array = std::move(*array);
    if (input.seq != heads * dv) {
        std::ostringstream out;
        out << path << " is [" << input.seq << ", " << input.dim
            << "] but the heads' outputs concatenate to H x Dv = " << heads << " x " << dv << " = "
            << heads * dv << " columns; --wo needs [" << heads * dv << ", d_out]";
        fail(out.str());
    }
    return input;
}

/// Seed 000 §4.2: Concat(z_1, ..., z_h) W^O. Batch b's heads [H, Sq, Dv] are laid side by
/// side in head order, as `z.transpose(1, 2).contiguous().view(B, Sq, H * Dv)`, then
/// multiplied by wo [H * Dv, d_out]: the result is [B, 1, Sq, d_out].
template <typename T> Tensor4T<T> projectOutput(const Tensor4T<T>& heads, const MatrixT<T>& wo) {
    const Index dv = heads.dim;
    Tensor4T<T> projected(heads.batch, 1, heads.seq, wo.cols());
    MatrixT<T> merged(heads.seq, heads.heads * dv);
    for (Index b = 0; b < heads.batch; ++b) {
        for (Index h = 0; h < heads.heads; ++h)
            merged.middleCols(h * dv, dv) = heads.head(b, h);
        projected.head(b, 0).noalias() = merged * wo;
    }
    return projected;
}

/// What to do with Q, K and V once the options and shapes are checked.
struct Plan {
    std::string outPath;
    std::optional<std::string> weightsPath, tracePath;
    std::optional<RopeStyle> rope;
    double ropeBase = 10000.0;
    std::optional<Index> prefill;
    Input* wo = nullptr; ///< --output-projection: W^O, released once used
};

/// Runs the attention in T (float or double) over the inputs, releasing them on the way, and
/// encodes every output file (in Q's dtype) as (path, contents).
template <typename T>
std::vector<std::pair<std::string, std::string>>
computeAs(Input& q, Input& k, Input& v, const AttentionSpec& spec, const Plan& plan) {
    const Index sq = q.seq;
    const Index sk = k.seq;
    QkvT<T> qkv{takeTensor<T>(q), takeTensor<T>(k), takeTensor<T>(v)};
    if (plan.rope) {
        applyRope(qkv.k, *plan.rope, plan.ropeBase, 0);
        applyRope(qkv.q, *plan.rope, plan.ropeBase, sk - sq);
    }
    if (auto problem = validate(qkv, spec)) fail(problem->message);

    AttentionT<T> attention;
    KvCacheTrace kvTrace;
    if (plan.prefill)
        attention = attendKvCache(qkv, spec, *plan.prefill, dtypeBytes(k.dtype),
                                  plan.tracePath ? &kvTrace : nullptr);
    else
        attention = attend(qkv, spec);
    qkv = QkvT<T>{}; // release the inputs before the outputs are encoded

    std::vector<std::pair<std::string, std::string>> files;
    if (plan.wo) {
        const Tensor4T<T> wo = takeTensor<T>(*plan.wo);
        const ConstMatrixMapT<T> woMatrix(wo.data.data(), wo.seq, wo.dim);
        // [B, S, d_out] for Q of rank 3 or 4 (the heads are gone), [S, d_out] for rank 2.
        files.emplace_back(plan.outPath, encodeTensor(projectOutput<T>(attention.output, woMatrix),
                                                      std::min<Index>(q.rank, 3), q.dtype));
        attention.output = Tensor4T<T>{};
    } else {
        files.emplace_back(plan.outPath,
                           encodeTensor(std::move(attention.output), q.rank, q.dtype));
    }
    if (plan.weightsPath)
        files.emplace_back(*plan.weightsPath,
                           encodeTensor(std::move(attention.weights), q.rank, q.dtype));
    if (plan.tracePath) {
        if (plan.prefill) {
            files.emplace_back(*plan.tracePath, kvCacheTraceJson(kvTrace));
        } else {
            if (!attention.flashTrace) fail("the flash kernel recorded no trace");
            files.emplace_back(*plan.tracePath, flashTraceJson(*attention.flashTrace));
        }
    }
    return files;
}

// ---- the command --------------------------------------------------------------------------

int run(int argc, char** argv) {
    const Arguments args = parseArguments(argc, argv, kOptions, "compute");
    if (args.count("help")) {
        std::cout << kUsage;
        return 0;
    }

    // Options first: a bad option is reported before any file is read.
    const std::string qPath = require(args, "q");
    const std::string kPath = require(args, "k");
    const std::string vPath = require(args, "v");
    const std::string outPath = require(args, "out");
    const auto weightsPath = get(args, "weights");
    const auto tracePath = get(args, "trace");
    if (weightsPath && *weightsPath == outPath) fail("--out and --weights name the same file");
    if (tracePath && *tracePath == outPath) fail("--out and --trace name the same file");
    if (tracePath && weightsPath && *tracePath == *weightsPath)
        fail("--weights and --trace name the same file");
    // A folder where a file is to be written is found before any work (StagedFiles checks
    // again right before renaming: every output commits, or none).
    for (const auto& [option, path] :
         {std::pair<const char*, std::optional<std::string>>{"--out", outPath},
          {"--weights", weightsPath},
          {"--trace", tracePath}})
        if (path && isDirectory(*path))
            fail(std::string(option) + ": " + *path + " is a directory, not a file");

    AttentionSpec spec;
    if (auto name = get(args, "variant")) {
        auto variant = parseVariant(*name);
        if (!variant)
            fail("--variant: unknown variant '" + *name +
                 "' (expected softmax, flash, linear or additive)");
        spec.variant = *variant;
    }

    bool wantsPadding = false, wantsWindow = false, wantsCausalWindow = false;
    if (auto kinds = get(args, "mask")) {
        if (auto problem =
                parseMaskKinds(*kinds, spec.mask, wantsPadding, wantsWindow, wantsCausalWindow))
            fail(problem->message.rfind("--mask", 0) == 0 ? problem->message
                                                          : "--mask: " + problem->message);
    }
    std::optional<Index> window;
    if (auto text = get(args, "window"))
        window = parseInRange(*text, "--window", 0, kMaxExtentOption);
    if ((wantsWindow || wantsCausalWindow) && !window)
        fail(std::string("--mask ") + (wantsWindow ? "window" : "causal-window") +
             " needs --window W (W >= 0)");
    if (window && !wantsWindow && !wantsCausalWindow)
        fail("--window is only used with --mask window or causal-window");
    if (wantsWindow) spec.mask.window = *window;
    if (wantsCausalWindow) spec.mask.causalWindow = *window;

    std::vector<Index> validLen;
    if (auto text = get(args, "valid-len")) {
        std::stringstream stream(*text);
        std::string word;
        while (std::getline(stream, word, ','))
            validLen.push_back(parseInRange(word, "--valid-len", 0, kMaxExtentOption));
        if (validLen.empty() || text->back() == ',')
            fail("--valid-len: expected N or N,N,... , got '" + *text + "'");
    }
    if (wantsPadding && validLen.empty()) fail("--mask padding needs --valid-len N[,N...]");
    if (!validLen.empty() && !wantsPadding) fail("--valid-len is only used with --mask padding");

    if (auto text = get(args, "scale")) spec.scale = parseFloat32(*text, "--scale");
    if (auto text = get(args, "block-size"))
        spec.kvBlock = parseInRange(*text, "--block-size", 1, kMaxExtentOption);
    if (auto text = get(args, "q-block-size"))
        spec.qBlock = parseInRange(*text, "--q-block-size", 1, kMaxExtentOption);

    std::optional<RopeStyle> rope;
    if (auto text = get(args, "rope")) {
        rope = parseRopeStyle(*text);
        if (!rope) fail("--rope: unknown style '" + *text + "' (expected interleaved or half)");
    }
    double ropeBase = 10000.0;
    if (auto text = get(args, "rope-base")) {
        if (!rope) fail("--rope-base is only used with --rope");
        ropeBase = parseReal(*text, "--rope-base");
        if (ropeBase <= 0) fail("--rope-base must be > 0, got " + *text);
    }

    std::optional<Index> prefill;
    if (auto text = get(args, "kv-cache-prefill"))
        prefill = parseInRange(*text, "--kv-cache-prefill", 0, kMaxExtentOption);
    if (tracePath && spec.variant != Variant::Flash && !prefill)
        fail("--trace needs --variant flash or --kv-cache-prefill");

    spec.threads = 0; // all cores
    if (auto text = get(args, "threads")) {
        const Index threads = parseInRange(*text, "--threads", 0, kMaxThreads);
        spec.threads = static_cast<int>(threads);
    }

    const auto additivePath = get(args, "additive-params");
    if (additivePath && spec.variant != Variant::Additive)
        fail("--additive-params is only used with --variant additive");

    if (auto text = get(args, "dropout")) {
        spec.dropout.rate = parseReal(*text, "--dropout");
        if (validateDropoutRate(spec.dropout.rate))
            fail("--dropout must be at least 0 and less than 1, got " + *text);
        if (spec.dropout.active() && spec.variant == Variant::Linear)
            fail("--dropout: linear attention never forms its weights, so there are none to "
                 "drop; use --variant softmax, flash or additive");
    }
    if (auto text = get(args, "dropout-seed")) {
        if (!get(args, "dropout")) fail("--dropout-seed is only used with --dropout P");
        spec.dropout.seed = static_cast<std::uint64_t>(
            parseInRange(*text, "--dropout-seed", 0, std::numeric_limits<std::int64_t>::max()));
    }

    const bool outputProjection = args.count("output-projection") > 0;
    const auto woPath = get(args, "wo");
    if (outputProjection && !woPath) fail("--output-projection needs --wo W.npy ([H*Dv, d_out])");
    if (woPath && !outputProjection) fail("--wo is only used with --output-projection");

    // Inputs.
    Input q = readInput(qPath);
    Input k = readInput(kPath);
    Input v = readInput(vPath);
    checkShapes(q, k, v);
    const Index batch = q.batch;
    const Index sq = q.seq;
    const Index sk = k.seq;
    const Index dim = q.dim;

    if (wantsPadding) {
        const auto count = static_cast<Index>(validLen.size());
        if (count != 1 && count != batch)
            fail("--valid-len has " + std::to_string(count) +
                 " values; give 1 or B = " + std::to_string(batch) + " (one per batch entry)");
        spec.mask.validLen = validLen;
    }
    if (rope && dim % 2 != 0)
        fail("--rope needs an even D, but " + qPath + " and " + kPath +
             " have D = " + std::to_string(dim));
    if (prefill) {
        if (sq != sk)
            fail("--kv-cache-prefill needs self-attention (Sq == Sk), but " + qPath + " has S = " +
                 std::to_string(sq) + " and " + kPath + " has S = " + std::to_string(sk));
        if (*prefill > sq)
            fail("--kv-cache-prefill " + std::to_string(*prefill) +
                 " is beyond S = " + std::to_string(sq));
        spec.mask.causal = true;
    }
    if (additivePath) spec.additive = readAdditiveParams(*additivePath, dim, k.dim);
    checkOutputSizes(batch, q.heads, sq, sk, v.dim, weightsPath.has_value());
    std::optional<Input> wo;
    if (woPath) {
        wo = readOutputProjection(*woPath, q.heads, v.dim);
        checkOutputSizes(batch, 1, sq, 0, wo->dim, false);
    }

    // The S x S weights are allocated only when they are to be written.
    spec.wantWeights = weightsPath.has_value();
    spec.wantScores = false;
    spec.wantFlashTrace = tracePath && spec.variant == Variant::Flash && !prefill;

    // float32 inputs are computed in float; if any input is float64, all of them are computed
    // in double from their unrounded values. The outputs have Q's dtype either way.
    const Plan plan{outPath, weightsPath, tracePath, rope, ropeBase, prefill, wo ? &*wo : nullptr};
    const bool inDouble = q.dtype == DType::Float64 || k.dtype == DType::Float64 ||
                          v.dtype == DType::Float64 || (wo && wo->dtype == DType::Float64);
    // Encode everything, then stage every file, then rename.
    const std::vector<std::pair<std::string, std::string>> files =
        inDouble ? computeAs<double>(q, k, v, spec, plan) : computeAs<float>(q, k, v, spec, plan);
    StagedFiles staged;
    for (const auto& [path, contents] : files)
        if (auto error = staged.stage(path, contents)) fail(error->message);
    if (auto error = staged.commit()) fail(error->message);
    return 0;
}

/// One line, whatever the message holds.
} // namespace

int computeCommand(int argc, char** argv) {
    return runCommandBody("compute", run, argc, argv,
                          "not enough memory for these sizes (--weights needs B*H*Sq*Sk values)");
}

} // namespace attnlab::app

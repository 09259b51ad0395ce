#pragma once
/// attend(): every attention variant over [B, H, S, D] tensors, with masks, GQA,
/// and on request the weights, raw scores and a FlashAttention tile trace.

#include <optional>
#include <string>
#include <vector>

#include "attnlab/flash_trace.h"
#include "attnlab/mask.h"
#include "attnlab/tensor.h"

namespace attnlab {

enum class Variant { Softmax, Flash, Linear, Additive };

const char* variantName(Variant v);
std::optional<Variant> parseVariant(const std::string& name);

/// Parameters of additive (MLP, Bahdanau) attention: score = v^T tanh(Wq q + Wk k).
/// wq is [units, Dq], wk is [units, Dk], v has `units` entries.
struct AdditiveParams {
    Matrix wq;
    Matrix wk;
    Vector v;
};

/// Seeded additive parameters (uniform Xavier), reproducible across runs and machines.
AdditiveParams makeAdditiveParams(Index units, Index dq, Index dk, std::uint64_t seed);

/// Q, K, V as [B, H, Sq, D], [B, Hkv, Sk, D], [B, Hkv, Sk, Dv]; H % Hkv == 0.
/// Query head h reads kv head h / (H / Hkv); K/V are never expanded.
struct Qkv {
    Tensor4 q;
    Tensor4 k;
    Tensor4 v;
};

struct AttentionSpec {
    Variant variant = Variant::Softmax;
    MaskSpec mask;
    std::optional<double> scale;            ///< replaces the default 1/sqrt(D)
    Index qBlock = 64;                      ///< flash: query tile rows
    Index kvBlock = 64;                     ///< flash: key/value tile columns
    bool wantWeights = true;                ///< fill Attention::weights [B, H, Sq, Sk]
    bool wantScores = false;                ///< fill Attention::scores (scaled, before mask)
    bool wantFlashTrace = false;            ///< flash only: fill Attention::flashTrace
    std::optional<AdditiveParams> additive; ///< additive only; seeded default when empty
    std::uint64_t additiveSeed = 0;
    Index additiveUnits = 8;
    int threads = 1; ///< worker threads over (batch, head) pairs; 0 = hardware
};

struct Attention {
    Tensor4 output;  ///< [B, H, Sq, Dv]
    Tensor4 weights; ///< [B, H, Sq, Sk] when asked; masked cells exactly 0
    Tensor4 scores;  ///< [B, H, Sq, Sk] when asked: scaled logits, mask not applied
    /// [B * Sq] flags, row b * Sq + i: true where the row has no allowed key (its weights
    /// and output are zero). The mask does not depend on the head.
    std::vector<unsigned char> emptyRows;
    std::optional<FlashTrace> flashTrace;
    double scale = 0; ///< the scale actually used
};

/// Checks shapes and options and returns a message naming the first problem, or nothing.
std::optional<std::string> validate(const Qkv& qkv, const AttentionSpec& spec);

/// Runs the attention variant in spec over qkv. Throws InvalidArgument where validate()
/// would complain. S == 0 gives empty outputs; a row with no allowed key gives zero weights
/// and zero output, never NaN.
Attention attend(const Qkv& qkv, const AttentionSpec& spec);

/// The numerically stable masked softmax of one row in place: subtracts the max over allowed
/// entries; entries outside [range) and where customRow is false become exactly 0.
/// Returns false (and zeros the row) when no entry is allowed.
bool softmaxRow(Eigen::Ref<RowVector> row, KeyRange range, const bool* customRow = nullptr);

} // namespace attnlab

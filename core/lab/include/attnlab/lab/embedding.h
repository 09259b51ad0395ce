#pragma once
/// From text to vectors: tokenizers, deterministic token embeddings, sinusoidal
/// positions, and seeded projection matrices.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/seeded.h" // seededMatrix: the projections draw from it
#include "attnlab/base/tensor.h"

namespace attnlab {

enum class Tokenizer { Whitespace, Character };
const char* tokenizerName(Tokenizer t);
std::optional<Tokenizer> parseTokenizer(const std::string& name);

/// Whitespace: runs of non-space characters. Character: one token per UTF-8 code point,
/// spaces dropped. Empty text gives no tokens.
std::vector<std::string> tokenize(std::string_view text, Tokenizer tokenizer);

/// [S, dim] embeddings; row s depends only on (tokens[s], seed), so equal tokens get
/// equal rows. Entries are ~N(0, 1).
Matrix embedTokens(const std::vector<std::string>& tokens, Index dim, std::uint64_t seed);

/// Vaswani et al. 2017 sinusoidal encoding [S, dim]: PE(p, 2i) = sin(p / 10000^(2i/d)),
/// PE(p, 2i+1) = cos(...). Odd dim is allowed (the last column is a sine).
Matrix sinusoidalEncoding(Index seq, Index dim, Index positionOffset = 0);

/// Multi-head projections: wq [dModel, H*dh], wk/wv [dModel, Hkv*dh], wo [H*dh, dModel].
struct Projections {
    Matrix wq, wk, wv, wo;
};
Projections makeProjections(Index dModel, Index heads, Index kvHeads, std::uint64_t seed);

/// Splits x [S, heads*dh] into [1, heads, S, dh].
Tensor4 splitHeads(const Matrix& x, Index heads);
/// Concatenates the heads of batch b of t [B, H, S, dh] into [S, H*dh].
Matrix mergeHeads(const Tensor4& t, Index b = 0);

} // namespace attnlab

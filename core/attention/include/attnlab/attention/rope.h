#pragma once
/// Rotary position embedding (Su et al. 2021). Angle for pair i at position pos is
/// pos / base^(2i/D). Interleaved rotates pairs (0,1),(2,3),... (seed 001);
/// half rotates (i, i + D/2) (Hugging Face LLaMA's rotate_half).

#include <optional>
#include <string>

#include "attnlab/base/tensor.h"

namespace attnlab {

enum class RopeStyle { Interleaved, Half };

const char* ropeStyleName(RopeStyle style);
std::optional<RopeStyle> parseRopeStyle(const std::string& name);

/// Angles [S, D/2]: row s is position offset + s. D must be even.
Matrix ropeAngles(Index seq, Index dim, double base = 10000.0, Index positionOffset = 0);

/// Rotates every [S, D] head of x in place; row s sits at position offset + s.
/// Throws InvalidArgument when D is odd. S == 0 is a no-op.
void applyRope(Tensor4& x, RopeStyle style, double base = 10000.0, Index positionOffset = 0);
/// The same for float64 tensors, computed and stored in double.
void applyRope(Tensor4d& x, RopeStyle style, double base = 10000.0, Index positionOffset = 0);

/// The (x, y) coordinates that pair i of a D-vector uses under a style: indices of the pair.
std::pair<Index, Index> ropePair(RopeStyle style, Index pairIndex, Index dim);

} // namespace attnlab

#pragma once
// Shared by session_validate.cpp and session_run.cpp (internal to attnlab_core).

#include "attnlab/lab/session.h"

namespace attnlab::detail {

/// Whether the encoding rotates q and k (RoPE interleaved or half).
inline bool usesRope(Positional p) {
    return p == Positional::RopeInterleaved || p == Positional::RopeHalf;
}

} // namespace attnlab::detail

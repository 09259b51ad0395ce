#pragma once
/// 16-bit floats widened to float32, the one rule every reader uses (npy/npz, safetensors,
/// pytorch_model.bin): exact for every value. IEEE binary16: subnormals, infinities and signed
/// zeros as they are; a NaN keeps its sign and payload and comes out quiet, as the CPU's own
/// conversion (F16C) gives it, so the bulk path and the one-at-a-time path agree bit for bit
/// on every kernel target. bfloat16: the top half of a binary32, every bit kept.

#include <cstddef>
#include <cstdint>

namespace attnlab {

float halfToFloat(std::uint16_t bits);
float bfloat16ToFloat(std::uint16_t bits);

/// Widens `count` binary16 values: in bulk with the active kernel target's conversion
/// (simd_kernels.h), the rest with halfToFloat. Same bytes on every target.
void widenHalfFloats(const std::uint16_t* in, std::size_t count, float* out);
/// Widens `count` bfloat16 values.
void widenBfloat16(const std::uint16_t* in, std::size_t count, float* out);

} // namespace attnlab

#pragma once
// The kernel tables of each target (simd_kernels.h), defined one per translation unit; the x86
// ones exist only on x86-64. Internal to attnlab_core.

#include "attnlab/base/simd_kernels.h"

namespace attnlab::simd {
namespace generic {
const Kernels& table();
}
#if defined(__x86_64__)
namespace avx2 {
const Kernels& table();
}
namespace avx512 {
const Kernels& table();
}
#endif
} // namespace attnlab::simd

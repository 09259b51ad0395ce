#pragma once
// The float eval-mode fast path of softmax and flash attention (issue 14, item 3). Internal
// to attnlab_core. It serves a float run that asks for no trace, no scores, no dropout and no
// custom mask; every other run, and every double run, takes the generic kernels (softmax_run.h,
// flash_run.h), which stay the reference the tests read.
//
// Same maths as the generic kernels, Dao et al. 2022, Alg. 1 (softmax: one kv tile spanning
// the row), organised for the machine: K and V are packed once per kv head into 16-column
// panels, S = Q_i K_j^T and O += P V_j run as the register-blocked GEMM of the active kernel
// target (attnlab/base/simd_kernels.h: AVX-512, AVX2 + FMA or portable C++, chosen at run
// time), and the softmax weighs a logit through a vectorised 2^x polynomial
// (exp2NonPositiveFast). Work is split over (batch, head, query chunk) so that a causal run
// balances across threads.

#include "attnlab/attention/attention.h"

namespace attnlab::kernels {

/// Whether the fast path serves a float run of spec (tracing: a flash trace is asked for).
bool fastPathServes(const AttentionSpec& spec, bool tracing);

/// The query rows of one tile of the fast path for spec's variant (attendRowBlock).
Index fastPathRowBlock(const AttentionSpec& spec);

/// Softmax or flash attention over every (batch, head) of qkv into result (prepared by
/// prepareResult), on spec.threads threads. Only when fastPathServes(spec, false).
void attendFast(const Qkv& qkv, const AttentionSpec& spec, Attention& result);

/// 2^x for n floats x <= 0 (or -inf) on the active kernel target, as the kernels weight a logit
/// s: 2^((s - max) log2 e). Relative error below 3e-7 for -126 <= x <= 0; exactly 0 below -126
/// and for -inf.
void exp2NonPositiveFast(const float* in, float* out, Index n);

} // namespace attnlab::kernels

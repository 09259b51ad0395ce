#pragma once
/// KV-cache decoding: causal attention computed as a prefill of N rows, then one
/// decoded row at a time against the growing cache. Result equals full causal attention.

#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/attention/attention.h"

namespace attnlab {

struct KvCacheStep {
    Index newRows = 0;           ///< rows computed in this step (prefill N, then 1)
    Index cacheLen = 0;          ///< keys held after the step
    std::int64_t cacheBytes = 0; ///< K and V held, all batch entries and kv heads
};

struct KvCacheTrace {
    Index prefill = 0;
    std::vector<KvCacheStep> steps;
};

/// Bytes a cache of `cacheLen` keys holds: batch * kvHeads * cacheLen * (D + Dv) * bytesPerElement.
std::int64_t kvCacheBytes(Index batch, Index kvHeads, Index cacheLen, Index dk, Index dv,
                          Index bytesPerElement);

/// The steps of decoding `seq` positions through a cache after a prefill of `prefill` rows:
/// the prefill, then one row a step, each with the keys and bytes the cache holds after it
/// (what attendKvCache records; arithmetic only, no attention is run). 0 <= prefill <= seq.
KvCacheTrace kvCacheTrace(Index batch, Index kvHeads, Index seq, Index prefill, Index dk, Index dv,
                          Index bytesPerElement);

/// Self-attention (Sq == Sk) with a causal mask (added if absent, ANDed with the rest of
/// spec.mask), computed by prefill + decode. 0 <= prefill <= S. Records the steps in
/// `trace` when it is non-null.
Attention attendKvCache(const Qkv& qkv, const AttentionSpec& spec, Index prefill,
                        Index bytesPerElement, KvCacheTrace* trace);
AttentionD attendKvCache(const QkvD& qkv, const AttentionSpec& spec, Index prefill,
                         Index bytesPerElement, KvCacheTrace* trace);

/// docs/architecture.md's trace JSON:
/// {"prefill":N,"steps":[{"new_rows","cache_len","cache_bytes"}]}.
std::string kvCacheTraceJson(const KvCacheTrace& trace);

} // namespace attnlab

// The cost model of seed 002 §2.8, extended to the variants AttnLab shows.
//
// Conventions (used by every item, so the curves are comparable):
//  - One multiply-add = 2 FLOPs. Seed 002 prints multiply-adds and calls them FLOPs
//    (QKV 3 n d^2, attention 2 n^2 d); `flops` here is twice those counts.
//  - n = seq, d = dModel, H = heads, Hkv = kvHeads, dh = d / H. Each query head attends with
//    its own scores even when it shares a kv head (GQA shrinks K/V, not the attention).
//  - The exp/max/sum of the softmax and the biases are not counted (they are O(n^2 H), small
//    next to the O(n^2 d) products), as in seed 002.
//  - `bytes` is the working memory beyond Q, K, V and the output, in bytesPerElement units.

#include "attnlab/lab/complexity.h"

#include <algorithm>

namespace attnlab {

namespace {

double toDouble(Index value) {
    return static_cast<double>(value);
}

/// Number of (i, j) cells with |i - j| <= W in an n x n matrix: the 2W+1 band, clipped.
double bandCells(Index n, Index window) {
    const Index w = std::min(window, std::max<Index>(n - 1, 0));
    // n (2w + 1) minus the two clipped triangles of w (w + 1) / 2 cells each.
    return toDouble(n) * toDouble(2 * w + 1) - toDouble(w) * toDouble(w + 1);
}

} // namespace

const char* costItemName(CostItem item) {
    switch (item) {
    case CostItem::QkvProjection:
        return "QKV projection";
    case CostItem::SoftmaxAttention:
        return "Softmax attention";
    case CostItem::SlidingWindow:
        return "Sliding window";
    case CostItem::Linear:
        return "Linear attention";
    case CostItem::Flash:
        return "FlashAttention";
    case CostItem::KvCacheDecode:
        return "KV-cache decode step";
    }
    return "?";
}

std::vector<CostItem> allCostItems() {
    return {CostItem::QkvProjection, CostItem::SoftmaxAttention,
            CostItem::SlidingWindow, CostItem::Linear,
            CostItem::Flash,         CostItem::KvCacheDecode};
}

Cost estimateCost(CostItem item, const CostParams& params) {
    ATTN_CHECK(params.seq >= 0, "sequence length must be >= 0 (got " << params.seq << ")");
    ATTN_CHECK(params.dModel >= 1, "d_model must be >= 1 (got " << params.dModel << ")");
    ATTN_CHECK(params.heads >= 1 && params.kvHeads >= 1, "heads and kv heads must be >= 1 (got "
                                                             << params.heads << ", "
                                                             << params.kvHeads << ")");
    ATTN_CHECK(params.dModel % params.heads == 0,
               "d_model " << params.dModel << " is not divisible by " << params.heads << " heads");
    ATTN_CHECK(params.heads % params.kvHeads == 0, "heads " << params.heads
                                                            << " is not divisible by "
                                                            << params.kvHeads << " kv heads");
    ATTN_CHECK(params.window >= 0, "window must be >= 0 (got " << params.window << ")");
    ATTN_CHECK(params.qBlock >= 1 && params.kvBlock >= 1,
               "block sizes must be >= 1 (got " << params.qBlock << ", " << params.kvBlock << ")");
    ATTN_CHECK(params.bytesPerElement >= 1,
               "bytes per element must be >= 1 (got " << params.bytesPerElement << ")");

    const double n = toDouble(params.seq);
    const double d = toDouble(params.dModel);
    const double h = toDouble(params.heads);
    const double hkv = toDouble(params.kvHeads);
    const double dh = d / h;
    const double bytes = toDouble(params.bytesPerElement);
    constexpr double kFlopsPerMac = 2.0;

    Cost cost;
    switch (item) {
    case CostItem::QkvProjection: {
        // Seed 002: 3 n d^2 multiply-adds. K and V project to Hkv * dh columns instead of d.
        const double kvWidth = hkv * dh;
        cost.flops = kFlopsPerMac * (n * d * d + 2.0 * n * d * kvWidth);
        cost.bytes = (d * d + 2.0 * d * kvWidth) * bytes; // the three weight matrices
        break;
    }
    case CostItem::SoftmaxAttention:
        // Seed 002: QK^T (n^2 d) + PV (n^2 d) multiply-adds; an n x n matrix per head.
        cost.flops = kFlopsPerMac * 2.0 * n * n * d;
        cost.bytes = h * n * n * bytes;
        break;
    case CostItem::SlidingWindow: {
        // Only the band |i - j| <= W: per cell one q.k and one row of P V per head.
        const double cells = bandCells(params.seq, params.window);
        cost.flops = kFlopsPerMac * 2.0 * cells * d;
        cost.bytes = h * cells * bytes;
        break;
    }
    case CostItem::Linear:
        // Per head: phi(K)^T V and phi(Q)(.) are n dh^2 each, plus sum phi(K) and the
        // denominators (n dh each): O(n d^2 / H), O(n d^2) for one head.
        cost.flops = kFlopsPerMac * h * (2.0 * n * dh * dh + 2.0 * n * dh);
        cost.bytes = h * dh * (dh + 1.0) * bytes; // the [dh, dh] state and sum phi(k)
        break;
    case CostItem::Flash:
        // Same products as softmax attention; holds a running max and sum per row and head
        // plus one [qBlock, kvBlock] score tile instead of the n x n matrix.
        cost.flops = kFlopsPerMac * 2.0 * n * n * d;
        cost.bytes = (2.0 * h * n + toDouble(params.qBlock) * toDouble(params.kvBlock)) * bytes;
        break;
    case CostItem::KvCacheDecode:
        // One new query against n cached keys: q.k and P V over n keys for every head
        // (n d each). Memory: the cache (K and V, Hkv heads) plus one score row per head.
        cost.flops = kFlopsPerMac * 2.0 * n * d;
        cost.bytes = (2.0 * n * hkv * dh + h * n) * bytes;
        break;
    }
    return cost;
}

} // namespace attnlab

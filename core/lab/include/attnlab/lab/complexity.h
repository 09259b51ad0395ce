#pragma once
/// A cost model (seed 002 §2.8): FLOPs and bytes of each attention stage as functions of
/// S, d_model, H, Hkv, W and the flash block sizes. A multiply-add counts as 2 FLOPs.

#include <string>
#include <vector>

#include "attnlab/base/tensor.h"

namespace attnlab {

struct CostParams {
    Index seq = 512;
    Index dModel = 512;
    Index heads = 8;
    Index kvHeads = 8;
    Index window = 128;
    Index qBlock = 64;
    Index kvBlock = 64;
    Index bytesPerElement = 4;
};

enum class CostItem {
    QkvProjection,    ///< X @ Wq, Wk, Wv (GQA shrinks K and V)
    SoftmaxAttention, ///< QK^T, softmax, PV with the S x S matrix in memory
    SlidingWindow,    ///< only the 2W+1 band
    Linear,           ///< phi(K)^T V then phi(Q) (.)
    Flash,            ///< same FLOPs as softmax, O(S) extra memory
    KvCacheDecode,    ///< one decoded token against a cache of S
};

struct Cost {
    double flops = 0;
    double bytes = 0; ///< working memory beyond Q, K, V and the output
};

const char* costItemName(CostItem item);
std::vector<CostItem> allCostItems();
Cost estimateCost(CostItem item, const CostParams& params);

} // namespace attnlab

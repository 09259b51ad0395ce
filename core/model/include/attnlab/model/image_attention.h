#pragma once
/// What an image classifier's run says about the image (runImage, model.h): the names of its
/// tokens, attention rollout over its layers, and its classes ranked by probability. Qt-free;
/// the window's image view, `attnlab render --view image-attention` and `attnlab model --image`
/// all read these.
///
///   auto names = imageTokenNames(model.config);        // "[CLS]", "r0c0", "r0c1", ...
///   Matrix rollout = attentionRollout(model, run);     // [T, T]; row 0: what the class token
///                                                      // gathers, through every layer
///   auto best = topLabels(model.config, run.logits, 5);
///
/// Costs (T tokens, L layers, H heads, hd head dim): rollout O(L H T^2 hd + L T^3) time and
/// 3 T^2 floats (one head's map, the product, the layer's mean); names and labels O(T), O(V log V).

#include <string>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/model/config.h"
#include "attnlab/model/model.h"

namespace attnlab::model {

/// The tokens of an image classifier's sequence, in the order runImage lays them out: "[CLS]",
/// DeiT's distillation token "[DIST]", then one name per patch, row by row: "r<row>c<column>"
/// ("r0c0", "r0c1", ...).
std::vector<std::string> imageTokenNames(const ModelConfig& config);

/// The patch at token `token` as (row, column) of the grid; (-1, -1) for a leading token.
struct PatchCell {
    Index row = -1, column = -1;
};
PatchCell patchOfToken(const ModelConfig& config, Index token);
/// The token of the patch at (row, column).
Index tokenOfPatch(const ModelConfig& config, Index row, Index column);

/// Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): each
/// layer's attention averaged over its heads, the residual connection added as an identity and
/// the rows renormalised, A_l = (mean_h W_lh + I) / 2, multiplied from the first layer up:
/// R = A_{L-1} ... A_1 A_0 (only the first `layers` layers when layers > 0). Row i of R is how
/// much of what token i holds at the top came from each input token. Rows sum to 1. Switched-off
/// heads (run.ablatedHeads) count as the zero map they are in the forward.
Matrix attentionRollout(const Model& model, const ModelRun& run, Index layers = 0, int threads = 1);

/// One layer's attention averaged over its heads [T, T] (switched-off heads count as zero).
Matrix meanHeadAttention(const Model& model, const ModelRun& run, Index layer, int threads = 1);

/// A class and its probability (softmax over the classifier's logits, in double).
struct LabelProbability {
    Index id = 0;
    std::string label;
    double probability = 0;
};

/// The `count` most probable classes of logits' first row, most probable first, ties to the
/// lower id; names from config.labels ("LABEL_<id>" where it has none).
std::vector<LabelProbability> topLabels(const ModelConfig& config, const Matrix& logits,
                                        Index count);

} // namespace attnlab::model

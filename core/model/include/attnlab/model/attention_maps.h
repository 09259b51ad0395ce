#pragma once
/// Attention maps of a model run, computed when asked. A run keeps per layer the queries and
/// keys as the kernel read them (model.h); a map is the same kernel run again on one head, pass
/// by pass as the forward ran it (ModelRun::passes), asking for the weights this time. So a map
/// computed here is byte-equal to the weights the forward's own attention used, at any thread
/// count, and costs what one head costs: memory [rows, S], time O(rows S hd).
///
///   Matrix map = attentionMap(model, run, 3, 5);            // layer 3, head 5: [S, S]
///   Matrix row = attentionRows(model, run, 3, 5, 41, 1);    // query 41 only: [1, S]
///   Matrix small = attentionOverview(model, run, 3, 5, 16, TileReduce::Max);  // [S/16, S/16]
///   forEachHeadMap(model, run, AttentionOf::Self, [](Index l, Index h, const Matrix& m) {...});
///
/// Costs (S queries, K keys, L layers, H heads, hd head dim): a map O(S K hd) time and S K
/// floats; rows r of it O(max(r, 24) K hd) (a pass of the generic kernels, soft-capped or
/// position-biased models: the whole pass); an overview holds one band of `block` rows at a
/// time; forEachHeadMap one map at a time; attentionRecord the whole L H S K.

#include <functional>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/model/model.h"

namespace attnlab::model {

/// The extents of one of a run's attentions.
struct AttentionShape {
    Index layers = 0;
    Index heads = 0;
    Index queries = 0; ///< rows: the run's positions (the target's for cross-attention)
    Index keys = 0;    ///< columns: the same positions, or the source's for cross-attention
    /// Floats of the whole record, layers x heads x queries x keys.
    double cells() const {
        return static_cast<double>(layers) * static_cast<double>(heads) *
               static_cast<double>(queries) * static_cast<double>(keys);
    }
};

/// The shape of `of` in run; zero layers when the run has no such attention (Encoder and
/// Cross outside an encoder-decoder).
AttentionShape attentionShape(const Model& model, const ModelRun& run,
                              AttentionOf of = AttentionOf::Self);

/// Rows [first, first + count) of head `head` of layer `layer`: [count, keys], masked cells
/// exactly 0. Throws InvalidArgument for a layer, head or row range outside the run.
Matrix attentionRows(const Model& model, const ModelRun& run, Index layer, Index head,
                     Index first, Index count, AttentionOf of = AttentionOf::Self,
                     int threads = 1);

/// One head's whole map [queries, keys].
Matrix attentionMap(const Model& model, const ModelRun& run, Index layer, Index head,
                    AttentionOf of = AttentionOf::Self, int threads = 1);

enum class TileReduce : std::uint8_t { Max, Mean };

/// One head's map reduced over block x block tiles (the last row and column of tiles may be
/// smaller; Mean divides by the cells a tile has): [ceil(queries / block), ceil(keys /
/// block)], computed one band of `block` rows at a time. block >= 1.
Matrix attentionOverview(const Model& model, const ModelRun& run, Index layer, Index head,
                         Index block, TileReduce reduce, AttentionOf of = AttentionOf::Self,
                         int threads = 1);

/// Calls fn(layer, head, map) for every head, layer-major, with one map alive at a time.
void forEachHeadMap(const Model& model, const ModelRun& run, AttentionOf of,
                    const std::function<void(Index layer, Index head, const Matrix& map)>& fn,
                    int threads = 1);

/// Every layer's maps, [1, H, queries, keys] per layer: the whole record, for runs small
/// enough to hold it (shape.cells() floats). threads 0 = hardware concurrency.
std::vector<Tensor4> attentionRecord(const Model& model, const ModelRun& run,
                                     AttentionOf of = AttentionOf::Self, int threads = 0);

} // namespace attnlab::model

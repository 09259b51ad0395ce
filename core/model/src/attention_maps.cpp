// Attention maps computed on demand from a run's q and k (attention_maps.h).

#include "attnlab/model/attention_maps.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "attnlab/attention/attention.h"
#include "attnlab/base/check.h"
#include "attnlab/base/parallel.h"
#include "attnlab/base/threads.h"
#include "forward_seams.h"

namespace attnlab::model {
namespace {

/// Rows a band of the fast path holds at most: several of the kernel's row tiles, so copying
/// and packing the keys once per band is small beside the band's product.
constexpr Index kBandRows = 192;

/// What one of a run's attentions is computed from: each layer's query and key heads (a run's
/// cache, or an encoder's tensors), and where its passes began.
struct Source {
    Index layers = 0;
    Index heads = 0;   ///< query heads
    Index kvHeads = 0; ///< key heads
    Index queries = 0;
    Index keys = 0;
    std::function<Matrix(Index layer, Index head)> query; ///< [queries, hd]
    std::function<Matrix(Index layer, Index head)> key;   ///< [keys, hd]
    std::vector<Index> passes;
};

Source cached(const std::vector<HeadCache>& q, const std::vector<HeadCache>& k,
              std::vector<Index> passes) {
    Source source;
    source.layers = static_cast<Index>(q.size());
    if (!q.empty()) {
        source.heads = q.front().heads();
        source.kvHeads = k.front().heads();
        source.queries = q.front().seq();
        source.keys = k.front().seq();
    }
    source.query = [&q](Index l, Index h) { return q[static_cast<std::size_t>(l)].head(h); };
    source.key = [&k](Index l, Index h) { return k[static_cast<std::size_t>(l)].head(h); };
    source.passes = std::move(passes);
    return source;
}

Source held(const std::vector<Tensor4>& q, const std::vector<Tensor4>& k) {
    Source source;
    source.layers = static_cast<Index>(q.size());
    if (!q.empty()) {
        source.heads = q.front().heads;
        source.kvHeads = k.front().heads;
        source.queries = q.front().seq;
        source.keys = k.front().seq;
    }
    source.query = [&q](Index l, Index h) {
        return Matrix(q[static_cast<std::size_t>(l)].head(0, h));
    };
    source.key = [&k](Index l, Index h) {
        return Matrix(k[static_cast<std::size_t>(l)].head(0, h));
    };
    source.passes = {0};
    return source;
}

Source sourceOf(const ModelRun& run, AttentionOf of) {
    switch (of) {
    case AttentionOf::Self:
        return cached(run.q, run.k, run.passes);
    case AttentionOf::Encoder:
        return held(run.encoderQ, run.encoderK);
    case AttentionOf::Cross: {
        // The decoder's queries (a cache) against the source's keys (held once).
        Source source = held(run.encoderQ, run.crossK);
        source.layers = static_cast<Index>(run.crossQ.size());
        if (!run.crossQ.empty()) {
            source.heads = run.crossQ.front().heads();
            source.queries = run.crossQ.front().seq();
        }
        source.query = [&run](Index l, Index h) {
            return run.crossQ[static_cast<std::size_t>(l)].head(h);
        };
        source.passes = run.passes;
        return source;
    }
    }
    return {};
}

/// One head's rows [rowBegin, rowEnd) with its keys [0, keys) as a batch-1, one-head Qkv whose
/// V has no columns (the weights do not depend on V; the kernel then skips P V).
Qkv oneHead(const Matrix& q, const Matrix& k, Index rowBegin, Index rowEnd, Index keys) {
    Qkv qkv;
    qkv.q = Tensor4(1, 1, rowEnd - rowBegin, q.cols());
    qkv.q.head(0, 0) = q.middleRows(rowBegin, rowEnd - rowBegin);
    qkv.k = Tensor4(1, 1, keys, k.cols());
    qkv.k.head(0, 0) = k.topRows(keys);
    qkv.v = Tensor4(1, 1, keys, 0);
    return qkv;
}

/// Calls fn(first, rows) for bands of head `head`'s rows covering [first, first + count) in
/// order, each [rows, keys] computed as the forward computed it: within each pass of the run,
/// rows aligned to the kernel's row tiles (attendRowBlock) with the keys those rows see, or the
/// whole pass where the kernel's bytes depend on the whole. A band may start before `first`
/// and end after first + count.
template <typename Fn>
void forEachBand(const Model& model, const ModelRun& run, AttentionOf of, Index layer, Index head,
                 Index first, Index count, int threads, const Fn& fn) {
    const ModelConfig& c = model.config;
    const Source source = sourceOf(run, of);
    ATTN_CHECK(layer >= 0 && layer < source.layers,
               "attention map: layer " << layer << " is outside the run's " << source.layers);
    ATTN_CHECK(head >= 0 && head < source.heads,
               "attention map: head " << head << " is outside the layer's " << source.heads);
    ATTN_CHECK(first >= 0 && count >= 0 && first + count <= source.queries,
               "attention map: rows [" << first << ", " << first + count << ") outside the "
                                       << source.queries << " queries");
    const bool causal = causalAttention(c, of);
    const Index kvHead = kvHeadOf(head, source.heads, source.kvHeads);
    // The head's queries and its keys, once per call (S hd each, beside the S^2 work).
    const Matrix q = source.query(layer, head);
    const Matrix k = source.key(layer, kvHead);
    AttentionSpec spec = attentionSpecOf(c, of, layer);
    spec.wantWeights = true;
    spec.threads = threads;
    const bool biased = positionBiased(c, of);
    const Index block = biased ? 0 : attendRowBlock(spec);
    const Index end = first + count;
    for (std::size_t p = 0; p < source.passes.size(); ++p) {
        const Index passBegin = source.passes[p];
        const Index passEnd =
            p + 1 < source.passes.size() ? source.passes[p + 1] : source.queries;
        const Index lo = std::max(first, passBegin);
        const Index hi = std::min(end, passEnd);
        if (lo >= hi) continue;
        // Rows the kernel computes together: tiles of `block` from the pass's first row.
        Index bandBegin = passBegin;
        Index bandLimit = passEnd;
        if (block > 0) {
            bandBegin = passBegin + (lo - passBegin) / block * block;
            bandLimit = std::min(passEnd, passBegin + (hi - passBegin + block - 1) / block * block);
        }
        const Index bandRows = block > 0 ? std::max(block, kBandRows / block * block) : passEnd;
        for (Index a = bandBegin; a < bandLimit; a += bandRows) {
            const Index b = std::min(bandLimit, a + bandRows);
            // The forward ran the pass's queries against the keys of every position up to the
            // pass's end (causal: bottom-right aligned, so a band sees keys up to its end).
            const Index keys = causal ? (block > 0 ? b : passEnd) : source.keys;
            const Qkv qkv = oneHead(q, k, a, b, keys);
            spec.scoreBias = biased ? scoreBiasOf(model, of, head, 1, a, b - a, keys) : nullptr;
            const Attention attention = attend(qkv, spec);
            fn(a, attention.weights.head(0, 0));
        }
    }
}

} // namespace

AttentionShape attentionShape(const Model& model, const ModelRun& run, AttentionOf of) {
    const Source source = sourceOf(run, of);
    AttentionShape shape;
    if (source.layers == 0) return shape;
    shape.layers = source.layers;
    shape.heads = model.config.heads;
    shape.queries = source.queries;
    shape.keys = source.keys;
    return shape;
}

Matrix attentionRows(const Model& model, const ModelRun& run, Index layer, Index head,
                     Index first, Index count, AttentionOf of, int threads) {
    const AttentionShape shape = attentionShape(model, run, of);
    Matrix out = Matrix::Zero(count, shape.keys);
    forEachBand(model, run, of, layer, head, first, count, threads,
                [&](Index bandFirst, ConstMatrixMap rows) {
                    const Index lo = std::max(first, bandFirst);
                    const Index hi = std::min(first + count, bandFirst + rows.rows());
                    if (lo < hi)
                        out.block(lo - first, 0, hi - lo, rows.cols()) =
                            rows.middleRows(lo - bandFirst, hi - lo);
                });
    return out;
}

Matrix attentionMap(const Model& model, const ModelRun& run, Index layer, Index head,
                    AttentionOf of, int threads) {
    return attentionRows(model, run, layer, head, 0, attentionShape(model, run, of).queries, of,
                         threads);
}

Matrix attentionOverview(const Model& model, const ModelRun& run, Index layer, Index head,
                         Index block, TileReduce reduce, AttentionOf of, int threads) {
    ATTN_CHECK(block >= 1, "attention overview: block " << block << " is not >= 1");
    const AttentionShape shape = attentionShape(model, run, of);
    const Index tileRows = (shape.queries + block - 1) / block;
    const Index tileCols = (shape.keys + block - 1) / block;
    MatrixD acc = MatrixD::Constant(tileRows, tileCols,
                                    reduce == TileReduce::Max
                                        ? -std::numeric_limits<double>::infinity()
                                        : 0.0);
    forEachBand(model, run, of, layer, head, 0, shape.queries, threads,
                [&](Index bandFirst, ConstMatrixMap rows) {
                    for (Index i = 0; i < rows.rows(); ++i) {
                        const Index ti = (bandFirst + i) / block;
                        for (Index j = 0; j < rows.cols(); ++j) {
                            const double value = rows(i, j);
                            double& cell = acc(ti, j / block);
                            cell = reduce == TileReduce::Max ? std::max(cell, value)
                                                             : cell + value;
                        }
                        // Keys past the band's (a causal band sees fewer) are masked zeros.
                        if (reduce == TileReduce::Max && rows.cols() < shape.keys)
                            for (Index tj = rows.cols() / block; tj < tileCols; ++tj)
                                acc(ti, tj) = std::max(acc(ti, tj), 0.0);
                    }
                });
    Matrix out(tileRows, tileCols);
    for (Index ti = 0; ti < tileRows; ++ti)
        for (Index tj = 0; tj < tileCols; ++tj) {
            const Index cells = (std::min(shape.queries, (ti + 1) * block) - ti * block) *
                                (std::min(shape.keys, (tj + 1) * block) - tj * block);
            out(ti, tj) = static_cast<float>(
                reduce == TileReduce::Max ? acc(ti, tj) : acc(ti, tj) / static_cast<double>(cells));
        }
    return out;
}

void forEachHeadMap(const Model& model, const ModelRun& run, AttentionOf of,
                    const std::function<void(Index, Index, const Matrix&)>& fn, int threads) {
    const AttentionShape shape = attentionShape(model, run, of);
    for (Index layer = 0; layer < shape.layers; ++layer)
        for (Index head = 0; head < shape.heads; ++head)
            fn(layer, head, attentionMap(model, run, layer, head, of, threads));
}

std::vector<Tensor4> attentionRecord(const Model& model, const ModelRun& run, AttentionOf of,
                                     int threads) {
    const AttentionShape shape = attentionShape(model, run, of);
    const int workers = resolveThreads(threads);
    std::vector<Tensor4> record;
    record.reserve(static_cast<std::size_t>(shape.layers));
    for (Index layer = 0; layer < shape.layers; ++layer) {
        Tensor4 weights(1, shape.heads, shape.queries, shape.keys);
        // One head per worker: each head's bands run on one thread, so the bytes are the
        // kernel's at any thread count.
        detail::parallelFor(shape.heads, workers,
                            static_cast<double>(shape.queries) * static_cast<double>(shape.keys) *
                                static_cast<double>(model.config.headDim),
                            [&](Index head) {
                                weights.head(0, head) =
                                    attentionMap(model, run, layer, head, of, 1);
                            });
        record.push_back(std::move(weights));
    }
    return record;
}

} // namespace attnlab::model

// Attention maps on demand (attention_maps.h) against the forward's own attention call: for
// every checkpoint saved by transformers (decoders, encoders, encoder-decoders), each head's map
// computed on demand from the run's q and k is byte-equal to the weights of one attend() over
// all the layer's heads with V, as the forward calls it, pass by pass (a run from scratch, and
// one extended through the KV cache), at several thread counts. Rows and overviews equal the
// whole map's rows and blocks. The weights themselves are checked against transformers'
// numbers by architecture_test.cpp.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attnlab/attention/attention.h"
#include "attnlab/io/npy.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "attnlab/model/run_dumps.h"
#include "reference_npz.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;

using test::hfDir;

Model load(const fs::path& dir) {
    auto model = loadModel(dir.string());
    if (!model.ok()) throw std::runtime_error(model.error());
    return std::move(*model);
}

/// The ids transformers ran (reference.npz): ids, and for an encoder-decoder decoder_ids.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> referenceIds(
    const std::string& name) {
    const std::string path = (hfDir() / name / "reference.npz").string();
    auto members = readNpzMembers(path);
    if (!members.ok()) throw std::runtime_error(members.error());
    std::vector<std::int64_t> decoder;
    if (members->count("decoder_ids")) decoder = test::int64s(members->at("decoder_ids"), path);
    return {test::int64s(members->at("ids"), path), decoder};
}

bool sameBytes(ConstMatrixMap a, const Matrix& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(float)) ==
               0;
}

/// The spec the forward runs `of` under, written from the config here: the model's own
/// (run_dumps.h's nativeApply, each layer's window where they differ) for self-attention; no
/// mask and the model's scale for the encoder and cross-attention.
AttentionSpec specOf(const ModelConfig& c, AttentionOf of, Index layer) {
    AttentionSpec spec;
    if (of == AttentionOf::Self) {
        const QkvApply apply = nativeApply(c);
        spec = apply.spec;
        if (!apply.layerWindows.empty()) {
            spec.mask = MaskSpec{};
            const Index window = apply.layerWindows[static_cast<std::size_t>(layer)];
            if (window > 0)
                spec.mask.causalWindow = window - 1;
            else
                spec.mask.causal = true;
        }
    } else {
        spec.scale = c.attentionScale;
    }
    spec.wantWeights = true;
    spec.threads = 1;
    return spec;
}

/// The weights [1, H, Sq, Sk] of layer `layer` as the forward's attend() computes them: every
/// head at once with V, pass by pass (queries of the pass against the keys of every position
/// up to its end, for causal self-attention; all keys otherwise).
Tensor4 forwardsWeights(const Model& model, const ModelRun& run, AttentionOf of, Index layer) {
    const ModelConfig& c = model.config;
    const auto l = static_cast<std::size_t>(layer);
    const Tensor4 q = of == AttentionOf::Self      ? run.q[l].tensor()
                      : of == AttentionOf::Encoder ? run.encoderQ[l]
                                                   : run.crossQ[l].tensor();
    const Tensor4 k = of == AttentionOf::Self      ? run.k[l].tensor()
                      : of == AttentionOf::Encoder ? run.encoderK[l]
                                                   : run.crossK[l];
    // The encoder's V is not kept; the weights do not read V, so K stands in for it.
    const Tensor4 v = of == AttentionOf::Self      ? run.v[l].tensor()
                      : of == AttentionOf::Encoder ? run.encoderK[l]
                                                   : run.crossV[l];
    const bool causal = of == AttentionOf::Self && c.kind != ModelKind::Encoder;
    const std::vector<Index> passes =
        of == AttentionOf::Encoder ? std::vector<Index>{0} : run.passes;
    Tensor4 out(1, q.heads, q.seq, k.seq);
    for (std::size_t p = 0; p < passes.size(); ++p) {
        const Index begin = passes[p];
        const Index end = p + 1 < passes.size() ? passes[p + 1] : q.seq;
        const Index keys = causal ? end : k.seq;
        Qkv qkv{Tensor4(1, q.heads, end - begin, q.dim), Tensor4(1, k.heads, keys, k.dim),
                Tensor4(1, v.heads, keys, v.dim)};
        for (Index h = 0; h < q.heads; ++h)
            qkv.q.head(0, h) = q.head(0, h).middleRows(begin, end - begin);
        for (Index h = 0; h < k.heads; ++h) {
            qkv.k.head(0, h) = k.head(0, h).topRows(keys);
            qkv.v.head(0, h) = v.head(0, h).topRows(keys);
        }
        const Attention attention = attend(qkv, specOf(c, of, layer));
        for (Index h = 0; h < q.heads; ++h)
            out.head(0, h).block(begin, 0, end - begin, keys) =
                attention.weights.head(0, h);
    }
    return out;
}

/// Every map of `of` in run, on demand at 1, 2 and 3 threads, byte-equal to the forward's.
void expectMapsAreTheForwards(const Model& model, const ModelRun& run, AttentionOf of,
                              const std::string& what) {
    const AttentionShape shape = attentionShape(model, run, of);
    ASSERT_GT(shape.layers, 0) << what;
    for (Index layer = 0; layer < shape.layers; ++layer) {
        const Tensor4 expected = forwardsWeights(model, run, of, layer);
        for (Index head = 0; head < shape.heads; ++head)
            for (int threads : {1, 2, 3})
                ASSERT_TRUE(sameBytes(expected.head(0, head),
                                      attentionMap(model, run, layer, head, of, threads)))
                    << what << ": layer " << layer << " head " << head << ", " << threads
                    << " threads";
    }
}

class EveryCheckpoint : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryCheckpoint, MapsOnDemandAreTheForwardsOwnWeights) {
    const Model model = load(hfDir() / GetParam());
    if (model.config.arch().positions == Positions::RelativeBuckets)
        GTEST_SKIP() << "T5's position bias is checked against transformers' weights instead";
    const auto [ids, decoderIds] = referenceIds(GetParam());
    RunOptions options;
    options.threads = 2;
    if (model.config.kind == ModelKind::EncoderDecoder) {
        auto run = runTranslation(model, ids, decoderIds, options);
        ASSERT_TRUE(run.ok()) << run.error();
        for (AttentionOf of : {AttentionOf::Encoder, AttentionOf::Self, AttentionOf::Cross})
            expectMapsAreTheForwards(model, *run, of, "from scratch");
        // The decoder extended one token at a time: a pass per token.
        std::optional<ModelRun> stepped;
        for (std::size_t n = 1; n <= decoderIds.size(); ++n) {
            auto next = runTranslation(model, ids, std::span(decoderIds).first(n), options,
                                       stepped ? &*stepped : nullptr);
            ASSERT_TRUE(next.ok()) << next.error();
            stepped = std::move(*next);
        }
        ASSERT_EQ(stepped->passes.size(), decoderIds.size());
        for (AttentionOf of : {AttentionOf::Self, AttentionOf::Cross})
            expectMapsAreTheForwards(model, *stepped, of, "stepped");
        return;
    }
    auto run = runModel(model, ids, options);
    ASSERT_TRUE(run.ok()) << run.error();
    expectMapsAreTheForwards(model, *run, AttentionOf::Self, "from scratch");
    if (model.config.kind == ModelKind::Encoder) return; // two-way: never extended
    // A prefix, then the rest in two extensions.
    const std::size_t third = std::max<std::size_t>(1, ids.size() / 3);
    auto prefix = runModel(model, std::span(ids).first(third), options);
    ASSERT_TRUE(prefix.ok());
    auto middle = runModel(model, std::span(ids).first(ids.size() - 1), options, &*prefix);
    ASSERT_TRUE(middle.ok());
    auto whole = runModel(model, ids, options, &*middle);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(whole->passes, (std::vector<Index>{0, static_cast<Index>(third),
                                                 static_cast<Index>(ids.size() - 1)}));
    expectMapsAreTheForwards(model, *whole, AttentionOf::Self, "extended");
}

INSTANTIATE_TEST_SUITE_P(SavedByTransformers, EveryCheckpoint, ::testing::ValuesIn(test::hfFixtureNames()),
                         [](const auto& param) { return param.param; });

/// The bundled induction model on a longer text: many of the kernel's row tiles and bands,
/// two passes.
struct LongRun {
    Model model = load(fs::path(ATTNLAB_SOURCE_DIR) / "resources/models/tiny-llama-induction");
    ModelRun run;
    LongRun() {
        std::vector<std::int64_t> ids;
        const Index count = std::min<Index>(model.config.maxPositions, 300);
        for (Index i = 0; i < count; ++i)
            ids.push_back((i * 37 + 11) % model.config.vocab);
        RunOptions options;
        options.threads = 2;
        auto prefix = runModel(model, std::span(ids).first(ids.size() * 2 / 3), options);
        auto all = runModel(model, ids, options, &*prefix);
        run = std::move(*all);
    }
};

TEST(AttentionMaps, ALongExtendedRunsMapsAreTheForwardsOwnWeights) {
    const LongRun long_;
    ASSERT_EQ(long_.run.passes.size(), 2u);
    expectMapsAreTheForwards(long_.model, long_.run, AttentionOf::Self, "long");
}

TEST(AttentionMaps, RowsAreTheMapsRows) {
    const LongRun long_;
    const Index s = static_cast<Index>(long_.run.ids.size());
    const Matrix map = attentionMap(long_.model, long_.run, 1, 1);
    for (const auto& [first, count] : std::vector<std::pair<Index, Index>>{
             {0, 1}, {5, 1}, {23, 2}, {24, 30}, {s - 31, 2}, {s - 1, 1}, {0, s}, {47, 50}}) {
        const Matrix rows = attentionRows(long_.model, long_.run, 1, 1, first, count);
        EXPECT_EQ(std::memcmp(rows.data(), map.middleRows(first, count).eval().data(),
                              static_cast<std::size_t>(rows.size()) * sizeof(float)),
                  0)
            << "rows [" << first << ", " << first + count << ")";
    }
    EXPECT_THROW(attentionRows(long_.model, long_.run, 1, 1, s - 1, 2), InvalidArgument);
    EXPECT_THROW(attentionMap(long_.model, long_.run, long_.model.config.layers, 0),
                 InvalidArgument);
    EXPECT_THROW(attentionMap(long_.model, long_.run, 0, long_.model.config.heads),
                 InvalidArgument);
}

TEST(AttentionMaps, OverviewTilesAreTheMaxAndMeanOfTheMapsBlocks) {
    const LongRun long_;
    const Matrix map = attentionMap(long_.model, long_.run, 0, 2);
    for (Index block : {1, 7, 16, 33}) {
        const Matrix most =
            attentionOverview(long_.model, long_.run, 0, 2, block, TileReduce::Max);
        const Matrix mean =
            attentionOverview(long_.model, long_.run, 0, 2, block, TileReduce::Mean);
        const Index tiles = (map.rows() + block - 1) / block;
        ASSERT_EQ(most.rows(), tiles);
        ASSERT_EQ(mean.cols(), tiles);
        for (Index ti = 0; ti < tiles; ++ti)
            for (Index tj = 0; tj < tiles; ++tj) {
                const Index rows = std::min(block, map.rows() - ti * block);
                const Index cols = std::min(block, map.cols() - tj * block);
                const auto cells = map.block(ti * block, tj * block, rows, cols);
                EXPECT_EQ(most(ti, tj), cells.maxCoeff()) << block << ": " << ti << ", " << tj;
                EXPECT_NEAR(mean(ti, tj), cells.cast<double>().mean(), 1e-7)
                    << block << ": " << ti << ", " << tj;
            }
    }
}

TEST(AttentionMaps, EveryHeadStreamsInOrderAndTheRecordHoldsThem) {
    const LongRun long_;
    const std::vector<Tensor4> record = attentionRecord(long_.model, long_.run, AttentionOf::Self, 3);
    Index seen = 0;
    forEachHeadMap(long_.model, long_.run, AttentionOf::Self,
                   [&](Index layer, Index head, const Matrix& map) {
                       EXPECT_EQ(layer * long_.model.config.heads + head, seen++);
                       EXPECT_TRUE(sameBytes(record[static_cast<std::size_t>(layer)].head(0, head),
                                             map));
                   });
    EXPECT_EQ(seen, long_.model.config.layers * long_.model.config.heads);
}

TEST(AttentionMaps, TheWindowsDumpsReadTheRunAndHoldNoMaps) {
    // What the window shows: the run's attention dump computes each head when asked, byte-equal
    // to the forward's own weights, and the Q/K/V dump reads each layer from the run.
    LongRun long_;
    const auto model = std::make_shared<const Model>(std::move(long_.model));
    const auto run = std::make_shared<const ModelRun>(std::move(long_.run));
    const AttentionDump dump = attentionDumpOf(model, run, {});
    EXPECT_FALSE(dump.holdsWeights());
    EXPECT_TRUE(dump.weights.empty());
    const QkvDump qkv = qkvDumpOf(model, run, {});
    EXPECT_TRUE(qkv.q.empty() && qkv.k.empty() && qkv.v.empty());
    const auto s = static_cast<Index>(run->ids.size());
    ASSERT_EQ(dump.sq, s);
    ASSERT_EQ(dump.layers, model->config.layers);
    for (Index layer = 0; layer < dump.layers; ++layer) {
        const Tensor4 expected = forwardsWeights(*model, *run, AttentionOf::Self, layer);
        for (Index head = 0; head < dump.heads; ++head)
            ASSERT_TRUE(sameBytes(expected.head(0, head), dump.head(0, layer, head)))
                << "layer " << layer << " head " << head;
        const Qkv read = qkv.layer(layer);
        EXPECT_EQ(read.q.data, run->q[static_cast<std::size_t>(layer)].tensor().data);
        EXPECT_EQ(read.k.data, run->k[static_cast<std::size_t>(layer)].tensor().data);
        EXPECT_EQ(read.v.data, run->v[static_cast<std::size_t>(layer)].tensor().data);
    }
    // Re-run under the model's own spec a layer at a time (a "what if" left at the model's
    // settings): each head is the layer's re-run.
    const QkvApply apply = nativeApply(model->config);
    const AttentionDump applied = appliedDump(std::make_shared<const QkvDump>(qkv), apply);
    EXPECT_FALSE(applied.holdsWeights());
    for (Index layer : {Index(1), Index(0), dump.layers - 1}) {
        const Experiment again = applyToQkvLayer(qkv, layer, apply);
        for (Index head = 0; head < dump.heads; ++head)
            EXPECT_TRUE(sameBytes(std::as_const(again.attention.weights).head(0, head),
                                  applied.head(0, layer, head)));
    }
    EXPECT_THROW(dump.head(0, dump.layers, 0), InvalidArgument);
    QkvApply bad = apply;
    bad.kvHeads = model->config.kvHeads + 1;
    EXPECT_THROW(appliedDump(std::make_shared<const QkvDump>(qkv), bad), InvalidArgument);
}

} // namespace
} // namespace attnlab::model

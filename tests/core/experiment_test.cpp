// An Experiment describes itself (#9, item 4): the mask in force, the variant, the base scale
// and temperature and where it came from, each derived once: run() fills them from the
// session, a dump names itself. The session facts (token counts, the mask a KV cache implies,
// the default prefill) have one owner each.

#include <gtest/gtest.h>

#include <cmath>

#include "attnlab/io/dump.h"
#include "attnlab/lab/dump_experiment.h"
#include "attnlab/lab/session.h"

namespace attnlab {
namespace {

TEST(Experiment, RunDescribesTheVariantMaskScaleAndSource) {
    Session session;
    session.title = "lesson";
    session.dModel = 16;
    session.heads = 2; // d_head 8
    session.temperature = 4.0;
    session.variant = Variant::Linear;
    session.mask.window = 1;
    const Experiment ex = run(session);
    EXPECT_EQ(ex.source.kind, ExperimentSource::Kind::Session);
    EXPECT_EQ(ex.source.describe(), "lesson");
    EXPECT_EQ(ex.variant, Variant::Linear);
    EXPECT_FALSE(ex.usesSoftmax());
    EXPECT_EQ(ex.mask.window, 1);
    EXPECT_FALSE(ex.mask.causal);
    EXPECT_DOUBLE_EQ(ex.baseScale, 1.0 / std::sqrt(8.0));
    EXPECT_DOUBLE_EQ(ex.temperature, 4.0);
    EXPECT_DOUBLE_EQ(ex.scale, ex.baseScale / 4.0); // divided by T exactly once
    EXPECT_TRUE(ex.hasQk());

    session.scale = 0.3;
    EXPECT_DOUBLE_EQ(run(session).baseScale, 0.3);
}

TEST(Experiment, AKvCachePrefillMeansCausalInOnePlace) {
    Session session;
    session.mask.causal = false;
    EXPECT_FALSE(effectiveMask(session).causal);
    session.kvPrefill = 2;
    EXPECT_TRUE(effectiveMask(session).causal);
    EXPECT_FALSE(session.mask.causal); // the session itself is not rewritten
    const Experiment ex = run(session);
    EXPECT_TRUE(ex.mask.causal);
    EXPECT_EQ(ex.kvPrefill, 2);
    // Every row's weights beyond its own position are exactly zero (causal in force).
    for (Index i = 0; i < ex.sq(); ++i)
        for (Index j = i + 1; j < ex.sk(); ++j)
            EXPECT_EQ(std::as_const(ex.attention.weights).head(0, 0)(i, j), 0.0f);
}

TEST(Experiment, TokenCountsAndDefaultPrefillHaveOneOwner) {
    Session session;
    session.text = "a b c d e";
    EXPECT_EQ(sequenceLengths(session).queries, 5);
    EXPECT_EQ(sequenceLengths(session).keys, 5);
    EXPECT_EQ(defaultKvPrefill(session), 2); // half, rounded down
    session.sourceText = "x y";
    EXPECT_EQ(sequenceLengths(session).keys, 2);
    session.sourceText = "   "; // no tokens: self-attention, as run() does it
    EXPECT_EQ(sequenceLengths(session).keys, 5);
    EXPECT_EQ(run(session).sk(), 5);
    session.text = "a";
    EXPECT_EQ(defaultKvPrefill(session), 1); // at least one row
    session.tokenizer = Tokenizer::Character;
    session.text = "abc";
    EXPECT_EQ(sequenceLengths(session).queries, 3);
}

TEST(Experiment, ADumpIsItsOwnSource) {
    AttentionDump dump;
    dump.source = "/data/gpt2_attn.npz";
    dump.batch = 1;
    dump.layers = 2;
    dump.heads = 1;
    dump.sq = 2;
    dump.sk = 2;
    dump.weights = {1, 0, 0.5f, 0.5f, 1, 0, 0.5f, 0.5f};
    const Experiment ex = dumpExperiment(dump, 0, 1);
    EXPECT_EQ(ex.source.kind, ExperimentSource::Kind::AttentionDump);
    EXPECT_EQ(ex.source.describe(), "gpt2_attn.npz, layer 1");
    EXPECT_FALSE(ex.hasQk());
    EXPECT_TRUE(ex.mask.none());

    ExperimentSource model;
    model.kind = ExperimentSource::Kind::Model;
    model.name = "Qwen3-0.6B";
    model.layer = 3;
    model.head = 5;
    EXPECT_EQ(model.describe(), "Qwen3-0.6B, layer 3, head 5");
}

} // namespace
} // namespace attnlab

// Issue 14 in the lab session: the multi-head output step (seed 000 §4.2, z = Concat(z_1, ...,
// z_h) W^O) that run() computes and the Experiment carries, and the session's dropout keys
// (version 2): their JSON, their validation with key-named errors, train versus eval, and a
// version-1 file that loads exactly as before.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attnlab/lab/session.h"

namespace attnlab {
namespace {

/// Seed 000 §4.2 written out: z.transpose(1, 2).contiguous().view(B, S, H * d_v) @ W^O, in
/// double, from the per-head outputs [1, H, S, d_v] and W^O [H * d_v, d_model].
MatrixD explicitProjection(const Tensor4& heads, const Matrix& wo) {
    const Index h = heads.heads, s = heads.seq, dv = heads.dim;
    // transpose(1, 2).contiguous(): the values in [B, S, H, d_v] order.
    std::vector<double> transposed;
    for (Index i = 0; i < s; ++i)
        for (Index head = 0; head < h; ++head)
            for (Index d = 0; d < dv; ++d)
                transposed.push_back(heads(0, head, i, d));
    // .view(B, S, H * d_v) then @ W^O.
    MatrixD z = MatrixD::Zero(s, wo.cols());
    for (Index i = 0; i < s; ++i)
        for (Index c = 0; c < wo.cols(); ++c)
            for (Index r = 0; r < h * dv; ++r)
                z(i, c) += transposed[static_cast<std::size_t>(i * h * dv + r)] * wo(r, c);
    return z;
}

TEST(OutputProjection, RunConcatenatesTheHeadsInOrderThenMultipliesByWo) {
    Session session;
    session.text = "the cat sat on the mat today";
    session.dModel = 24;
    session.heads = 4;
    session.kvHeads = 2;
    session.seed = 5;
    const Experiment ex = run(session);
    ASSERT_EQ(ex.merged.rows(), 7);
    ASSERT_EQ(ex.merged.cols(), 4 * 6); // [S, h * d_v]
    ASSERT_EQ(ex.wo.rows(), 4 * 6);     // [h * d_v, d_model]
    ASSERT_EQ(ex.wo.cols(), 24);
    ASSERT_EQ(ex.output.rows(), 7); // [S, d_model]
    ASSERT_EQ(ex.output.cols(), 24);
    const MatrixD expected = explicitProjection(ex.attention.output, ex.wo);
    double worst = 0;
    for (Index i = 0; i < 7; ++i)
        for (Index c = 0; c < 24; ++c)
            worst =
                std::max(worst, std::abs(static_cast<double>(ex.output(i, c)) - expected(i, c)));
    EXPECT_LT(worst, 1e-5);
    // Head h's output sits in columns [h * d_v, (h + 1) * d_v) of the concatenation.
    for (Index h = 0; h < 4; ++h)
        EXPECT_EQ(ex.merged(3, h * 6 + 2), ex.attention.output(0, h, 3, 2));
}

TEST(OutputProjection, IdentityProjectionsHaveNoWo) {
    Session session;
    session.dModel = 8;
    session.heads = 2;
    session.identityProjections = true;
    const Experiment ex = run(session);
    EXPECT_EQ(ex.wo.size(), 0);
    EXPECT_TRUE(ex.output == ex.merged);
}

TEST(SessionDropout, TrainModeDropsAndRowsNoLongerSumToOneEvalDoesNot) {
    Session session;
    session.text = "a b c d e f g h i j k l";
    session.dModel = 16;
    session.heads = 2;
    session.dropoutRate = 0.5;
    session.dropoutSeed = 3;
    const Experiment eval = run(session);
    EXPECT_FALSE(eval.dropout.active());
    for (const HeadStats& stats : eval.stats) {
        EXPECT_NEAR(stats.minRowSum, 1.0, 1e-5);
        EXPECT_NEAR(stats.maxRowSum, 1.0, 1e-5);
    }

    session.train = true;
    const Experiment train = run(session);
    ASSERT_TRUE(train.dropout.active());
    EXPECT_EQ(train.dropout.rate, 0.5);
    EXPECT_EQ(train.dropout.seed, 3u);
    Index dropped = 0;
    for (Index h = 0; h < 2; ++h)
        for (Index i = 0; i < 12; ++i)
            for (Index j = 0; j < 12; ++j) {
                const float w = train.attention.weights(0, h, i, j);
                EXPECT_EQ(w == 0.0f, train.isDropped(h, i, j));
                dropped += train.isDropped(h, i, j) ? 1 : 0;
                if (!train.isDropped(h, i, j)) {
                    EXPECT_NEAR(w, eval.attention.weights(0, h, i, j) * 2.0f, 1e-6);
                }
            }
    EXPECT_GT(dropped, 0);
    bool someRowOff = false;
    for (const HeadStats& stats : train.stats)
        someRowOff |= std::abs(stats.minRowSum - 1) > 1e-3 || std::abs(stats.maxRowSum - 1) > 1e-3;
    EXPECT_TRUE(someRowOff);

    // Linear attention forms no weights: it runs in eval mode and says so.
    session.variant = Variant::Linear;
    const Experiment linear = run(session);
    EXPECT_FALSE(linear.dropout.active());
    bool warned = false;
    for (const std::string& warning : linear.warnings)
        warned |= warning.find("dropout") != std::string::npos;
    EXPECT_TRUE(warned);
}

TEST(SessionDropout, KeysRoundTripAndBadValuesNameTheKey) {
    Session session;
    session.train = true;
    session.dropoutRate = 0.25;
    session.dropoutSeed = 77;
    const std::string json = sessionToJson(session);
    EXPECT_NE(json.find("\"mode\": \"train\""), std::string::npos) << json;
    const auto back = sessionFromJson(json);
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_TRUE(back->train);
    EXPECT_EQ(back->dropoutRate, 0.25);
    EXPECT_EQ(back->dropoutSeed, 77u);

    struct Bad {
        const char* attention;
        const char* key;
    };
    for (const Bad bad :
         {Bad{R"("dropout": 1)", "attention.dropout"},
          Bad{R"("dropout": -0.5)", "attention.dropout"},
          Bad{R"("dropout": "half")", "attention.dropout"},
          Bad{R"("mode": "training")", "attention.mode"}, Bad{R"("mode": true)", "attention.mode"},
          Bad{R"("dropout_seed": -1)", "attention.dropout_seed"},
          Bad{R"("dropout_seed": 1.5)", "attention.dropout_seed"}}) {
        const auto result = sessionFromJson(
            std::string(R"({"attnlab_session": 2, "attention": {)") + bad.attention + "}}");
        ASSERT_FALSE(result.ok()) << bad.attention;
        EXPECT_EQ(result.error().rfind(bad.key, 0), 0u) << result.error();
    }

    Session invalid;
    invalid.dropoutRate = 1.0;
    const auto problems = validate(invalid);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("dropout rate"), std::string::npos) << problems[0];
}

TEST(SessionDropout, AVersionOneFileLoadsUnchanged) {
    // resources/examples/mha_gqa_mqa.json as version 1 wrote it: no dropout keys.
    const auto old = sessionFromJson(R"({
  "attnlab_session": 1,
  "title": "MHA vs GQA vs MQA: 8 query heads sharing 4, 2 or 1 key/value heads",
  "tokens": {"text": "the quick brown fox jumps over the lazy dog", "source": "",
             "tokenizer": "whitespace"},
  "model": {"d_model": 32, "heads": 8, "kv_heads": 2, "positional": "rope-half", "seed": 7,
            "identity_projections": false},
  "attention": {"variant": "softmax", "scale": null, "temperature": 1.0},
  "mask": {"causal": true, "window": -1, "causal_window": -1, "valid_len": [], "custom": null},
  "view": {"view": "heads", "colormap": "viridis", "theme": "light", "show": "weights",
           "head": 0, "query": -1, "cell_values": false}
})");
    ASSERT_TRUE(old.ok()) << old.error();
    EXPECT_FALSE(old->train); // eval: exactly the attention version 1 computed
    EXPECT_EQ(old->heads, 8);
    EXPECT_EQ(old->kvHeads, 2);
    EXPECT_EQ(old->seed, 7u);
    EXPECT_TRUE(old->mask.causal);
    EXPECT_EQ(old->viewState.view, "heads");
    const Experiment ex = run(*old);
    EXPECT_FALSE(ex.dropout.active());
    for (const HeadStats& stats : ex.stats) {
        EXPECT_NEAR(stats.minRowSum, 1.0, 1e-5);
        EXPECT_NEAR(stats.maxRowSum, 1.0, 1e-5);
    }
    // Saved again it says it is version 2 and reads back the same.
    const std::string json = sessionToJson(*old);
    EXPECT_NE(json.find("\"attnlab_session\": 2"), std::string::npos);
    const auto again = sessionFromJson(json);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(sessionToJson(*again), json);
}

} // namespace
} // namespace attnlab

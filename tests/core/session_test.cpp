// Session: validation messages, run() against the double-precision reference, and the
// versioned JSON format.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "attnlab/lab/session.h"
#include "reference.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

using ref::MatD;

MatD toD(ConstMatrixMap m) {
    return m.cast<double>();
}

/// Rows of a [S, H*dh] matrix that belong to head h.
MatD headSlice(const MatD& x, Index h, Index dh) {
    return x.middleCols(h * dh, dh);
}

// ---------------------------------------------------------------------------------------------
// validate

/// The one message validate() gives for a session that has one problem.
std::string onlyProblem(const Session& s) {
    const auto problems = validate(s);
    EXPECT_EQ(problems.size(), 1u);
    for (const auto& p : problems)
        EXPECT_FALSE(p.empty());
    return problems.empty() ? std::string() : problems.front();
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(SessionValidate, DefaultsAreFine) {
    EXPECT_TRUE(validate(Session{}).empty());
}

TEST(SessionValidate, EachProblemIsASentence) {
    Session s;
    s.text = "   ";
    EXPECT_EQ(onlyProblem(s), "Type at least one token.");

    s = Session{};
    s.tokenizer = Tokenizer::Character;
    s.text = std::string(Session::kMaxTokens + 1, 'a');
    EXPECT_TRUE(contains(onlyProblem(s), "4097 tokens"));

    s = Session{};
    s.heads = 3;
    s.kvHeads = 1;
    EXPECT_TRUE(contains(onlyProblem(s), "divisible by the number of heads (3)"));

    s = Session{};
    s.heads = 4;
    s.kvHeads = 3;
    EXPECT_TRUE(contains(onlyProblem(s), "divisible by the number of KV heads (3)"));

    s = Session{};
    s.kvHeads = 0;
    EXPECT_TRUE(contains(onlyProblem(s), "KV heads must be at least 1"));

    s = Session{};
    s.mask.window = -2;
    EXPECT_TRUE(contains(onlyProblem(s), "window must be 0 or more"));

    s = Session{};
    s.mask.causalWindow = -5;
    EXPECT_TRUE(contains(onlyProblem(s), "causal window must be 0 or more"));

    s = Session{};
    s.mask.validLen = {-1};
    EXPECT_TRUE(contains(onlyProblem(s), "valid length must be 0 or more"));

    s = Session{};
    s.dModel = 12;
    s.heads = 4; // head dim 3
    s.kvHeads = 4;
    s.positional = Positional::RopeHalf;
    EXPECT_TRUE(contains(onlyProblem(s), "head dimension must be even"));

    s = Session{};
    s.qBlock = 0;
    EXPECT_TRUE(contains(onlyProblem(s), "query block size"));
    s = Session{};
    s.kvBlock = -1;
    EXPECT_TRUE(contains(onlyProblem(s), "key/value block size"));

    s = Session{};
    s.temperature = 0;
    EXPECT_TRUE(contains(onlyProblem(s), "temperature must be a number greater than 0"));
    s.temperature = -1;
    EXPECT_TRUE(contains(onlyProblem(s), "temperature"));

    s = Session{};
    s.mask.custom = BoolMatrix::Constant(6, 5, true); // default text has 6 tokens
    EXPECT_TRUE(contains(onlyProblem(s), "custom mask is 6 x 5"));

    s = Session{};
    s.kvPrefill = 7;
    EXPECT_TRUE(
        contains(onlyProblem(s), "prefill (7) cannot be more than the number of tokens (6)"));

    s = Session{};
    s.kvPrefill = 2;
    s.sourceText = "le chat";
    EXPECT_TRUE(contains(onlyProblem(s), "KV cache"));
}

TEST(SessionValidate, SeveralProblemsAreAllReported) {
    Session s;
    s.text = "";
    s.temperature = 0;
    s.qBlock = 0;
    EXPECT_EQ(validate(s).size(), 3u);
}

TEST(SessionValidate, BoundaryValuesAreAccepted) {
    Session s;
    s.mask.window = 0;
    s.mask.causalWindow = -1;
    s.mask.validLen = {0};
    s.kvPrefill = 6; // = S: prefill everything
    s.heads = 16;
    s.kvHeads = 1;
    EXPECT_TRUE(validate(s).empty());
}

TEST(SessionRun, ThrowsOnInvalidSession) {
    Session s;
    s.text = "";
    EXPECT_THROW(run(s), InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// run

TEST(SessionRun, IdentityOneHeadIsSoftmaxOfXXt) {
    Session s;
    s.identityProjections = true;
    s.dModel = 8;
    s.seed = 3;
    const Experiment ex = run(s);
    const auto tokens = tokenize(s.text, s.tokenizer);
    ASSERT_EQ(ex.queryTokens, tokens);
    ASSERT_EQ(ex.keyTokens, tokens);
    const MatD x = embedTokens(tokens, 8, 3).cast<double>();
    const ref::Result r = ref::attention(x, x, x, MaskSpec{}, 0, 1.0 / std::sqrt(8.0));
    EXPECT_MATRIX_NEAR(toD(ex.attention.weights.head(0, 0)), r.weights, 1e-5);
    EXPECT_MATRIX_NEAR(toD(ex.attention.scores.head(0, 0)), r.scores, 1e-4);
    EXPECT_MATRIX_NEAR(ex.output, r.output, 1e-4);
    EXPECT_NEAR(ex.scale, 1.0 / std::sqrt(8.0), 1e-12);
    // "the" appears twice: its embedding rows, hence its weight rows, are equal.
    EXPECT_MATRIX_NEAR(ex.xq.row(0), ex.xq.row(4), 0.0);
    ASSERT_EQ(ex.stats.size(), 1u);
    EXPECT_EQ(ex.stats[0].entropy.size(), 6u);
    EXPECT_GE(ex.milliseconds, 0.0);
}

TEST(SessionRun, IdentityWithCausalMaskSinusoidalAndTemperature) {
    Session s;
    s.identityProjections = true;
    s.dModel = 6;
    s.positional = Positional::Sinusoidal;
    s.mask.causal = true;
    s.temperature = 2.0;
    const Experiment ex = run(s);
    const auto tokens = tokenize(s.text, s.tokenizer);
    const MatD x = (embedTokens(tokens, 6, 0) + sinusoidalEncoding(6, 6)).cast<double>();
    const double scale = 1.0 / std::sqrt(6.0) / 2.0;
    const ref::Result r = ref::attention(x, x, x, s.mask, 0, scale);
    EXPECT_MATRIX_NEAR(toD(ex.attention.weights.head(0, 0)), r.weights, 1e-5);
    EXPECT_NEAR(ex.scale, scale, 1e-12);
    // With sinusoidal positions the two "the" rows differ.
    EXPECT_GT((ex.xq.row(0) - ex.xq.row(4)).norm(), 0.1f);
}

/// Multi-head reference with projections: head h reads kv head h / (H / Hkv), as PyTorch's
/// repeat_interleave; output = concat(heads) Wo.
void expectMatchesProjectedReference(const Session& s, double scale) {
    const Experiment ex = run(s);
    const auto qTokens = tokenize(s.text, s.tokenizer);
    const auto kTokens = s.sourceText.empty() ? qTokens : tokenize(s.sourceText, s.tokenizer);
    const Projections p = makeProjections(s.dModel, s.heads, s.kvHeads, s.seed);
    const MatD xq = embedTokens(qTokens, s.dModel, s.seed).cast<double>();
    const MatD xk = embedTokens(kTokens, s.dModel, s.seed).cast<double>();
    const MatD q = xq * p.wq.cast<double>();
    const MatD k = xk * p.wk.cast<double>();
    const MatD v = xk * p.wv.cast<double>();
    const Index dh = s.dModel / s.heads;
    const Index group = s.heads / s.kvHeads;
    MatD merged(static_cast<Index>(qTokens.size()), s.heads * dh);
    ASSERT_EQ(ex.headCount(), s.heads);
    ASSERT_EQ(ex.kvHeadCount(), s.kvHeads);
    for (Index h = 0; h < s.heads; ++h) {
        const Index g = h / group;
        const ref::Result r = ref::attention(headSlice(q, h, dh), headSlice(k, g, dh),
                                             headSlice(v, g, dh), s.mask, 0, scale);
        EXPECT_MATRIX_NEAR(toD(ex.attention.weights.head(0, h)), r.weights, 2e-5) << "head " << h;
        merged.middleCols(h * dh, dh) = r.output;
    }
    EXPECT_MATRIX_NEAR(ex.output, merged * p.wo.cast<double>(), 1e-4);
}

TEST(SessionRun, MultiHeadWithProjections) {
    Session s;
    s.dModel = 16;
    s.heads = 4;
    s.kvHeads = 4;
    s.seed = 11;
    s.mask.window = 2;
    expectMatchesProjectedReference(s, 1.0 / std::sqrt(4.0));
}

TEST(SessionRun, GqaWithAllKvHeadsEqualsMha) {
    // kvHeads == heads is plain multi-head attention: each head has its own K and V.
    Session s;
    s.dModel = 16;
    s.heads = 4;
    s.kvHeads = 4;
    s.seed = 5;
    s.mask.causal = true;
    expectMatchesProjectedReference(s, 0.5);
    // Grouped: 4 query heads over 2 and over 1 (MQA) kv heads, against repeat_interleave.
    s.kvHeads = 2;
    expectMatchesProjectedReference(s, 0.5);
    s.kvHeads = 1;
    expectMatchesProjectedReference(s, 0.5);
}

TEST(SessionRun, IdentityGqaKvHeadIsSliceOfFirstQueryHeadInGroup) {
    Session s;
    s.identityProjections = true;
    s.dModel = 12;
    s.heads = 6;
    s.kvHeads = 2; // groups of 3: kv head 0 = slice of head 0, kv head 1 = slice of head 3
    const Experiment ex = run(s);
    const MatD x = ex.xq.cast<double>();
    for (Index h = 0; h < 6; ++h) {
        const Index source = (h / 3) * 3;
        const ref::Result r =
            ref::attention(headSlice(x, h, 2), headSlice(x, source, 2), headSlice(x, source, 2),
                           MaskSpec{}, 0, 1.0 / std::sqrt(2.0));
        EXPECT_MATRIX_NEAR(toD(ex.attention.weights.head(0, h)), r.weights, 1e-5) << h;
    }
    EXPECT_FALSE(ex.warnings.empty());
}

TEST(SessionRun, CrossAttentionUsesSourceTokens) {
    Session s;
    s.text = "le chat";
    s.sourceText = "the cat sat on the mat";
    s.dModel = 8;
    s.heads = 2;
    s.kvHeads = 2;
    s.mask.validLen = {4};
    const Experiment ex = run(s);
    EXPECT_EQ(ex.sq(), 2);
    EXPECT_EQ(ex.sk(), 6);
    EXPECT_EQ(ex.keyTokens.size(), 6u);
    EXPECT_EQ(ex.output.rows(), 2);
    EXPECT_EQ(ex.output.cols(), 8);
    expectMatchesProjectedReference(s, 0.5);
}

TEST(SessionRun, RopeKeepsTheDiagonalScoreAndChangesTheRest) {
    // Identity projections, self-attention: q_i and k_i sit at the same position, so their
    // dot product is |x_i|^2 before and after rotation; off-diagonal scores move.
    for (Positional rope : {Positional::RopeInterleaved, Positional::RopeHalf}) {
        Session s;
        s.identityProjections = true;
        s.dModel = 8;
        s.positional = rope;
        const Experiment ex = run(s);
        const MatD x = ex.xq.cast<double>();
        const MatD plain = x * x.transpose() / std::sqrt(8.0);
        const MatD scores = toD(ex.attention.scores.head(0, 0));
        for (Index i = 0; i < 6; ++i)
            EXPECT_NEAR(scores(i, i), plain(i, i), 1e-4);
        EXPECT_GT((scores - plain).cwiseAbs().maxCoeff(), 1e-2);
        // Rows 0 and 4 are the same token at different positions: now they differ.
        EXPECT_GT((ex.qkv.q.head(0, 0).row(0) - ex.qkv.q.head(0, 0).row(4)).norm(), 1e-3f);
    }
}

TEST(SessionRun, VariantsAndKvCacheMatchSoftmaxReference) {
    Session s;
    s.identityProjections = true;
    s.dModel = 8;
    s.mask.causal = true;
    const auto tokens = tokenize(s.text, s.tokenizer);
    const MatD x = embedTokens(tokens, 8, 0).cast<double>();
    const ref::Result r = ref::attention(x, x, x, s.mask, 0);

    s.variant = Variant::Flash;
    s.qBlock = 2;
    s.kvBlock = 4;
    const Experiment flash = run(s);
    EXPECT_MATRIX_NEAR(toD(flash.attention.weights.head(0, 0)), r.weights, 1e-5);
    // #9: run() records no FlashTrace of every head (the stepper walks one head itself).
    EXPECT_FALSE(flash.attention.flashTrace.has_value());

    s.variant = Variant::Softmax;
    s.kvPrefill = 2;
    const Experiment cached = run(s);
    EXPECT_MATRIX_NEAR(toD(cached.attention.weights.head(0, 0)), r.weights, 1e-5);
    EXPECT_MATRIX_NEAR(cached.output, r.output, 1e-4);
    ASSERT_TRUE(cached.kvTrace.has_value());
    EXPECT_EQ(cached.kvTrace->prefill, 2);
    EXPECT_EQ(cached.kvTrace->steps.size(), 1u + (6 - 2)); // prefill, then one per row
    EXPECT_FALSE(flash.kvTrace.has_value());
}

TEST(SessionRun, KvCacheWithoutCausalMaskWarnsAndIsCausal) {
    Session s;
    s.identityProjections = true;
    s.kvPrefill = 0;
    const Experiment ex = run(s);
    const MatD w = toD(ex.attention.weights.head(0, 0));
    EXPECT_EQ(w.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff(), 0.0);
    EXPECT_FALSE(ex.warnings.empty());
    // Statistics use the causal mask too: row 0 sees one key.
    EXPECT_EQ(ex.stats[0].allowed[0], 1);
}

TEST(SessionRun, WarnsWhenScaleDoesNotApplyAndWhenRowsAreEmpty) {
    Session s;
    s.variant = Variant::Linear;
    EXPECT_TRUE(run(s).warnings.empty());
    s.temperature = 0.5;
    EXPECT_EQ(run(s).warnings.size(), 1u);

    Session empty;
    empty.mask.validLen = {0};
    const Experiment ex = run(empty);
    EXPECT_EQ(ex.warnings.size(), 1u);
    EXPECT_TRUE(ex.output.isZero(0));
    EXPECT_EQ(ex.stats[0].emptyRow[0], 1);
}

TEST(SessionRun, AllVariantsRowsSumToOne) {
    for (Variant v : {Variant::Softmax, Variant::Flash, Variant::Linear, Variant::Additive}) {
        Session s;
        s.variant = v;
        s.heads = 2;
        s.kvHeads = 1;
        s.mask.causal = true;
        const Experiment ex = run(s);
        for (Index h = 0; h < 2; ++h) {
            const MatD w = toD(ex.attention.weights.head(0, h));
            for (Index i = 0; i < w.rows(); ++i)
                EXPECT_NEAR(w.row(i).sum(), 1.0, 1e-5) << variantName(v) << " row " << i;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

Session nonDefaultSession() {
    Session s;
    s.title = "GQA \"demo\" [1, 2]\n — 注意力";
    s.text = "a b c d";
    s.sourceText = "w x y z";
    s.tokenizer = Tokenizer::Character;
    s.dModel = 24;
    s.heads = 6;
    s.kvHeads = 2;
    s.positional = Positional::RopeHalf;
    s.ropeBase = 500.25;
    s.seed = 0xfedcba9876543210ull; // above 2^63: must survive as an unsigned integer
    s.identityProjections = true;
    s.variant = Variant::Additive;
    s.mask.causal = true;
    s.mask.window = 3;
    s.mask.causalWindow = 1;
    s.mask.validLen = {3};
    s.mask.custom = BoolMatrix::Constant(4, 4, true);
    (*s.mask.custom)(0, 3) = false;
    (*s.mask.custom)(2, 1) = false;
    s.scale = 0.1;
    s.temperature = 0.7;
    s.qBlock = 3;
    s.kvBlock = 5;
    s.kvPrefill = 2;
    s.viewState.view = "flash";
    s.viewState.colormap = "magma";
    s.viewState.colorScale = "log";
    s.viewState.theme = "dark";
    s.viewState.show = "scores";
    s.viewState.head = 3;
    s.viewState.query = 2;
    s.viewState.cellValues = false;
    s.viewState.flashStep = 7;
    s.viewState.kvStep = 1;
    return s;
}

void expectSameSession(const Session& a, const Session& b) {
    EXPECT_EQ(a.title, b.title);
    EXPECT_EQ(a.text, b.text);
    EXPECT_EQ(a.sourceText, b.sourceText);
    EXPECT_EQ(a.tokenizer, b.tokenizer);
    EXPECT_EQ(a.dModel, b.dModel);
    EXPECT_EQ(a.heads, b.heads);
    EXPECT_EQ(a.kvHeads, b.kvHeads);
    EXPECT_EQ(a.positional, b.positional);
    EXPECT_EQ(a.ropeBase, b.ropeBase);
    EXPECT_EQ(a.seed, b.seed);
    EXPECT_EQ(a.identityProjections, b.identityProjections);
    EXPECT_EQ(a.variant, b.variant);
    EXPECT_EQ(a.mask.causal, b.mask.causal);
    EXPECT_EQ(a.mask.window, b.mask.window);
    EXPECT_EQ(a.mask.causalWindow, b.mask.causalWindow);
    EXPECT_EQ(a.mask.validLen, b.mask.validLen);
    ASSERT_EQ(a.mask.custom.has_value(), b.mask.custom.has_value());
    if (a.mask.custom) {
        EXPECT_TRUE(*a.mask.custom == *b.mask.custom);
    }
    EXPECT_EQ(a.scale, b.scale);
    EXPECT_EQ(a.temperature, b.temperature);
    EXPECT_EQ(a.qBlock, b.qBlock);
    EXPECT_EQ(a.kvBlock, b.kvBlock);
    EXPECT_EQ(a.kvPrefill, b.kvPrefill);
    EXPECT_EQ(a.viewState.view, b.viewState.view);
    EXPECT_EQ(a.viewState.colormap, b.viewState.colormap);
    EXPECT_EQ(a.viewState.colorScale, b.viewState.colorScale);
    EXPECT_EQ(a.viewState.theme, b.viewState.theme);
    EXPECT_EQ(a.viewState.show, b.viewState.show);
    EXPECT_EQ(a.viewState.head, b.viewState.head);
    EXPECT_EQ(a.viewState.query, b.viewState.query);
    EXPECT_EQ(a.viewState.cellValues, b.viewState.cellValues);
    EXPECT_EQ(a.viewState.flashStep, b.viewState.flashStep);
    EXPECT_EQ(a.viewState.kvStep, b.viewState.kvStep);
    EXPECT_EQ(a.viewState.colorLow, b.viewState.colorLow);
    EXPECT_EQ(a.viewState.colorHigh, b.viewState.colorHigh);
}

TEST(SessionJson, RoundTripsANonDefaultSession) {
    const Session s = nonDefaultSession();
    const std::string json = sessionToJson(s);
    const auto back = sessionFromJson(json);
    ASSERT_TRUE(back.ok()) << back.error();
    expectSameSession(s, *back);
    // And the defaults, with a null scale and custom mask.
    const auto defaults = sessionFromJson(sessionToJson(Session{}));
    ASSERT_TRUE(defaults.ok()) << defaults.error();
    expectSameSession(Session{}, *defaults);
}

TEST(SessionJson, DocumentShape) {
    const std::string text = sessionToJson(nonDefaultSession());
    const auto doc = nlohmann::json::parse(text);
    EXPECT_TRUE(contains(text, "[1, 1, 1, 0]")) << text; // a mask row on one line
    EXPECT_EQ(doc["attnlab_session"], Session::kVersion);
    EXPECT_EQ(doc["tokens"]["tokenizer"], "character");
    EXPECT_EQ(doc["model"]["positional"], "rope-half");
    EXPECT_EQ(doc["attention"]["variant"], "additive");
    EXPECT_EQ(doc["mask"]["custom"][0], nlohmann::json({1, 1, 1, 0}));
    EXPECT_EQ(doc["mask"]["valid_len"], nlohmann::json({3}));
    const auto plain = nlohmann::json::parse(sessionToJson(Session{}));
    EXPECT_TRUE(plain["attention"]["scale"].is_null());
    EXPECT_TRUE(plain["mask"]["custom"].is_null());
}

// view.color_range: the chosen range of the "range" colour scale, written only on that scale,
// read back exactly, and the same bytes after a second save.
TEST(SessionJson, ChosenColourRangeRoundTripsToTheSameBytes) {
    Session s;
    s.viewState.colorScale = "range";
    s.viewState.colorLow = 0.00025;
    s.viewState.colorHigh = 0.01;
    const std::string json = sessionToJson(s);
    EXPECT_EQ(nlohmann::json::parse(json)["view"]["color_range"],
              nlohmann::json::array({0.00025, 0.01}))
        << json;
    EXPECT_TRUE(contains(json, R"("color_range": [0.00025, 0.01])")) << json; // on one line
    const auto back = sessionFromJson(json);
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(back->viewState.colorScale, "range");
    EXPECT_EQ(back->viewState.colorLow, 0.00025);
    EXPECT_EQ(back->viewState.colorHigh, 0.01);
    EXPECT_EQ(sessionToJson(*back), json);

    // Another scale keeps no range in the file, whatever the struct holds.
    s.viewState.colorScale = "log";
    EXPECT_FALSE(nlohmann::json::parse(sessionToJson(s))["view"].contains("color_range"));
    EXPECT_FALSE(nlohmann::json::parse(sessionToJson(Session{}))["view"].contains("color_range"));
}

TEST(SessionJson, ChosenColourRangeIsRefusedUnlessTwoNumbersLowBelowHigh) {
    auto refused = [](const std::string& view) {
        const auto s = sessionFromJson(R"({"view": {)" + view + "}}");
        EXPECT_FALSE(s.ok()) << view;
        return s.ok() ? std::string() : s.error();
    };
    const std::string scale = R"("color_scale": "range", )";
    EXPECT_EQ(refused(scale + R"("color_range": 0.01)"),
              "view.color_range: expected a list of two numbers [low, high], got a number");
    EXPECT_EQ(refused(scale + R"("color_range": [0.01])"),
              "view.color_range: expected two numbers [low, high], got a list of 1");
    EXPECT_EQ(refused(scale + R"("color_range": [0, 0.01, 1])"),
              "view.color_range: expected two numbers [low, high], got a list of 3");
    EXPECT_EQ(refused(scale + R"("color_range": [0, "0.01"])"),
              "view.color_range: expected two numbers [low, high], got a string in the list");
    EXPECT_EQ(refused(scale + R"("color_range": [0.01, 0.01])"),
              "view.color_range: the low end 0.01 must be less than the high end 0.01");
    EXPECT_EQ(refused(scale + R"("color_range": [0.5, 0.1])"),
              "view.color_range: the low end 0.5 must be less than the high end 0.1");
    // A number beyond a double is refused while parsing, naming the key.
    EXPECT_TRUE(contains(refused(scale + R"("color_range": [0, 1e400])"), "view.color_range"));
    EXPECT_EQ(refused(R"("color_scale": "range")"),
              "view.color_scale: \"range\" needs the range as view.color_range: [low, high]");
    // The same rule for the window's dialog and the command line.
    EXPECT_FALSE(colorRangeProblem(0, 0.01).has_value());
    EXPECT_TRUE(colorRangeProblem(0, std::nan("")).has_value());
    EXPECT_TRUE(colorRangeProblem(-INFINITY, 1).has_value());
}

TEST(SessionJson, MissingKeysKeepDefaults) {
    const auto s = sessionFromJson(
        R"({"attnlab_session": 1, "model": {"heads": 2}, "mask": {"causal": true}})");
    ASSERT_TRUE(s.ok()) << s.error();
    EXPECT_EQ(s->heads, 2);
    EXPECT_TRUE(s->mask.causal);
    EXPECT_EQ(s->dModel, Session{}.dModel);
    EXPECT_EQ(s->text, Session{}.text);
    EXPECT_FALSE(s->scale.has_value());
}

// A key this AttnLab does not read could change the computation: it is refused, never
// skipped. `{"text": ...}` at the top level used to open the default text without a word.
TEST(SessionJson, UnknownKeysAreRefusedAndSayWhereAKeyBelongs) {
    auto error = [](const std::string& json) {
        const auto s = sessionFromJson(json);
        return s.ok() ? std::string("(accepted)") : s.error();
    };
    const std::string knob = error(R"({"model": {"heads": 2, "future_knob": [1, 2]}})");
    EXPECT_EQ(knob.rfind("model.future_knob: unknown key", 0), 0u) << knob;
    EXPECT_NE(knob.find("d_model"), std::string::npos) << knob; // what the section holds
    const std::string plugins = error(R"({"plugins": {"x": 1}})");
    EXPECT_EQ(plugins.rfind("plugins: unknown key", 0), 0u) << plugins;
    const std::string text = error(R"({"text": "the cat"})");
    EXPECT_EQ(text.rfind("text: unknown key (it belongs in tokens.text", 0), 0u) << text;
    const std::string heads = error(R"({"view": {"heads": 2}})");
    EXPECT_NE(heads.find("it belongs in model.heads"), std::string::npos) << heads;
}

/// A session with every key of docs/session-format.md set, none to its default, written here by
/// hand: the reader must give exactly these values, and the writer must write exactly this
/// document (the same keys, no more, and the same values) for the session they describe.
const char* const kEveryKeySession = R"({
  "attnlab_session": 2,
  "title": "every key",
  "tokens": {"text": "a b c", "source": "x y", "tokenizer": "character"},
  "model": {"d_model": 24, "heads": 6, "kv_heads": 2, "positional": "rope-half",
            "rope_base": 500.25, "seed": 18364758544493064720,
            "identity_projections": true},
  "attention": {"variant": "additive", "scale": 0.1, "temperature": 0.7, "q_block": 3,
                "kv_block": 5, "kv_prefill": 2, "mode": "train", "dropout": 0.25,
                "dropout_seed": 9},
  "mask": {"causal": true, "window": 3, "causal_window": 1, "valid_len": [3],
           "custom": [[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 1, 1]]},
  "view": {"view": "flash", "colormap": "magma", "theme": "dark", "show": "scores",
           "head": 3, "query": 2, "cell_values": false, "color_scale": "range",
           "color_range": [0.125, 0.5], "flash_step": 7, "kv_step": 1}
})";

// Every key the writer writes reads back, with the value written by hand above: checked field
// by field against that document, not against the writer's own output.
TEST(SessionJson, AHandWrittenSessionWithEveryKeyReadsAndWritesAsWritten) {
    const auto s = sessionFromJson(kEveryKeySession);
    ASSERT_TRUE(s.ok()) << s.error();
    EXPECT_EQ(s->title, "every key");
    EXPECT_EQ(s->text, "a b c");
    EXPECT_EQ(s->sourceText, "x y");
    EXPECT_EQ(s->tokenizer, Tokenizer::Character);
    EXPECT_EQ(s->dModel, 24);
    EXPECT_EQ(s->heads, 6);
    EXPECT_EQ(s->kvHeads, 2);
    EXPECT_EQ(s->positional, Positional::RopeHalf);
    EXPECT_EQ(s->ropeBase, 500.25);
    EXPECT_EQ(s->seed, 0xfedcba9876543210ull); // 18364758544493064720, above 2^63
    EXPECT_TRUE(s->identityProjections);
    EXPECT_EQ(s->variant, Variant::Additive);
    EXPECT_EQ(s->scale, std::optional<double>(0.1));
    EXPECT_EQ(s->temperature, 0.7);
    EXPECT_EQ(s->qBlock, 3);
    EXPECT_EQ(s->kvBlock, 5);
    EXPECT_EQ(s->kvPrefill, 2);
    EXPECT_TRUE(s->train);
    EXPECT_EQ(s->dropoutRate, 0.25);
    EXPECT_EQ(s->dropoutSeed, 9u);
    EXPECT_TRUE(s->mask.causal);
    EXPECT_EQ(s->mask.window, 3);
    EXPECT_EQ(s->mask.causalWindow, 1);
    EXPECT_EQ(s->mask.validLen, (std::vector<Index>{3}));
    ASSERT_TRUE(s->mask.custom.has_value());
    ASSERT_EQ(s->mask.custom->rows(), 3);
    ASSERT_EQ(s->mask.custom->cols(), 4);
    const int allowed[3][4] = {{1, 1, 1, 0}, {1, 1, 1, 1}, {1, 0, 1, 1}};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j)
            EXPECT_EQ((*s->mask.custom)(i, j), allowed[i][j] == 1) << i << "," << j;
    EXPECT_EQ(s->viewState.view, "flash");
    EXPECT_EQ(s->viewState.colormap, "magma");
    EXPECT_EQ(s->viewState.theme, "dark");
    EXPECT_EQ(s->viewState.show, "scores");
    EXPECT_EQ(s->viewState.head, 3);
    EXPECT_EQ(s->viewState.query, 2);
    EXPECT_FALSE(s->viewState.cellValues);
    EXPECT_EQ(s->viewState.colorScale, "range");
    EXPECT_EQ(s->viewState.colorLow, 0.125);
    EXPECT_EQ(s->viewState.colorHigh, 0.5);
    EXPECT_EQ(s->viewState.flashStep, 7);
    EXPECT_EQ(s->viewState.kvStep, 1);
    // The writer writes the same document: every key with its value, and nothing else.
    EXPECT_EQ(nlohmann::json::parse(sessionToJson(*s)), nlohmann::json::parse(kEveryKeySession))
        << sessionToJson(*s);
}

/// The defaults docs/session-format.md lists, written out here.
void expectDocumentedDefaults(const Session& s) {
    EXPECT_EQ(s.title, "");
    EXPECT_EQ(s.text, "the cat sat on the mat");
    EXPECT_EQ(s.sourceText, "");
    EXPECT_EQ(s.tokenizer, Tokenizer::Whitespace);
    EXPECT_EQ(s.dModel, 16);
    EXPECT_EQ(s.heads, 1);
    EXPECT_EQ(s.kvHeads, 1);
    EXPECT_EQ(s.positional, Positional::None);
    EXPECT_EQ(s.ropeBase, 10000.0);
    EXPECT_EQ(s.seed, 0u);
    EXPECT_FALSE(s.identityProjections);
    EXPECT_EQ(s.variant, Variant::Softmax);
    EXPECT_FALSE(s.scale.has_value());
    EXPECT_EQ(s.temperature, 1.0);
    EXPECT_EQ(s.qBlock, 2);
    EXPECT_EQ(s.kvBlock, 2);
    EXPECT_EQ(s.kvPrefill, -1);
    EXPECT_FALSE(s.train);
    EXPECT_EQ(s.dropoutRate, 0.1);
    EXPECT_EQ(s.dropoutSeed, 0u);
    EXPECT_FALSE(s.mask.causal);
    EXPECT_EQ(s.mask.window, -1);
    EXPECT_EQ(s.mask.causalWindow, -1);
    EXPECT_TRUE(s.mask.validLen.empty());
    EXPECT_FALSE(s.mask.custom.has_value());
    EXPECT_EQ(s.viewState.view, "heatmap");
    EXPECT_EQ(s.viewState.colormap, "viridis");
    EXPECT_EQ(s.viewState.theme, "light");
    EXPECT_EQ(s.viewState.show, "weights");
    EXPECT_EQ(s.viewState.head, 0);
    EXPECT_EQ(s.viewState.query, -1);
    EXPECT_TRUE(s.viewState.cellValues);
    EXPECT_EQ(s.viewState.colorScale, "fixed");
    EXPECT_EQ(s.viewState.flashStep, 0);
    EXPECT_EQ(s.viewState.kvStep, 0);
}

// README: every key is optional, the format version too; {} is the default session, with the
// defaults the format's documentation lists.
TEST(SessionJson, EveryKeyIsOptionalTheVersionToo) {
    const auto empty = sessionFromJson("{}");
    ASSERT_TRUE(empty.ok()) << empty.error();
    expectDocumentedDefaults(*empty);
    expectDocumentedDefaults(Session{});
    const auto text = sessionFromJson(R"({"tokens": {"text": "a b"}})");
    ASSERT_TRUE(text.ok()) << text.error();
    EXPECT_EQ(text->text, "a b");
}

TEST(SessionJson, ErrorsNameTheKey) {
    auto expectError = [](const std::string& json, const std::string& part) {
        const auto s = sessionFromJson(json);
        ASSERT_FALSE(s.ok()) << json;
        EXPECT_TRUE(contains(s.error(), part)) << s.error();
    };
    expectError(R"({"attnlab_session": 3})", "attnlab_session"); // newer than kVersion = 2
    expectError(R"({"attnlab_session": 3})", "newer");
    expectError(R"({"format": 1, "steps": []})", "a lesson, not a session");
    expectError(R"({"attnlab_session": "one"})", "attnlab_session");
    expectError(R"({"attnlab_session": 1, "model": {"heads": "two"}})", "model.heads");
    expectError(R"({"attnlab_session": 1, "model": {"heads": 1.5}})", "model.heads");
    expectError(R"({"attnlab_session": 1, "model": []})", "model");
    expectError(R"({"attnlab_session": 1, "mask": {"causal": 1}})", "mask.causal");
    expectError(R"({"attnlab_session": 1, "attention": {"variant": "fast"}})", "attention.variant");
    expectError(R"({"attnlab_session": 1, "attention": {"scale": "big"}})", "attention.scale");
    expectError(R"({"attnlab_session": 1, "mask": {"custom": [[1, 0], [1]]}})", "mask.custom");
    expectError(R"({"attnlab_session": 1, "mask": {"custom": [[1, 2]]}})", "mask.custom");
    expectError(R"({"attnlab_session": 1, "mask": {"valid_len": ["3"]}})", "mask.valid_len");
    expectError(R"({"attnlab_session": 1, "model": {"seed": -1}})", "model.seed");
    expectError(R"({"attnlab_session": 1, "title": 5})", "title");
    expectError(R"({"attnlab_session": 1, )", "JSON");
    expectError(R"([1, 2])", "object");
    expectError(R"({"view": {"color_scale": "loud"}})", "view.color_scale");
    expectError("", "the file is empty");
    expectError(" \n", "the file is empty");
}

TEST(SessionJson, NumberBeyondDoubleRangeIsRefusedNamingTheKey) {
    // 1e400 overflows a double: nlohmann throws out_of_range while parsing, which used to
    // escape sessionFromJson (the window aborted) or print nlohmann's own text.
    const auto s =
        sessionFromJson(R"({"attnlab_session": 1, "attention": {"scale": 1e400, "q_block": 2}})");
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error(), "attention.scale")) << s.error();
    EXPECT_TRUE(contains(s.error(), "1e400")) << s.error();
    EXPECT_FALSE(contains(s.error(), "json.exception")) << s.error();

    const auto nested = sessionFromJson(
        R"({"attnlab_session": 1, "model": {"heads": 1}, "mask": {"valid_len": [-1e999]}})");
    ASSERT_FALSE(nested.ok());
    EXPECT_TRUE(contains(nested.error(), "mask.valid_len")) << nested.error();
}

TEST(SessionJson, IntegerBeyond64BitsIsRefusedNamingTheKey) {
    for (const char* number :
         {"99999999999999999999999", "9223372036854775808", "-99999999999999999999999"}) {
        const auto s = sessionFromJson(
            std::string(R"({"attnlab_session": 1, "mask": {"window": )") + number + "}}");
        ASSERT_FALSE(s.ok()) << number;
        EXPECT_TRUE(contains(s.error(), "mask.window")) << s.error();
        EXPECT_TRUE(contains(s.error(), "too large")) << s.error();
    }
}

TEST(SessionJson, ScaleAndTemperatureOutsideFloatRangeAreRefusedNamingTheKey) {
    auto expectRange = [](const std::string& attention, const std::string& key) {
        const auto s =
            sessionFromJson(R"({"attnlab_session": 1, "attention": {)" + attention + "}}");
        ASSERT_FALSE(s.ok()) << attention;
        EXPECT_TRUE(contains(s.error(), key)) << s.error();
        EXPECT_TRUE(contains(s.error(), "out of range")) << s.error();
    };
    expectRange(R"("scale": 1e308)", "attention.scale");
    expectRange(R"("scale": -1e300)", "attention.scale");
    expectRange(R"("scale": 1e-300)", "attention.scale");
    expectRange(R"("temperature": 5e-324)", "attention.temperature");
    expectRange(R"("temperature": 1e300)", "attention.temperature");
    // The ends of the ranges and a zero scale are fine.
    const auto edge = sessionFromJson(
        R"({"attnlab_session": 1, "attention": {"scale": 1e6, "temperature": 1e-6}})");
    ASSERT_TRUE(edge.ok()) << edge.error();
    EXPECT_TRUE(validate(*edge).empty());
    const auto zero = sessionFromJson(R"({"attnlab_session": 1, "attention": {"scale": 0}})");
    ASSERT_TRUE(zero.ok()) << zero.error();
}

TEST(SessionValidate, ScaleOverTemperatureStaysAFiniteFloat) {
    Session s;
    s.scale = 1e308;
    EXPECT_TRUE(contains(onlyProblem(s), "scale must be 0 or between")) << onlyProblem(s);
    s = Session{};
    s.temperature = 5e-324;
    EXPECT_TRUE(contains(onlyProblem(s), "temperature must be between")) << onlyProblem(s);
    // At the extremes that validate accepts, run() gives finite weights whose rows sum to 1.
    s = Session{};
    s.scale = Session::kMaxScale;
    s.temperature = Session::kMinTemperature;
    ASSERT_TRUE(validate(s).empty());
    const Experiment ex = run(s);
    const auto weights = std::as_const(ex.attention.weights).head(0, 0);
    for (Index i = 0; i < weights.rows(); ++i) {
        EXPECT_TRUE(weights.row(i).allFinite()) << "row " << i;
        EXPECT_NEAR(weights.row(i).cast<double>().sum(), 1.0, 1e-5) << "row " << i;
    }
}

TEST(SessionValidate, HugeTextIsRefusedByItsLengthBeforeTokenizing) {
    Session s;
    s.tokenizer = Tokenizer::Character;
    s.text = std::string(Session::kMaxTextBytes + 1, 'a');
    const std::string problem = onlyProblem(s);
    // The length message, not a token count: the text was not tokenized.
    EXPECT_TRUE(contains(problem, "bytes long")) << problem;
    EXPECT_FALSE(contains(problem, "tokens")) << problem;
    s = Session{};
    s.sourceText = std::string(Session::kMaxTextBytes + 1, 'b');
    EXPECT_TRUE(contains(onlyProblem(s), "source text")) << onlyProblem(s);
}

TEST(SessionJson, HugeTextIsRefusedNamingTheKey) {
    const std::string text(Session::kMaxTextBytes + 1, 'x');
    const auto s = sessionFromJson(R"({"attnlab_session": 1, "tokens": {"tokenizer": "character",
        "text": ")" + text + R"("}})");
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error(), "tokens.text")) << s.error();
    EXPECT_TRUE(contains(s.error(), "bytes long")) << s.error();
}

TEST(SessionJson, FileLargerThanTheLimitIsRefusedBeforeReading) {
    test::TempDir dir("attnlab_session");
    const std::string path = dir.file("huge.json");
    // A sparse file: its size is claimed by the file system, no bytes are written.
    { std::ofstream(path) << "{"; }
    std::filesystem::resize_file(path, Session::kMaxFileBytes + 1);
    const auto s = loadSession(path);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error(), "huge.json")) << s.error();
    EXPECT_TRUE(contains(s.error(), "at most")) << s.error();
}

TEST(SessionJson, WholeNumbersWrittenAsFloatsAreAccepted) {
    const auto s = sessionFromJson(R"({"attnlab_session": 1.0, "model": {"d_model": 32.0}})");
    ASSERT_TRUE(s.ok()) << s.error();
    EXPECT_EQ(s->dModel, 32);
}

TEST(SessionJson, SaveAndLoadThroughAFile) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("attnlab_session_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "lesson.json").string();
    const Session s = nonDefaultSession();
    const Status saved = saveSession(path, s);
    ASSERT_FALSE(saved.has_value()) << saved->message;
    const auto loaded = loadSession(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    expectSameSession(s, *loaded);

    { std::ofstream(dir / "bad.json") << R"({"attnlab_session": 1, "model": {"heads": "x"}})"; }
    const auto bad = loadSession((dir / "bad.json").string());
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(contains(bad.error(), "bad.json")) << bad.error();
    EXPECT_TRUE(contains(bad.error(), "model.heads")) << bad.error();

    const auto missing = loadSession((dir / "missing.json").string());
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(contains(missing.error(), "missing.json")) << missing.error();
    std::filesystem::remove_all(dir);
}

TEST(SessionNames, PositionalRoundTrip) {
    for (Positional p : {Positional::None, Positional::Sinusoidal, Positional::RopeInterleaved,
                         Positional::RopeHalf})
        EXPECT_EQ(parsePositional(positionalName(p)), p);
    EXPECT_FALSE(parsePositional("alibi"));
}

} // namespace
} // namespace attnlab

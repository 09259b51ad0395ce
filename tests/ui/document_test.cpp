// Document: edits reach the experiment, undo restores, bad input keeps the last good result,
// large work runs on the worker, sessions round-trip.
#include "ui/state/document.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <cmath>

namespace attnlab::ui {
namespace {

std::vector<std::string> tokensOf(const Document& document) {
    return document.experiment() ? document.experiment()->queryTokens : std::vector<std::string>{};
}

TEST(Document, DefaultSessionShowsTheCatSatOnTheMat) {
    Document document;
    document.flush();
    ASSERT_NE(document.experiment(), nullptr);
    EXPECT_EQ(tokensOf(document),
              (std::vector<std::string>{"the", "cat", "sat", "on", "the", "mat"}));
    // Property: every softmax row sums to one.
    const Tensor4& weights = document.experiment()->attention.weights;
    for (Index i = 0; i < weights.seq; ++i) {
        double sum = 0;
        for (Index j = 0; j < weights.dim; ++j)
            sum += weights(0, 0, i, j);
        EXPECT_NEAR(sum, 1.0, 1e-5);
    }
}

TEST(Document, EditReachesTheExperimentAndUndoRestoresIt) {
    Document document;
    document.flush();
    document.modify([](Session& s) { s.text = "a b c"; }, QStringLiteral("edit"));
    document.flush();
    EXPECT_EQ(tokensOf(document), (std::vector<std::string>{"a", "b", "c"}));
    document.modify([](Session& s) { s.mask.causal = true; }, QStringLiteral("mask"));
    document.flush();
    EXPECT_EQ(document.experiment()->attention.weights(0, 0, 0, 2), 0.0f); // causal: j > i is 0
    document.undoStack()->undo();
    document.flush();
    EXPECT_FALSE(document.session().mask.causal);
    EXPECT_GT(document.experiment()->attention.weights(0, 0, 0, 2), 0.0f);
    document.undoStack()->undo();
    document.flush();
    EXPECT_EQ(document.session().text, "the cat sat on the mat");
    EXPECT_EQ(tokensOf(document).size(), 6u);
    document.undoStack()->redo();
    document.flush();
    EXPECT_EQ(tokensOf(document).size(), 3u);
}

TEST(Document, TypingInOneFieldIsOneUndoStep) {
    Document document;
    // Three keystrokes' worth of text, as the inputs panel sends them.
    for (const std::string typed : {"alpha", "alpha beta", "alpha beta gamma"})
        document.modify([&typed](Session& s) { s.text = typed; }, QStringLiteral("type"),
                        EditMerge::Text);
    EXPECT_EQ(document.undoStack()->count(), 1);
    document.undoStack()->undo();
    EXPECT_EQ(document.session().text, Session{}.text);
}

struct BadInput {
    const char* name;
    std::function<void(Session&)> change;
};

class DocumentBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(DocumentBadInput, ShowsAMessageAndKeepsTheLastGoodResult) {
    Document document;
    document.flush();
    ASSERT_NE(document.experiment(), nullptr);
    const std::vector<std::string> good = tokensOf(document);
    const Tensor4 goodWeights = document.experiment()->attention.weights;
    QSignalSpy errors(&document, &Document::errorOccurred);
    document.modify(GetParam().change, QStringLiteral("bad"));
    document.flush();
    ASSERT_GE(errors.count(), 1) << GetParam().name;
    EXPECT_FALSE(errors.last().at(0).toString().isEmpty());
    EXPECT_FALSE(document.problems().isEmpty());
    ASSERT_NE(document.experiment(), nullptr);
    EXPECT_EQ(tokensOf(document), good);
    EXPECT_EQ(document.experiment()->attention.weights.data, goodWeights.data);
    // Undo brings back a valid session and clears the message.
    document.undoStack()->undo();
    document.flush();
    EXPECT_TRUE(document.problems().isEmpty());
}

std::string manyTokens(int count) {
    std::string text;
    for (int i = 0; i < count; ++i) {
        text += 't';
        text += std::to_string(i % 97);
        text += ' ';
    }
    return text;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DocumentBadInput,
    ::testing::Values(BadInput{"empty_text", [](Session& s) { s.text = "   "; }},
                      BadInput{"heads_not_dividing_d_model",
                               [](Session& s) {
                                   s.dModel = 16;
                                   s.heads = 3;
                                   s.kvHeads = 3;
                               }},
                      BadInput{"kv_heads_not_dividing_heads",
                               [](Session& s) {
                                   s.heads = 4;
                                   s.kvHeads = 3;
                               }},
                      BadInput{"negative_window", [](Session& s) { s.mask.window = -3; }},
                      BadInput{
                          "too_many_tokens",
                          [](Session& s) { s.text = manyTokens(int(Session::kMaxTokens) + 1); }}),
    [](const ::testing::TestParamInfo<BadInput>& caseInfo) {
        return std::string(caseInfo.param.name);
    });

TEST(Document, LargeWorkRunsOnTheWorkerAndReportsBusy) {
    Document document;
    document.flush();
    document.setWorkerThreshold(0); // everything counts as large
    QSignalSpy changes(&document, &Document::changed);
    document.modify([](Session& s) { s.text = "one two three four five six seven eight"; },
                    QStringLiteral("edit"));
    ASSERT_TRUE(document.waitForIdle(60000));
    int busyChanges = 0;
    for (const QList<QVariant>& change : changes)
        if (change.at(0).value<Document::What>() == Document::What::Busy) ++busyChanges;
    EXPECT_EQ(busyChanges, 2); // on, then off
    EXPECT_FALSE(document.busy());
    EXPECT_EQ(tokensOf(document).size(), 8u);
}

TEST(Document, BurstOfEditsEndsOnTheLastOne) {
    Document document;
    document.setWorkerThreshold(0);
    for (int n = 1; n <= 12; ++n)
        document.modify([n](Session& s) { s.text = manyTokens(n); }, QStringLiteral("type"),
                        EditMerge::Text);
    ASSERT_TRUE(document.waitForIdle(60000));
    EXPECT_EQ(tokensOf(document).size(), 12u);
}

TEST(Document, SaveThenOpenRoundTrips) {
    QTemporaryDir directory;
    ASSERT_TRUE(directory.isValid());
    const QString path = directory.filePath(QStringLiteral("lesson.json"));
    Document document;
    document.modify(
        [](Session& s) {
            s.title = "round trip";
            s.text = "le chat est assis";
            s.sourceText = "the cat sat";
            s.dModel = 24;
            s.heads = 4;
            s.kvHeads = 2;
            s.positional = Positional::RopeInterleaved;
            s.seed = 42;
            s.variant = Variant::Flash;
            s.mask.validLen = {2};
            s.scale = 0.25;
            s.temperature = 0.5;
            s.viewState.colormap = "magma";
            s.viewState.theme = "projector";
        },
        QStringLiteral("set up"));
    ASSERT_TRUE(document.save(path));
    EXPECT_FALSE(document.isModified());
    const std::string saved = sessionToJson(document.session());
    Document reopened;
    ASSERT_TRUE(reopened.open(path));
    EXPECT_EQ(sessionToJson(reopened.session()), saved);
    EXPECT_EQ(reopened.session().kvHeads, 2);
    // The theme is the application's (Document::setTheme), not the file's (issue 12).
    EXPECT_EQ(reopened.session().viewState.theme, reopened.theme().toStdString());
    EXPECT_EQ(reopened.filePath(), path);
    EXPECT_EQ(reopened.undoStack()->count(), 0);
}

TEST(Document, OpeningAMissingFileIsAMessageNotACrash) {
    Document document;
    QSignalSpy errors(&document, &Document::errorOccurred);
    EXPECT_FALSE(document.open(QStringLiteral("/nonexistent/lesson.json")));
    EXPECT_GE(errors.count(), 1);
    EXPECT_EQ(document.session().text, Session{}.text);
}

/// Session files that used to abort the window (an exception escaping Document::open) or
/// load figures of NaN: each is one message naming the file and the key, and the session
/// on screen stays as it was.
struct UnreadableSession {
    const char* name;
    std::string json;
    const char* key;
};

class DocumentUnreadableSession : public ::testing::TestWithParam<UnreadableSession> {};

TEST_P(DocumentUnreadableSession, IsOneMessageAndLeavesTheSessionUnchanged) {
    QTemporaryDir directory;
    ASSERT_TRUE(directory.isValid());
    const QString path = directory.filePath(QStringLiteral("stranger.json"));
    {
        QFile file(path);
        ASSERT_TRUE(file.open(QIODevice::WriteOnly));
        const std::string& json = GetParam().json;
        file.write(json.data(), static_cast<qint64>(json.size()));
    }
    Document document;
    document.modify([](Session& s) { s.text = "what I was working on"; }, QStringLiteral("type"));
    document.flush();
    const std::string before = sessionToJson(document.session());
    QSignalSpy errors(&document, &Document::errorOccurred);
    EXPECT_FALSE(document.open(path));
    ASSERT_EQ(errors.count(), 1);
    const QString message = errors.front().front().toString();
    EXPECT_TRUE(message.contains(QStringLiteral("stranger.json"))) << message.toStdString();
    EXPECT_TRUE(message.contains(QLatin1String(GetParam().key))) << message.toStdString();
    EXPECT_FALSE(message.contains(QStringLiteral("json.exception"))) << message.toStdString();
    EXPECT_EQ(sessionToJson(document.session()), before);
    EXPECT_TRUE(document.isModified());
}

std::string sessionWith(const std::string& section, const std::string& entry) {
    return R"({"attnlab_session": 1, ")" + section + R"(": {)" + entry + "}}";
}

INSTANTIATE_TEST_SUITE_P(
    Reproducers, DocumentUnreadableSession,
    ::testing::Values(
        UnreadableSession{"NumberBeyondADouble", sessionWith("attention", R"("scale": 1e400)"),
                          "attention.scale"},
        UnreadableSession{"IntegerBeyond64Bits",
                          sessionWith("mask", R"("window": 99999999999999999999999)"),
                          "mask.window"},
        UnreadableSession{"ScaleThatOverflowsAFloat", sessionWith("attention", R"("scale": 1e308)"),
                          "attention.scale"},
        UnreadableSession{"SubnormalTemperature",
                          sessionWith("attention", R"("temperature": 5e-324)"),
                          "attention.temperature"},
        UnreadableSession{"TextOfTwoMegabytes",
                          sessionWith("tokens", R"("tokenizer": "character", "text": ")" +
                                                    std::string(std::size_t(2) << 20, 'a') + "\""),
                          "tokens.text"}),
    [](const ::testing::TestParamInfo<UnreadableSession>& param) { return param.param.name; });

TEST(Document, CustomMaskFollowsTheTokenCount) {
    Document document;
    document.modify([](Session& s) { s.mask.custom = BoolMatrix::Constant(6, 6, true); },
                    QStringLiteral("custom"));
    document.modify([](Session& s) { s.text = "a b c"; }, QStringLiteral("text"));
    ASSERT_TRUE(document.session().mask.custom.has_value());
    EXPECT_EQ(document.session().mask.custom->rows(), 3);
    EXPECT_EQ(document.session().mask.custom->cols(), 3);
    document.flush();
    EXPECT_TRUE(document.problems().isEmpty());
}

} // namespace
} // namespace attnlab::ui

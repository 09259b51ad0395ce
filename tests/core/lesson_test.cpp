// Lessons (docs/lessons.md): steps resolved by walking from the first one, changes merged into
// the session on screen, the theme left to the viewer, every malformed file one message naming
// its key, and the HTML of a text escaped except for the allowed tags.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "attnlab/lab/lesson.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

using Json = nlohmann::json;

Json localized(const std::string& en, const std::string& zh) {
    return Json{{"en", en}, {"zh_CN", zh}};
}

/// Three steps: a whole session, changes to it, and a step that keeps it and switches view.
Json threeSteps() {
    Json lesson;
    lesson["format"] = 1;
    lesson["title"] = localized("Masks", "掩码");
    lesson["steps"] = Json::array();
    Json first;
    first["title"] = localized("Full", "全注意力");
    first["text"] = localized("Every query sees every key.", "每个查询都能看到所有键。");
    first["formula"] = "softmax(QK\u1d40/\u221ad) V";
    first["session"] = {{"tokens", {{"text", "a b c d"}}},
                        {"model", {{"d_model", 8}, {"heads", 2}, {"kv_heads", 2}}},
                        {"view", {{"view", "heatmap"}, {"theme", "dark"}, {"query", 2}}}};
    Json second;
    second["title"] = localized("Causal", "因果掩码");
    second["text"] = localized("Now the future is hidden.", "现在看不到未来。");
    second["changes"] = {{"mask", {{"causal", true}}}};
    second["question"] = localized("Which keys does row 0 see?", "第 0 行能看到哪些键?");
    second["answer"] = localized("Only key 0.", "只有第 0 个键。");
    Json third;
    third["title"] = localized("Heads", "多头");
    third["text"] = localized("Each head has its own pattern.", "每个头有自己的模式。");
    third["view"] = "heads";
    lesson["steps"] = {first, second, third};
    return lesson;
}

const LessonOptions kOptions{{"heatmap", "heads", "flash"}, {"full-vs-causal"}};

std::string errorOf(const Json& lesson) {
    const Result<Lesson> read = lessonFromJson(lesson.dump(), kOptions);
    EXPECT_FALSE(read.ok());
    return read.ok() ? std::string() : read.error();
}

TEST(Lesson, ReadsStepsAndResolvesEachSessionInOrder) {
    const Result<Lesson> read = lessonFromJson(threeSteps().dump(), kOptions);
    ASSERT_TRUE(read.ok()) << read.error();
    const Lesson& lesson = *read;
    EXPECT_EQ(lesson.languages, (std::vector<std::string>{"en", "zh_CN"}));
    EXPECT_EQ(lesson.title.in("zh_CN"), "掩码");
    ASSERT_EQ(lesson.steps.size(), 3u);

    const LessonStep& first = lesson.steps[0];
    EXPECT_EQ(first.setup, LessonStep::Setup::Session);
    EXPECT_EQ(first.session.text, "a b c d");
    EXPECT_EQ(first.session.heads, 2);
    EXPECT_FALSE(first.session.mask.causal);
    // A key the step leaves out keeps the session default, not a value from elsewhere.
    EXPECT_EQ(first.session.seed, Session{}.seed);
    EXPECT_EQ(first.session.viewState.query, 2);
    // The theme is the viewer's: the lesson's "dark" is not applied.
    EXPECT_EQ(first.session.viewState.theme, Session{}.viewState.theme);

    const LessonStep& second = lesson.steps[1];
    EXPECT_EQ(second.setup, LessonStep::Setup::Changes);
    EXPECT_TRUE(second.session.mask.causal);
    EXPECT_EQ(second.session.text, "a b c d"); // the rest carried over from step 0
    EXPECT_EQ(second.session.dModel, 8);
    EXPECT_EQ(second.question.in("en"), "Which keys does row 0 see?");
    EXPECT_EQ(second.answer.in("zh_CN"), "只有第 0 个键。");

    const LessonStep& third = lesson.steps[2];
    EXPECT_EQ(third.setup, LessonStep::Setup::Keep);
    EXPECT_TRUE(third.session.mask.causal);
    EXPECT_EQ(third.session.viewState.view, "heads");
    EXPECT_EQ(third.view, "heads");
}

TEST(Lesson, ChangesApplyToTheSessionOnScreenAndKeepItsTheme) {
    const Result<Lesson> read = lessonFromJson(threeSteps().dump(), kOptions);
    ASSERT_TRUE(read.ok()) << read.error();
    Session mine;
    mine.text = "my own words here";
    mine.heads = 4;
    mine.kvHeads = 1;
    mine.viewState.theme = "projector";
    mine.viewState.view = "flash";
    const Result<Session> next = lessonStepSession(read->steps[1], mine);
    ASSERT_TRUE(next.ok()) << next.error();
    EXPECT_TRUE(next->mask.causal);             // the change
    EXPECT_EQ(next->text, "my own words here"); // the viewer's edits stay
    EXPECT_EQ(next->heads, 4);
    EXPECT_EQ(next->kvHeads, 1);
    EXPECT_EQ(next->viewState.theme, "projector"); // theme stays the viewer's
    EXPECT_EQ(next->viewState.view, "flash");      // the step names no view: kept

    const Result<Session> whole = lessonStepSession(read->steps[0], mine);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(whole->text, "a b c d");
    EXPECT_EQ(whole->viewState.theme, "projector");
}

// A formula of notation is one string for every language; one with words has a text per
// language ("key j allowed" stayed English in Chinese).
TEST(Lesson, AFormulaIsOneStringOrATextPerLanguage) {
    Json lesson = threeSteps();
    lesson["steps"][0]["formula"] = "softmax(QK<sup>T</sup>)";
    lesson["steps"][1]["formula"] = {{"en", "key j allowed"}, {"zh_CN", "键 j 可见"}};
    const Result<Lesson> read = lessonFromJson(lesson.dump(), kOptions);
    ASSERT_TRUE(read.ok()) << read.error();
    EXPECT_EQ(read->steps[0].formula.in("zh_CN"), "softmax(QK<sup>T</sup>)");
    EXPECT_EQ(read->steps[0].formula.in("en"), "softmax(QK<sup>T</sup>)");
    EXPECT_EQ(read->steps[1].formula.in("zh_CN"), "键 j 可见");
    EXPECT_EQ(read->steps[1].formula.in("en"), "key j allowed");
    EXPECT_TRUE(read->steps[2].formula.empty());
    lesson["steps"][1]["formula"] = {{"fr", "clé j"}};
    EXPECT_FALSE(lessonFromJson(lesson.dump(), kOptions).ok());
}

TEST(Lesson, LanguageFallsBackToEnglishThenTheFirst) {
    LocalizedText text;
    text.texts = {{"zh_CN", "中文"}, {"en", "English"}};
    EXPECT_EQ(text.in("zh_CN"), "中文");
    EXPECT_EQ(text.in("fr"), "English");
    LocalizedText chineseOnly;
    chineseOnly.texts = {{"zh_CN", "中文"}};
    EXPECT_EQ(chineseOnly.in("en"), "中文");
    EXPECT_EQ(LocalizedText{}.in("en"), "");
}

TEST(Lesson, OneLanguageLessonNeedsOnlyThatLanguage) {
    Json lesson = threeSteps();
    lesson["title"] = Json{{"en", "Masks"}};
    for (Json& step : lesson["steps"])
        for (const char* key : {"title", "text", "question", "answer"})
            if (step.contains(key)) step[key].erase("zh_CN");
    const Result<Lesson> read = lessonFromJson(lesson.dump(), kOptions);
    ASSERT_TRUE(read.ok()) << read.error();
    EXPECT_EQ(read->languages, std::vector<std::string>{"en"});
}

TEST(Lesson, MissingLanguageNamesTheKeyAndTheLanguage) {
    Json lesson = threeSteps();
    lesson["steps"][1]["text"].erase("zh_CN");
    const std::string error = errorOf(lesson);
    EXPECT_NE(error.find("steps[1].text"), std::string::npos) << error;
    EXPECT_NE(error.find("zh_CN"), std::string::npos) << error;
}

TEST(Lesson, ExtraOrMalformedLanguageIsRefused) {
    Json lesson = threeSteps();
    lesson["steps"][0]["title"]["fr"] = "Plein";
    EXPECT_NE(errorOf(lesson).find("steps[0].title.fr"), std::string::npos);
    lesson = threeSteps();
    lesson["title"]["zh-CN"] = "掩码";
    EXPECT_NE(errorOf(lesson).find("not a language code"), std::string::npos);
}

TEST(Lesson, BadJsonIsOneMessage) {
    const Result<Lesson> read = lessonFromJson("{\"format\": 1, \"title\": ", kOptions);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().rfind("not valid JSON", 0), 0u) << read.error();
    EXPECT_EQ(read.error().find('\n'), std::string::npos);
}

TEST(Lesson, UnknownViewAndComparisonAreRefused) {
    Json lesson = threeSteps();
    lesson["steps"][2]["view"] = "hetmap";
    std::string error = errorOf(lesson);
    EXPECT_NE(error.find("steps[2].view"), std::string::npos) << error;
    EXPECT_NE(error.find("hetmap"), std::string::npos) << error;

    lesson = threeSteps();
    lesson["steps"][0]["session"]["view"]["view"] = "nowhere";
    error = errorOf(lesson);
    EXPECT_NE(error.find("steps[0].session.view.view"), std::string::npos) << error;

    lesson = threeSteps();
    lesson["steps"][0]["comparison"] = "apples-vs-pears";
    EXPECT_NE(errorOf(lesson).find("steps[0].comparison"), std::string::npos);
}

TEST(Lesson, HugeFileIsRefusedBeforeParsing) {
    std::string huge = threeSteps().dump();
    huge.insert(huge.size() - 1, ", \"pad\": \"" + std::string(Lesson::kMaxFileBytes, 'x') + "\"");
    const Result<Lesson> read = lessonFromJson(huge, kOptions);
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().find("at most " + std::to_string(Lesson::kMaxFileBytes)),
              std::string::npos)
        << read.error();
}

TEST(Lesson, TooLongTextIsRefused) {
    Json lesson = threeSteps();
    lesson["steps"][0]["text"]["en"] = std::string(Lesson::kMaxTextBytes + 1, 'a');
    EXPECT_NE(errorOf(lesson).find("steps[0].text.en"), std::string::npos);
}

TEST(Lesson, StepSessionThatDoesNotValidateIsRefused) {
    Json lesson = threeSteps();
    lesson["steps"][1]["changes"] = {{"model", {{"heads", 3}}}}; // 8 is not divisible by 3
    const std::string error = errorOf(lesson);
    EXPECT_EQ(error.rfind("steps[1]:", 0), 0u) << error;
}

TEST(Lesson, WrongTypesNameTheirKey) {
    Json lesson = threeSteps();
    lesson["steps"][1]["changes"] = {{"model", {{"heads", "two"}}}};
    EXPECT_EQ(errorOf(lesson).rfind("steps[1].changes.model.heads:", 0), 0u);
    lesson = threeSteps();
    lesson["steps"][0]["session"]["mask"] = {{"causal", "yes"}};
    EXPECT_EQ(errorOf(lesson).rfind("steps[0].session.mask.causal:", 0), 0u);
    lesson = threeSteps();
    lesson["steps"][0]["formula"] = 3;
    EXPECT_EQ(errorOf(lesson).rfind("steps[0].formula:", 0), 0u);
    lesson = threeSteps();
    lesson["steps"] = Json::object();
    EXPECT_EQ(errorOf(lesson).rfind("steps:", 0), 0u);
}

TEST(Lesson, StructuralMistakesAreRefused) {
    Json lesson = threeSteps();
    lesson["steps"][1].erase("answer");
    EXPECT_NE(errorOf(lesson).find("answer"), std::string::npos);
    lesson = threeSteps();
    lesson["steps"][0]["changes"] = {{"mask", {{"causal", true}}}};
    EXPECT_NE(errorOf(lesson).find("not both"), std::string::npos);
    lesson = threeSteps();
    lesson["steps"][2]["qestion"] = localized("?", "?");
    EXPECT_NE(errorOf(lesson).find("steps[2].qestion: unknown key"), std::string::npos);
    lesson = threeSteps();
    lesson["steps"] = Json::array();
    EXPECT_NE(errorOf(lesson).find("no step"), std::string::npos);
    lesson = threeSteps();
    lesson.erase("format");
    EXPECT_NE(errorOf(lesson).find("\"format\""), std::string::npos);
    lesson = threeSteps();
    lesson["format"] = 2;
    EXPECT_NE(errorOf(lesson).find("update AttnLab"), std::string::npos);
    lesson = threeSteps();
    lesson["steps"][0]["text"]["en"] = "   ";
    EXPECT_NE(errorOf(lesson).find("empty"), std::string::npos);
}

TEST(Lesson, ModelKeyIsChecked) {
    Json lesson = threeSteps();
    lesson["steps"][2]["model"] = {
        {"path", "models/tiny-llama-induction"}, {"text", "a b a"}, {"layer", 1}, {"head", 1}};
    const Result<Lesson> read = lessonFromJson(lesson.dump(), kOptions);
    ASSERT_TRUE(read.ok()) << read.error();
    ASSERT_TRUE(read->steps[2].model);
    EXPECT_EQ(read->steps[2].model->path, "models/tiny-llama-induction");
    EXPECT_EQ(read->steps[2].model->layer, 1);
    lesson["steps"][2]["model"]["layer"] = -1;
    EXPECT_NE(errorOf(lesson).find("steps[2].model.layer"), std::string::npos);
    lesson["steps"][2]["model"]["layer"] = 1;
    // The Patch tab's corrupted text and what it patches: heads unless told.
    EXPECT_TRUE(read->steps[2].model->corrupted.empty());
    EXPECT_EQ(read->steps[2].model->patch, "heads");
    lesson["steps"][2]["model"]["corrupted"] = "a b b";
    lesson["steps"][2]["model"]["patch"] = "residual";
    const Result<Lesson> patched = lessonFromJson(lesson.dump(), kOptions);
    ASSERT_TRUE(patched.ok()) << patched.error();
    EXPECT_EQ(patched->steps[2].model->corrupted, "a b b");
    EXPECT_EQ(patched->steps[2].model->patch, "residual");
    lesson["steps"][2]["model"]["patch"] = "mlp";
    EXPECT_NE(errorOf(lesson).find("steps[2].model.patch"), std::string::npos);
    lesson["steps"][2]["model"].erase("patch");
    lesson["steps"][2]["model"].erase("text");
    EXPECT_NE(errorOf(lesson).find("steps[2].model"), std::string::npos);
    // An image classifier's step names an image instead of a text, and what the Image tab
    // overlays: a head unless told.
    lesson["steps"][2]["model"]["image"] = "images/shapes/circle.png";
    const Result<Lesson> image = lessonFromJson(lesson.dump(), kOptions);
    ASSERT_TRUE(image.ok()) << image.error();
    EXPECT_EQ(image->steps[2].model->image, "images/shapes/circle.png");
    EXPECT_EQ(image->steps[2].model->overlay, "head");
    lesson["steps"][2]["model"]["overlay"] = "rollout";
    const Result<Lesson> rollout = lessonFromJson(lesson.dump(), kOptions);
    ASSERT_TRUE(rollout.ok()) << rollout.error();
    EXPECT_EQ(rollout->steps[2].model->overlay, "rollout");
    lesson["steps"][2]["model"]["overlay"] = "max";
    EXPECT_NE(errorOf(lesson).find("steps[2].model.overlay: \"max\" is not head, mean or rollout"),
              std::string::npos)
        << errorOf(lesson);
    lesson["steps"][2]["model"]["overlay"] = "mean";
    lesson["steps"][2]["model"]["text"] = "a b a"; // a text and an image: one of them
    EXPECT_NE(errorOf(lesson).find("one of them"), std::string::npos);
    lesson["steps"][2]["model"].erase("text");
    lesson["steps"][2]["model"]["image"] = "";
    EXPECT_NE(errorOf(lesson).find("steps[2].model.image"), std::string::npos);
}

TEST(Lesson, LoadLessonNamesTheFile) {
    test::TempDir dir("lesson");
    const std::string path = dir.file("bad.json");
    std::ofstream(path) << "[1, 2]";
    const Result<Lesson> read = loadLesson(path, kOptions);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().rfind(path + ": ", 0), 0u) << read.error();
    const std::string good = dir.file("good.json");
    std::ofstream(good) << threeSteps().dump();
    EXPECT_TRUE(loadLesson(good, kOptions).ok());
    EXPECT_FALSE(loadLesson(dir.file("missing.json"), kOptions).ok());
}

TEST(Lesson, TextToHtmlEscapesAllButTheAllowedTags) {
    EXPECT_EQ(lessonTextToHtml("a < b & c > d"), "<p>a &lt; b &amp; c &gt; d</p>");
    EXPECT_EQ(lessonTextToHtml("<b>bold</b> and x<sub>i</sub>"),
              "<p><b>bold</b> and x<sub>i</sub></p>");
    EXPECT_EQ(lessonTextToHtml("<img src=\"x.png\">"), "<p>&lt;img src=&quot;x.png&quot;&gt;</p>");
    EXPECT_EQ(lessonTextToHtml("<b onclick=1>x</b>"), "<p>&lt;b onclick=1&gt;x</b></p>");
    EXPECT_EQ(lessonTextToHtml("one\ntwo\n\nthree"), "<p>one<br>two</p><p>three</p>");
    EXPECT_EQ(lessonTextToHtml("line<br/>next"), "<p>line<br>next</p>");
}

} // namespace
} // namespace attnlab

// libFuzzer harness: lessonFromJson on arbitrary text (a teacher's own lesson file). What the
// reader promises (core/lab/include/attnlab/lab/lesson.h): a lesson that loads can be walked from
// its first step with no error, each step then shows the session the reader resolved for it, and
// that session is valid. Every text of a loaded lesson, and the input itself, goes through
// lessonTextToHtml, whose output must keep its tags balanced as paragraphs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "attnlab/lab/lesson.h"

using namespace attnlab;

namespace {

void html(const std::string& text) {
    const std::string out = lessonTextToHtml(text);
    if (out.size() < 7 || out.compare(0, 3, "<p>") != 0 ||
        out.compare(out.size() - 4, 4, "</p>") != 0)
        std::abort();
}

void htmlAll(const LocalizedText& text) {
    for (const auto& entry : text.texts)
        html(entry.second);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    html(text);
    auto lesson = lessonFromJson(text);
    if (!lesson) {
        if (lesson.error().empty()) std::abort(); // a refusal always says why
        return 0;
    }
    if (lesson->steps.empty() || lesson->languages.empty()) std::abort();
    htmlAll(lesson->title);
    Session current; // the window starts a lesson from the default session
    for (const LessonStep& step : lesson->steps) {
        for (const std::string& language : lesson->languages)
            if (!step.title.has(language) || !step.text.has(language)) std::abort();
        if (step.question.empty() != step.answer.empty()) std::abort();
        htmlAll(step.title);
        htmlAll(step.text);
        htmlAll(step.question);
        htmlAll(step.answer);
        auto next = lessonStepSession(step, current);
        if (!next) std::abort(); // a lesson that loads is walked with no error
        if (sessionToJson(*next) != sessionToJson(step.session)) std::abort();
        if (!validate(*next).empty()) std::abort();
        current = std::move(*next);
    }
    return 0;
}

// Lessons (docs/lessons.md): reading with every key checked up front, every step's session
// resolved and validated by walking the lesson from its first step, and the HTML of a text.

#include <algorithm>
#include <array>
#include <string_view>

#include <nlohmann/json.hpp>

#include "attnlab/io/file_io.h"
#include "attnlab/io/json_read.h"
#include "attnlab/lab/lesson.h"

namespace attnlab {

namespace {

using Json = nlohmann::json;

using detail::fail;
using detail::JsonProblem;
using detail::parseJson;
using detail::typeOf;

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& name : names)
        out += (out.empty() ? "" : ", ") + name;
    return out;
}

/// "en", "zh_CN", "pt_BR": two or three lower-case letters, then maybe _ and two capitals.
bool isLanguageCode(const std::string& code) {
    const auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
    const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    std::size_t letters = 0;
    while (letters < code.size() && lower(code[letters]))
        ++letters;
    if (letters < 2 || letters > 3) return false;
    if (letters == code.size()) return true;
    return code.size() == letters + 3 && code[letters] == '_' && upper(code[letters + 1]) &&
           upper(code[letters + 2]);
}

std::string readString(const Json& value, const std::string& key, std::size_t maxBytes) {
    if (!value.is_string()) fail(key, "expected a string, got " + typeOf(value));
    std::string text = value.get<std::string>();
    if (text.size() > maxBytes)
        fail(key, "the text is " + std::to_string(text.size()) + " bytes; at most " +
                      std::to_string(maxBytes) + " are allowed");
    return text;
}

Index readWhole(const Json& value, const std::string& key, Index low, Index high) {
    const Index number = detail::wholeNumber(value, key);
    if (number < low || number > high)
        fail(key, std::to_string(number) + " is out of range (" + std::to_string(low) + " to " +
                      std::to_string(high) + ")");
    return number;
}

/// Refuses keys a lesson does not know: a misspelt "qestion" would otherwise vanish silently.
void onlyKeys(const Json& object, const std::string& where,
              std::initializer_list<std::string_view> known) {
    for (const auto& item : object.items()) {
        if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
        std::string list;
        for (std::string_view name : known)
            list += (list.empty() ? "" : ", ") + std::string(name);
        fail(where.empty() ? item.key() : where + "." + item.key(),
             "unknown key (a lesson" + std::string(where.empty() ? "" : " step") + " has " + list +
                 ")");
    }
}

/// A text in each language: {"en": "...", "zh_CN": "..."}. With `languages` empty (the
/// lesson's title) it sets them; otherwise it must hold exactly those.
LocalizedText readLocalized(const Json& value, const std::string& key,
                            std::vector<std::string>& languages) {
    if (!value.is_object())
        fail(key, "expected an object of texts by language, e.g. {\"en\": \"...\", \"zh_CN\": "
                  "\"...\"}, got " +
                      typeOf(value));
    const bool defining = languages.empty();
    LocalizedText out;
    for (const auto& item : value.items()) {
        const std::string& language = item.key();
        const std::string where = key + "." + language;
        if (!isLanguageCode(language))
            fail(where, "\"" + language + "\" is not a language code (write en, zh_CN ...)");
        if (!defining && std::find(languages.begin(), languages.end(), language) == languages.end())
            fail(where, "the lesson's title has no \"" + language +
                            "\" text; the title sets the lesson's languages (" + joined(languages) +
                            ")");
        std::string text = readString(item.value(), where, Lesson::kMaxTextBytes);
        if (text.find_first_not_of(" \t\r\n") == std::string::npos)
            fail(where, "the text is empty");
        out.texts.emplace_back(language, std::move(text));
    }
    if (out.texts.empty()) fail(key, "no text in any language");
    if (defining) {
        if (out.texts.size() > Lesson::kMaxLanguages)
            fail(key, "at most " + std::to_string(Lesson::kMaxLanguages) + " languages");
        for (const auto& [language, text] : out.texts)
            languages.push_back(language);
    } else {
        for (const std::string& language : languages)
            if (!out.has(language))
                fail(key, "the " + language + " text is missing (every text of this lesson is in " +
                              joined(languages) + ", as its title)");
    }
    return out;
}

Result<Session> mergeChanges(const Session& base, const Json& changes) {
    Json merged = Json::parse(sessionToJson(base));
    merged.merge_patch(changes);
    merged["attnlab_session"] = Session::kVersion;
    return sessionFromJson(merged.dump());
}

LessonStep readStep(const Json& value, const std::string& key, std::vector<std::string>& languages,
                    const LessonOptions& options, const Session& previous) {
    if (!value.is_object()) fail(key, "expected an object (a step), got " + typeOf(value));
    onlyKeys(value, key,
             {"title", "text", "formula", "session", "changes", "view", "comparison", "question",
              "answer", "model"});
    LessonStep step;
    for (const char* required : {"title", "text"})
        if (!value.contains(required))
            fail(key, std::string("the key \"") + required + "\" is missing");
    step.title = readLocalized(value["title"], key + ".title", languages);
    step.text = readLocalized(value["text"], key + ".text", languages);
    if (const auto it = value.find("formula"); it != value.end()) {
        // Notation alone is the same in every language; a formula with words has a text per
        // language like the step's text.
        if (it->is_object())
            step.formula = readLocalized(*it, key + ".formula", languages);
        else
            step.formula.texts.emplace_back("en", readString(*it, key + ".formula", 1024));
    }
    const bool hasQuestion = value.contains("question");
    const bool hasAnswer = value.contains("answer");
    if (hasQuestion != hasAnswer)
        fail(key, hasQuestion ? "a question needs an \"answer\" (shown after Reveal)"
                              : "an \"answer\" needs a \"question\"");
    if (hasQuestion) {
        step.question = readLocalized(value["question"], key + ".question", languages);
        step.answer = readLocalized(value["answer"], key + ".answer", languages);
    }
    if (const auto it = value.find("view"); it != value.end()) {
        step.view = readString(*it, key + ".view", 64);
        if (!options.views.empty() &&
            std::find(options.views.begin(), options.views.end(), step.view) == options.views.end())
            fail(key + ".view", "unknown view \"" + step.view + "\" (expected one of " +
                                    joined(options.views) + ")");
    }
    if (const auto it = value.find("comparison"); it != value.end()) {
        step.comparison = readString(*it, key + ".comparison", 64);
        if (!options.comparisons.empty() &&
            std::find(options.comparisons.begin(), options.comparisons.end(), step.comparison) ==
                options.comparisons.end())
            fail(key + ".comparison", "unknown comparison \"" + step.comparison +
                                          "\" (expected one of " + joined(options.comparisons) +
                                          ")");
    }
    if (value.contains("session") && value.contains("changes"))
        fail(key, "give either \"session\" (a whole session) or \"changes\" (to the session on "
                  "screen), not both");
    if (const auto it = value.find("session"); it != value.end()) {
        if (!it->is_object()) fail(key + ".session", "expected an object, got " + typeOf(*it));
        Json session = *it;
        if (!session.contains("attnlab_session")) session["attnlab_session"] = Session::kVersion;
        Result<Session> parsed = sessionFromJson(session.dump());
        if (!parsed) throw JsonProblem{key + ".session." + parsed.error()};
        step.setup = LessonStep::Setup::Session;
        step.session = std::move(*parsed);
    } else if (const auto changes = value.find("changes"); changes != value.end()) {
        if (!changes->is_object())
            fail(key + ".changes", "expected an object, got " + typeOf(*changes));
        if (Result<Session> merged = mergeChanges(previous, *changes); !merged)
            throw JsonProblem{key + ".changes." + merged.error()};
        step.setup = LessonStep::Setup::Changes;
        step.changes = changes->dump();
    }
    if (const auto it = value.find("model"); it != value.end()) {
        const std::string where = key + ".model";
        if (!it->is_object()) fail(where, "expected an object, got " + typeOf(*it));
        onlyKeys(*it, where,
                 {"path", "text", "layer", "head", "attention", "corrupted", "patch", "image",
                  "overlay"});
        if (!it->contains("path")) fail(where, "the key \"path\" is missing");
        if (it->contains("text") == it->contains("image"))
            fail(where, "give the model a \"text\" or an \"image\" (one of them)");
        LessonModel model;
        model.path = readString((*it)["path"], where + ".path", 4096);
        if (model.path.empty()) fail(where + ".path", "the folder is empty");
        if (const auto text = it->find("text"); text != it->end())
            model.text = readString(*text, where + ".text", 4096);
        if (const auto image = it->find("image"); image != it->end()) {
            model.image = readString(*image, where + ".image", 4096);
            if (model.image.empty()) fail(where + ".image", "the file name is empty");
        }
        if (const auto overlay = it->find("overlay"); overlay != it->end()) {
            model.overlay = readString(*overlay, where + ".overlay", 16);
            if (model.overlay != "head" && model.overlay != "mean" && model.overlay != "rollout")
                fail(where + ".overlay", "\"" + model.overlay + "\" is not head, mean or rollout");
        }
        if (const auto layer = it->find("layer"); layer != it->end())
            model.layer = readWhole(*layer, where + ".layer", 0, 1023);
        if (const auto head = it->find("head"); head != it->end())
            model.head = readWhole(*head, where + ".head", 0, 255);
        if (const auto attention = it->find("attention"); attention != it->end()) {
            model.attention = readString(*attention, where + ".attention", 16);
            if (model.attention != "cross" && model.attention != "encoder" &&
                model.attention != "decoder")
                fail(where + ".attention",
                     "\"" + model.attention + "\" is not cross, encoder or decoder");
        }
        if (const auto corrupted = it->find("corrupted"); corrupted != it->end())
            model.corrupted = readString(*corrupted, where + ".corrupted", 4096);
        if (const auto patch = it->find("patch"); patch != it->end()) {
            model.patch = readString(*patch, where + ".patch", 16);
            if (model.patch != "heads" && model.patch != "residual")
                fail(where + ".patch", "\"" + model.patch + "\" is not heads or residual");
        }
        step.model = std::move(model);
    }

    // The session this step shows when the lesson is walked in order: valid, and in a view
    // the window has.
    Result<Session> resolved = lessonStepSession(step, previous);
    if (!resolved) throw JsonProblem{key + ": " + resolved.error()};
    step.session = std::move(*resolved);
    if (!options.views.empty() && std::find(options.views.begin(), options.views.end(),
                                            step.session.viewState.view) == options.views.end())
        fail(key + ".session.view.view", "unknown view \"" + step.session.viewState.view +
                                             "\" (expected one of " + joined(options.views) + ")");
    const std::vector<std::string> problems = validate(step.session);
    if (!problems.empty()) fail(key, "the session of this step is not valid: " + problems.front());
    return step;
}

} // namespace

bool LocalizedText::has(const std::string& language) const {
    return std::any_of(texts.begin(), texts.end(),
                       [&](const auto& entry) { return entry.first == language; });
}

const std::string& LocalizedText::in(const std::string& language) const {
    static const std::string kNone;
    for (const std::string& wanted : {language, std::string("en")})
        for (const auto& [code, text] : texts)
            if (code == wanted) return text;
    return texts.empty() ? kNone : texts.front().second;
}

Result<Lesson> lessonFromJson(const std::string& text, const LessonOptions& options) {
    if (text.size() > Lesson::kMaxFileBytes)
        return Error{"the file is " + std::to_string(text.size()) + " bytes; a lesson is at most " +
                     std::to_string(Lesson::kMaxFileBytes)};
    auto parsed = parseJson(text);
    if (!parsed) return Error{parsed.error()};
    const Json root = std::move(*parsed);
    if (!root.is_object()) return Error{"a lesson is a JSON object, got " + typeOf(root)};
    Lesson lesson;
    try {
        const auto format = root.find("format");
        if (format == root.end())
            return Error{"not an AttnLab lesson: the key \"format\" (the format version) is "
                         "missing"};
        const Index number = detail::wholeNumber(*format, "format");
        if (number > Lesson::kFormat)
            fail("format", "the lesson is format " + std::to_string(number) +
                               ", newer than this AttnLab reads (" +
                               std::to_string(Lesson::kFormat) + "); update AttnLab");
        if (number < 1) fail("format", "unknown format " + std::to_string(number));
        onlyKeys(root, "", {"format", "title", "steps"});
        if (!root.contains("title")) fail("title", "missing (the lesson's title)");
        lesson.title = readLocalized(root["title"], "title", lesson.languages);
        const auto steps = root.find("steps");
        if (steps == root.end()) fail("steps", "missing (the list of steps)");
        if (!steps->is_array()) fail("steps", "expected a list of steps, got " + typeOf(*steps));
        if (steps->empty()) fail("steps", "the lesson has no step");
        if (steps->size() > Lesson::kMaxSteps)
            fail("steps", std::to_string(steps->size()) + " steps; at most " +
                              std::to_string(Lesson::kMaxSteps));
        Session previous;
        for (std::size_t i = 0; i < steps->size(); ++i) {
            lesson.steps.push_back(readStep((*steps)[i], "steps[" + std::to_string(i) + "]",
                                            lesson.languages, options, previous));
            previous = lesson.steps.back().session;
        }
    } catch (const JsonProblem& problem) {
        return Error{problem.message};
    } catch (const std::exception& error) { // never let a library error escape
        return Error{error.what()};
    }
    return lesson;
}

Result<Lesson> loadLesson(const std::string& path, const LessonOptions& options) {
    auto text = readFile(path, Lesson::kMaxFileBytes);
    if (!text) return Error{text.error()};
    auto lesson = lessonFromJson(*text, options);
    if (!lesson) return Error{path + ": " + lesson.error()};
    return lesson;
}

Result<Session> lessonStepSession(const LessonStep& step, const Session& current) {
    Session next = current;
    switch (step.setup) {
    case LessonStep::Setup::Keep:
        break;
    case LessonStep::Setup::Session:
        next = step.session;
        break;
    case LessonStep::Setup::Changes: {
        Json changes;
        try {
            changes = Json::parse(step.changes);
            Result<Session> merged = mergeChanges(current, changes);
            if (!merged) return Error{"changes." + merged.error()};
            next = std::move(*merged);
        } catch (const Json::exception& error) {
            return Error{std::string("changes: ") + error.what()};
        }
        break;
    }
    }
    next.viewState.theme = current.viewState.theme;
    if (!step.view.empty()) next.viewState.view = step.view;
    return next;
}

std::string lessonTextToHtml(const std::string& text) {
    static constexpr std::array<std::string_view, 13> kTags = {
        "b", "i", "em", "strong", "u", "sub", "sup", "code", "br", "p", "ul", "ol", "li"};
    std::string html = "<p>";
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '<') {
            // A bare allowed tag: <b>, </b>, <br>, <br/>, <br />.
            const std::size_t close = text.find('>', i);
            if (close != std::string::npos && close - i <= 10) {
                std::string_view inner(text.data() + i + 1, close - i - 1);
                const bool end = !inner.empty() && inner.front() == '/';
                if (end) inner.remove_prefix(1);
                while (!inner.empty() && (inner.back() == '/' || inner.back() == ' '))
                    inner.remove_suffix(1);
                if (std::find(kTags.begin(), kTags.end(), inner) != kTags.end()) {
                    html += '<';
                    if (end) html += '/';
                    html += inner;
                    html += '>';
                    i = close;
                    continue;
                }
            }
            html += "&lt;";
        } else if (c == '>') {
            html += "&gt;";
        } else if (c == '&') {
            html += "&amp;";
        } else if (c == '"') {
            html += "&quot;";
        } else if (c == '\r') {
            continue;
        } else if (c == '\n') {
            std::size_t next = i + 1;
            while (next < text.size() && (text[next] == ' ' || text[next] == '\r'))
                ++next;
            if (next < text.size() && text[next] == '\n') {
                while (next < text.size() &&
                       (text[next] == '\n' || text[next] == ' ' || text[next] == '\r'))
                    ++next;
                html += "</p><p>";
                i = next - 1;
            } else {
                html += "<br>";
            }
        } else {
            html += c;
        }
    }
    html += "</p>";
    return html;
}

} // namespace attnlab

#pragma once
/// Lesson: a guided walk through sessions, one step at a time, in several languages
/// (docs/lessons.md documents the file). Each step has a title, a short text, maybe a formula
/// and a question with its answer, and sets the session (whole, or as changes to the session
/// on screen) and the view. Reading checks everything up front — types, languages, sizes, that
/// every step's session is valid when the lesson is walked from its first step — so a lesson
/// that loads can be walked with no error, and a bad file is one message naming the key.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/lab/session.h"

namespace attnlab {

/// One text in several languages ("en", "zh_CN" ...), in the order the file gives them.
struct LocalizedText {
    std::vector<std::pair<std::string, std::string>> texts;

    bool empty() const { return texts.empty(); }
    bool has(const std::string& language) const;
    /// The text in `language`, else in English, else the first one; "" when there is none.
    const std::string& in(const std::string& language) const;
};

/// A real model a step opens (the lesson on induction heads): a checkpoint folder, the text it
/// runs on, and the layer and head shown.
struct LessonModel {
    std::string path; ///< relative: beside the lesson file, then in AttnLab's resources folder
    std::string text;
    Index layer = 0;
    Index head = 0;
    /// A translation model's attention shown: "cross" (the default), "encoder" or "decoder".
    std::string attention = "cross";
    /// The Patching tab's corrupted text (as many tokens as `text`); empty: left as it is.
    std::string corrupted;
    /// What the Patching tab patches: "heads" (the default) or "residual".
    std::string patch = "heads";
    /// An image classifier's image (relative as `path`), in place of `text`; empty for text.
    std::string image;
    /// What the Image tab overlays: "head" (the default), "mean" (of the layer's heads) or
    /// "rollout".
    std::string overlay = "head";
};

struct LessonStep {
    /// How the step sets the session: keeps the one on screen, replaces it, or changes it.
    enum class Setup { Keep, Session, Changes };

    LocalizedText title;
    LocalizedText text;     ///< plain text with a few tags (lessonTextToHtml)
    /// One line (Unicode, <sub>, <sup>): one text for every language, or one per language
    /// where it has words ("key j allowed").
    LocalizedText formula;
    LocalizedText question; ///< empty: no question
    LocalizedText answer;   ///< shown after "Reveal"; present exactly when question is
    Setup setup = Setup::Keep;
    /// The session this step shows when the lesson is walked in order from its first step
    /// (the first step starts from the default session); the view is already applied.
    Session session;
    std::string changes;    ///< Setup::Changes: the JSON object merged into the current session
    std::string view;       ///< the view to show ("" keeps the session's)
    std::string comparison; ///< the compare view's B side ("" keeps it)
    std::optional<LessonModel> model;
};

struct Lesson {
    static constexpr int kFormat = 1;
    static constexpr std::size_t kMaxFileBytes = std::size_t(1) << 20;
    static constexpr std::size_t kMaxSteps = 200;
    static constexpr std::size_t kMaxTextBytes = std::size_t(16) << 10; ///< any one text
    static constexpr std::size_t kMaxLanguages = 16;

    LocalizedText title;
    /// The languages of the title, in its order: every text of the lesson has each of them.
    std::vector<std::string> languages;
    std::vector<LessonStep> steps;
};

/// What the reader checks names against; an empty list accepts any name.
struct LessonOptions {
    std::vector<std::string> views;       ///< view ids the window knows
    std::vector<std::string> comparisons; ///< compare-view B sides the window knows
};

/// Reads a lesson. Any problem is an Error naming the key ("steps[3].text: ...") and nothing
/// else; at most Lesson::kMaxFileBytes are read.
Result<Lesson> lessonFromJson(const std::string& json, const LessonOptions& options = {});
/// Reads a lesson file; the message starts with the path.
Result<Lesson> loadLesson(const std::string& path, const LessonOptions& options = {});

/// The session `step` shows when reached from `current`: its whole session, or `current` with
/// its changes (or `current` when it sets none), then its view. The theme is the viewer's: it
/// stays `current`'s.
Result<Session> lessonStepSession(const LessonStep& step, const Session& current);

/// A lesson text as HTML for Qt's rich text: everything escaped except the tags b, i, em,
/// strong, u, sub, sup, code, br, p, ul, ol, li written bare (no attributes); a blank line
/// starts a paragraph and a line break is kept.
std::string lessonTextToHtml(const std::string& text);

} // namespace attnlab

#pragma once
/// The language of the window and of rendered figures: English (the source texts) or
/// Simplified Chinese (resources/translations/attnlab_zh_CN.ts, compiled into the binary).
///
/// setLanguage() installs the translators, so every tr() that runs afterwards speaks the new
/// language and Qt sends QEvent::LanguageChange to every widget. Texts already on screen
/// that their owner does not rebuild (menu titles, labels, tool tips, combo items set once
/// in a constructor) are switched by retranslateTexts(), which looks each text up in the
/// translation tables both ways (a Chinese text back to its English source, then on).

#include <QString>
#include <QStringList>

class QObject;

namespace attnlab::ui {

/// "en" and "zh_CN": the languages the program ships.
QStringList languageCodes();
/// The language's own name for menus ("English", "简体中文"); empty when unknown.
QString languageName(const QString& code);
/// A code of languageCodes() for a user's spelling ("zh_CN", "zh-CN", "zh", "en_US" ...);
/// empty when the language is not shipped.
QString normalizedLanguage(const QString& code);
/// The stored preference (QSettings "language") or, when none, the system's language if it
/// is shipped, else English.
QString preferredLanguage();
void storeLanguagePreference(const QString& code);
/// Installs the translators of `code` (a code of languageCodes()); false, changing nothing,
/// when it is not shipped or its translation cannot be loaded.
bool setLanguage(const QString& code);
/// The language last set (English before any setLanguage()).
QString currentLanguage();
/// Re-translates the texts on `root` and all its children (widgets, actions, menus, combo
/// items, tab texts, QCustomPlot axis labels, titles and legend names) into the current
/// language. Texts that are not translation sources (user data, formatted numbers) stay.
void retranslateTexts(QObject* root);
/// `text` in the current language if it is a translation source or a translation of one;
/// `text` itself otherwise.
QString retranslated(const QString& text);

} // namespace attnlab::ui

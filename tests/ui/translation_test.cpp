// Every translation shipped in resources/translations is complete: no unfinished or empty
// entry, the same %1..%n placeholders as the English, and every string the code passes to
// tr() today has a finished translation (lupdate is run on the sources into a copy of each
// file: anything it adds or un-finishes - a new string, a changed one, a vanished entry that
// is used again - is listed).

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "ui/window/language.h"

namespace {

struct Entry {
    QString context;
    QString source;
    QString translation; ///< singular text, or the numerus forms joined
    QStringList forms;   ///< numerus forms (messages with %n plurals)
    QString type;        ///< "", "unfinished", "vanished", "obsolete"
};

std::vector<Entry> readTs(const QString& path) {
    std::vector<Entry> entries;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        ADD_FAILURE() << "cannot read " << path.toStdString();
        return entries;
    }
    QXmlStreamReader xml(&file);
    QString context;
    Entry entry;
    bool numerus = false;
    while (!xml.atEnd()) {
        const auto token = xml.readNext();
        if (token == QXmlStreamReader::StartElement) {
            if (xml.name() == QLatin1String("name")) {
                context = xml.readElementText();
            } else if (xml.name() == QLatin1String("message")) {
                entry = Entry{context, {}, {}, {}, {}};
                numerus = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
            } else if (xml.name() == QLatin1String("source")) {
                entry.source = xml.readElementText();
            } else if (xml.name() == QLatin1String("translation")) {
                entry.type = xml.attributes().value(QLatin1String("type")).toString();
                if (!numerus) {
                    entry.translation = xml.readElementText();
                    continue;
                }
                // One <numerusform> per plural form of the language.
                QStringList forms;
                while (!(xml.readNext() == QXmlStreamReader::EndElement &&
                         xml.name() == QLatin1String("translation")) &&
                       !xml.atEnd()) {
                    if (xml.isStartElement() && xml.name() == QLatin1String("numerusform"))
                        forms << xml.readElementText();
                }
                entry.forms = forms;
                entry.translation = forms.join(QString());
            }
        } else if (token == QXmlStreamReader::EndElement &&
                   xml.name() == QLatin1String("message")) {
            entries.push_back(entry);
        }
    }
    EXPECT_FALSE(xml.hasError()) << path.toStdString() << ": " << xml.errorString().toStdString();
    return entries;
}

QStringList tsFiles() {
    const QDir dir(QStringLiteral(ATTNLAB_SOURCE_DIR "/resources/translations"));
    QStringList files;
    for (const QString& name : dir.entryList({QStringLiteral("*.ts")}, QDir::Files))
        files << dir.filePath(name);
    return files;
}

std::multiset<QString> placeholders(const QString& text) {
    static const QRegularExpression pattern(QStringLiteral("%L?(\\d+|n)"));
    std::multiset<QString> found;
    for (auto it = pattern.globalMatch(text); it.hasNext();)
        found.insert(it.next().captured(1));
    return found;
}

// The Chinese translation is shipped, compiled into the binary, and speaks once chosen: menu
// titles the test knows by heart come out in Chinese, and in English again afterwards.
TEST(Translations, TheChineseOneIsShippedAndSpeaksWhenChosen) {
    EXPECT_TRUE(tsFiles().contains(QStringLiteral(ATTNLAB_SOURCE_DIR
                                                  "/resources/translations/attnlab_zh_CN.ts")));
    EXPECT_EQ(attnlab::ui::languageCodes(),
              (QStringList{QStringLiteral("en"), QStringLiteral("zh_CN")}));
    const char* const context = "attnlab::ui::MainWindow";
    struct EnglishAfterwards {
        ~EnglishAfterwards() { attnlab::ui::setLanguage(QStringLiteral("en")); }
    } english;
    ASSERT_TRUE(attnlab::ui::setLanguage(QStringLiteral("zh_CN")));
    EXPECT_EQ(QCoreApplication::translate(context, "&File").toStdString(),
              QStringLiteral("\u6587\u4ef6(&F)").toStdString()); // 文件(&F)
    EXPECT_EQ(QCoreApplication::translate(context, "&Help").toStdString(),
              QStringLiteral("\u5e2e\u52a9(&H)").toStdString()); // 帮助(&H)
    ASSERT_TRUE(attnlab::ui::setLanguage(QStringLiteral("en")));
    EXPECT_EQ(QCoreApplication::translate(context, "&File").toStdString(), "&File");
}

TEST(Translations, EveryEntryIsFinishedAndKeepsItsPlaceholders) {
    for (const QString& path : tsFiles()) {
        const std::vector<Entry> entries = readTs(path);
        EXPECT_GT(entries.size(), 400u) << path.toStdString();
        for (const Entry& entry : entries) {
            const std::string where = QFileInfo(path).fileName().toStdString() + " [" +
                                      entry.context.toStdString() + "] \"" +
                                      entry.source.toStdString() + "\"";
            if (entry.type == QLatin1String("vanished") || entry.type == QLatin1String("obsolete"))
                continue; // no longer in the code; the lupdate test below catches used ones
            EXPECT_TRUE(entry.type.isEmpty()) << where << " is " << entry.type.toStdString();
            EXPECT_FALSE(entry.translation.isEmpty()) << where << " has an empty translation";
            if (entry.translation.isEmpty()) continue;
            // Each numerus form keeps the placeholders (%n included), as does a plain one.
            const QStringList forms =
                entry.forms.isEmpty() ? QStringList{entry.translation} : entry.forms;
            for (const QString& form : forms) {
                EXPECT_FALSE(form.isEmpty()) << where << " has an empty plural form";
                EXPECT_EQ(placeholders(form), placeholders(entry.source))
                    << where << " -> \"" << form.toStdString() << "\"";
            }
        }
    }
}

TEST(Translations, EveryStringInTheCodeIsTranslated) {
    // lupdate over the same sources as ui/CMakeLists.txt's update_translations target, into a
    // copy: whatever it leaves unfinished is a tr() string with no translation.
    const QString root = QStringLiteral(ATTNLAB_SOURCE_DIR);
    QTemporaryDir scratch;
    ASSERT_TRUE(scratch.isValid());
    for (const QString& path : tsFiles()) {
        const QString copy = QDir(scratch.path()).filePath(QFileInfo(path).fileName());
        ASSERT_TRUE(QFile::copy(path, copy));
        QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner);
        QProcess lupdate;
        lupdate.setProcessChannelMode(QProcess::MergedChannels);
        lupdate.start(QStringLiteral(ATTNLAB_LUPDATE),
                      {QStringLiteral("-I"), root, root + QStringLiteral("/ui"),
                       root + QStringLiteral("/app/gui_main.cpp"),
                       root + QStringLiteral("/app/render_command.cpp"),
                       QStringLiteral("-no-obsolete"), QStringLiteral("-locations"),
                       QStringLiteral("none"), QStringLiteral("-ts"), copy});
        ASSERT_TRUE(lupdate.waitForFinished(120000));
        ASSERT_EQ(lupdate.exitCode(), 0) << lupdate.readAll().toStdString();
        QStringList untranslated;
        for (const Entry& entry : readTs(copy))
            if (entry.type == QLatin1String("unfinished") || entry.translation.isEmpty())
                untranslated << QStringLiteral("[%1] %2").arg(entry.context, entry.source);
        EXPECT_TRUE(untranslated.isEmpty())
            << QFileInfo(path).fileName().toStdString() << ": " << untranslated.size()
            << " string(s) in the code have no translation (cmake --build BUILD --target "
               "update_translations, then translate):\n"
            << untranslated.join(QLatin1Char('\n')).toStdString();
    }
}

} // namespace

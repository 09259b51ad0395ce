// The window in Simplified Chinese: started in zh_CN its menus, tabs and inputs are Chinese;
// View > Language switches live both ways without rebuilding the window.

#include <QAction>
#include <QApplication>
#include <QGroupBox>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSet>
#include <QTabWidget>
#include <qcustomplot.h>

#include <gtest/gtest.h>

#include <tuple>

#include "ui/state/document.h"
#include "ui/state/experiment_data.h"
#include "ui/views/plot_captions.h"
#include "ui/views/view.h"
#include "ui/views/view_registry.h"
#include "ui/window/inputs_panel.h"
#include "ui/window/language.h"
#include "ui/window/main_window.h"

namespace attnlab::ui {
namespace {

bool hasCjk(const QString& text) {
    for (const QChar c : text)
        if (c.unicode() >= 0x4E00 && c.unicode() <= 0x9FFF) return true;
    return false;
}

QStringList menuTitles(const MainWindow& window) {
    QStringList titles;
    for (QAction* action : window.menuBar()->actions())
        if (!action->text().isEmpty()) titles << action->text();
    return titles;
}

/// Texts of the actions of every menu, minus what is never translated (language names,
/// recent file names, separators).
QStringList menuItems(const MainWindow& window) {
    QStringList items;
    for (QAction* top : window.menuBar()->actions()) {
        QMenu* menu = top->menu();
        if (!menu) continue;
        for (QAction* action : menu->actions()) {
            if (action->isSeparator() || action->text().isEmpty()) continue;
            if (languageCodes().contains(action->data().toString())) continue;
            items << action->text();
        }
    }
    return items;
}

/// The texts of the tab bar that holds the views (found from the heatmap view upwards).
QStringList tabTexts(const MainWindow& window) {
    QStringList texts;
    for (QWidget* up = window.view(QStringLiteral("heatmap")); up; up = up->parentWidget()) {
        if (auto* tabs = qobject_cast<QTabWidget*>(up)) {
            for (int i = 0; i < tabs->count(); ++i)
                texts << tabs->tabText(i);
            break;
        }
    }
    return texts;
}

/// Restores English for the tests that follow, whatever happens here.
struct EnglishAfterwards {
    ~EnglishAfterwards() { setLanguage(QStringLiteral("en")); }
};

TEST(Language, NamesAndSpellings) {
    EXPECT_EQ(normalizedLanguage(QStringLiteral("zh-CN")), QStringLiteral("zh_CN"));
    EXPECT_EQ(normalizedLanguage(QStringLiteral("zh")), QStringLiteral("zh_CN"));
    EXPECT_EQ(normalizedLanguage(QStringLiteral("en_GB")), QStringLiteral("en"));
    EXPECT_TRUE(normalizedLanguage(QStringLiteral("zh_TW")).isEmpty()); // Traditional
    EXPECT_TRUE(normalizedLanguage(QStringLiteral("klingon")).isEmpty());
    EXPECT_FALSE(setLanguage(QStringLiteral("fr")));
    EXPECT_EQ(currentLanguage(), QStringLiteral("en"));
}

TEST(Language, WindowStartedInChineseHasChineseMenusTabsAndInputs) {
    const EnglishAfterwards restore;
    ASSERT_TRUE(setLanguage(QStringLiteral("zh_CN")));
    MainWindow window;
    window.show();
    QApplication::processEvents();

    const QStringList titles = menuTitles(window);
    ASSERT_GE(titles.size(), 4);
    for (const QString& title : titles)
        EXPECT_TRUE(hasCjk(title)) << title.toStdString();
    EXPECT_TRUE(titles.contains(QStringLiteral("\u6587\u4ef6(&F)"))) // 文件(&F)
        << titles.join(QLatin1Char('|')).toStdString();
    int chineseItems = 0;
    const QStringList items = menuItems(window);
    for (const QString& item : items)
        chineseItems += hasCjk(item) ? 1 : 0;
    // Every item but file names and the few that are names (AttnLab, FlashAttention ...).
    EXPECT_GT(chineseItems, items.size() * 3 / 4) << items.join(QLatin1Char('|')).toStdString();
    const QStringList tabs = tabTexts(window);
    EXPECT_TRUE(tabs.contains(QStringLiteral("\u70ed\u529b\u56fe"))) // 热力图
        << tabs.join(QLatin1Char('|')).toStdString();
    bool chineseGroup = false;
    for (QGroupBox* group : window.inputsPanel()->findChildren<QGroupBox*>())
        chineseGroup = chineseGroup || hasCjk(group->title());
    EXPECT_TRUE(chineseGroup);
}

/// Every caption and axis label a view draws.
QStringList plotTexts(View* view) {
    QStringList texts;
    for (QCustomPlot* plot : view->findChildren<QCustomPlot*>()) {
        for (QCPTextElement* text : plot->findChildren<QCPTextElement*>())
            if (text->visible() && !text->text().isEmpty()) texts << text->text();
        for (QCPAxis* axis : plot->findChildren<QCPAxis*>())
            if (axis->visible() && !axis->label().isEmpty()) texts << axis->label();
    }
    return texts;
}

/// English words of four or more letters in `text` that are not names or notation.
QStringList englishWords(const QString& text) {
    static const QSet<QString> names = {
        QStringLiteral("softmax"), QStringLiteral("FlashAttention"), QStringLiteral("AttnLab"),
        QStringLiteral("RoPE"),    QStringLiteral("Concat"),         QStringLiteral("MASK")};
    QStringList words;
    // Whole words: d_model and W_O are notation.
    static const QRegularExpression word(QStringLiteral("(?<![A-Za-z_])[A-Za-z]{4,}(?![A-Za-z_])"));
    for (auto it = word.globalMatch(text); it.hasNext();) {
        const QString found = it.next().captured();
        if (!names.contains(found)) words << found;
    }
    return words;
}

// A string whose catalogue entry does not match the code (lupdate read "h\u00b7d_v" as another
// character) stays English in Chinese: every view's captions and axis labels are walked, and
// one with English words has Chinese too.
TEST(Language, EveryViewsCaptionsAreChineseInChinese) {
    const EnglishAfterwards restore;
    ASSERT_TRUE(setLanguage(QStringLiteral("zh_CN")));
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    for (const QString& id : viewIds()) {
        window.showView(id);
        window.document()->waitForIdle();
        QApplication::processEvents();
        View* view = window.view(id);
        view->ensureComplete();
        for (const QString& text : plotTexts(view)) {
            const QStringList english = englishWords(text);
            EXPECT_TRUE(english.isEmpty() || hasCjk(text))
                << id.toStdString() << ": \"" << text.toStdString() << "\"";
        }
    }
}

TEST(Language, CaptionsNameTheVariantInTheReadersLanguage) {
    // The walk above passes a caption that has any Chinese in it: "linear" and "additive"
    // stayed English inside Chinese captions.
    const EnglishAfterwards restore;
    ASSERT_TRUE(setLanguage(QStringLiteral("zh_CN")));
    for (const auto& [variant, english, chinese] :
         {std::tuple{Variant::Linear, "linear", "\u7ebf\u6027\u6ce8\u610f\u529b"},
          std::tuple{Variant::Additive, "additive", "\u52a0\u6027\u6ce8\u610f\u529b"}}) {
        Document document;
        Session session;
        session.variant = variant;
        document.reset(session);
        document.flush();
        ASSERT_NE(document.experiment(), nullptr);
        const QString caption = figureCaption(*document.experiment(), 0);
        EXPECT_FALSE(caption.contains(QLatin1String(english))) << caption.toStdString();
        EXPECT_TRUE(caption.contains(QString::fromUtf8(chinese))) << caption.toStdString();
    }
}

TEST(Language, AWrappedChineseCaptionKeepsANumberWithTheWordItCounts) {
    // "第 0 个头（共 1 个）" broke as "（共 1" / "个）" on a projector.
    const QString caption = QString::fromUtf8(
        "\u6743\u91cd \u2014 \u968f\u673a\u6295\u5f71\uff08\u79cd\u5b50 0\uff09\uff0c"
        "softmax\uff0c\u65e0\u63a9\u7801\uff0c\u7b2c 0 \u4e2a\u5934\uff08\u5171 1 "
        "\u4e2a\uff09");
    QFont font;
    font.setPointSize(16);
    const QRegularExpression han(QStringLiteral("\\p{Han}"));
    int wrapped = 0;
    for (int width = 140; width <= 700; width += 7) { // narrower: no room for "（共 1 个）"
        const QStringList lines = wrapCaption(caption, font, width).split(QLatin1Char('\n'));
        wrapped += lines.size() > 1;
        for (int i = 1; i < lines.size(); ++i) {
            const QString before = lines[i - 1].right(1), after = lines[i].left(1);
            const bool split = (before.at(0).isDigit() && han.match(after).hasMatch()) ||
                               (han.match(before).hasMatch() && after.at(0).isDigit());
            EXPECT_FALSE(split) << width << ": " << lines.join(QStringLiteral(" | ")).toStdString();
        }
    }
    EXPECT_GT(wrapped, 10); // the widths did make it wrap
}

TEST(Language, AWrappedCaptionKeepsAQuotedTokenWhole) {
    // The translation's title broke "“</s>”" as "“</" / "s>”" on a projector (#37, item 7).
    const QString chinese = QString::fromUtf8(
        "\u4ea4\u53c9\u6ce8\u610f\u529b\uff0c\u89e3\u7801\u5668\u7b2c 1 \u5c42\uff0c\u7b2c 0 "
        "\u4e2a\u5934\uff1a\u7b2c 7 / 7 \u4e2a\u8bcd\uff0c\u201c</s>\u201d\u8bfb\u7684\u662f"
        "\u201c</s>\u201d\uff080.99\uff09");
    const QString english = QString::fromUtf8(
        "Cross-attention, decoder layer 1, head 0: word 7 of 7, \u201c</s>\u201d reads "
        "\u201cmat/rug\u201d (0.99)");
    QFont font;
    font.setPointSize(16);
    int wrapped = 0;
    for (const QString& caption : {chinese, english})
        for (int width = 140; width <= 900; width += 7) {
            const QString text = wrapCaption(caption, font, width);
            const QStringList lines = text.split(QLatin1Char('\n'));
            wrapped += lines.size() > 1;
            // Nothing added or lost but line breaks and spaces (non-breaking ones included).
            static const QRegularExpression spaces(QStringLiteral("[\\s\\x{a0}]"));
            EXPECT_EQ(QString(text).remove(spaces).toStdString(),
                      QString(caption).remove(spaces).toStdString())
                << width;
            for (const QString& line : lines)
                EXPECT_EQ(line.count(QChar(0x201c)), line.count(QChar(0x201d)))
                    << width << ": " << lines.join(QStringLiteral(" | ")).toStdString();
        }
    EXPECT_GT(wrapped, 20); // the widths did make it wrap
}

// After a live switch Edit > Undo kept its English prefix and the command's English text.
TEST(Language, TheUndoEntryFollowsALiveSwitch) {
    const EnglishAfterwards restore;
    ASSERT_TRUE(setLanguage(QStringLiteral("en")));
    MainWindow window;
    window.show();
    window.document()->modify([](Session& s) { s.text = "a b c"; },
                              QCoreApplication::translate("main", "Edit text"));
    QAction* undo = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
        if (action->shortcut() == QKeySequence(QKeySequence::Undo)) undo = action;
    ASSERT_NE(undo, nullptr);
    EXPECT_EQ(undo->text(), QStringLiteral("&Undo Edit text"));
    ASSERT_TRUE(window.setLanguage(QStringLiteral("zh_CN"), false));
    QApplication::processEvents();
    EXPECT_TRUE(hasCjk(undo->text())) << undo->text().toStdString();
    EXPECT_FALSE(undo->text().contains(QStringLiteral("Edit text"))) << undo->text().toStdString();
    EXPECT_TRUE(undo->text().contains(QStringLiteral("\u7f16\u8f91\u6587\u672c"))) // 编辑文本
        << undo->text().toStdString();
    ASSERT_TRUE(window.setLanguage(QStringLiteral("en"), false));
    QApplication::processEvents();
    EXPECT_EQ(undo->text(), QStringLiteral("&Undo Edit text"));
}

TEST(Language, SwitchesLiveBothWays) {
    const EnglishAfterwards restore;
    ASSERT_TRUE(setLanguage(QStringLiteral("en")));
    MainWindow window;
    window.show();
    QApplication::processEvents();
    const QStringList englishItems = menuItems(window);
    for (const QString& title : menuTitles(window))
        EXPECT_FALSE(hasCjk(title)) << title.toStdString();

    ASSERT_TRUE(window.setLanguage(QStringLiteral("zh_CN"), false));
    QApplication::processEvents();
    EXPECT_EQ(currentLanguage(), QStringLiteral("zh_CN"));
    for (const QString& title : menuTitles(window))
        EXPECT_TRUE(hasCjk(title)) << title.toStdString();
    EXPECT_TRUE(tabTexts(window).contains(QStringLiteral("\u70ed\u529b\u56fe")));
    EXPECT_TRUE(hasCjk(window.view(QStringLiteral("heatmap"))->title()));
    // The language menu shows which one is on.
    for (QAction* action : window.findChildren<QAction*>())
        if (action->data().toString() == QLatin1String("zh_CN")) {
            EXPECT_TRUE(action->isChecked());
        }

    ASSERT_TRUE(window.setLanguage(QStringLiteral("en"), false));
    QApplication::processEvents();
    // Back to exactly the English the window was built with.
    EXPECT_EQ(menuItems(window), englishItems);
    EXPECT_TRUE(tabTexts(window).contains(QStringLiteral("Heatmap")));
    for (const QString& title : menuTitles(window))
        EXPECT_FALSE(hasCjk(title)) << title.toStdString();
}

TEST(Language, RetranslatedGoesBothWaysAndLeavesOtherTextAlone) {
    const EnglishAfterwards restore;
    ASSERT_TRUE(setLanguage(QStringLiteral("zh_CN")));
    EXPECT_EQ(retranslated(QStringLiteral("&File")), QStringLiteral("\u6587\u4ef6(&F)"));
    EXPECT_EQ(retranslated(QStringLiteral("the cat sat")), QStringLiteral("the cat sat"));
    ASSERT_TRUE(setLanguage(QStringLiteral("en")));
    EXPECT_EQ(retranslated(QStringLiteral("\u6587\u4ef6(&F)")), QStringLiteral("&File"));
}

} // namespace
} // namespace attnlab::ui

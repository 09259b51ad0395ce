#include "ui/window/language.h"

#include <QAbstractButton>
#include <QAction>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFile>
#include <QGroupBox>
#include <QHash>
#include <QLabel>
#include <QLibraryInfo>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPointer>
#include <QSettings>
#include <QSpinBox>
#include <QTabBar>
#include <QTableWidget>
#include <QTranslator>
#include <QWidget>
#include <QXmlStreamReader>
#include <qcustomplot.h>

namespace attnlab::ui {

namespace {

const char* const kLanguageKey = "language";

struct Catalogue {
    QHash<QString, QString> toTarget; ///< English source -> translation
    QHash<QString, QString> toSource; ///< translation -> English source
};

/// The translation table of `code` read from the embedded .ts (the same file the .qm is
/// compiled from). Only finished, non-empty singular translations count.
Catalogue readCatalogue(const QString& code) {
    Catalogue catalogue;
    QFile file(QStringLiteral(":/translations/attnlab_%1.ts").arg(code));
    if (!file.open(QIODevice::ReadOnly)) return catalogue;
    QXmlStreamReader xml(&file);
    QString source;
    bool numerus = false;
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement) continue;
        if (xml.name() == QLatin1String("message")) {
            source.clear();
            numerus = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
        } else if (xml.name() == QLatin1String("source")) {
            source = xml.readElementText();
        } else if (xml.name() == QLatin1String("translation") && !numerus) {
            const bool finished = xml.attributes().value(QLatin1String("type")).isEmpty();
            const QString target = xml.readElementText();
            if (!finished || target.isEmpty() || source.isEmpty()) continue;
            if (!catalogue.toTarget.contains(source)) catalogue.toTarget.insert(source, target);
            if (!catalogue.toSource.contains(target)) catalogue.toSource.insert(target, source);
        }
    }
    return catalogue;
}

QString& current() {
    static QString code = QStringLiteral("en");
    return code;
}

QList<QPointer<QTranslator>>& installed() {
    static QList<QPointer<QTranslator>> translators;
    return translators;
}

const Catalogue& catalogueOf(const QString& code) {
    static QHash<QString, Catalogue> catalogues;
    auto found = catalogues.find(code);
    if (found == catalogues.end()) found = catalogues.insert(code, readCatalogue(code));
    return *found;
}

} // namespace

QStringList languageCodes() {
    return {QStringLiteral("en"), QStringLiteral("zh_CN")};
}

QString languageName(const QString& code) {
    if (code == QLatin1String("en")) return QStringLiteral("English");
    if (code == QLatin1String("zh_CN")) return QStringLiteral("\u7b80\u4f53\u4e2d\u6587");
    return {};
}

QString normalizedLanguage(const QString& code) {
    QString spelled = code.trimmed();
    spelled.replace(QLatin1Char('-'), QLatin1Char('_'));
    const QString lower = spelled.toLower();
    if (lower == QLatin1String("en") || lower.startsWith(QLatin1String("en_")) ||
        lower == QLatin1String("c"))
        return QStringLiteral("en");
    // Simplified Chinese: zh, zh_CN, zh_SG, zh_Hans...; Taiwan and Hong Kong read Traditional.
    if (lower == QLatin1String("zh") || lower == QLatin1String("zh_cn") ||
        lower == QLatin1String("zh_sg") || lower.startsWith(QLatin1String("zh_hans")))
        return QStringLiteral("zh_CN");
    return {};
}

QString preferredLanguage() {
    const QString stored =
        normalizedLanguage(QSettings().value(QLatin1String(kLanguageKey)).toString());
    if (!stored.isEmpty()) return stored;
    const QLocale system = QLocale::system();
    if (system.language() == QLocale::Chinese &&
        system.script() != QLocale::TraditionalChineseScript)
        return QStringLiteral("zh_CN");
    return QStringLiteral("en");
}

void storeLanguagePreference(const QString& code) {
    QSettings().setValue(QLatin1String(kLanguageKey), code);
}

QString currentLanguage() {
    return current();
}

bool setLanguage(const QString& code) {
    if (!languageCodes().contains(code)) return false;
    QList<QTranslator*> fresh;
    if (code != QLatin1String("en")) {
        auto* own = new QTranslator(QCoreApplication::instance());
        if (!own->load(QStringLiteral(":/i18n/attnlab_%1.qm").arg(code))) {
            delete own;
            return false;
        }
        fresh << own;
        // Qt's own texts (dialog buttons, context menus) when the system ships them.
        auto* qt = new QTranslator(QCoreApplication::instance());
        if (qt->load(QStringLiteral("qtbase_%1").arg(code),
                     QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
            fresh << qt;
        else
            delete qt;
    }
    for (const QPointer<QTranslator>& old : installed()) {
        if (!old) continue;
        QCoreApplication::removeTranslator(old);
        delete old;
    }
    installed().clear();
    current() = code;
    for (QTranslator* translator : fresh) {
        QCoreApplication::installTranslator(translator);
        installed() << translator;
    }
    return true;
}

QString retranslated(const QString& text) {
    if (text.isEmpty()) return text;
    // Back to the English source first, whichever language the text is in now.
    QString source = text;
    for (const QString& code : languageCodes()) {
        const Catalogue& catalogue = catalogueOf(code);
        if (auto it = catalogue.toSource.constFind(text); it != catalogue.toSource.constEnd()) {
            source = *it;
            break;
        }
    }
    if (current() == QLatin1String("en")) return source;
    const Catalogue& catalogue = catalogueOf(current());
    return catalogue.toTarget.value(source, source);
}

namespace {

template <typename Get, typename Set> void swap(Get get, Set set) {
    const QString text = get();
    if (text.isEmpty()) return;
    const QString next = retranslated(text);
    if (next != text) set(next);
}

void retranslatePlot(QCustomPlot* plot) {
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes())
            swap([&] { return axis->label(); }, [&](const QString& t) { axis->setLabel(t); });
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (auto* text = qobject_cast<QCPTextElement*>(element))
            swap([&] { return text->text(); }, [&](const QString& t) { text->setText(t); });
        else if (auto* scale = qobject_cast<QCPColorScale*>(element))
            swap([&] { return scale->axis()->label(); },
                 [&](const QString& t) { scale->axis()->setLabel(t); });
    }
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)))
            swap([&] { return text->text(); }, [&](const QString& t) { text->setText(t); });
    for (int i = 0; i < plot->plottableCount(); ++i) {
        QCPAbstractPlottable* plottable = plot->plottable(i);
        swap([&] { return plottable->name(); }, [&](const QString& t) { plottable->setName(t); });
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void retranslateObject(QObject* object) {
    if (auto* action = qobject_cast<QAction*>(object)) {
        swap([&] { return action->text(); }, [&](const QString& t) { action->setText(t); });
        swap([&] { return action->statusTip(); },
             [&](const QString& t) { action->setStatusTip(t); });
        // QAction::toolTip() falls back on the text: only an explicit tip is swapped.
        const QString tip = action->toolTip();
        if (tip != QString(action->text()).remove(QLatin1Char('&')))
            swap([&] { return tip; }, [&](const QString& t) { action->setToolTip(t); });
        return;
    }
    auto* widget = qobject_cast<QWidget*>(object);
    if (!widget) return;
    swap([&] { return widget->toolTip(); }, [&](const QString& t) { widget->setToolTip(t); });
    swap([&] { return widget->whatsThis(); }, [&](const QString& t) { widget->setWhatsThis(t); });
    swap([&] { return widget->windowTitle(); },
         [&](const QString& t) { widget->setWindowTitle(t); });
    if (auto* menu = qobject_cast<QMenu*>(widget)) {
        swap([&] { return menu->title(); }, [&](const QString& t) { menu->setTitle(t); });
    } else if (auto* label = qobject_cast<QLabel*>(widget)) {
        swap([&] { return label->text(); }, [&](const QString& t) { label->setText(t); });
    } else if (auto* button = qobject_cast<QAbstractButton*>(widget)) {
        swap([&] { return button->text(); }, [&](const QString& t) { button->setText(t); });
    } else if (auto* group = qobject_cast<QGroupBox*>(widget)) {
        swap([&] { return group->title(); }, [&](const QString& t) { group->setTitle(t); });
    } else if (auto* combo = qobject_cast<QComboBox*>(widget)) {
        for (int i = 0; i < combo->count(); ++i)
            swap([&] { return combo->itemText(i); },
                 [&](const QString& t) { combo->setItemText(i, t); });
        if (combo->isEditable() && combo->lineEdit())
            swap([&] { return combo->lineEdit()->placeholderText(); },
                 [&](const QString& t) { combo->lineEdit()->setPlaceholderText(t); });
    } else if (auto* line = qobject_cast<QLineEdit*>(widget)) {
        swap([&] { return line->placeholderText(); },
             [&](const QString& t) { line->setPlaceholderText(t); });
    } else if (auto* tabs = qobject_cast<QTabBar*>(widget)) {
        for (int i = 0; i < tabs->count(); ++i) {
            swap([&] { return tabs->tabText(i); },
                 [&](const QString& t) { tabs->setTabText(i, t); });
            swap([&] { return tabs->tabToolTip(i); },
                 [&](const QString& t) { tabs->setTabToolTip(i, t); });
        }
    } else if (auto* spin = qobject_cast<QSpinBox*>(widget)) {
        swap([&] { return spin->suffix(); }, [&](const QString& t) { spin->setSuffix(t); });
        swap([&] { return spin->prefix(); }, [&](const QString& t) { spin->setPrefix(t); });
        swap([&] { return spin->specialValueText(); },
             [&](const QString& t) { spin->setSpecialValueText(t); });
    } else if (auto* real = qobject_cast<QDoubleSpinBox*>(widget)) {
        swap([&] { return real->suffix(); }, [&](const QString& t) { real->setSuffix(t); });
        swap([&] { return real->prefix(); }, [&](const QString& t) { real->setPrefix(t); });
        swap([&] { return real->specialValueText(); },
             [&](const QString& t) { real->setSpecialValueText(t); });
    } else if (auto* table = qobject_cast<QTableWidget*>(widget)) {
        for (int c = 0; c < table->columnCount(); ++c)
            if (QTableWidgetItem* item = table->horizontalHeaderItem(c))
                swap([&] { return item->text(); }, [&](const QString& t) { item->setText(t); });
    } else if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
        retranslatePlot(plot);
    }
}

} // namespace

void retranslateTexts(QObject* root) {
    if (!root) return;
    retranslateObject(root);
    for (QObject* child : root->findChildren<QObject*>())
        retranslateObject(child);
}

} // namespace attnlab::ui

#include "ui/views/plot_captions.h"

#include <QFont>
#include <QFontMetricsF>
#include <QHash>
#include <QPointer>
#include <QRegularExpression>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QTextLayout>
#include <qcustomplot.h>

#include <algorithm>

namespace attnlab::ui {

QString wrapCaption(const QString& text, const QFont& font, int width) {
    if (text.isEmpty() || width <= 0) return text;
    QStringList lines;
    for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
        if (QFontMetricsF(font).horizontalAdvance(paragraph) <= width) {
            lines << paragraph;
            continue;
        }
        // A number keeps the Chinese word it counts: "共 4 个" does not break at its spaces.
        static const QRegularExpression numberSpace(
            QStringLiteral("(?<=\\p{Han})\\s(?=\\d)|(?<=\\d)\\s(?=\\p{Han})"));
        QString kept = paragraph;
        kept.replace(numberSpace, QString(QChar(0x00a0)));
        // A quoted token stays whole: "“</s>”" broke as "“</" / "s>”". Word joiners between its
        // characters forbid a break there; they are taken out of the lines again.
        static const QRegularExpression quoted(QStringLiteral("\u201c[^\u201d\n]{1,24}\u201d"));
        const QChar joiner(0x2060);
        QString joined;
        qsizetype from = 0;
        for (auto it = quoted.globalMatch(kept); it.hasNext();) {
            const QRegularExpressionMatch match = it.next();
            joined += kept.mid(from, match.capturedStart() - from);
            const QString token = match.captured();
            for (qsizetype i = 0; i < token.size(); ++i) {
                if (i > 0 && !token.at(i).isLowSurrogate()) joined += joiner;
                joined += token.at(i);
            }
            from = match.capturedEnd();
        }
        kept = joined + kept.mid(from);
        QTextLayout layout(kept, font);
        QTextOption option;
        option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
        layout.setTextOption(option);
        layout.beginLayout();
        for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
            line.setLineWidth(width);
            lines << kept.mid(line.textStart(), line.textLength()).remove(joiner).trimmed();
        }
        layout.endLayout();
    }
    return lines.join(QLatin1Char('\n'));
}

namespace {

/// Remembers, per caption, the text its view set and the wrapped text shown, so a caption the
/// view has not changed is re-wrapped from its original at the new width.
class CaptionWrapper : public QObject {
public:
    explicit CaptionWrapper(QCustomPlot* plot) : QObject(plot), m_plot(plot) {
        setObjectName(QStringLiteral("attnlab_caption_wrapper"));
        connect(plot, &QCustomPlot::beforeReplot, this, &CaptionWrapper::wrap);
        connect(plot, &QCustomPlot::afterLayout, this,
                [this] { m_laidOutAt = m_plot->viewport().size(); });
    }

private:
    struct Shown {
        QString original;
        QString wrapped;
    };

    void wrap() {
        const int plotWidth = m_plot->width() - 16;
        if (plotWidth < 40) return;
        // A figure export lays the plot out at the figure's size (QCustomPlot::toPainter) and
        // leaves it so: the captions' cells are then the figure's, not the screen's. Lay it out
        // at its own size again before reading them.
        if (m_laidOutAt != m_plot->viewport().size()) {
            for (const auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins,
                                     QCPLayoutElement::upLayout})
                m_plot->plotLayout()->update(phase);
            m_laidOutAt = m_plot->viewport().size();
        }
        QHash<QCPTextElement*, Shown> next;
        for (QCPLayoutElement* element : m_plot->plotLayout()->elements(true)) {
            auto* caption = qobject_cast<QCPTextElement*>(element);
            if (!caption) continue;
            const QString current = caption->text();
            const auto known = m_shown.constFind(caption);
            const QString original = known != m_shown.constEnd() && known->wrapped == current
                                         ? known->original
                                         : current;
            // A caption may sit in one column of the layout (above the axes, beside a colour
            // scale): it wraps to that column as last laid out, else to the plot.
            const int cell = caption->outerRect().width() - caption->margins().left() -
                             caption->margins().right() - 8;
            const int width = cell >= 40 ? std::min(plotWidth, cell) : plotWidth;
            const QString wrapped = wrapCaption(original, caption->font(), width);
            if (wrapped != current) caption->setText(wrapped);
            next.insert(caption, {original, wrapped});
        }
        m_shown = next;
    }

    QCustomPlot* m_plot;
    QHash<QCPTextElement*, Shown> m_shown;
    QSize m_laidOutAt; ///< the viewport the plot's layout was last computed for
};

} // namespace

void wrapToFigureWidth(int wrapWidth, std::initializer_list<QCPTextElement*> texts) {
    if (wrapWidth <= 0) return;
    for (QCPTextElement* text : texts)
        text->setText(wrapCaption(text->text(), text->font(), wrapWidth - 16));
}

void fitPlotCaptions(QCustomPlot* plot, int minimumWidth, int minimumHeight) {
    if (!plot) return;
    plot->setMinimumSize(minimumWidth, minimumHeight);
    if (!plot->findChild<QObject*>(QStringLiteral("attnlab_caption_wrapper"),
                                   Qt::FindDirectChildrenOnly))
        new CaptionWrapper(plot);
}

} // namespace attnlab::ui

#include "ui/views/token_tooltips.h"

#include <QHelpEvent>
#include <QToolTip>
#include <qcustomplot.h>

#include <cmath>

#include "ui/state/experiment_data.h"

namespace attnlab::ui {

QString tokenTooltip(const std::string& raw, std::int64_t id) {
    const QString shown = displayToken(raw);
    const QString rawText = QString::fromStdString(raw);
    QString text = QObject::tr("\u201c%1\u201d").arg(shown);
    if (rawText != shown || id >= 0)
        text += QObject::tr(" \u2014 raw token \u201c%1\u201d").arg(rawText);
    if (id >= 0) text += QObject::tr(", id %1").arg(id);
    return text;
}

TokenTooltips::TokenTooltips(QCustomPlot* plot) : QObject(plot), m_plot(plot) {
    plot->installEventFilter(this);
}

TokenTooltips* TokenTooltips::of(QCustomPlot* plot) {
    if (auto* existing = plot->findChild<TokenTooltips*>(QString(), Qt::FindDirectChildrenOnly))
        return existing;
    return new TokenTooltips(plot);
}

void TokenTooltips::setTokens(QCPAxis* axis, const std::vector<std::string>& raw,
                              const std::vector<std::int64_t>& ids, const QString& role,
                              bool overPlot, double firstCoordinate) {
    for (Entry& entry : m_entries)
        if (entry.axis == axis) {
            entry.raw = raw;
            entry.ids = ids;
            entry.role = role;
            entry.overPlot = overPlot;
            entry.firstCoordinate = firstCoordinate;
            return;
        }
    m_entries.push_back({axis, raw, ids, role, overPlot, firstCoordinate});
}

void TokenTooltips::clear() {
    m_entries.clear();
}

int TokenTooltips::tokenAt(const Entry& entry, double pixel) {
    const double coordinate = entry.axis->pixelToCoord(pixel) - entry.firstCoordinate;
    if (!std::isfinite(coordinate)) return -1;
    const long index = std::lround(coordinate);
    if (index < 0 || index >= static_cast<long>(entry.raw.size()) ||
        std::abs(coordinate - static_cast<double>(index)) > 0.5)
        return -1;
    return static_cast<int>(index);
}

QString TokenTooltips::textAt(const QPoint& pos) const {
    QStringList inside;
    for (const Entry& entry : m_entries) {
        if (!entry.axis || !entry.axis->visible()) continue;
        const QCPAxisRect* rect = entry.axis->axisRect();
        const QRect inner = rect->rect();
        const QRect outer = rect->outerRect();
        const bool horizontal = entry.axis->orientation() == Qt::Horizontal;
        const double along = horizontal ? pos.x() : pos.y();
        const bool withinSpan = horizontal ? pos.x() >= inner.left() && pos.x() <= inner.right()
                                           : pos.y() >= inner.top() && pos.y() <= inner.bottom();
        if (!withinSpan) continue;
        bool onLabels = false;
        switch (entry.axis->axisType()) {
        case QCPAxis::atBottom:
            onLabels = pos.y() > inner.bottom() && pos.y() <= outer.bottom();
            break;
        case QCPAxis::atTop:
            onLabels = pos.y() < inner.top() && pos.y() >= outer.top();
            break;
        case QCPAxis::atLeft:
            onLabels = pos.x() < inner.left() && pos.x() >= outer.left();
            break;
        case QCPAxis::atRight:
            onLabels = pos.x() > inner.right() && pos.x() <= outer.right();
            break;
        }
        const int token = tokenAt(entry, along);
        if (token < 0) continue;
        const std::int64_t id = token < static_cast<int>(entry.ids.size())
                                    ? entry.ids[static_cast<std::size_t>(token)]
                                    : -1;
        const QString text = tokenTooltip(entry.raw[static_cast<std::size_t>(token)], id);
        if (onLabels) return text;
        if (entry.overPlot && inner.contains(pos))
            inside << (entry.role.isEmpty() ? text : QStringLiteral("%1 %2").arg(entry.role, text));
    }
    return inside.join(QLatin1Char('\n'));
}

bool TokenTooltips::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = textAt(help->pos());
        if (!text.isEmpty()) {
            QToolTip::showText(help->globalPos(), text, m_plot);
            return true;
        }
    }
    return QObject::eventFilter(watched, event);
}

} // namespace attnlab::ui

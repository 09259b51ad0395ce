#include "ui/views/flow_layout.h"

#include <QHBoxLayout>
#include <QStyle>
#include <QWidget>

#include <algorithm>

namespace attnlab::ui {

FlowLayout::FlowLayout(QWidget* parent) : QLayout(parent) {}

FlowLayout::~FlowLayout() {
    while (QLayoutItem* item = takeAt(0))
        delete item;
}

void FlowLayout::addWidget(QWidget* widget, int stretch) {
    QLayout::addWidget(widget); // through addItem below
    m_stretch.last() = stretch;
}

void FlowLayout::addPair(QWidget* label, QWidget* field) {
    auto* pair = new QWidget;
    auto* row = new QHBoxLayout(pair);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(label);
    row->addWidget(field);
    addWidget(pair);
}

void FlowLayout::addItem(QLayoutItem* item) {
    m_items.append(item);
    m_stretch.append(0);
    invalidate();
}

int FlowLayout::count() const {
    return static_cast<int>(m_items.size());
}

QLayoutItem* FlowLayout::itemAt(int index) const {
    return index >= 0 && index < m_items.size() ? m_items.at(index) : nullptr;
}

QLayoutItem* FlowLayout::takeAt(int index) {
    if (index < 0 || index >= m_items.size()) return nullptr;
    m_stretch.removeAt(index);
    return m_items.takeAt(index);
}

Qt::Orientations FlowLayout::expandingDirections() const {
    return {};
}

bool FlowLayout::hasHeightForWidth() const {
    return true;
}

int FlowLayout::heightForWidth(int width) const {
    return arrange(QRect(0, 0, width, 0), false);
}

QSize FlowLayout::minimumSize() const {
    // As narrow as the widest item: everything else wraps.
    QSize size;
    for (const QLayoutItem* item : m_items)
        if (!item->isEmpty()) size = size.expandedTo(item->minimumSize());
    const QMargins margins = contentsMargins();
    return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom());
}

QSize FlowLayout::sizeHint() const {
    // Everything on one row.
    int width = 0;
    int height = 0;
    int shown = 0;
    for (const QLayoutItem* item : m_items) {
        if (item->isEmpty()) continue;
        width += item->sizeHint().width();
        height = std::max(height, item->sizeHint().height());
        ++shown;
    }
    const QMargins margins = contentsMargins();
    return {width + std::max(0, shown - 1) * gap() + margins.left() + margins.right(),
            height + margins.top() + margins.bottom()};
}

void FlowLayout::setGeometry(const QRect& rect) {
    QLayout::setGeometry(rect);
    arrange(rect, true);
}

int FlowLayout::gap() const {
    if (spacing() >= 0) return spacing();
    const QWidget* owner = parentWidget();
    const int metric =
        owner ? owner->style()->pixelMetric(QStyle::PM_LayoutHorizontalSpacing, nullptr, owner) : -1;
    return metric >= 0 ? metric : 6;
}

int FlowLayout::arrange(const QRect& rect, bool apply) const {
    const QRect inner = rect.marginsRemoved(contentsMargins());
    const int space = gap();
    const int room = std::max(0, inner.width());
    auto least = [room](const QLayoutItem* item) {
        return std::min(item->minimumSize().width(), room);
    };
    auto wanted = [room](const QLayoutItem* item) {
        return std::min(std::max(item->sizeHint().width(), item->minimumSize().width()), room);
    };
    int top = inner.top();
    int index = 0;
    const int total = static_cast<int>(m_items.size());
    while (index < total) {
        // One row: as many items as fit at their least widths (at least one item), as a box
        // layout would squeeze them.
        QList<int> row;
        int leastUsed = 0;
        int wantedUsed = 0;
        int height = 0;
        for (; index < total; ++index) {
            const QLayoutItem* item = m_items.at(index);
            if (item->isEmpty()) continue;
            const int gapBefore = row.isEmpty() ? 0 : space;
            if (!row.isEmpty() && leastUsed + gapBefore + least(item) > room) break;
            leastUsed += gapBefore + least(item);
            wantedUsed += gapBefore + wanted(item);
            height = std::max(height, item->sizeHint().height());
            row.append(index);
        }
        if (row.isEmpty()) break;
        // Each item between its least and its wanted width, by the same share; what is left
        // past the wanted widths goes to the stretched items.
        const int squeeze = wantedUsed - leastUsed;
        const double share =
            squeeze > 0 ? std::clamp(double(room - leastUsed) / squeeze, 0.0, 1.0) : 1.0;
        int stretches = 0;
        for (const int i : row)
            stretches += m_stretch.at(i);
        const int left = std::max(0, room - wantedUsed);
        int x = inner.left();
        for (const int i : row) {
            QLayoutItem* item = m_items.at(i);
            int width = least(item) + static_cast<int>((wanted(item) - least(item)) * share);
            if (stretches > 0 && m_stretch.at(i) > 0) width += left * m_stretch.at(i) / stretches;
            const int itemHeight = std::min(height, item->sizeHint().height());
            if (apply)
                item->setGeometry(QRect(x, top + (height - itemHeight) / 2, width, itemHeight));
            x += width + space;
        }
        top += height + space;
    }
    const int used = top > inner.top() ? top - space - inner.top() : 0;
    return used + contentsMargins().top() + contentsMargins().bottom();
}

} // namespace attnlab::ui

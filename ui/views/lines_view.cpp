#include "ui/views/lines_view.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/state/experiment_data.h"
#include "ui/views/token_tooltips.h"

namespace attnlab::ui {

namespace {

const QColor kLineColor(0x00, 0x72, 0xb2);
const QColor kLineColorDark(0x56, 0xb4, 0xe9);

} // namespace

LinesView::LinesView(Document* document, QWidget* parent) : View(document, parent) {
    setMouseTracking(true);
    setMinimumSize(200, 150);
    setToolTip(tr("Each line joins a query (left) to a key (right); its thickness and opacity "
                  "are the attention weight. Hover a token to see only its lines."));
}

void LinesView::refresh() {
    const Experiment* experiment = document()->experiment();
    const ViewState& state = document()->session().viewState;
    m_queryOffset = m_keyOffset = 0;
    if (experiment) {
        m_head = clampedHead(*experiment, state.head);
        m_allWeights = headWeights(*experiment, m_head);
        m_allQueries = displayTokens(experiment->queryTokens);
        m_allKeys = displayTokens(experiment->keyTokens);
        const Index rows = m_allWeights.rows(), cols = m_allWeights.cols();
        // A long text: a window around the selected query (keys at the same positions in
        // self-attention, at the same share of the source in cross-attention).
        const Index focus = state.query >= 0 && state.query < rows ? state.query : 0;
        auto firstOf = [](Index count, Index centre) {
            if (count <= kMaxShownTokens) return Index{0};
            return std::clamp<Index>(centre - kMaxShownTokens / 2, 0, count - kMaxShownTokens);
        };
        m_queryOffset = firstOf(rows, focus);
        m_keyOffset = firstOf(cols, rows == cols ? focus : focus * cols / std::max<Index>(1, rows));
        const Index shownRows = std::min(rows, kMaxShownTokens);
        const Index shownCols = std::min(cols, kMaxShownTokens);
        m_weights = m_allWeights.block(m_queryOffset, m_keyOffset, shownRows, shownCols);
        auto window = [](const QStringList& tokens, Index first, Index count, bool numbered) {
            QStringList out;
            for (Index i = first; i < first + count && i < tokens.size(); ++i)
                out << (numbered ? QStringLiteral("%1 %2").arg(i).arg(tokens[i]) : tokens[i]);
            return out;
        };
        m_queries = window(m_allQueries, m_queryOffset, shownRows, rows > kMaxShownTokens);
        m_keys = window(m_allKeys, m_keyOffset, shownCols, cols > kMaxShownTokens);
        m_totalQueries = rows;
        m_totalKeys = cols;
        auto raw = [](const std::vector<std::string>& tokens, Index first, Index count) {
            const auto begin =
                std::min<std::size_t>(tokens.size(), static_cast<std::size_t>(first));
            const auto end =
                std::min<std::size_t>(tokens.size(), static_cast<std::size_t>(first + count));
            return std::vector<std::string>(tokens.begin() + static_cast<std::ptrdiff_t>(begin),
                                            tokens.begin() + static_cast<std::ptrdiff_t>(end));
        };
        m_rawQueries = raw(experiment->queryTokens, m_queryOffset, shownRows);
        m_rawKeys = raw(experiment->keyTokens, m_keyOffset, shownCols);
    } else {
        m_rawQueries.clear();
        m_rawKeys.clear();
        m_weights = m_allWeights = MatrixD(0, 0);
        m_queries.clear();
        m_keys.clear();
        m_allQueries.clear();
        m_allKeys.clear();
        m_totalQueries = m_totalKeys = 0;
    }
    const Index selected = state.query - m_queryOffset;
    m_selectedQuery = figureStyle().showSelection && state.query >= 0 && selected >= 0 &&
                              selected < m_weights.rows()
                          ? selected
                          : -1;
    if (!figureStyle().showSelection) m_hover = {}; // a figure shows no hover
    update();
}

void LinesView::isolateToken(int side, Index index) {
    const Index count = side == 0 ? m_weights.rows() : m_weights.cols();
    Focus next{side, index >= 0 && index < count ? index : -1};
    if (next.index == m_hover.index && next.side == m_hover.side) return;
    m_hover = next;
    update();
}

LinesView::Layout LinesView::layoutFor(const QSizeF& size) const {
    Layout layout;
    // A windowed text's title has a second sentence, wrapped: room for three lines.
    const bool windowed = m_weights.rows() < m_totalQueries || m_weights.cols() < m_totalKeys;
    const double titleHeight =
        std::max({24.0, size.height() * 0.07, windowed ? 5.2 * theme().fontPointSize : 0.0});
    layout.title = QRectF(0, 0, size.width(), titleHeight);
    layout.top = titleHeight + 8;
    const Index rows = std::max<Index>(1, std::max(m_weights.rows(), m_weights.cols()));
    layout.rowHeight = std::max(1.0, (size.height() - layout.top - 12) / static_cast<double>(rows));
    layout.labelWidth = std::min(size.width() * 0.3, std::max(60.0, size.width() * 0.18));
    layout.leftX = layout.labelWidth + 16;
    layout.rightX = size.width() - layout.labelWidth - 16;
    return layout;
}

bool LinesView::lineShown(Index query, Index key) const {
    if (m_hover.index >= 0)
        return m_hover.side == 0 ? query == m_hover.index : key == m_hover.index;
    if (m_selectedQuery >= 0) return query == m_selectedQuery;
    return true;
}

int LinesView::lineCount() const {
    int count = 0;
    for (Index i = 0; i < m_weights.rows(); ++i)
        for (Index j = 0; j < m_weights.cols(); ++j)
            if (m_weights(i, j) >= kMinWeight && lineShown(i, j)) ++count;
    return count;
}

LinesView::Focus LinesView::tokenAt(const QPointF& position) const {
    const Layout layout = layoutFor(QSizeF(size()));
    const Index rows = std::max(m_weights.rows(), m_weights.cols());
    auto rowAt = [&](Index count) -> Index {
        const double offset = (static_cast<double>(rows - count)) * layout.rowHeight / 2;
        const double y = position.y() - layout.top - offset;
        if (y < 0) return -1;
        const auto index = static_cast<Index>(y / layout.rowHeight);
        return index < count ? index : -1;
    };
    if (position.x() <= layout.leftX) return {0, rowAt(m_weights.rows())};
    if (position.x() >= layout.rightX) return {1, rowAt(m_weights.cols())};
    return {};
}

void LinesView::draw(QPainter& painter, const QSizeF& size) const {
    const Theme look = theme();
    const Layout layout = layoutFor(size);
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(QRectF(QPointF(0, 0), size), look.background);

    QFont titleFont = font();
    titleFont.setPointSize(look.fontPointSize);
    titleFont.setBold(true);
    painter.setFont(titleFont);
    painter.setPen(look.foreground);
    QString heading = m_weights.size() == 0
                          ? tr("Lines: no attention to show")
                          : tr("Attention of head %1: query (left) \u2192 key (right)").arg(m_head);
    if (m_hover.index >= 0 && m_weights.size() > 0) {
        const QStringList& tokens = m_hover.side == 0 ? m_queries : m_keys;
        heading += tr(", only %1 \u201c%2\u201d")
                       .arg(m_hover.side == 0 ? tr("query") : tr("key"))
                       .arg(m_hover.index < tokens.size() ? tokens[static_cast<int>(m_hover.index)]
                                                          : QString());
    }
    if (m_weights.rows() < m_totalQueries || m_weights.cols() < m_totalKeys)
        heading += QLatin1Char('\n') +
                   tr("queries %1\u2013%2 and keys %3\u2013%4 of %5 \u00d7 %6: select a query to "
                      "move the window")
                       .arg(m_queryOffset)
                       .arg(m_queryOffset + m_weights.rows() - 1)
                       .arg(m_keyOffset)
                       .arg(m_keyOffset + m_weights.cols() - 1)
                       .arg(m_totalQueries)
                       .arg(m_totalKeys);
    painter.drawText(layout.title, Qt::AlignCenter | Qt::TextWordWrap, heading);

    const Index rows = std::max(m_weights.rows(), m_weights.cols());
    auto yOf = [&](Index index, Index count) {
        const double offset = static_cast<double>(rows - count) * layout.rowHeight / 2;
        return layout.top + offset + (static_cast<double>(index) + 0.5) * layout.rowHeight;
    };
    const QColor base = look.name == QLatin1String("dark") ? kLineColorDark : kLineColor;
    const double maxWidth = std::clamp(layout.rowHeight * 0.6, 1.5, 10.0) * look.lineWidth;
    // Faint lines first so strong ones stay on top.
    for (int pass = 0; pass < 2; ++pass)
        for (Index i = 0; i < m_weights.rows(); ++i)
            for (Index j = 0; j < m_weights.cols(); ++j) {
                const double w = m_weights(i, j);
                if (!(w >= kMinWeight) || !lineShown(i, j) || (w >= 0.5) != (pass == 1)) continue;
                QColor color = base;
                color.setAlphaF(std::clamp(0.15 + 0.85 * w, 0.0, 1.0));
                painter.setPen(
                    QPen(color, std::max(0.5, w * maxWidth), Qt::SolidLine, Qt::RoundCap));
                painter.drawLine(QPointF(layout.leftX, yOf(i, m_weights.rows())),
                                 QPointF(layout.rightX, yOf(j, m_weights.cols())));
            }

    QFont labelFont = font();
    // Down to the theme's least size (a long text shows few enough tokens for it to fit).
    labelFont.setPointSizeF(
        std::clamp(layout.rowHeight * 0.45,
                   static_cast<double>(std::min(look.minimumFontPointSize, look.fontPointSize)),
                   static_cast<double>(look.fontPointSize)));
    painter.setFont(labelFont);
    auto drawLabels = [&](const QStringList& tokens, Index count, int side) {
        for (Index i = 0; i < count; ++i) {
            const double y = yOf(i, count);
            const bool active = m_hover.index == i && m_hover.side == side;
            const bool selected = side == 0 && m_selectedQuery == i;
            QFont f = labelFont;
            f.setBold(active || selected);
            painter.setFont(f);
            painter.setPen(active || selected ? look.accent : look.foreground);
            const QRectF box =
                side == 0 ? QRectF(4, y - layout.rowHeight / 2, layout.labelWidth, layout.rowHeight)
                          : QRectF(layout.rightX + 12, y - layout.rowHeight / 2, layout.labelWidth,
                                   layout.rowHeight);
            const QString text = i < tokens.size() ? tokens[static_cast<int>(i)] : QString();
            painter.drawText(box, (side == 0 ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter,
                             text);
        }
    };
    drawLabels(m_queries, m_weights.rows(), 0);
    drawLabels(m_keys, m_weights.cols(), 1);
    painter.restore();
}

void LinesView::paintFigure(QCPPainter& painter, const QSize& size) {
    draw(painter, QSizeF(size));
}

void LinesView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    draw(painter, QSizeF(size()));
}

void LinesView::mouseMoveEvent(QMouseEvent* event) {
    const Focus focus = tokenAt(event->position());
    isolateToken(focus.side, focus.index);
    View::mouseMoveEvent(event);
}

bool LinesView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        const Focus focus = tokenAt(QPointF(help->pos()));
        const std::vector<std::string>& raw = focus.side == 0 ? m_rawQueries : m_rawKeys;
        if (focus.index >= 0 && focus.index < static_cast<Index>(raw.size())) {
            QToolTip::showText(help->globalPos(),
                               (focus.side == 0 ? tr("query %1") : tr("key %1"))
                                   .arg(tokenTooltip(raw[static_cast<std::size_t>(focus.index)])),
                               this);
            return true;
        }
    }
    return View::event(event);
}

void LinesView::leaveEvent(QEvent* event) {
    isolateToken(0, -1);
    View::leaveEvent(event);
}

DataTable LinesView::data() const {
    // The whole head, not only the window drawn.
    return DataTable::fromMatrix(m_allWeights, m_allQueries, m_allKeys);
}

} // namespace attnlab::ui

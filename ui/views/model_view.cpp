#include "ui/views/model_view.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

#include "ui/state/dump_document.h"
#include "ui/state/experiment_data.h"
#include "ui/views/colormap.h"

namespace attnlab::ui {

namespace {
constexpr int kMargin = 8;
constexpr int kTitleHeight = 26;
constexpr int kLabelWidth = 34;
constexpr int kLabelHeight = 18;

} // namespace

ModelView::ModelView(Document* document, QWidget* parent)
    : View(document, parent), m_dumps(DumpDocument::of(document)) {
    setMinimumSize(200, 160);
    setToolTip(tr("Every layer (rows) and head (columns) of the model dump, each scaled to its "
                  "own maximum. Click one to open it in the heatmap."));
    connect(m_dumps, &DumpDocument::dumpChanged, this, [this] { markStale(); });
    connect(m_dumps, &DumpDocument::layerChanged, this, [this] { markStale(); });
    connect(m_dumps, &DumpDocument::thumbnailsChanged, this, [this] { update(); });
}

ModelView::~ModelView() = default;

bool ModelView::computing() const {
    return m_dumps->thumbnailsComputing();
}

void ModelView::waitForWork() {
    m_dumps->waitForThumbnails();
}

bool ModelView::dependsOn(Document::What what) const {
    return what == Document::What::ViewState || what == Document::What::Selection ||
           what == Document::What::Experiment;
}

void ModelView::rebuild() {
    const AttentionDump* dump = m_dumps->dump();
    m_layers = dump ? static_cast<int>(dump->layers) : 0;
    m_heads = dump ? static_cast<int>(dump->heads) : 0;
    const QString colormap = QString::fromStdString(document()->session().viewState.colormap);
    std::vector<QRgb> table(256);
    for (int i = 0; i < 256; ++i)
        table[static_cast<std::size_t>(i)] = colormapColor(colormap, i / 255.0).rgb();
    m_dumps->requestThumbnails(table, kMaxThumbnailPixels);
}

void ModelView::refresh() {
    rebuild();
    // The tokens of the dump as the document reads them (the focused layer's experiment).
    m_queryTokens.clear();
    m_keyTokens.clear();
    const AttentionDump* dump = m_dumps->dump();
    if (const Experiment* experiment = document()->experiment(); dump && experiment) {
        if (static_cast<Index>(experiment->queryTokens.size()) == dump->sq)
            m_queryTokens = displayTokens(experiment->queryTokens);
        if (static_cast<Index>(experiment->keyTokens.size()) == dump->sk)
            m_keyTokens = displayTokens(experiment->keyTokens);
    }
    update();
}

QFont ModelView::tokenFont() const {
    const Theme look = theme();
    QFont small = font();
    setFontSize(small, look, std::max(6, look.fontPointSize - 2));
    return small;
}

namespace {
/// The widest of `tokens` in `font` plus a gap, at most `most` pixels; 0 without tokens.
int labelRoom(const QStringList& tokens, const QFont& font, int most) {
    if (tokens.isEmpty()) return 0;
    const QFontMetrics metrics(font);
    int widest = 0;
    for (const QString& token : tokens)
        widest = std::max(widest, metrics.horizontalAdvance(token));
    return std::min(most, widest + 6);
}
} // namespace

int ModelView::tokenColumnWidth() const {
    return labelRoom(m_queryTokens, tokenFont(), kMaxTokenLabelRoom);
}

int ModelView::tokenRowHeight() const {
    return labelRoom(m_keyTokens, tokenFont(), kMaxTokenLabelRoom);
}

ModelView::Layout ModelView::layout() const {
    Layout out;
    if (m_layers == 0 || m_heads == 0) return out;
    // The grid fills the view: the heads share its width and the layers its height.
    const int left = kMargin + kLabelWidth + tokenColumnWidth();
    const int top = kMargin + kTitleHeight + kLabelHeight;
    const int width = this->width() - left - kMargin;
    const int height = this->height() - top - kMargin - tokenRowHeight();
    const int across = std::max(4, width / m_heads);
    const int down = std::max(4, height / m_layers);
    out.gap = std::min(across, down) >= 24 ? 3 : 1;
    out.cell = QSize(across - out.gap, down - out.gap);
    out.grid = QRect(left, top, across * m_heads, down * m_layers);
    return out;
}

QRect ModelView::thumbnailRect(int layer, int head) const {
    const Layout grid = layout();
    if (layer < 0 || head < 0 || layer >= m_layers || head >= m_heads || grid.cell.isEmpty())
        return {};
    return QRect(grid.grid.left() + head * (grid.cell.width() + grid.gap),
                 grid.grid.top() + layer * (grid.cell.height() + grid.gap), grid.cell.width(),
                 grid.cell.height());
}

void ModelView::paintTokens(QPainter& painter, const Layout& grid) {
    m_drawnTokenLabels.clear();
    const QFont small = tokenFont();
    painter.setFont(small);
    const QFontMetrics metrics(small);
    const int line = metrics.height();
    // One label per text line at most: every n-th token where the thumbnails are small.
    auto stepFor = [line](double pitch) {
        return std::max(1, static_cast<int>(std::ceil(line / std::max(pitch, 1e-9))));
    };
    const int column = tokenColumnWidth();
    if (column > 0) {
        const auto count = static_cast<int>(m_queryTokens.size());
        for (int l = 0; l < m_layers; ++l) {
            const QRect cell = thumbnailRect(l, 0);
            const double pitch = cell.height() / static_cast<double>(count);
            for (int i = 0; i < count; i += stepFor(pitch)) {
                const int y = cell.top() + static_cast<int>((i + 0.5) * pitch);
                const QString text = metrics.elidedText(m_queryTokens[i], Qt::ElideRight, column);
                painter.drawText(QRect(cell.left() - column - 2, y - line / 2, column, line),
                                 Qt::AlignRight | Qt::AlignVCenter, text);
                if (l == 0) m_drawnTokenLabels << m_queryTokens[i];
            }
        }
    }
    const int row = tokenRowHeight();
    if (row > 0) {
        const auto count = static_cast<int>(m_keyTokens.size());
        const QRect cell = thumbnailRect(m_layers - 1, 0);
        const double pitch = cell.width() / static_cast<double>(count);
        for (int j = 0; j < count; j += stepFor(pitch)) {
            const QString text = metrics.elidedText(m_keyTokens[j], Qt::ElideRight, row);
            painter.save();
            painter.translate(cell.left() + (j + 0.5) * pitch, grid.grid.bottom() + 3);
            painter.rotate(-90); // read upwards, ending at the grid
            painter.drawText(QRect(-row, -line / 2, row, line), Qt::AlignRight | Qt::AlignVCenter,
                             text);
            painter.restore();
            m_drawnTokenLabels << m_keyTokens[j];
        }
    }
}

const QImage& ModelView::thumbnail(int layer, int head) const {
    static const QImage kNone;
    const auto at = static_cast<std::size_t>(layer) * static_cast<std::size_t>(m_heads) +
                    static_cast<std::size_t>(head);
    // While a worker computes them, the grid has no images yet.
    const std::vector<QImage>& images = m_dumps->thumbnails();
    if (layer < 0 || head < 0 || layer >= m_layers || head >= m_heads || at >= images.size())
        return kNone;
    return images[at];
}

void ModelView::paintEvent(QPaintEvent*) {
    const Theme look = theme();
    QPainter painter(this);
    painter.fillRect(rect(), look.background);
    painter.setPen(look.foreground);
    QFont font = painter.font();
    font.setPointSize(look.fontPointSize);
    painter.setFont(font);
    if (!m_dumps->dump()) {
        painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                         tr("No model dump open.\nFile \u203a Open Attention Dump\u2026 or Open "
                            "Q/K/V Dump\u2026 shows every layer and head of a real model here."));
        return;
    }
    const AttentionDump& dump = *m_dumps->dump();
    QString heading = tr("%1 \u2014 %2 layers \u00d7 %3 heads, S = %4")
                          .arg(m_dumps->displayName())
                          .arg(dump.layers)
                          .arg(dump.heads)
                          .arg(dump.sk);
    if (computing()) heading += tr(" \u2014 computing every head's map\u2026");
    if (dump.batch > 1) heading += tr(", batch %1 of %2").arg(m_dumps->batch()).arg(dump.batch);
    painter.drawText(QRect(kMargin, kMargin, width() - 2 * kMargin, kTitleHeight),
                     Qt::AlignLeft | Qt::AlignVCenter, heading);
    const Layout grid = layout();
    if (grid.cell.isEmpty()) return;
    const int pitch = std::min(grid.cell.width(), grid.cell.height()) + grid.gap;
    QFont small = font;
    small.setPointSize(std::max(6, std::min(look.fontPointSize - 1, pitch / 2)));
    painter.setFont(small);
    const int labelEvery = std::max(1, 14 / std::max(1, pitch));
    for (int h = 0; h < m_heads; h += labelEvery) {
        const QRect cell = thumbnailRect(0, h);
        painter.drawText(
            QRect(cell.left() - 6, grid.grid.top() - kLabelHeight, cell.width() + 12, kLabelHeight),
            Qt::AlignCenter, QString::number(h));
    }
    for (int l = 0; l < m_layers; l += labelEvery) {
        const QRect cell = thumbnailRect(l, 0);
        painter.drawText(QRect(kMargin, cell.top(), kLabelWidth - 4, cell.height()),
                         Qt::AlignRight | Qt::AlignVCenter, tr("L%1").arg(l));
    }
    paintTokens(painter, grid);
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h)
            painter.drawImage(thumbnailRect(l, h), thumbnail(l, h));
    if (m_dumps->active()) {
        const int focused = static_cast<int>(document()->session().viewState.head);
        const QRect target = thumbnailRect(static_cast<int>(m_dumps->layer()), focused);
        if (!target.isEmpty()) {
            painter.setPen(QPen(look.accent, std::max(2.0, 2.5 * look.lineWidth)));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(target.adjusted(-1, -1, 1, 1));
        }
    }
}

void ModelView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return View::mousePressEvent(event);
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h)
            if (thumbnailRect(l, h).contains(event->pos())) {
                m_dumps->focus(l, h);
                emit headActivated(l, h);
                ViewState state = document()->session().viewState;
                state.view = "heatmap";
                document()->setViewState(state);
                return;
            }
}

DataTable ModelView::data() const {
    DataTable table;
    if (!m_dumps->dump()) return table;
    const std::vector<HeadSummary>& rows = m_dumps->headTable();
    table.columnLabels = {tr("layer"), tr("head"), tr("mean entropy"), tr("mean distance"),
                          tr("first-token mass")};
    table.cols = 5;
    table.rowHeader = QStringLiteral("head");
    table.rows = static_cast<int>(rows.size());
    for (const HeadSummary& row : rows) {
        table.rowLabels << tr("L%1 H%2").arg(row.layer).arg(row.head);
        table.values.insert(table.values.end(),
                            {static_cast<double>(row.layer), static_cast<double>(row.head),
                             row.meanEntropy, row.meanDistance, row.firstTokenMass});
    }
    return table;
}

} // namespace attnlab::ui

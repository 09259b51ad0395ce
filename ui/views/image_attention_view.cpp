#include "ui/views/image_attention_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QSlider>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "attnlab/model/attention_maps.h"
#include "ui/state/model_document.h"
#include "ui/views/colormap.h"
#include "ui/views/flow_layout.h"

namespace attnlab::ui {

/// The surface the view draws on; clicks choose the token whose attention is shown.
class ImageCanvas : public QWidget {
public:
    explicit ImageCanvas(ImageAttentionView* view) : QWidget(view), m_view(view) {
        setMouseTracking(true);
        setMinimumSize(240, 180);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter painter(this);
        m_view->draw(painter, size());
    }
    void mousePressEvent(QMouseEvent* event) override {
        const Index token = m_view->tokenAt(event->position());
        if (token >= 0) m_view->document()->setSelectedQuery(token);
    }
    void mouseMoveEvent(QMouseEvent* event) override {
        const ModelDocument* models = ModelDocument::of(m_view->document());
        const Index token = m_view->tokenAt(event->position());
        const auto& values = m_view->patchValues();
        if (token < 1 || !models->model() || values.empty()) {
            QToolTip::hideText();
            return;
        }
        const auto cell = model::patchOfToken(models->model()->config, token);
        const Index grid = models->model()->config.patchGrid();
        const double value = values[static_cast<std::size_t>(cell.row * grid + cell.column)];
        QToolTip::showText(event->globalPosition().toPoint(),
                           ImageAttentionView::tr("patch r%1c%2: %3 %; click to see where it looks")
                               .arg(cell.row)
                               .arg(cell.column)
                               .arg(100 * value, 0, 'f', 1),
                           this);
    }

private:
    ImageAttentionView* m_view;
};

namespace {

/// The classes listed.
constexpr Index kTopLabels = 5;

QString percentText(double p) {
    return QStringLiteral("%1 %").arg(100 * p, 0, 'f', p < 0.1 ? 2 : 1);
}

} // namespace

ImageAttentionView::ImageAttentionView(Document* document, QWidget* parent)
    : View(document, parent), m_modeBox(new QComboBox(this)), m_opacitySlider(new QSlider(this)),
      m_canvas(new ImageCanvas(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* controlRow = new QWidget(this);
    auto* controls = new FlowLayout(controlRow);
    controls->setContentsMargins(0, 0, 0, 0);
    m_modeBox->addItem(tr("Focused head"), static_cast<int>(Mode::Head));
    m_modeBox->addItem(tr("Mean of heads"), static_cast<int>(Mode::MeanOfHeads));
    m_modeBox->addItem(tr("Rollout"), static_cast<int>(Mode::Rollout));
    m_modeBox->setToolTip(
        tr("Focused head: one head of the shown layer. Mean of heads: the layer's heads "
           "averaged. Rollout: attention followed down through every layer up to the shown "
           "one, the residual counted as half of each step (Abnar & Zuidema 2020)."));
    m_opacitySlider->setOrientation(Qt::Horizontal);
    m_opacitySlider->setRange(0, 100);
    m_opacitySlider->setValue(static_cast<int>(m_opacity * 100));
    m_opacitySlider->setToolTip(tr("How strongly the attention covers the picture"));
    controls->addPair(new QLabel(tr("Show"), this), m_modeBox);
    controls->addPair(new QLabel(tr("Overlay"), this), m_opacitySlider);
    auto* hint =
        new QLabel(tr("Click a patch to see where it looks; outside the image: [CLS]."), this);
    hint->setWordWrap(true);
    controls->addWidget(hint, 1);
    layout->addWidget(controlRow);
    layout->addWidget(m_canvas, 1);
    m_canvas->setToolTip(QString());

    connect(m_modeBox, &QComboBox::currentIndexChanged, this,
            [this](int index) { setMode(static_cast<Mode>(m_modeBox->itemData(index).toInt())); });
    connect(m_opacitySlider, &QSlider::valueChanged, this,
            [this](int value) { setOpacity(value / 100.0); });
    ModelDocument* models = ModelDocument::of(document);
    connect(models, &ModelDocument::runChanged, this, [this] { markStale(); });
    connect(models, &ModelDocument::layerChanged, this, [this] { markStale(); });
    connect(models, &ModelDocument::modelChanged, this, [this] { markStale(); });
    connect(models, &ModelDocument::imageChanged, this, [this] { markStale(); });
}

ImageAttentionView::~ImageAttentionView() = default;

QWidget* ImageAttentionView::canvas() const {
    return m_canvas;
}

bool ImageAttentionView::dependsOn(Document::What what) const {
    return what == Document::What::Experiment || what == Document::What::Selection ||
           what == Document::What::ViewState;
}

QString ImageAttentionView::notApplicable() const {
    // With no model open the tab says how to open one (refresh); a text model is refused.
    const ModelDocument* models = ModelDocument::of(document());
    if (models->model() && !models->readsImages())
        return tr("%1 reads text; the Image tab shows an image model's attention on its "
                  "image: open one with File > Open Model (the bundled tiny-vit-shapes, or a "
                  "ViT).")
            .arg(models->displayName());
    return {};
}

void ImageAttentionView::setMode(Mode mode) {
    if (mode == m_mode) return;
    m_mode = mode;
    const QSignalBlocker block(m_modeBox);
    m_modeBox->setCurrentIndex(m_modeBox->findData(static_cast<int>(mode)));
    markStale();
}

void ImageAttentionView::setOpacity(double opacity) {
    m_opacity = std::clamp(opacity, 0.0, 1.0);
    const QSignalBlocker block(m_opacitySlider);
    m_opacitySlider->setValue(static_cast<int>(std::lround(m_opacity * 100)));
    m_canvas->update();
}

Index ImageAttentionView::queryToken() const {
    const ModelDocument* models = ModelDocument::of(document());
    const Index query = document()->session().viewState.query;
    if (!models->model() || query < 0 || query >= models->model()->config.maxPositions) return 0;
    return query;
}

void ImageAttentionView::refresh() {
    m_values.clear();
    m_labels.clear();
    m_noClasses.clear();
    m_caption.clear();
    m_placeholder.clear();
    const ModelDocument* models = ModelDocument::of(document());
    const auto run = models->sharedRun();
    if (!notApplicable().isEmpty()) {
        m_placeholder = notApplicable();
    } else if (!models->readsImages()) {
        m_placeholder = tr("The Image tab shows an image model's attention on its image. "
                           "Open one: File > Examples > tiny-vit-shapes, or File > Open Model "
                           "for a ViT checkpoint.");
    } else if (!models->image()) {
        m_placeholder = tr("Open an image for %1: File > Open Image... (Ctrl+I), an example "
                           "under File > Examples, or drop a PNG or JPEG on the window.")
                            .arg(models->displayName());
    } else if (!run || !models->runImage()) {
        m_placeholder = tr("%1 is reading the image...").arg(models->displayName());
    } else {
        const model::Model& net = *models->model();
        const model::ModelConfig& config = net.config;
        const Index layer = std::clamp<Index>(models->layer(), 0, config.layers - 1);
        const Index head = std::clamp<Index>(models->head(), 0, config.heads - 1);
        const Index query = queryToken();
        Eigen::RowVectorXf row;
        switch (m_mode) {
        case Mode::Head:
            row = model::attentionRows(net, *run, layer, head, query, 1).row(0);
            break;
        case Mode::MeanOfHeads:
            row = model::meanHeadAttention(net, *run, layer).row(query);
            break;
        case Mode::Rollout:
            if (m_rolloutRun != run || m_rolloutLayers != layer + 1) {
                m_rollout = model::attentionRollout(net, *run, layer + 1);
                m_rolloutRun = run;
                m_rolloutLayers = layer + 1;
            }
            row = m_rollout.row(query);
            break;
        }
        const Index grid = config.patchGrid();
        m_values.resize(static_cast<std::size_t>(grid * grid));
        for (Index r = 0; r < grid; ++r)
            for (Index c = 0; c < grid; ++c)
                m_values[static_cast<std::size_t>(r * grid + c)] =
                    row(model::tokenOfPatch(config, r, c));
        m_labels = model::topLabels(config, run->logits, kTopLabels);
        if (!net.classifies())
            m_noClasses = tr("No classes: this checkpoint has no classifier. It gives the "
                             "image's embedding (%1 values), which `attnlab model --image` "
                             "writes.")
                              .arg(run->imageEmbedding.cols());
        const QString who = query == 0 ? QStringLiteral("[CLS]")
                                       : QString::fromStdString(model::imageTokenNames(
                                             config)[static_cast<std::size_t>(query)]);
        const QString what = m_mode == Mode::Head ? tr("layer %1, head %2").arg(layer).arg(head)
                             : m_mode == Mode::MeanOfHeads
                                 ? tr("layer %1, mean of %2 heads").arg(layer).arg(config.heads)
                                 : tr("rollout through layers 0-%1").arg(layer);
        m_caption = tr("%1 on %2, %3: where %4 looks")
                        .arg(models->displayName(), models->runImage()->name, what, who);
    }
    if (figureStyle().showTitle && !figureStyle().caption.isEmpty())
        m_caption = figureStyle().caption;
    m_canvas->update();
}

ImageAttentionView::Layout ImageAttentionView::layoutFor(const QSize& size, const QFont& font,
                                                         QPaintDevice* device) const {
    const QFontMetricsF metrics(font, device);
    QFont bold = font;
    bold.setBold(true);
    const QFontMetricsF boldMetrics(bold, device);
    Layout out;
    out.line = metrics.height();
    const double line = out.line, margin = 0.5 * line;
    const double width = size.width() - 2 * margin;
    double y = margin;
    if (figureStyle().showTitle && !m_caption.isEmpty()) {
        const QRectF needed = boldMetrics.boundingRect(QRectF(0, 0, width, 10 * line),
                                                       Qt::AlignLeft | Qt::TextWordWrap, m_caption);
        out.title = QRectF(margin, y, width, needed.height());
        y = out.title.bottom() + 0.4 * line;
    }
    out.chip = QRectF(margin, y, metrics.horizontalAdvance(QStringLiteral("[CLS]")) + 0.8 * line,
                      1.1 * line);
    y = out.chip.bottom() + 0.4 * line;
    // The classes' column: as wide as its widest line needs, at most 40 % of the figure.
    double labelsWidth = boldMetrics.horizontalAdvance(tr("The model says"));
    for (const model::LabelProbability& label : m_labels)
        labelsWidth =
            std::max(labelsWidth, metrics.horizontalAdvance(QString::fromStdString(label.label)) +
                                      metrics.horizontalAdvance(QStringLiteral(" 100.0 %")) + line);
    labelsWidth = std::min(labelsWidth, 0.4 * size.width());
    const double barWidth = 1.7 * line + metrics.horizontalAdvance(QStringLiteral("100.0 %"));
    const double side = std::max(
        16.0, std::min(width - labelsWidth - barWidth - 1.5 * line, size.height() - y - margin));
    out.square = QRectF(margin, y, side, side);
    out.bar = QRectF(out.square.right() + 0.8 * line, y, 0.9 * line, side);
    const double left = out.square.right() + barWidth + 1.5 * line;
    out.labels = QRectF(left, y, std::max(0.0, size.width() - margin - left), side);
    return out;
}

QFont ImageAttentionView::figureFont(const QFont& base) const {
    const Theme look = theme();
    QFont font = base;
    setFontSize(font, look, look.fontPointSize);
    return font;
}

Index ImageAttentionView::tokenAt(const QPointF& point) const {
    const ModelDocument* models = ModelDocument::of(document());
    if (!models->readsImages() || m_values.empty()) return -1;
    const QRectF square =
        layoutFor(m_canvas->size(), figureFont(m_canvas->font()), m_canvas).square;
    const Index grid = models->model()->config.patchGrid();
    if (!square.contains(point)) return 0;
    const auto cellOf = [&](double offset) {
        return std::clamp<Index>(static_cast<Index>(offset / square.width() * grid), 0, grid - 1);
    };
    return model::tokenOfPatch(models->model()->config, cellOf(point.y() - square.top()),
                               cellOf(point.x() - square.left()));
}

void ImageAttentionView::draw(QPainter& painter, const QSize& size) const {
    const Theme look = theme();
    painter.fillRect(QRect(QPoint(0, 0), size), look.background);
    painter.setRenderHint(QPainter::Antialiasing, true);
    const QFont font = figureFont(painter.font());
    painter.setFont(font);
    painter.setPen(look.foreground);
    const QFontMetricsF metrics(font, painter.device());
    QFont bold = font;
    bold.setBold(true);
    const Layout layout = layoutFor(size, font, painter.device());
    const double line = layout.line;
    if (!m_placeholder.isEmpty()) {
        painter.drawText(QRectF(line, line, size.width() - 2 * line, size.height() - 2 * line),
                         Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    const ModelDocument* models = ModelDocument::of(document());
    const model::ModelConfig& config = models->model()->config;
    const Index grid = config.patchGrid();
    if (!layout.title.isEmpty()) {
        painter.setFont(bold);
        painter.drawText(layout.title, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m_caption);
        painter.setFont(font);
    }
    const QRectF& square = layout.square;
    // The class token, above the picture: chosen when the query is it.
    const Index query = queryToken();
    const QRectF& chip = layout.chip;
    painter.setPen(QPen(query == 0 ? look.accent : look.grid, query == 0 ? 2.0 : 1.0));
    painter.setBrush(Qt::NoBrush);
    painter.drawRoundedRect(chip, 3, 3);
    painter.setPen(look.foreground);
    painter.drawText(chip, Qt::AlignCenter, QStringLiteral("[CLS]"));
    painter.drawText(QRectF(chip.right() + line * 0.5, chip.top(),
                            size.width() - chip.right() - line, chip.height()),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     tr("%1 x %1 pixels, %2 x %2 patches of %3")
                         .arg(config.imageSize)
                         .arg(grid)
                         .arg(config.patchSize));

    // The picture as the model reads it: the part its processor keeps (all of it, or the centre
    // crop) stretched to the square, so each patch covers what the model read. Under an overlay
    // it is grey, so a yellow shape never reads as attention.
    const QImage& original = models->runImage()->picture;
    if (m_greyKey != original.cacheKey()) {
        m_grey = original.convertToFormat(QImage::Format_Grayscale8);
        m_greyKey = original.cacheKey();
    }
    const QImage& picture = m_opacity > 0 ? m_grey : original;
    const model::ImageRegion region =
        models->imageProcessor()
            ? model::processedRegion(*models->imageProcessor(), picture.width(), picture.height())
            : model::ImageRegion{0, 0, double(picture.width()), double(picture.height())};
    const QRectF source =
        QRectF(region.x, region.y, region.width, region.height).intersected(QRectF(picture.rect()));
    const double across = square.width() / region.width, down = square.height() / region.height;
    const QRectF target(square.left() + (source.left() - region.x) * across,
                        square.top() + (source.top() - region.y) * down, source.width() * across,
                        source.height() * down);
    painter.setRenderHint(QPainter::SmoothPixmapTransform,
                          source.width() > square.width() || source.height() > square.height());
    painter.drawImage(target, picture, source);

    // The overlay: each patch's share of the largest value, its colour more opaque the more
    // attention it gets, so the picture shows where attention is low.
    const double top = m_values.empty() ? 0 : *std::max_element(m_values.begin(), m_values.end());
    const QString colormap = QString::fromStdString(document()->session().viewState.colormap);
    const double cell = square.width() / static_cast<double>(grid);
    painter.setRenderHint(QPainter::Antialiasing, false);
    for (Index r = 0; r < grid; ++r)
        for (Index c = 0; c < grid; ++c) {
            const double t = top > 0 ? m_values[static_cast<std::size_t>(r * grid + c)] / top : 0.0;
            QColor colour = colormapColor(colormap, t);
            colour.setAlphaF(static_cast<float>(m_opacity * std::sqrt(t)));
            painter.fillRect(QRectF(square.left() + c * cell, square.top() + r * cell, cell, cell),
                             colour);
        }
    // The patch grid, faint.
    QColor gridColour = look.foreground;
    gridColour.setAlphaF(0.18f);
    painter.setPen(QPen(gridColour, 1.0));
    for (Index i = 1; i < grid; ++i) {
        painter.drawLine(QPointF(square.left() + i * cell, square.top()),
                         QPointF(square.left() + i * cell, square.bottom()));
        painter.drawLine(QPointF(square.left(), square.top() + i * cell),
                         QPointF(square.right(), square.top() + i * cell));
    }
    painter.setPen(QPen(look.grid, 1.0));
    painter.drawRect(square);
    if (query > 0 && figureStyle().showSelection) {
        const auto chosen = model::patchOfToken(config, query);
        painter.setPen(QPen(look.accent, 3.0));
        painter.drawRect(QRectF(square.left() + chosen.column * cell,
                                square.top() + chosen.row * cell, cell, cell));
    }

    // The colour bar: 0 to the largest patch value.
    const QRectF& bar = layout.bar;
    for (int i = 0; i < 64; ++i) {
        const double t = 1.0 - (i + 0.5) / 64.0;
        painter.fillRect(QRectF(bar.left(), bar.top() + bar.height() * i / 64.0, bar.width(),
                                bar.height() / 64.0 + 0.5),
                         colormapColor(colormap, t));
    }
    painter.setPen(QPen(look.grid, 1.0));
    painter.drawRect(bar);
    painter.setPen(look.foreground);
    painter.drawText(QPointF(bar.right() + line * 0.3, bar.top() + metrics.ascent()),
                     percentText(top));
    painter.drawText(QPointF(bar.right() + line * 0.3, bar.bottom()), QStringLiteral("0"));

    // The classes, most probable first.
    const double left = layout.labels.left(), width = layout.labels.width();
    double at = layout.labels.top();
    painter.setFont(bold);
    painter.drawText(QRectF(left, at, width, line), Qt::AlignLeft | Qt::AlignVCenter,
                     tr("The model says"));
    painter.setFont(font);
    at += line * 1.5;
    if (!m_noClasses.isEmpty())
        painter.drawText(QRectF(left, at, width, layout.labels.bottom() - at),
                         Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m_noClasses);
    const double percentWidth = metrics.horizontalAdvance(QStringLiteral(" 100.0 %"));
    for (const model::LabelProbability& label : m_labels) {
        painter.setPen(look.foreground);
        painter.drawText(QRectF(left, at, width, line), Qt::AlignLeft | Qt::AlignVCenter,
                         metrics.elidedText(QString::fromStdString(label.label), Qt::ElideRight,
                                            std::max(0.0, width - percentWidth)));
        painter.drawText(QRectF(left, at, width, line), Qt::AlignRight | Qt::AlignVCenter,
                         percentText(label.probability));
        at += line * 1.05;
        painter.fillRect(QRectF(left, at, width * label.probability, line * 0.35), look.accent);
        painter.setPen(QPen(look.grid, 1.0));
        painter.drawRect(QRectF(left, at, width, line * 0.35));
        at += line * 0.9;
    }
}

void ImageAttentionView::paintFigure(QCPPainter& painter, const QSize& size) {
    ensureFresh();
    draw(painter, size);
}

DataTable ImageAttentionView::data() const {
    DataTable table;
    const ModelDocument* models = ModelDocument::of(document());
    if (m_values.empty() || !models->model()) {
        table.unavailable = m_placeholder;
        return table;
    }
    const Index grid = models->model()->config.patchGrid();
    table.rows = static_cast<int>(grid);
    table.cols = static_cast<int>(grid);
    table.values = m_values;
    for (Index i = 0; i < grid; ++i) {
        table.rowLabels << QStringLiteral("r%1").arg(i);
        table.columnLabels << QStringLiteral("c%1").arg(i);
    }
    table.rowHeader = QStringLiteral("row");
    table.extra.insert(QStringLiteral("query"), QVariant::fromValue(queryToken()));
    table.extra.insert(QStringLiteral("mode"), m_mode == Mode::Head          ? "head"
                                               : m_mode == Mode::MeanOfHeads ? "mean-of-heads"
                                                                             : "rollout");
    table.extra.insert(QStringLiteral("layer"), QVariant::fromValue(models->layer()));
    table.extra.insert(QStringLiteral("head"), QVariant::fromValue(models->head()));
    QVariantList labels;
    for (const model::LabelProbability& label : m_labels)
        labels << QVariantMap{{QStringLiteral("label"), QString::fromStdString(label.label)},
                              {QStringLiteral("probability"), label.probability}};
    table.extra.insert(QStringLiteral("labels"), labels);
    return table;
}

} // namespace attnlab::ui

#include "ui/views/lens_views.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QProgressBar>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "attnlab/model/model.h"
#include "ui/state/experiment_data.h"
#include "ui/state/lens_document.h"
#include "ui/state/model_document.h"
#include "ui/state/named_token.h"
#include "ui/state/patching_document.h"
#include "ui/views/cell_labels.h"
#include "ui/views/colormap.h"
#include "ui/views/flow_layout.h"
#include "ui/views/plot_captions.h"
#include "ui/views/teaching_plot.h"

namespace attnlab::ui {

namespace {

/// A token as it reads in a cell: the tokenizer's display form, trimmed, quoted when empty.
QString tokenText(const model::Tokenizer* tokenizer, std::int64_t id) {
    if (!tokenizer) return QString::number(id);
    const QString text = QString::fromStdString(tokenizer->displayToken(id)).trimmed();
    return text.isEmpty() ? QStringLiteral("\u2423") : text; // ␣ for a space
}

/// The size the cells' texts start from (smaller than the labels; fitCellLabels may shrink it
/// to the theme's least size).
double cellTextPoints(const Theme& look) {
    return std::max(6, look.fontPointSize - 2);
}

/// A number as a cell prints it, as the attention heatmap does: two decimals, no "-0.00" (a
/// tiny value prints as zero, no wider than its neighbours).
QString cellNumber(double value) {
    return QString::number(std::abs(value) < 0.005 ? 0.0 : value, 'f', 2);
}

/// The matrix axes of one grid, set up once: rows down, labels thinned after layout.
QCPAxisRect* gridRect(const View* view, QCustomPlot* plot, QCPTextElement*& title,
                      QCPColorMap*& map, QCPColorScale*& scale, const QString& xLabel,
                      const QString& yLabel) {
    plot->plotLayout()->clear();
    title = new QCPTextElement(plot, QString());
    plot->plotLayout()->addElement(0, 0, title);
    QCPAxisRect* rect = makeAxisRect(plot, xLabel, yLabel);
    setupMatrixAxes(rect);
    // The grid and its colour bar in a row of their own, so the title spans the whole width.
    auto* body = new QCPLayoutGrid;
    plot->plotLayout()->addElement(1, 0, body);
    body->addElement(0, 0, rect);
    map = new QCPColorMap(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    map->setInterpolate(false);
    map->setTightBoundary(false);
    scale = new QCPColorScale(plot);
    body->addElement(0, 1, scale);
    scale->setType(QCPAxis::atRight);
    scale->setBarWidth(10);
    map->setColorScale(scale);
    auto* margins = new QCPMarginGroup(plot);
    rect->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [view, plot, rect] {
        bool changed = false;
        for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)})
            changed = fitTokenLabels(axis) || changed;
        // The cells' texts (writeCells) to the cells as laid out, before they are drawn.
        std::vector<QCPItemText*> texts;
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* text = qobject_cast<QCPItemText*>(plot->item(i))) texts.push_back(text);
        const double columns = std::max(1.0, rect->axis(QCPAxis::atBottom)->range().size());
        const double rows = std::max(1.0, rect->axis(QCPAxis::atLeft)->range().size());
        fitCellLabels(texts, rect->width() / columns, rect->height() / rows, view->theme(),
                      cellTextPoints(view->theme()));
        if (changed) plot->replot(QCustomPlot::rpQueuedReplot);
    });
    return rect;
}

/// The cell (row, column) under a point of the plot, or (-1, -1).
std::pair<Index, Index> cellAt(QCustomPlot* plot, const QPointF& point, Index rows, Index cols) {
    QCPAxisRect* rect = plot->axisRect();
    if (!rect || !rect->rect().contains(point.toPoint())) return {-1, -1};
    const auto column = static_cast<Index>(
        std::lround(rect->axis(QCPAxis::atBottom)->pixelToCoord(point.x())));
    const auto row =
        static_cast<Index>(std::lround(rect->axis(QCPAxis::atLeft)->pixelToCoord(point.y())));
    if (row < 0 || row >= rows || column < 0 || column >= cols) return {-1, -1};
    return {row, column};
}

/// A grid's hover text: shown as the pointer moves over a cell and kept while it rests there.
/// Qt's delayed tool-tip event (about a second after the pointer stops) is answered with the
/// same text, so the view's general help does not replace the cell's values; off the cells the
/// event goes on to that help.
class CellHover : public QObject {
public:
    CellHover(QCustomPlot* plot, std::function<QString(const QPointF&)> textAt)
        : QObject(plot), m_plot(plot), m_textAt(std::move(textAt)) {
        plot->setMouseTracking(true);
        plot->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched != m_plot) return false;
        if (event->type() == QEvent::MouseMove) {
            const auto* move = static_cast<QMouseEvent*>(event);
            const QString text = m_textAt(move->position());
            if (text.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(move->globalPosition().toPoint(), text, m_plot);
        } else if (event->type() == QEvent::ToolTip) {
            const auto* help = static_cast<QHelpEvent*>(event);
            const QString text = m_textAt(QPointF(help->pos()));
            if (!text.isEmpty()) {
                QToolTip::showText(help->globalPos(), text, m_plot);
                return true;
            }
        }
        return false;
    }

private:
    QCustomPlot* m_plot;
    std::function<QString(const QPointF&)> m_textAt;
};

/// Writes `texts` (row-major, rows x cols) into the cells, in a colour that reads on each; each
/// is shown only where it fits its cell as laid out (gridRect's fitCellLabels).
void writeCells(QCustomPlot* plot, QCPColorMap* map, const QStringList& texts, Index rows,
                Index cols, const Theme& look) {
    plot->clearItems();
    QFont font = plot->font();
    setFontSize(font, look, cellTextPoints(look));
    const QCPRange range = map->dataRange();
    for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < cols; ++j) {
            auto* label = new QCPItemText(plot);
            label->setClipToAxisRect(true);
            label->position->setType(QCPItemPosition::ptPlotCoords);
            label->position->setCoords(static_cast<double>(j), static_cast<double>(i));
            label->setText(texts[static_cast<int>(i * cols + j)]);
            label->setFont(font);
            const double value = map->data()->cell(static_cast<int>(j), static_cast<int>(i));
            const double t = range.size() > 0 ? (value - range.lower) / range.size() : 0.5;
            label->setColor(contrastingText(map->gradient().color(t, QCPRange(0, 1))));
        }
}

/// Opens head (layer, head)'s attention map on the last row: the heatmap of that layer and head.
void openHeadOnLastRow(Document* document, Index layer, Index head) {
    ModelDocument* models = ModelDocument::of(document);
    models->focus(layer, head);
    ViewState state = document->session().viewState;
    state.view = "heatmap";
    state.query = std::max<Index>(0, static_cast<Index>(models->ids().size()) - 1);
    document->setViewState(state);
}

} // namespace

// ---- Logit lens -------------------------------------------------------------------------------

LogitLensView::LogitLensView(Document* document, QWidget* parent)
    : PlotView(document, parent), m_lens(LensDocument::of(document)) {
    gridRect(this, m_plot, m_title, m_map, m_scale, tr("position (the token read there)"),
             tr("residual after"));
    setToolTip(tr("The logit lens: the residual stream after the embedding and after each layer, "
                  "read through the model's final norm and unembedding as if it were the last "
                  "layer. Each cell is the token that layer would predict next there."));
    new CellHover(m_plot, [this](const QPointF& point) {
        const auto& cells = top();
        const auto [row, position] = cellAt(m_plot, point, static_cast<Index>(cells.size()),
                                            cells.empty() ? 0 : Index(cells.front().size()));
        return row < 0 ? QString() : cellText(row, position);
    });
    ModelDocument* models = ModelDocument::of(document);
    connect(models, &ModelDocument::runChanged, this, [this] { markStale(); });
    connect(models, &ModelDocument::modelChanged, this, [this] { markStale(); });
    connect(m_lens, &LensDocument::lensChanged, this, [this] { markStale(); });
}

LogitLensView::~LogitLensView() = default;

const std::vector<std::vector<model::RankedToken>>& LogitLensView::top() const {
    return m_lens->lens().top;
}

bool LogitLensView::computing() const {
    return m_lens->lensComputing();
}

void LogitLensView::waitForWork() {
    m_lens->waitForLens();
}

QString LogitLensView::notApplicable() const {
    if (QString why = imageClassifierRefusal(document()); !why.isEmpty()) return why;
    const ModelDocument* models = ModelDocument::of(document());
    if (models->model() && !readsOneSequence(*models->model()))
        return tr("The logit lens reads a model that runs one sequence; an encoder-decoder's "
                  "decoder reads its source too.");
    return {};
}

std::vector<model::RankedToken> LogitLensView::topOf(Index row, Index position) const {
    const auto& all = m_lens->lens().cells;
    if (row < 0 || row >= static_cast<Index>(all.size())) return {};
    const auto& cells = all[static_cast<std::size_t>(row)];
    if (position < 0 || position >= static_cast<Index>(cells.size())) return {};
    return cells[static_cast<std::size_t>(position)];
}

QString LogitLensView::cellText(Index row, Index position) const {
    const model::Tokenizer* tokenizer = ModelDocument::of(document())->tokenizer();
    QStringList lines;
    lines << tr("%1, position %2 (%3):")
                 .arg(m_rowLabels.value(static_cast<int>(row)))
                 .arg(position)
                 .arg(m_columnLabels.value(static_cast<int>(position)));
    for (const model::RankedToken& token : topOf(row, position))
        lines << QStringLiteral("%1  %2 %").arg(tokenText(tokenizer, token.id))
                     .arg(100.0 * token.probability, 0, 'f', 1);
    return lines.join(QLatin1Char('\n'));
}

void LogitLensView::refresh() {
    const Theme look = theme();
    ModelDocument* models = ModelDocument::of(document());
    const std::shared_ptr<const model::Model> net = models->sharedModel();
    // Computed again for each new run (text, appended token, heads switched off), on the
    // worker; the previous figure stays until it is in.
    m_lens->requestLens();
    const std::vector<std::vector<model::RankedToken>>& topTokens = m_lens->lens().top;
    const Index rows = static_cast<Index>(topTokens.size());
    const Index cols = rows > 0 ? static_cast<Index>(topTokens.front().size()) : 0;
    MatrixD values(rows, cols);
    QStringList texts;
    for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < cols; ++j) {
            const model::RankedToken& top = topTokens[std::size_t(i)][std::size_t(j)];
            values(i, j) = top.probability;
            texts << tokenText(models->tokenizer(), top.id);
        }
    m_rowLabels.clear();
    for (Index i = 0; i < rows; ++i)
        m_rowLabels << (i == 0 ? tr("embedding") : tr("layer %1").arg(i - 1));
    m_columnLabels = m_lens->lens().tokens.mid(0, static_cast<int>(cols));
    while (m_columnLabels.size() < cols)
        m_columnLabels << QString::number(m_columnLabels.size());

    const QString colormap = QString::fromStdString(document()->session().viewState.colormap);
    m_map->setGradient(makeGradient(isDiverging(colormap) ? QStringLiteral("viridis") : colormap,
                                    maskedColor(look, colormap)));
    fillColorMap(m_map, values, nullptr);
    m_map->setDataRange(QCPRange(0, 1));
    m_scale->axis()->setLabel(tr("probability of the top token"));
    QCPAxisRect* rect = m_plot->axisRect();
    setTokenLabels(rect->axis(QCPAxis::atBottom), m_columnLabels);
    rect->axis(QCPAxis::atBottom)->setTickLabelRotation(cols > 8 ? -45 : 0);
    setTokenLabels(rect->axis(QCPAxis::atLeft), m_rowLabels);
    rect->axis(QCPAxis::atBottom)->setRange(-0.5, std::max<Index>(1, cols) - 0.5);
    rect->axis(QCPAxis::atLeft)->setRange(-0.5, std::max<Index>(1, rows) - 0.5);
    if (rows * cols <= kLabelledCells)
        writeCells(m_plot, m_map, texts, rows, cols, look);
    else
        m_plot->clearItems();

    if (!net)
        m_title->setText(tr("Open a model (File > Open Model, or File > Examples) and type a "
                            "text: each layer's guess at the next token appears here."));
    else if (!notApplicable().isEmpty())
        m_title->setText(notApplicable());
    else if (!m_lens->lensError().isEmpty())
        m_title->setText(tr("Logit lens: %1").arg(m_lens->lensError()));
    else if (topTokens.empty())
        m_title->setText(tr("Logit lens: computing on the new text"));
    else
        m_title->setText(tr("Logit lens of %1: the next token each layer would predict at each "
                            "position (its probability as colour; hover for the top %2)")
                             .arg(models->displayName())
                             .arg(LensDocument::kTopTokens));
    stylePlot(*m_plot, look);
    wrapToFigureWidth(figureStyle().wrapWidth, {m_title});
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

DataTable LogitLensView::data() const {
    DataTable table;
    const std::vector<std::vector<model::RankedToken>>& topTokens = top();
    if (topTokens.empty()) {
        table.unavailable = tr("Logit lens: open a model and type a text");
        return table;
    }
    // One row per layer, one column per position: the top token's probability; its ids in the
    // JSON.
    const Index rows = static_cast<Index>(topTokens.size());
    const Index cols = static_cast<Index>(topTokens.front().size());
    MatrixD values(rows, cols);
    QVariantList ids;
    for (Index i = 0; i < rows; ++i) {
        QVariantList row;
        for (Index j = 0; j < cols; ++j) {
            values(i, j) = topTokens[std::size_t(i)][std::size_t(j)].probability;
            row << static_cast<qlonglong>(topTokens[std::size_t(i)][std::size_t(j)].id);
        }
        ids << QVariant(row);
    }
    table = DataTable::fromMatrix(values, m_rowLabels, m_columnLabels);
    table.rowHeader = QStringLiteral("residual_after");
    table.extra.insert(QStringLiteral("top_token_ids"), ids);
    table.extra.insert(QStringLiteral("quantity"), QStringLiteral("top_token_probability"));
    return table;
}

// ---- Direct logit attribution -----------------------------------------------------------------

AttributionView::AttributionView(Document* document, QWidget* parent)
    : PlotView(document, parent), m_lens(LensDocument::of(document)) {
    gridRect(this, m_plot, m_title, m_map, m_scale, tr("head (the last column: the layer's MLP)"),
             tr("layer"));
    // Which logit is split: the target's, or its difference from a contrast token's.
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 2, 4, 2);
    m_target = new QLineEdit(this);
    m_target->setObjectName(QStringLiteral("AttributionTarget"));
    m_target->setPlaceholderText(tr("the model's prediction"));
    m_target->setToolTip(tr("The token whose logit is split: a word the model reads as one token "
                            "(with its leading space where the tokenizer has one, \" Mary\"), or "
                            "a token id. Empty: the token the model predicts."));
    m_contrast = new QLineEdit(this);
    m_contrast->setObjectName(QStringLiteral("AttributionContrast"));
    m_contrast->setPlaceholderText(tr("none"));
    m_contrast->setToolTip(tr("A second token: the logit difference target \u2212 contrast is "
                              "split instead (\" Mary\" against \" John\"). Empty: the target's "
                              "logit alone."));
    auto* targetLabel = new QLabel(tr("&Target"), this);
    targetLabel->setBuddy(m_target);
    auto* contrastLabel = new QLabel(tr("&Contrast"), this);
    contrastLabel->setBuddy(m_contrast);
    bar->addWidget(targetLabel);
    bar->addWidget(m_target, 1); // room for a placeholder in the projector's font
    bar->addWidget(contrastLabel);
    bar->addWidget(m_contrast, 1);
    static_cast<QVBoxLayout*>(layout())->insertLayout(0, bar);
    for (QLineEdit* edit : {m_target, m_contrast})
        connect(edit, &QLineEdit::editingFinished, this, [this] { markStale(); });
    setToolTip(tr("Direct logit attribution: the last position's final residual is a sum of the "
                  "embedding, each head's output and each MLP's; read through the final norm "
                  "(its scale frozen) and the predicted token's unembedding, the terms add up to "
                  "its logit. Double-click a head to open its attention map on the last row."));
    new CellHover(m_plot, [this](const QPointF& point) {
        const std::optional<model::Attribution>& parts = attribution();
        if (!parts) return QString();
        const Index heads = parts->heads.cols();
        const auto [layer, column] = cellAt(m_plot, point, parts->heads.rows(), heads + 1);
        if (layer < 0) return QString();
        const double value = column < heads ? parts->heads(layer, column) : parts->mlp(layer);
        return column < heads
                   ? tr("layer %1, head %2: %3").arg(layer).arg(column).arg(value, 0, 'f', 3)
                   : tr("layer %1, MLP: %2").arg(layer).arg(value, 0, 'f', 3);
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent* event) {
        const std::optional<model::Attribution>& parts = attribution();
        if (!parts) return;
        const Index heads = parts->heads.cols();
        const auto [layer, column] =
            cellAt(m_plot, event->position(), parts->heads.rows(), heads + 1);
        if (layer >= 0 && column < heads) openHead(layer, column);
    });
    ModelDocument* models = ModelDocument::of(document);
    connect(models, &ModelDocument::runChanged, this, [this] { markStale(); });
    connect(models, &ModelDocument::modelChanged, this, [this] { markStale(); });
    connect(m_lens, &LensDocument::attributionChanged, this, [this] { markStale(); });
}

AttributionView::~AttributionView() = default;

const std::optional<model::Attribution>& AttributionView::attribution() const {
    return m_lens->attribution();
}

bool AttributionView::computing() const {
    return m_lens->attributionComputing();
}

void AttributionView::waitForWork() {
    m_lens->waitForAttribution();
}

QString AttributionView::notApplicable() const {
    if (QString why = imageClassifierRefusal(document()); !why.isEmpty()) return why;
    const ModelDocument* models = ModelDocument::of(document());
    if (!models->model()) return {};
    if (const auto refusal = model::attributionRefusal(*models->model()))
        return tr("Direct logit attribution does not add up for this model: %1")
            .arg(QString::fromStdString(refusal->message));
    return {};
}

void AttributionView::openHead(Index layer, Index head) {
    openHeadOnLastRow(document(), layer, head);
}

void AttributionView::refresh() {
    const Theme look = theme();
    ModelDocument* models = ModelDocument::of(document());
    const std::shared_ptr<const model::Model> net = models->sharedModel();
    const std::shared_ptr<const model::ModelRun> run = models->sharedRun();
    const bool applies = net && run && notApplicable().isEmpty() && !run->ids.empty() &&
                         readsOneSequence(*net);
    // The two fields read as the model's tokens; a field that does not read is said in the title.
    model::AttributionOptions asked;
    QString unread;
    if (applies) {
        const auto read = [&](QLineEdit* edit, const QString& name,
                              std::optional<std::int64_t>& into) {
            if (edit->text().trimmed().isEmpty()) return; // " Mary" keeps its space
            QString why;
            const auto id = namedTokenIn(edit->text(), models->tokenizer(), net->config, name, &why);
            if (id)
                into = *id;
            else if (unread.isEmpty())
                unread = why;
        };
        read(m_target, tr("Target"), asked.target);
        read(m_contrast, tr("Contrast"), asked.contrast);
    }
    // On the worker; the previous figure stays until the new one is in.
    if (!applies || !unread.isEmpty())
        m_lens->clearAttribution(unread);
    else
        m_lens->requestAttribution(asked);
    const std::optional<model::Attribution>& parts = m_lens->attribution();
    const Index layers = parts ? parts->heads.rows() : 0;
    const Index heads = parts ? parts->heads.cols() : 0;
    MatrixD values(layers, layers > 0 ? heads + 1 : 0);
    QStringList texts;
    for (Index l = 0; l < layers; ++l) {
        for (Index h = 0; h < heads; ++h)
            values(l, h) = parts->heads(l, h);
        values(l, heads) = parts->mlp(l);
        for (Index c = 0; c <= heads; ++c)
            texts << cellNumber(values(l, c));
    }
    QStringList columns, rows;
    for (Index h = 0; h < heads; ++h)
        columns << QString::number(h);
    if (layers > 0) columns << tr("MLP");
    for (Index l = 0; l < layers; ++l)
        rows << QString::number(l);
    m_map->setGradient(makeGradient(QStringLiteral("diverging"), look.masked));
    const QCPRange drawn = fillColorMap(m_map, values, nullptr);
    const double reach = std::max({std::abs(drawn.lower), std::abs(drawn.upper), 1e-9});
    m_map->setDataRange(QCPRange(-reach, reach));
    m_scale->axis()->setLabel(tr("contribution to the logit"));
    QCPAxisRect* rect = m_plot->axisRect();
    setTokenLabels(rect->axis(QCPAxis::atBottom), columns);
    setTokenLabels(rect->axis(QCPAxis::atLeft), rows);
    rect->axis(QCPAxis::atBottom)->setTickLabelRotation(0);
    rect->axis(QCPAxis::atBottom)->setRange(-0.5, std::max<Index>(1, heads + 1) - 0.5);
    rect->axis(QCPAxis::atLeft)->setRange(-0.5, std::max<Index>(1, layers) - 0.5);
    if (layers * (heads + 1) <= LogitLensView::kLabelledCells)
        writeCells(m_plot, m_map, texts, layers, heads + 1, look);
    else
        m_plot->clearItems();

    if (!net) {
        m_title->setText(tr("Open a model (File > Open Model, or File > Examples) and type a "
                            "text: each head's share of the next token appears here."));
    } else if (!notApplicable().isEmpty()) {
        m_title->setText(notApplicable());
    } else if (!parts) {
        const QString& error = m_lens->attributionError();
        m_title->setText(!error.isEmpty() ? tr("Attribution: %1").arg(error)
                         : computing()    ? tr("Attribution: computing on the new text")
                                          : tr("Attribution: waiting for the first run"));
    } else {
        const QString token = tokenText(models->tokenizer(), parts->target);
        const QString format =
            parts->contrast
                ? tr("Direct logit attribution to “%1” against “%7” at the last position: heads "
                     "%2 + MLPs %3 + embedding %4 + biases %5 = logit difference %6")
                : tr("Direct logit attribution to “%1” at the last position: heads %2 + "
                     "MLPs %3 + embedding %4 + biases %5 = logit %6");
        QString text = format.arg(token)
                           .arg(parts->heads.sum(), 0, 'f', 2)
                           .arg(parts->mlp.sum(), 0, 'f', 2)
                           .arg(parts->embedding, 0, 'f', 2)
                           .arg(parts->bias, 0, 'f', 2)
                           .arg(parts->logit, 0, 'f', 2);
        if (parts->contrast) text = text.arg(tokenText(models->tokenizer(), *parts->contrast));
        m_title->setText(text);
    }
    stylePlot(*m_plot, look);
    wrapToFigureWidth(figureStyle().wrapWidth, {m_title});
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

DataTable AttributionView::data() const {
    DataTable table;
    const std::optional<model::Attribution>& parts = attribution();
    if (!parts) {
        table.unavailable = notApplicable().isEmpty() ? tr("Attribution: open a model and type a text")
                                                      : notApplicable();
        return table;
    }
    // One row per layer: each head's contribution, then the MLP's; the other terms in the JSON.
    const Index layers = parts->heads.rows();
    const Index heads = parts->heads.cols();
    MatrixD values(layers, heads + 1);
    values.leftCols(heads) = parts->heads;
    values.col(heads) = parts->mlp;
    QStringList columns, rows;
    for (Index h = 0; h < heads; ++h)
        columns << QStringLiteral("head_%1").arg(h);
    columns << QStringLiteral("mlp");
    for (Index l = 0; l < layers; ++l)
        rows << QString::number(l);
    table = DataTable::fromMatrix(values, rows, columns);
    table.rowHeader = QStringLiteral("layer");
    table.extra.insert(QStringLiteral("target"), static_cast<qlonglong>(parts->target));
    table.extra.insert(QStringLiteral("embedding"), parts->embedding);
    table.extra.insert(QStringLiteral("bias"), parts->bias);
    table.extra.insert(QStringLiteral("logit"), parts->logit);
    return table;
}

// ---- Activation patching ----------------------------------------------------------------------

namespace {

/// Sets a line edit's text without moving the cursor of the person typing in it.
void showText(QLineEdit* edit, const QString& text) {
    if (edit->text() == text) return;
    const int cursor = edit->cursorPosition();
    edit->setText(text);
    edit->setCursorPosition(std::min(cursor, static_cast<int>(text.size())));
}

} // namespace

PatchingView::PatchingView(Document* document, QWidget* parent)
    : PlotView(document, parent), m_patching(PatchingDocument::of(document)) {
    auto* controls = new QWidget(this);
    auto* rows = new QVBoxLayout(controls);
    rows->setContentsMargins(6, 4, 6, 0);
    auto* first = new QHBoxLayout;
    rows->addLayout(first);
    auto* corruptedLabel = new QLabel(tr("Corrupted text:"), controls);
    m_corrupted = new QLineEdit(controls);
    m_corrupted->setObjectName(QStringLiteral("PatchingCorruptedText"));
    m_corrupted->setPlaceholderText(
        tr("the text with the words that matter changed, as many tokens"));
    m_corrupted->setToolTip(tr("The corrupted prompt. The clean prompt is the model's text (the "
                               "inputs panel); both must be the same number of tokens."));
    corruptedLabel->setBuddy(m_corrupted);
    first->addWidget(corruptedLabel);
    first->addWidget(m_corrupted, 1);

    // Wraps rather than widen the window (a 1024-pixel projector in the projector theme).
    auto* second = new FlowLayout;
    rows->addLayout(second);
    m_tokenA = new QLineEdit(controls);
    m_tokenB = new QLineEdit(controls);
    for (QLineEdit* token : {m_tokenA, m_tokenB}) {
        token->setMaximumWidth(120);
        token->setToolTip(tr("A token as the model reads it, with its leading space (“ dog”), "
                             "or its id. Empty: the clean run's prediction (A) or the corrupted "
                             "run's (B)."));
    }
    m_tokenA->setObjectName(QStringLiteral("PatchingTokenA"));
    m_tokenB->setObjectName(QStringLiteral("PatchingTokenB"));
    second->addPair(new QLabel(tr("Logit difference A"), controls), m_tokenA);
    second->addPair(new QLabel(QStringLiteral("\u2212 B"), controls), m_tokenB);
    m_target = new QComboBox(controls);
    m_target->addItem(tr("heads' outputs"), static_cast<int>(PatchTarget::Heads));
    m_target->addItem(tr("residual stream"), static_cast<int>(PatchTarget::Residual));
    m_target->setToolTip(tr("What each patched run takes from the clean run: one head's output "
                            "(layers × heads), or the residual stream entering one layer at one "
                            "position (layers × positions)."));
    second->addWidget(m_target);
    m_run = new QPushButton(tr("Run"), controls);
    m_run->setToolTip(tr("Patch again (after a cancel)"));
    second->addWidget(m_run);
    m_progress = new QProgressBar(controls);
    m_progress->setMaximumWidth(160);
    m_progress->setTextVisible(true);
    second->addWidget(m_progress);
    m_cancel = new QPushButton(tr("Cancel"), controls);
    second->addWidget(m_cancel);
    m_status = new QLabel(controls);
    m_status->setObjectName(QStringLiteral("PatchingStatus"));
    // The status gives way first when the row is narrow (projector fonts, Chinese).
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    second->addWidget(m_status, 1);
    static_cast<QVBoxLayout*>(layout())->insertWidget(0, controls);
    static_cast<QVBoxLayout*>(layout())->setStretchFactor(m_plot, 1);

    gridRect(this, m_plot, m_title, m_map, m_scale, QString(), tr("layer"));
    setToolTip(tr("Activation patching: the corrupted prompt runs again with one piece of the "
                  "clean run put in (a head's output, or the residual stream at one layer and "
                  "position). Each cell: (patched − corrupted) / (clean − corrupted) of the "
                  "logit difference A − B at the last position; 0 changes nothing, 1 restores "
                  "the clean run. Double-click a head to open its attention map."));
    new CellHover(m_plot, [this](const QPointF& point) {
        const auto [row, column] = cellAt(m_plot, point, m_effects.rows(), m_effects.cols());
        return row < 0 ? QString() : cellText(row, column);
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent* event) {
        if (!m_heads) return;
        const auto [layer, head] =
            cellAt(m_plot, event->position(), m_effects.rows(), m_effects.cols());
        if (layer >= 0) openHead(layer, head);
    });

    connect(m_corrupted, &QLineEdit::textEdited, m_patching,
            [this](const QString& text) { m_patching->setCorruptedText(text); });
    for (QLineEdit* token : {m_tokenA, m_tokenB})
        connect(token, &QLineEdit::textEdited, m_patching,
                [this] { m_patching->setMetricTokens(m_tokenA->text(), m_tokenB->text()); });
    connect(m_target, &QComboBox::activated, m_patching, [this](int index) {
        m_patching->setTarget(static_cast<PatchTarget>(m_target->itemData(index).toInt()));
    });
    connect(m_run, &QPushButton::clicked, m_patching, &PatchingDocument::rerun);
    connect(m_cancel, &QPushButton::clicked, m_patching, &PatchingDocument::cancel);
    connect(m_patching, &PatchingDocument::inputsChanged, this, [this] {
        showInputs();
        markStale();
    });
    connect(m_patching, &PatchingDocument::finished, this, [this] {
        showProgress();
        markStale();
    });
    connect(m_patching, &PatchingDocument::runningChanged, this, [this] { showProgress(); });
    connect(m_patching, &PatchingDocument::progressChanged, this, [this] { showProgress(); });
    ModelDocument* models = ModelDocument::of(document);
    connect(models, &ModelDocument::runChanged, this, [this] { markStale(); });
    connect(models, &ModelDocument::modelChanged, this, [this] { markStale(); });
    showInputs();
    showProgress();
}

QString PatchingView::notApplicable() const {
    if (QString why = imageClassifierRefusal(document()); !why.isEmpty()) return why;
    const ModelDocument* models = ModelDocument::of(document());
    if (models->model() && models->model()->config.kind != model::ModelKind::Decoder)
        return tr("Activation patching here reads a decoder's prediction at the last position; "
                  "this model is not a decoder.");
    return {};
}

QString PatchingView::message() const {
    return m_patching->message();
}

void PatchingView::waitForWork() {
    m_patching->waitForIdle();
}

void PatchingView::openHead(Index layer, Index head) {
    openHeadOnLastRow(document(), layer, head);
}

void PatchingView::showInputs() {
    const PatchingInputs& inputs = m_patching->inputs();
    showText(m_corrupted, inputs.corrupted);
    showText(m_tokenA, inputs.tokenA);
    showText(m_tokenB, inputs.tokenB);
    m_target->setCurrentIndex(m_target->findData(static_cast<int>(inputs.target)));
}

void PatchingView::showProgress() {
    const bool running = m_patching->running();
    const auto [done, total] = m_patching->progress();
    m_progress->setVisible(running);
    m_cancel->setVisible(running);
    m_run->setVisible(!running);
    m_progress->setRange(0, static_cast<int>(std::max<Index>(total, 1)));
    m_progress->setValue(static_cast<int>(done));
    if (running)
        m_status->setText(tr("patched run %1 of %2").arg(done).arg(total));
    else if (m_patching->result() && !m_patching->message().isEmpty())
        m_status->setText(m_patching->message());
    else if (const auto& shown = m_patching->result())
        m_status->setText(shown->milliseconds < 1000
                              ? tr("%1 patched runs in %2 ms")
                                    .arg(shown->patching.runs)
                                    .arg(shown->milliseconds, 0, 'f', 1)
                              : tr("%1 patched runs in %2 s")
                                    .arg(shown->patching.runs)
                                    .arg(shown->milliseconds / 1000.0, 0, 'f', 2));
    else
        m_status->clear();
    m_status->setToolTip(m_status->text()); // the whole line where the row is too narrow
    // An empty token field says which token it stands for: the prediction the run used.
    const std::optional<PatchingResult>& result = m_patching->result();
    const model::Tokenizer* tokenizer = ModelDocument::of(document())->tokenizer();
    m_tokenA->setPlaceholderText(result ? tokenText(tokenizer, result->metric.a)
                                        : tr("clean prediction"));
    m_tokenB->setPlaceholderText(result ? tokenText(tokenizer, result->metric.b)
                                        : tr("corrupted prediction"));
}

QString PatchingView::cellText(Index row, Index column) const {
    const double value = m_effects(row, column);
    if (m_heads)
        return tr("layer %1, head %2: %3 of the clean difference restored")
            .arg(row)
            .arg(column)
            .arg(value, 0, 'f', 3);
    return tr("%1, position %2 (%3): %4 of the clean difference restored")
        .arg(m_rowLabels.value(static_cast<int>(row)))
        .arg(column)
        .arg(m_columnLabels.value(static_cast<int>(column)))
        .arg(value, 0, 'f', 3);
}

void PatchingView::refresh() {
    const Theme look = theme();
    ModelDocument* models = ModelDocument::of(document());
    if (notApplicable().isEmpty()) m_patching->request();
    showProgress(); // its texts too follow the language
    const std::optional<PatchingResult>& result = m_patching->result();
    const model::Tokenizer* tokenizer = models->tokenizer();

    m_effects.resize(0, 0);
    m_rowLabels.clear();
    m_columnLabels.clear();
    if (result && notApplicable().isEmpty()) {
        m_heads = result->key.target == PatchTarget::Heads;
        m_effects = m_heads ? result->patching.heads : result->patching.residual;
        const Index layers = result->key.model->config.layers;
        if (m_heads) {
            for (Index l = 0; l < layers; ++l)
                m_rowLabels << QString::number(l);
            for (Index h = 0; h < m_effects.cols(); ++h)
                m_columnLabels << QString::number(h);
        } else {
            for (Index l = 0; l <= layers; ++l)
                m_rowLabels << (l < layers ? tr("into layer %1").arg(l) : tr("output"));
            // The clean token, and where the corruption changed it, "clean/corrupted".
            const auto& clean = result->key.clean;
            const auto& corrupted = result->key.corrupted;
            for (std::size_t i = 0; i < clean.size(); ++i) {
                QString label = tokenText(tokenizer, clean[i]);
                if (corrupted[i] != clean[i])
                    label += QLatin1Char('/') + tokenText(tokenizer, corrupted[i]);
                m_columnLabels << label;
            }
        }
    }
    const Index rows = m_effects.rows(), cols = m_effects.cols();
    QStringList texts;
    for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < cols; ++j)
            texts << cellNumber(m_effects(i, j));

    m_map->setGradient(makeGradient(QStringLiteral("diverging"), look.masked));
    const QCPRange drawn = fillColorMap(m_map, m_effects, nullptr);
    // 0 (the corrupted run) in the middle of the scale, 1 (the clean run) at least at its end.
    const double reach = std::max({std::abs(drawn.lower), std::abs(drawn.upper), 1.0});
    m_map->setDataRange(QCPRange(-reach, reach));
    m_scale->axis()->setLabel(tr("restored: 0 corrupted, 1 clean"));
    QCPAxisRect* rect = m_plot->axisRect();
    rect->axis(QCPAxis::atBottom)
        ->setLabel(m_heads ? tr("head") : tr("position (clean token / corrupted token)"));
    rect->axis(QCPAxis::atLeft)->setLabel(m_heads ? tr("layer") : tr("residual stream"));
    setTokenLabels(rect->axis(QCPAxis::atBottom), m_columnLabels);
    rect->axis(QCPAxis::atBottom)->setTickLabelRotation(!m_heads && cols > 8 ? -45 : 0);
    setTokenLabels(rect->axis(QCPAxis::atLeft), m_rowLabels);
    rect->axis(QCPAxis::atBottom)->setRange(-0.5, std::max<Index>(1, cols) - 0.5);
    rect->axis(QCPAxis::atLeft)->setRange(-0.5, std::max<Index>(1, rows) - 0.5);
    if (rows * cols <= LogitLensView::kLabelledCells)
        writeCells(m_plot, m_map, texts, rows, cols, look);
    else
        m_plot->clearItems();

    if (!models->model()) {
        m_title->setText(tr("Open a model (File > Open Model, or File > Examples), type a text "
                            "and a corrupted text: which heads carry the difference appears "
                            "here."));
    } else if (!notApplicable().isEmpty()) {
        m_title->setText(notApplicable());
    } else if (!result) {
        m_title->setText(m_patching->running() ? tr("Patching: running (progress above)")
                                               : tr("Patching: %1").arg(message()));
    } else {
        m_title->setText(
            tr("Activation patching of %1, %2: logit(“%3”) − logit(“%4”) at the last position "
               "is %5 on the clean text and %6 on the corrupted one; each cell is the share "
               "restored by taking that piece from the clean run")
                .arg(models->displayName(),
                     m_heads ? tr("each head's output") : tr("the residual stream"),
                     tokenText(tokenizer, result->metric.a), tokenText(tokenizer, result->metric.b))
                .arg(result->patching.clean, 0, 'f', 3)
                .arg(result->patching.corrupted, 0, 'f', 3));
    }
    stylePlot(*m_plot, look);
    wrapToFigureWidth(figureStyle().wrapWidth, {m_title});
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

DataTable PatchingView::data() const {
    DataTable table;
    const std::optional<PatchingResult>& result = m_patching->result();
    if (m_effects.size() == 0 || !result) {
        table.unavailable = m_patching->message().isEmpty()
                                ? tr("Patching: open a model, type a text and a corrupted text")
                                : tr("Patching: %1").arg(m_patching->message());
        return table;
    }
    QStringList columns;
    for (int c = 0; c < m_columnLabels.size(); ++c)
        columns << (m_heads ? QStringLiteral("head_%1") : QStringLiteral("position_%1")).arg(c);
    table = DataTable::fromMatrix(m_effects, m_rowLabels, columns);
    table.rowHeader = m_heads ? QStringLiteral("layer") : QStringLiteral("residual_into_layer");
    table.extra.insert(QStringLiteral("quantity"),
                       QStringLiteral("(patched - corrupted) / (clean - corrupted)"));
    table.extra.insert(QStringLiteral("patched"),
                       m_heads ? QStringLiteral("heads") : QStringLiteral("residual"));
    table.extra.insert(QStringLiteral("metric"),
                       QVariantList{static_cast<qlonglong>(result->metric.a),
                                    static_cast<qlonglong>(result->metric.b)});
    table.extra.insert(QStringLiteral("clean"), result->patching.clean);
    table.extra.insert(QStringLiteral("corrupted"), result->patching.corrupted);
    QVariantList clean, corrupted;
    for (std::int64_t id : result->key.clean)
        clean << static_cast<qlonglong>(id);
    for (std::int64_t id : result->key.corrupted)
        corrupted << static_cast<qlonglong>(id);
    table.extra.insert(QStringLiteral("clean_ids"), clean);
    table.extra.insert(QStringLiteral("corrupted_ids"), corrupted);
    return table;
}

} // namespace attnlab::ui

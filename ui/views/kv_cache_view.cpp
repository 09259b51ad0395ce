#include "ui/views/kv_cache_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/state/experiment_data.h"
#include "ui/views/colormap.h"
#include "ui/views/step_controls.h"
#include "ui/views/teaching_plot.h"

namespace attnlab::ui {

namespace {

/// The grouped-query head count drawn beside MHA and MQA: the session's when it is strictly
/// between 1 and H, else the largest proper divisor of H above 1; 0 when H has none (H <= 3
/// prime or 1), so there is no grouped-query configuration to draw.
Index gqaHeads(Index heads, Index kvHeads) {
    if (kvHeads > 1 && kvHeads < heads) return kvHeads;
    for (Index g = heads / 2; g > 1; --g)
        if (heads % g == 0) return g;
    return 0;
}

} // namespace

KvCacheView::KvCacheView(Document* document, QWidget* parent) : View(document, parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_controls = new StepControls(tr("Decode the next token"), false, this);
    m_enableButton = new QToolButton(this);
    m_enableButton->setText(tr("Use a KV cache"));
    m_enableButton->setToolTip(tr("Run the session as a prefill of half the tokens, then "
                                  "decode the rest one at a time"));
    m_controls->bar()->addWidget(m_enableButton);
    layout->addWidget(m_controls);
    m_plot = new QCustomPlot(this);
    layout->addWidget(m_plot, 1);

    QCustomPlot& plot = *m_plot;
    plot.plotLayout()->clear();
    m_title = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(0, 0, m_title);
    auto* top = new QCPLayoutGrid;
    auto* bottom = new QCPLayoutGrid;
    plot.plotLayout()->addElement(1, 0, top);
    plot.plotLayout()->addElement(2, 0, bottom);
    plot.plotLayout()->setRowStretchFactors({0.01, 3.0, 2.0});

    m_weightsRect = makeAxisRect(&plot, tr("key (cache position)"), tr("query"));
    m_cacheRect = makeAxisRect(&plot, tr("K cache (dim)"), tr("cache row"));
    setupMatrixAxes(m_weightsRect);
    setupMatrixAxes(m_cacheRect);
    top->addElement(0, 0, m_weightsRect);
    top->addElement(0, 1, m_cacheRect);
    top->setColumnStretchFactors({3.0, 2.0});
    m_rowRect = makeAxisRect(&plot, tr("key"), tr("new row\u2019s weight"));
    m_bytesRect = makeAxisRect(&plot, tr("step (0 = prefill)"), tr("cache bytes"));
    bottom->addElement(0, 0, m_rowRect);
    // The legend stands beside the curves, one line each: inset, it covered the first steps;
    // above them, on one line, it was wider than its plot and squeezed the row beside it.
    bottom->addElement(0, 1, m_bytesRect);
    plot.setAutoAddPlottableToLegend(false);
    m_bytesLegend = new QCPLegend;
    addLegendAtItsSize(bottom, 0, 2, m_bytesLegend, Qt::Vertical);
    m_bytesLegend->setLayer(QStringLiteral("legend"));
    bottom->setColumnStretchFactors({1.0, 1.3, 0.01});

    m_weights = new QCPColorMap(m_weightsRect->axis(QCPAxis::atBottom),
                                m_weightsRect->axis(QCPAxis::atLeft));
    m_cache =
        new QCPColorMap(m_cacheRect->axis(QCPAxis::atBottom), m_cacheRect->axis(QCPAxis::atLeft));
    for (QCPColorMap* map : {m_weights, m_cache}) {
        map->setInterpolate(false);
        map->setTightBoundary(false);
    }
    m_rowBars = new QCPBars(m_rowRect->axis(QCPAxis::atBottom), m_rowRect->axis(QCPAxis::atLeft));
    m_rowBars->setWidth(0.7);
    const QString names[3] = {tr("MHA"), tr("GQA"), tr("MQA")};
    for (int i = 0; i < 3; ++i) {
        m_bytes[i] =
            new QCPGraph(m_bytesRect->axis(QCPAxis::atBottom), m_bytesRect->axis(QCPAxis::atLeft));
        m_bytes[i]->setName(names[i]);
    }
    m_bytesNow =
        new QCPGraph(m_bytesRect->axis(QCPAxis::atBottom), m_bytesRect->axis(QCPAxis::atLeft));
    m_bytesRect->axis(QCPAxis::atLeft)->setTicker(bytesTicker());
    // Whole steps, made once: the tick count fitTickCount gives it after layout stays.
    m_bytesRect->axis(QCPAxis::atBottom)->setTicker(integerTicker());
    m_bytesRect->axis(QCPAxis::atBottom)->setSubTicks(false);
    m_bytesNow->setLineStyle(QCPGraph::lsNone);
    m_newRowsItem = outlineItem(m_plot, m_weightsRect);
    m_newCacheItem = outlineItem(m_plot, m_cacheRect);

    setToolTip(tr("With a KV cache each new token computes only its own query row; the keys and "
                  "values of earlier tokens are read from the cache, which grows by one row per "
                  "step. Grouped-query and multi-query attention shrink the cache by sharing "
                  "key/value heads."));
    connect(m_controls, &StepControls::stepRequested, this, [this](Index step) { goToStep(step); });
    // Token labels thin to what each matrix's laid-out size holds.
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        bool changed = false;
        for (QCPAxis* axis :
             {m_weightsRect->axis(QCPAxis::atBottom), m_weightsRect->axis(QCPAxis::atLeft),
              m_cacheRect->axis(QCPAxis::atLeft), m_rowRect->axis(QCPAxis::atBottom)})
            changed = fitTokenLabels(axis) || changed;
        // Number labels as many as the short plots hold apart (six touched on a projector).
        changed = fitTickCount(m_bytesRect->axis(QCPAxis::atLeft)) || changed;
        changed = fitTickCount(m_bytesRect->axis(QCPAxis::atBottom), 8) || changed;
        changed = fitTickCount(m_rowRect->axis(QCPAxis::atLeft), 3) || changed;
        if (changed) m_plot->replot(QCustomPlot::rpQueuedReplot);
    });

    connect(m_enableButton, &QToolButton::clicked, this, [this] {
        this->document()->modify([](Session& s) { s.kvPrefill = defaultKvPrefill(s); },
                                 tr("Use a KV cache"));
    });
}

QString KvCacheView::notApplicable() const {
    const Experiment* experiment = document()->experiment();
    // A real model's layer carries its own decoding steps (model_document.h).
    if (experiment && !experiment->source.isSession() && !experiment->kvTrace)
        return tr("%1 was not decoded token by token: the KV-cache steps need a lab session.")
            .arg(describeSource(experiment->source));
    return {};
}

Index KvCacheView::stepCount() const {
    const Experiment* experiment = document()->experiment();
    if (!experiment || !experiment->kvTrace) return 0;
    return static_cast<Index>(experiment->kvTrace->steps.size());
}

Index KvCacheView::currentStep() const {
    return std::clamp<Index>(document()->session().viewState.kvStep, 0,
                             std::max<Index>(0, stepCount() - 1));
}

std::pair<Index, Index> KvCacheView::newRows() const {
    const Experiment* experiment = document()->experiment();
    if (stepCount() == 0) return {0, 0};
    const KvCacheStep& step = experiment->kvTrace->steps[static_cast<std::size_t>(currentStep())];
    return {step.cacheLen - step.newRows, step.cacheLen};
}

void KvCacheView::goToStep(Index step) {
    setViewStep(*document(), &ViewState::kvStep, step, stepCount() - 1);
}

void KvCacheView::stepForward() {
    goToStep(currentStep() + 1);
}

void KvCacheView::stepBack() {
    goToStep(currentStep() - 1);
}

void KvCacheView::refresh() {
    const Theme look = theme();
    const Experiment* experiment = document()->experiment();
    const ViewState& viewState = document()->session().viewState;
    const Index steps = stepCount();
    const Index step = currentStep();
    const auto [firstNew, endNew] = newRows();
    m_controls->setPosition(step, steps - 1);
    m_enableButton->setVisible(steps == 0 && experiment && experiment->source.isSession());

    const Index head = experiment ? clampedHead(*experiment, viewState.head) : 0;
    const Index sk = experiment ? experiment->sk() : 0;
    const Index cacheLen = endNew;
    const QStringList queryTokens =
        experiment ? displayTokens(experiment->queryTokens) : QStringList();
    const QStringList keyTokens = experiment ? displayTokens(experiment->keyTokens) : QStringList();

    // Attention rows computed so far; rows still to decode are blank.
    MatrixD weights = experiment && steps > 0 ? headWeights(*experiment, head) : MatrixD(0, 0);
    BoolMatrix hidden = experiment && steps > 0 ? maskedCells(*experiment) : BoolMatrix();
    if (hidden.rows() == weights.rows() && hidden.cols() == weights.cols())
        for (Index i = cacheLen; i < weights.rows(); ++i)
            hidden.row(i).setConstant(true);
    fillColorMap(m_weights, weights, &hidden);
    m_weights->setGradient(makeGradient(QString::fromStdString(viewState.colormap), look.masked));
    m_weights->setDataRange(QCPRange(0, 1));
    QCPAxis* keyAxis = m_weightsRect->axis(QCPAxis::atBottom);
    QCPAxis* queryAxis = m_weightsRect->axis(QCPAxis::atLeft);
    setTokenLabels(keyAxis, keyTokens);
    keyAxis->setTickLabelRotation(keyTokens.size() > 6 ? -45 : 0);
    setTokenLabels(queryAxis, queryTokens);
    keyAxis->setRange(-0.5, std::max<Index>(1, sk) - 0.5);
    queryAxis->setRange(-0.5, std::max<Index>(1, weights.rows()) - 0.5);
    m_newRowsItem->setVisible(steps > 0);
    m_newRowsItem->topLeft->setCoords(-0.5, firstNew - 0.5);
    m_newRowsItem->bottomRight->setCoords(sk - 0.5, endNew - 0.5);
    m_newRowsItem->setPen(QPen(look.accent, 3 * look.lineWidth));

    // The K cache of the kv head this query head reads, filled up to cacheLen.
    MatrixD keys = experiment && steps > 0
                       ? headSlice(experiment->qkv.k, experiment->kvHeadOf(head))
                       : MatrixD(0, 0);
    BoolMatrix empty(keys.rows(), keys.cols());
    empty.setConstant(false);
    for (Index i = cacheLen; i < keys.rows(); ++i)
        empty.row(i).setConstant(true);
    fillColorMap(m_cache, keys, &empty);
    m_cache->setGradient(makeGradient(QStringLiteral("diverging"), look.masked));
    const double bound = keys.size() > 0 ? std::max(1e-9, keys.cwiseAbs().maxCoeff()) : 1.0;
    m_cache->setDataRange(QCPRange(-bound, bound));
    setTokenLabels(m_cacheRect->axis(QCPAxis::atLeft), keyTokens);
    m_cacheRect->axis(QCPAxis::atLeft)->setRange(-0.5, std::max<Index>(1, keys.rows()) - 0.5);
    m_cacheRect->axis(QCPAxis::atBottom)->setRange(-0.5, std::max<Index>(1, keys.cols()) - 0.5);
    m_cacheRect->axis(QCPAxis::atBottom)->setTicker(integerTicker());
    m_newCacheItem->setVisible(steps > 0);
    m_newCacheItem->topLeft->setCoords(-0.5, firstNew - 0.5);
    m_newCacheItem->bottomRight->setCoords(keys.cols() - 0.5, endNew - 0.5);
    m_newCacheItem->setPen(QPen(look.accent, 3 * look.lineWidth));

    // The newest query row attends over the cache only.
    QVector<double> rowKeys, rowWeights;
    const Index newest = endNew - 1;
    if (steps > 0 && newest >= 0 && newest < weights.rows())
        for (Index j = 0; j < weights.cols(); ++j) {
            rowKeys << static_cast<double>(j);
            rowWeights << weights(newest, j);
        }
    m_rowBars->setData(rowKeys, rowWeights, true);
    m_rowBars->setBrush(look.accent);
    m_rowBars->setPen(Qt::NoPen);
    setTokenLabels(m_rowRect->axis(QCPAxis::atBottom), keyTokens);
    // The row's plot is narrow: more than six tokens stand upright.
    m_rowRect->axis(QCPAxis::atBottom)->setTickLabelRotation(keyTokens.size() > 6 ? -90 : 0);
    m_rowRect->axis(QCPAxis::atBottom)->setSubTicks(false);
    m_rowRect->axis(QCPAxis::atBottom)->setRange(-0.7, std::max<Index>(1, sk) - 0.3);
    m_rowRect->axis(QCPAxis::atLeft)->setRange(0, 1.05);

    // Cache bytes per step for MHA, GQA, MQA (float32, one batch entry).
    const Index heads = experiment ? experiment->headCount() : 1;
    const Index kvHeads = experiment ? experiment->kvHeadCount() : 1;
    const Index counts[3] = {heads, gqaHeads(heads, kvHeads), 1};
    const Index dk = experiment ? experiment->qkv.k.dim : 0;
    const Index dv = experiment ? experiment->qkv.v.dim : 0;
    static const QColor kColors[3] = {QColor(0xd5, 0x5e, 0x00), QColor(0x00, 0x9e, 0x73),
                                      QColor(0x00, 0x72, 0xb2)};
    // The bold curve is what is shown: a lab session, or a real model's (or dump's) layer.
    const QString shownLabel = !experiment || experiment->source.isSession() ? tr("this session")
                               : experiment->source.kind == ExperimentSource::Kind::Model
                                   ? tr("this model")
                                   : tr("this dump");
    double top = 1;
    for (int i = 0; i < 3; ++i) {
        QVector<double> xs, ys;
        for (Index k = 0; k < steps && counts[i] > 0; ++k) {
            const KvCacheStep& s = experiment->kvTrace->steps[static_cast<std::size_t>(k)];
            xs << static_cast<double>(k);
            ys << static_cast<double>(kvCacheBytes(1, counts[i], s.cacheLen, dk, dv, 4));
            top = std::max(top, ys.back());
        }
        m_bytes[i]->setData(xs, ys, true);
        const bool current = counts[i] == kvHeads;
        m_bytes[i]->setPen(QPen(kColors[i], (current ? 3.5 : 1.5) * look.lineWidth,
                                current ? Qt::SolidLine : Qt::DashLine));
        m_bytes[i]->setName((i == 0   ? tr("MHA (%1 kv heads)")
                             : i == 1 ? tr("GQA (%1 kv heads)")
                                      : tr("MQA (%1 kv head)"))
                                .arg(counts[i]) +
                            (current ? QStringLiteral("\n") + shownLabel : QString()));
    }
    QVector<double> nowX, nowY;
    if (steps > 0) {
        nowX << static_cast<double>(step);
        nowY << static_cast<double>(
            experiment->kvTrace->steps[static_cast<std::size_t>(step)].cacheBytes);
    }
    m_bytesNow->setData(nowX, nowY, true);
    m_bytesNow->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDisc, look.foreground, look.foreground, 9));
    m_bytesRect->axis(QCPAxis::atBottom)->setRange(-0.3, std::max<Index>(1, steps - 1) + 0.3);
    m_bytesRect->axis(QCPAxis::atLeft)->setRange(0, top * 1.08);
    QCPLegend* legend = m_bytesLegend;
    styleLegend(legend, look);
    fitLegendIcons(legend);
    legend->clearItems();
    for (int i = 0; i < 3; ++i)
        if (counts[i] > 0 && (i < 2 || counts[i] != counts[0]))
            legend->addItem(new QCPPlottableLegendItem(legend, m_bytes[i]));

    if (!experiment) {
        m_title->setText(tr("KV cache: no experiment yet"));
    } else if (steps == 0) {
        m_title->setText(tr("KV cache is off: set a prefill (Inputs panel, or "
                            "--kv-cache-prefill N) to step through decoding"));
    } else {
        const KvCacheStep& s = experiment->kvTrace->steps[static_cast<std::size_t>(step)];
        const QString what =
            step == 0 ? tr("prefill of %1 rows").arg(s.newRows)
                      : tr("decode row %1 (%2)")
                            .arg(newest)
                            .arg(newest < queryTokens.size() ? queryTokens[static_cast<int>(newest)]
                                                             : QString());
        m_title->setText(tr("KV cache, head %1: step %2 of %3, %4; cache %5 rows = %6")
                             .arg(head)
                             .arg(step)
                             .arg(steps - 1)
                             .arg(what)
                             .arg(s.cacheLen)
                             .arg(bytesText(static_cast<double>(s.cacheBytes))));
    }
    stylePlot(*m_plot, look);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void KvCacheView::paintFigure(QCPPainter& painter, const QSize& size) {
    m_plot->toPainter(&painter, size.width(), size.height());
}

QVector<QPointF> KvCacheView::plottedBytes(int which) const {
    QVector<QPointF> points;
    if (which < 0 || which > 2) return points;
    for (auto it = m_bytes[which]->data()->constBegin(); it != m_bytes[which]->data()->constEnd();
         ++it)
        points << QPointF(it->key, it->value);
    return points;
}

QVector<QPointF> KvCacheView::plottedRow() const {
    QVector<QPointF> points;
    for (auto it = m_rowBars->data()->constBegin(); it != m_rowBars->data()->constEnd(); ++it)
        points << QPointF(it->key, it->value);
    return points;
}

DataTable KvCacheView::data() const {
    DataTable table;
    const Experiment* experiment = document()->experiment();
    if (!experiment || !experiment->kvTrace) {
        table.unavailable = tr("KV cache is off: set a prefill (Inputs panel, or "
                               "--kv-cache-prefill N) to step through decoding");
        return table;
    }
    // The steps' rows, the session's cache bytes, and the three curves as drawn (MHA, GQA,
    // MQA at float32, one batch entry); `current` marks the step shown.
    table.rowHeader = QStringLiteral("step");
    table.columnLabels = {QStringLiteral("new_rows"),    QStringLiteral("cache_len"),
                          QStringLiteral("cache_bytes"), QStringLiteral("mha_bytes"),
                          QStringLiteral("gqa_bytes"),   QStringLiteral("mqa_bytes"),
                          QStringLiteral("current")};
    table.cols = static_cast<int>(table.columnLabels.size());
    const QVector<QPointF> curves[3] = {plottedBytes(0), plottedBytes(1), plottedBytes(2)};
    const Index shown = currentStep();
    for (std::size_t k = 0; k < experiment->kvTrace->steps.size(); ++k) {
        const KvCacheStep& s = experiment->kvTrace->steps[k];
        table.rowLabels << (k == 0 ? tr("prefill") : tr("decode %1").arg(k));
        table.values.insert(table.values.end(),
                            {double(s.newRows), double(s.cacheLen), double(s.cacheBytes)});
        for (const QVector<QPointF>& curve : curves)
            table.values.push_back(k < static_cast<std::size_t>(curve.size())
                                       ? curve[static_cast<qsizetype>(k)].y()
                                       : std::numeric_limits<double>::quiet_NaN());
        table.values.push_back(static_cast<Index>(k) == shown ? 1.0 : 0.0);
    }
    table.extra.insert(QStringLiteral("bytes_per_element"), 4);
    table.rows = static_cast<int>(experiment->kvTrace->steps.size());
    return table;
}

} // namespace attnlab::ui

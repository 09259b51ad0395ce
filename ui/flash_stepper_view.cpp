// GCC 12 reports false "maybe uninitialized" warnings inside Eigen's AVX-512 intrinsics
// (the _mm512_undefined_ps idiom) when they are inlined here with -march=native.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "ui/flash_stepper_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/colormap.h"
#include "ui/experiment_data.h"
#include "ui/teaching_plot.h"

namespace attnlab::ui {

namespace {

constexpr int kMaxTrackedRows = 4;
constexpr int kMaxDrawnTiles = 2500;
constexpr Index kMaxErrorSamples = 400;
constexpr int kBlockMergeKey = 0x464c; // consecutive block-size edits are one undo step

const QColor kRowColors[kMaxTrackedRows] = {QColor(0x00, 0x72, 0xb2), QColor(0xd5, 0x5e, 0x00),
                                            QColor(0x00, 0x9e, 0x73), QColor(0xcc, 0x79, 0xa7)};

/// A one-head copy of Q, K, V: query head `head` and the kv head it reads.
Qkv headQkv(const Experiment& experiment, Index head) {
    Qkv qkv;
    const Index kvHead = kvHeadOf(experiment, head);
    auto copy = [](const Tensor4& source, Index h) {
        Tensor4 out(1, 1, source.seq, source.dim);
        if (source.batch > 0 && h < source.heads) out.head(0, 0) = source.head(0, h);
        return out;
    };
    qkv.q = copy(experiment.qkv.q, head);
    qkv.k = copy(experiment.qkv.k, kvHead);
    qkv.v = copy(experiment.qkv.v, kvHead);
    return qkv;
}

/// O = accumulator / l for visited rows; rows with l == 0 (not visited or empty) are 0.
MatrixD normalizedOutput(const FlashState& state) {
    MatrixD out = MatrixD::Zero(state.accumulator.rows(), state.accumulator.cols());
    for (Index i = 0; i < out.rows(); ++i) {
        const float sum = i < static_cast<Index>(state.rowSum.size()) ? state.rowSum[i] : 0.f;
        if (sum > 0) out.row(i) = state.accumulator.row(i).cast<double>() / sum;
    }
    return out;
}

} // namespace

FlashStepperView::FlashStepperView(Document* document, QWidget* parent) : View(document, parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 0);
    auto button = [this, bar](const QString& text, const QString& tip) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        bar->addWidget(b);
        return b;
    };
    m_backButton = button(tr("\u25c2 Back"), tr("Undo the last tile"));
    m_stepButton = button(tr("Step \u25b8"), tr("Process the next tile"));
    m_playButton = button(tr("Play"), tr("Step through the tiles automatically"));
    m_pauseButton = button(tr("Pause"), tr("Stop playing"));
    m_speed = new QSpinBox(this);
    m_speed->setRange(1, 60);
    m_speed->setValue(2);
    m_speed->setSuffix(tr(" steps/s"));
    m_speed->setToolTip(tr("Playing speed"));
    bar->addWidget(m_speed);
    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setToolTip(tr("Tiles done"));
    bar->addWidget(m_slider, 1);
    m_stepLabel = new QLabel(this);
    bar->addWidget(m_stepLabel);
    bar->addWidget(new QLabel(tr("q block"), this));
    m_qBlock = new QSpinBox(this);
    m_qBlock->setRange(1, 4096);
    m_qBlock->setToolTip(tr("Query rows per tile (Br)"));
    bar->addWidget(m_qBlock);
    bar->addWidget(new QLabel(tr("kv block"), this));
    m_kvBlock = new QSpinBox(this);
    m_kvBlock->setRange(1, 4096);
    m_kvBlock->setToolTip(tr("Key/value columns per tile (Bc)"));
    bar->addWidget(m_kvBlock);
    layout->addLayout(bar);

    m_plot = new QCustomPlot(this);
    layout->addWidget(m_plot, 1);
    m_timer = new QTimer(this);

    QCustomPlot& plot = *m_plot;
    plot.plotLayout()->clear();
    m_title = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(0, 0, m_title);
    auto* top = new QCPLayoutGrid;
    auto* bottom = new QCPLayoutGrid;
    plot.plotLayout()->addElement(1, 0, top);
    plot.plotLayout()->addElement(2, 0, bottom);
    m_counters = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(3, 0, m_counters);
    plot.plotLayout()->setRowStretchFactors({0.01, 3.0, 2.0, 0.01});

    m_tileRect = makeAxisRect(&plot, tr("key"), tr("query"));
    m_accumulatorRect = makeAxisRect(&plot, tr("O / l (dim)"), QString());
    m_outputRect = makeAxisRect(&plot, tr("standard output (dim)"), QString());
    for (QCPAxisRect* rect : {m_tileRect, m_accumulatorRect, m_outputRect})
        setupMatrixAxes(rect);
    top->addElement(0, 0, m_tileRect);
    top->addElement(0, 1, m_accumulatorRect);
    top->addElement(0, 2, m_outputRect);
    top->setColumnStretchFactors({2.0, 1.0, 1.0});

    m_maxRect = makeAxisRect(&plot, tr("step"), tr("running max m"));
    m_sumRect = makeAxisRect(&plot, tr("step"), tr("running sum l"));
    m_rescaleRect = makeAxisRect(&plot, tr("step"), tr("exp(m_old \u2212 m_new)"));
    m_errorRect = makeAxisRect(&plot, tr("step"), tr("max |O \u2212 O_std|"));
    bottom->addElement(0, 0, m_maxRect);
    bottom->addElement(0, 1, m_sumRect);
    bottom->addElement(0, 2, m_rescaleRect);
    bottom->addElement(0, 3, m_errorRect);

    m_scores =
        new QCPColorMap(m_tileRect->axis(QCPAxis::atBottom), m_tileRect->axis(QCPAxis::atLeft));
    m_accumulator = new QCPColorMap(m_accumulatorRect->axis(QCPAxis::atBottom),
                                    m_accumulatorRect->axis(QCPAxis::atLeft));
    m_output =
        new QCPColorMap(m_outputRect->axis(QCPAxis::atBottom), m_outputRect->axis(QCPAxis::atLeft));
    for (QCPColorMap* map : {m_scores, m_accumulator, m_output}) {
        map->setInterpolate(false);
        map->setTightBoundary(false);
    }
    m_errorGraph =
        new QCPGraph(m_errorRect->axis(QCPAxis::atBottom), m_errorRect->axis(QCPAxis::atLeft));
    m_errorNow =
        new QCPGraph(m_errorRect->axis(QCPAxis::atBottom), m_errorRect->axis(QCPAxis::atLeft));
    m_errorNow->setLineStyle(QCPGraph::lsNone);

    setToolTip(tr("FlashAttention never holds the whole score matrix: it visits one tile at a "
                  "time and keeps, per query row, the running max m, the running sum l and an "
                  "un-normalised output, rescaling them by exp(m_old \u2212 m_new) whenever "
                  "the max grows."));

    connect(m_backButton, &QToolButton::clicked, this, &FlashStepperView::stepBack);
    connect(m_stepButton, &QToolButton::clicked, this, &FlashStepperView::stepForward);
    connect(m_playButton, &QToolButton::clicked, this, &FlashStepperView::play);
    connect(m_pauseButton, &QToolButton::clicked, this, &FlashStepperView::pause);
    connect(m_speed, &QSpinBox::valueChanged, this, &FlashStepperView::setSpeed);
    connect(m_slider, &QSlider::valueChanged, this, [this](int value) { goToStep(value); });
    connect(m_timer, &QTimer::timeout, this, [this] {
        if (currentStep() >= totalSteps())
            pause();
        else
            stepForward();
    });
    connect(m_qBlock, &QSpinBox::valueChanged, this, [this](int value) {
        if (this->document()->session().qBlock == value) return;
        this->document()->modify([value](Session& s) { s.qBlock = value; },
                                 tr("Change the query block size"), kBlockMergeKey);
    });
    connect(m_kvBlock, &QSpinBox::valueChanged, this, [this](int value) {
        if (this->document()->session().kvBlock == value) return;
        this->document()->modify([value](Session& s) { s.kvBlock = value; },
                                 tr("Change the key/value block size"), kBlockMergeKey + 1);
    });
    connect(document, &Document::changed, this, [this](Document::What what) {
        if (what == Document::What::Experiment) m_traceDirty = true;
        if (what == Document::What::Session) updateControls();
    });
    setSpeed(m_speed->value());
    updateControls();
}

bool FlashStepperView::dependsOn(Document::What what) const {
    return View::dependsOn(what) || what == Document::What::Session;
}

void FlashStepperView::ensureTrace() {
    const Experiment* experiment = document()->experiment();
    const Index head =
        experiment ? clampedHead(*experiment, document()->session().viewState.head) : 0;
    if (!m_traceDirty && head == m_traceHead) return;
    m_traceDirty = false;
    m_traceHead = head;
    m_headQkv.reset();
    m_steps.clear();
    m_reference = MatrixD(0, 0);
    m_errorPoints.clear();
    m_note.clear();
    if (!experiment || experiment->headCount() == 0) return;
    const Session& session = experiment->session;

    m_spec = AttentionSpec{};
    m_spec.variant = Variant::Flash;
    m_spec.mask = session.mask;
    if (session.kvPrefill >= 0) m_spec.mask.causal = true; // the KV cache decodes causally
    m_spec.scale = experiment->scale;
    m_spec.qBlock = session.qBlock;
    m_spec.kvBlock = session.kvBlock;
    m_spec.wantWeights = false;
    m_spec.wantFlashTrace = true;
    m_headQkv = headQkv(*experiment, head);
    try {
        Attention flash = attend(*m_headQkv, m_spec);
        if (flash.flashTrace && !flash.flashTrace->heads.empty())
            m_steps = flash.flashTrace->heads.front().steps;
        AttentionSpec standard = m_spec;
        standard.variant = Variant::Softmax;
        standard.wantFlashTrace = false;
        m_reference = headSlice(attend(*m_headQkv, standard).output, 0);
    } catch (const std::exception& error) {
        m_note = QString::fromUtf8(error.what());
        m_steps.clear();
        return;
    }
    if (session.variant != Variant::Flash && session.variant != Variant::Softmax)
        m_note = tr("The session's variant is %1; the stepper shows softmax FlashAttention on "
                    "the same Q, K, V.")
                     .arg(QString::fromLatin1(variantName(session.variant)));

    // The error curve: every step when there are few, else evenly spaced samples and the last.
    const auto total = static_cast<Index>(m_steps.size());
    const Index stride = std::max<Index>(1, (total + kMaxErrorSamples - 1) / kMaxErrorSamples);
    for (Index s = 0; s <= total; s = (s == total ? total + 1 : std::min(total, s + stride))) {
        const FlashState state = flashStateAfter(*m_headQkv, m_spec, 0, 0, s);
        const MatrixD output = normalizedOutput(state);
        const double error = output.size() == m_reference.size() && output.size() > 0
                                 ? (output - m_reference).cwiseAbs().maxCoeff()
                                 : 0.0;
        m_errorPoints << QPointF(static_cast<double>(s), error);
    }
}

Index FlashStepperView::totalSteps() {
    ensureTrace();
    return static_cast<Index>(m_steps.size());
}

Index FlashStepperView::currentStep() {
    return std::clamp<Index>(document()->session().viewState.flashStep, 0, totalSteps());
}

qint64 FlashStepperView::tileBytes() const {
    const Session& s = document()->session();
    return static_cast<qint64>(s.qBlock) * s.kvBlock * static_cast<qint64>(sizeof(float));
}

qint64 FlashStepperView::fullScoreBytes() const {
    const Experiment* experiment = document()->experiment();
    if (!experiment) return 0;
    return static_cast<qint64>(experiment->sq()) * experiment->sk() *
           static_cast<qint64>(sizeof(float));
}

bool FlashStepperView::playing() const {
    return m_timer->isActive();
}

void FlashStepperView::goToStep(Index step) {
    setViewStep(*document(), &ViewState::flashStep, step, totalSteps());
}

void FlashStepperView::stepForward() {
    goToStep(currentStep() + 1);
}

void FlashStepperView::stepBack() {
    goToStep(currentStep() - 1);
}

void FlashStepperView::play() {
    if (currentStep() >= totalSteps()) goToStep(0);
    m_timer->start();
    updateControls();
}

void FlashStepperView::pause() {
    m_timer->stop();
    updateControls();
}

void FlashStepperView::setSpeed(int stepsPerSecond) {
    m_timer->setInterval(1000 / std::max(1, stepsPerSecond));
}

void FlashStepperView::updateControls() {
    const Session& session = document()->session();
    const Index total = static_cast<Index>(m_steps.size());
    const Index step = std::clamp<Index>(session.viewState.flashStep, 0, total);
    {
        const QSignalBlocker b1(m_qBlock), b2(m_kvBlock), b3(m_slider);
        m_qBlock->setValue(static_cast<int>(session.qBlock));
        m_kvBlock->setValue(static_cast<int>(session.kvBlock));
        m_slider->setRange(0, static_cast<int>(total));
        m_slider->setValue(static_cast<int>(step));
    }
    m_stepLabel->setText(tr("%1 / %2").arg(step).arg(total));
    m_backButton->setEnabled(step > 0);
    m_stepButton->setEnabled(step < total);
    m_playButton->setEnabled(!m_timer->isActive() && total > 0);
    m_pauseButton->setEnabled(m_timer->isActive());
}

void FlashStepperView::refresh() {
    ensureTrace();
    const Theme look = theme();
    const Experiment* experiment = document()->experiment();
    const ViewState& viewState = document()->session().viewState;
    const Index total = static_cast<Index>(m_steps.size());
    const Index step = currentStep();
    updateControls();

    for (QCPItemRect* item : m_tileItems)
        m_plot->removeItem(item);
    m_tileItems.clear();
    for (QCPGraph* graph : m_seriesGraphs)
        m_plot->removeGraph(graph);
    m_seriesGraphs.clear();
    m_trackedRows.clear();

    const bool ready = experiment && m_headQkv && total > 0;
    const Index head = m_traceHead;
    m_state = ready ? flashStateAfter(*m_headQkv, m_spec, 0, 0, step) : FlashState{};

    // Score matrix with tiles.
    const QString colormap = QString::fromStdString(viewState.colormap);
    MatrixD scores = experiment ? scaledScores(*experiment, head) : MatrixD(0, 0);
    const BoolMatrix masked = experiment ? maskedCells(*experiment) : BoolMatrix();
    fillColorMap(m_scores, scores, &masked);
    m_scores->setGradient(makeGradient(colormap, look.masked));
    m_scores->rescaleDataRange(true);
    const Index sq = scores.rows(), sk = scores.cols();
    const QStringList queryTokens =
        experiment ? displayTokens(experiment->queryTokens) : QStringList();
    const QStringList keyTokens = experiment ? displayTokens(experiment->keyTokens) : QStringList();
    QCPAxis* keyAxis = m_tileRect->axis(QCPAxis::atBottom);
    QCPAxis* queryAxis = m_tileRect->axis(QCPAxis::atLeft);
    keyAxis->setTicker(labelTicker(keyTokens, 24));
    queryAxis->setTicker(labelTicker(queryTokens, 24));
    keyAxis->setTickLabelRotation(keyTokens.size() > 6 ? -45 : 0);
    keyAxis->setRange(-0.5, std::max<double>(1, static_cast<double>(sk)) - 0.5);
    queryAxis->setRange(-0.5, std::max<double>(1, static_cast<double>(sq)) - 0.5);

    auto addTile = [this](const FlashStep& tile, const QPen& pen, const QBrush& brush) {
        auto* rect = new QCPItemRect(m_plot);
        rect->setClipAxisRect(m_tileRect);
        rect->setClipToAxisRect(true);
        for (QCPItemPosition* position : {rect->topLeft, rect->bottomRight}) {
            position->setAxes(m_tileRect->axis(QCPAxis::atBottom),
                              m_tileRect->axis(QCPAxis::atLeft));
            position->setAxisRect(m_tileRect);
        }
        rect->topLeft->setCoords(tile.kvStart - 0.5, tile.qStart - 0.5);
        rect->bottomRight->setCoords(tile.kvEnd - 0.5, tile.qEnd - 0.5);
        rect->setPen(pen);
        rect->setBrush(brush);
        m_tileItems.push_back(rect);
    };
    if (ready) {
        QColor veil = look.background;
        veil.setAlpha(185);
        const QPen gridPen(look.grid, 1);
        const bool drawAll = total <= kMaxDrawnTiles;
        for (Index k = 0; k < total && drawAll; ++k) {
            const FlashStep& tile = m_steps[static_cast<std::size_t>(k)];
            QBrush brush = Qt::NoBrush;
            if (tile.skipped) brush = QBrush(look.foreground, Qt::BDiagPattern);
            addTile(tile, gridPen, brush);
            if (k >= step) addTile(tile, Qt::NoPen, veil);
        }
        if (step > 0)
            addTile(m_steps[static_cast<std::size_t>(step - 1)],
                    QPen(look.accent, 3 * look.lineWidth), Qt::NoBrush);
    }

    // The rows whose curves are drawn.
    if (ready) {
        if (viewState.query >= 0 && viewState.query < sq) {
            m_trackedRows.push_back(viewState.query);
        } else {
            const FlashStep& tile = m_steps[static_cast<std::size_t>(std::max<Index>(0, step - 1))];
            for (Index r = tile.qStart; r < tile.qEnd && r - tile.qStart < kMaxTrackedRows; ++r)
                m_trackedRows.push_back(r);
        }
    }
    QCPAxisRect* seriesRects[3] = {m_maxRect, m_sumRect, m_rescaleRect};
    double low[3] = {0, 0, 0}, high[3] = {1, 1, 1.05};
    bool seen[3] = {false, false, false};
    for (std::size_t t = 0; t < m_trackedRows.size(); ++t) {
        const Index row = m_trackedRows[t];
        QVector<double> xs[3], ys[3];
        for (Index k = 0; k < step; ++k) {
            const FlashStep& tile = m_steps[static_cast<std::size_t>(k)];
            if (tile.skipped || row < tile.qStart || row >= tile.qEnd) continue;
            const auto local = static_cast<std::size_t>(row - tile.qStart);
            const float values[3] = {tile.rowMax[local], tile.rowSum[local], tile.rescale[local]};
            for (int s = 0; s < 3; ++s) {
                if (!std::isfinite(values[s])) continue;
                xs[s] << static_cast<double>(k + 1);
                ys[s] << values[s];
                if (s < 2) {
                    low[s] = seen[s] ? std::min(low[s], double(values[s])) : values[s];
                    high[s] = seen[s] ? std::max(high[s], double(values[s])) : values[s];
                    seen[s] = true;
                }
            }
        }
        for (int s = 0; s < 3; ++s) {
            QCPAxisRect* rect = seriesRects[s];
            auto* graph = new QCPGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            graph->setData(xs[s], ys[s], true);
            const QColor color = kRowColors[t % kMaxTrackedRows];
            graph->setPen(QPen(color, 2 * look.lineWidth));
            graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, color, 6));
            graph->setName(tr("row %1 (%2)")
                               .arg(row)
                               .arg(row < queryTokens.size() ? queryTokens[static_cast<int>(row)]
                                                             : QString()));
            m_seriesGraphs.push_back(graph);
        }
    }
    for (int s = 0; s < 3; ++s) {
        QCPAxisRect* rect = seriesRects[s];
        rect->axis(QCPAxis::atBottom)
            ->setRange(0, std::max<double>(1, static_cast<double>(total)) + 0.5);
        if (s < 2) {
            const double pad = std::max(0.05, 0.08 * (high[s] - low[s]));
            rect->axis(QCPAxis::atLeft)->setRange(low[s] - pad, high[s] + pad);
        } else {
            rect->axis(QCPAxis::atLeft)->setRange(0, 1.05);
        }
    }
    if (!m_trackedRows.empty()) {
        QCPLegend* legend = insetLegend(m_maxRect, look, Qt::AlignBottom | Qt::AlignRight);
        legend->clearItems();
        for (std::size_t t = 0; t < m_trackedRows.size(); ++t)
            legend->addItem(new QCPPlottableLegendItem(legend, m_seriesGraphs[t * 3]));
        legend->setVisible(true);
    } else if (m_maxRect->insetLayout()->elementCount() > 0) {
        m_maxRect->insetLayout()->elementAt(0)->setVisible(false);
    }

    // Accumulator O / l beside the standard output, on one symmetric range.
    MatrixD partial = ready ? normalizedOutput(m_state) : MatrixD(0, 0);
    BoolMatrix unvisited(partial.rows(), partial.cols());
    unvisited.setConstant(false);
    for (Index i = 0; i < partial.rows(); ++i)
        if (!(static_cast<std::size_t>(i) < m_state.rowSum.size() && m_state.rowSum[i] > 0))
            unvisited.row(i).setConstant(true);
    fillColorMap(m_accumulator, partial, &unvisited);
    fillColorMap(m_output, ready ? m_reference : MatrixD(0, 0), nullptr);
    const double bound =
        std::max(1e-9, m_reference.size() > 0 ? m_reference.cwiseAbs().maxCoeff() : 1.0);
    for (QCPColorMap* map : {m_accumulator, m_output}) {
        map->setGradient(makeGradient(QStringLiteral("diverging"), look.masked));
        map->setDataRange(QCPRange(-bound, bound));
    }
    for (QCPAxisRect* rect : {m_accumulatorRect, m_outputRect}) {
        rect->axis(QCPAxis::atLeft)->setTicker(labelTicker(queryTokens, 24));
        rect->axis(QCPAxis::atLeft)->setTickLabels(rect == m_accumulatorRect);
        rect->axis(QCPAxis::atLeft)
            ->setRange(-0.5, std::max<double>(1, static_cast<double>(sq)) - 0.5);
        rect->axis(QCPAxis::atBottom)
            ->setRange(-0.5, std::max<double>(1, static_cast<double>(m_reference.cols())) - 0.5);
        rect->axis(QCPAxis::atBottom)->setTicker(integerTicker());
    }

    // Error against standard attention.
    QVector<double> ex, ey;
    double errorTop = 1e-9, errorNow = 0;
    for (const QPointF& p : m_errorPoints) {
        errorTop = std::max(errorTop, p.y());
        if (p.x() <= static_cast<double>(step) + 0.5) {
            ex << p.x();
            ey << p.y();
            errorNow = p.y();
        }
    }
    m_errorGraph->setData(ex, ey, true);
    m_errorGraph->setPen(QPen(look.foreground, 2 * look.lineWidth));
    m_errorNow->setData(QVector<double>{static_cast<double>(step)}, QVector<double>{errorNow},
                        true);
    m_errorNow->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDisc, look.accent, look.accent, 9));
    m_errorRect->axis(QCPAxis::atBottom)
        ->setRange(0, std::max<double>(1, static_cast<double>(total)) + 0.5);
    m_errorRect->axis(QCPAxis::atLeft)->setRange(0, errorTop * 1.1);

    // Title and counters.
    if (!experiment) {
        m_title->setText(tr("FlashAttention steps: no experiment yet"));
        m_counters->setText(QString());
    } else if (!ready) {
        m_title->setText(
            tr("FlashAttention steps: %1").arg(m_note.isEmpty() ? tr("nothing to step") : m_note));
        m_counters->setText(QString());
    } else {
        QString where = tr("before the first tile");
        if (step > 0) {
            const FlashStep& tile = m_steps[static_cast<std::size_t>(step - 1)];
            where = tr("tile q[%1, %2) \u00d7 kv[%3, %4)%5")
                        .arg(tile.qStart)
                        .arg(tile.qEnd)
                        .arg(tile.kvStart)
                        .arg(tile.kvEnd)
                        .arg(tile.skipped ? tr(", skipped (fully masked)") : QString());
        }
        m_title->setText(tr("FlashAttention, head %1: step %2 of %3, %4")
                             .arg(head)
                             .arg(step)
                             .arg(total)
                             .arg(where));
        Index computed = 0, skipped = 0;
        for (Index k = 0; k < step; ++k)
            (m_steps[static_cast<std::size_t>(k)].skipped ? skipped : computed) += 1;
        const Index dk = m_headQkv->q.dim, dv = m_headQkv->v.dim;
        const Session& s = document()->session();
        const qint64 tileWorking =
            tileBytes() + static_cast<qint64>(s.qBlock * dk + s.kvBlock * (dk + dv)) * 4;
        QString counters =
            tr("score tile %1\u00d7%2 = %3 (with its Q, K, V tiles %4) vs the full %5\u00d7%6 "
               "score matrix %7 \u00b7 tiles computed %8, skipped %9 \u00b7 max error now %10")
                .arg(s.qBlock)
                .arg(s.kvBlock)
                .arg(bytesText(static_cast<double>(tileBytes())))
                .arg(bytesText(static_cast<double>(tileWorking)))
                .arg(sq)
                .arg(sk)
                .arg(bytesText(static_cast<double>(fullScoreBytes())))
                .arg(computed)
                .arg(skipped)
                .arg(QString::number(errorNow, 'g', 3));
        if (!m_note.isEmpty()) counters += QStringLiteral("\n") + m_note;
        m_counters->setText(counters);
    }
    stylePlot(*m_plot, look);
    QFont small = m_counters->font();
    small.setBold(false);
    small.setPointSize(std::max(7, look.fontPointSize - 1));
    m_counters->setFont(small);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void FlashStepperView::paintFigure(QCPPainter& painter, const QSize& size) {
    m_plot->toPainter(&painter, size.width(), size.height());
}

QVector<QPointF> FlashStepperView::plottedSeries(Series series, Index row) const {
    QVector<QPointF> points;
    for (std::size_t t = 0; t < m_trackedRows.size(); ++t) {
        if (m_trackedRows[t] != row) continue;
        const QCPGraph* graph = m_seriesGraphs[t * 3 + static_cast<std::size_t>(series)];
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
            points << QPointF(it->key, it->value);
    }
    return points;
}

QVector<QPointF> FlashStepperView::plottedError() const {
    QVector<QPointF> points;
    for (auto it = m_errorGraph->data()->constBegin(); it != m_errorGraph->data()->constEnd(); ++it)
        points << QPointF(it->key, it->value);
    return points;
}

DataTable FlashStepperView::data() const {
    DataTable table;
    table.columnLabels = {QStringLiteral("q_start"), QStringLiteral("q_end"),
                          QStringLiteral("kv_start"), QStringLiteral("kv_end"),
                          QStringLiteral("skipped")};
    table.cols = static_cast<int>(table.columnLabels.size());
    for (std::size_t k = 0; k < m_steps.size(); ++k) {
        const FlashStep& tile = m_steps[k];
        table.rowLabels << tr("step %1").arg(k + 1);
        table.values.insert(table.values.end(),
                            {double(tile.qStart), double(tile.qEnd), double(tile.kvStart),
                             double(tile.kvEnd), tile.skipped ? 1.0 : 0.0});
    }
    table.rows = static_cast<int>(m_steps.size());
    return table;
}

} // namespace attnlab::ui

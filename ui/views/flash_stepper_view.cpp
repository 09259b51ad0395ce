#include "ui/views/flash_stepper_view.h"

#include <QLabel>
#include <QPicture>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/state/experiment_data.h"
#include "ui/views/colormap.h"
#include "ui/views/plot_captions.h"
#include "ui/views/step_controls.h"
#include "ui/views/teaching_plot.h"

namespace attnlab::ui {

namespace {

constexpr int kMaxTrackedRows = 4;
constexpr int kMaxDrawnTiles = 2500;
/// The score matrix is drawn with at most this many cells a side (pooled beyond).
constexpr Index kMaxDrawnCells = 512;

const QColor kRowColors[kMaxTrackedRows] = {QColor(0x00, 0x72, 0xb2), QColor(0xd5, 0x5e, 0x00),
                                            QColor(0x00, 0x9e, 0x73), QColor(0xcc, 0x79, 0xa7)};

/// O = accumulator / l for visited rows; rows with l == 0 (not visited or empty) are 0.
MatrixD normalizedOutput(const FlashState& state) {
    MatrixD out = MatrixD::Zero(state.accumulator.rows(), state.accumulator.cols());
    for (Index i = 0; i < out.rows(); ++i) {
        const float sum = i < static_cast<Index>(state.rowSum.size()) ? state.rowSum[i] : 0.f;
        if (sum > 0) out.row(i) = state.accumulator.row(i).cast<double>() / sum;
    }
    return out;
}

/// The scaled scores of a head as drawn: every cell when the matrix is small, else the mean
/// of each `factor` x `factor` block of allowed cells (a block with none is masked), so a
/// 4096 x 4096 head costs a 512 x 512 picture, not a double copy of 16 M cells.
struct ScorePicture {
    MatrixD values;
    BoolMatrix masked;
    Index factor = 1;
};

ScorePicture scorePicture(const Experiment& experiment, Index head) {
    ScorePicture picture;
    const Index sq = experiment.sq(), sk = experiment.sk();
    const BoolMatrix masked = maskedCells(experiment);
    picture.factor = std::max<Index>(1, (std::max(sq, sk) + kMaxDrawnCells - 1) / kMaxDrawnCells);
    if (picture.factor == 1) {
        picture.values = experiment.scaledScores(clampedHead(experiment, head));
        picture.masked = masked;
        return picture;
    }
    // The scores the run kept, or the head's q.k computed now (a model's layer keeps none).
    const MatrixD cells = experiment.scaledScores(clampedHead(experiment, head));
    if (cells.rows() != sq || cells.cols() != sk) return picture;
    const Index f = picture.factor;
    const Index rows = (sq + f - 1) / f, cols = (sk + f - 1) / f;
    picture.values = MatrixD::Zero(rows, cols);
    picture.masked = BoolMatrix::Constant(rows, cols, true);
    MatrixD counts = MatrixD::Zero(rows, cols);
    for (Index i = 0; i < sq; ++i)
        for (Index j = 0; j < sk; ++j) {
            if (masked(i, j)) continue;
            picture.values(i / f, j / f) += cells(i, j);
            counts(i / f, j / f) += 1;
        }
    for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c)
            if (counts(r, c) > 0) {
                picture.values(r, c) /= counts(r, c);
                picture.masked(r, c) = false;
            }
    return picture;
}

/// "4" for one index, "4–7" for [4, 8).
QString indexRange(Index begin, Index end) {
    return end - begin <= 1 ? QString::number(begin)
                            : QStringLiteral("%1\u2013%2").arg(begin).arg(end - 1);
}

/// Whether every key of the tile is outside `mask`'s key range for every query of the tile.
bool hidesTile(const MaskSpec& mask, const FlashTile& tile, Index sq, Index sk) {
    for (Index r = tile.qStart; r < tile.qEnd; ++r) {
        const KeyRange range = keyRange(mask, 0, r, sq, sk);
        if (std::max(range.begin, tile.kvStart) < std::min(range.end, tile.kvEnd)) return false;
    }
    return true;
}

/// Whether query row `row` has an allowed key among the tile's keys (every mask included).
bool rowSeesTile(const MaskSpec& mask, const FlashTile& tile, Index row, Index sq, Index sk) {
    for (Index j = tile.kvStart; j < tile.kvEnd; ++j)
        if (allowed(mask, 0, row, j, sq, sk)) return true;
    return false;
}

} // namespace

FlashStepperView::FlashStepperView(Document* document, QWidget* parent) : View(document, parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_controls = new StepControls(tr("Process the next tile"), true, this);
    FlowLayout* bar = m_controls->bar();
    m_qBlock = new QSpinBox(this);
    m_qBlock->setRange(1, 4096);
    m_qBlock->setToolTip(tr("Query rows per tile (Br)"));
    bar->addPair(new QLabel(tr("q block"), this), m_qBlock);
    m_kvBlock = new QSpinBox(this);
    m_kvBlock->setRange(1, 4096);
    m_kvBlock->setToolTip(tr("Key/value columns per tile (Bc)"));
    bar->addPair(new QLabel(tr("kv block"), this), m_kvBlock);
    layout->addWidget(m_controls);

    m_plot = new QCustomPlot(this);
    layout->addWidget(m_plot, 1);

    // Title (with where the walk stands) and narration on top, then both legends on one row,
    // the counters at the foot; between them the tiles (O / l and the standard output beside
    // them) and the four curves in a 2 x 2 grid, so a 1280 x 720 projector still gives every
    // plot its height and the narration never runs under a legend.
    QCustomPlot& plot = *m_plot;
    plot.plotLayout()->clear();
    plot.setAutoAddPlottableToLegend(false);
    m_title = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(0, 0, m_title);
    m_narration = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(1, 0, m_narration);
    m_legends = new QCPLayoutGrid;
    plot.plotLayout()->addElement(2, 0, m_legends);
    auto* body = new QCPLayoutGrid;
    plot.plotLayout()->addElement(3, 0, body);
    m_counters = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(4, 0, m_counters);
    plot.plotLayout()->setRowStretchFactors({0.01, 0.01, 0.01, 1.0, 0.01});
    plot.plotLayout()->setRowSpacing(2);

    auto* left = new QCPLayoutGrid;
    auto* right = new QCPLayoutGrid;
    body->addElement(0, 0, left);
    body->addElement(0, 1, right);
    body->setColumnStretchFactors({1.0, 1.0});
    m_tileLegend = new QCPLegend;
    m_seriesLegend = new QCPLegend;
    m_legends->addElement(0, 0, m_tileLegend);
    m_legends->addElement(0, 1, m_seriesLegend);
    // An empty cell after them takes the row's spare width (a legend's own is its items').
    m_legends->addElement(0, 2, new QCPLayoutElement(&plot));
    m_legends->setColumnSpacing(8);
    for (QCPLegend* legend : {m_tileLegend, m_seriesLegend}) {
        legend->setLayer(QStringLiteral("legend"));
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
        legend->setMargins(QMargins(0, 0, 0, 0));
    }

    m_tileRect = makeAxisRect(&plot, tr("key"), tr("query"));
    m_accumulatorRect = makeAxisRect(&plot, tr("O / l\nso far"), QString());
    m_outputRect = makeAxisRect(&plot, tr("standard\noutput"), QString());
    for (QCPAxisRect* rect : {m_tileRect, m_accumulatorRect, m_outputRect})
        setupMatrixAxes(rect);
    // O / l and the standard output beside the tiles, their rows level with the tiles' rows.
    auto* matrices = new QCPLayoutGrid;
    left->addElement(0, 0, matrices);
    matrices->addElement(0, 0, m_tileRect);
    matrices->addElement(0, 1, m_accumulatorRect);
    matrices->addElement(0, 2, m_outputRect);
    matrices->setColumnStretchFactors({3.0, 1.0, 1.0});
    auto* rowsLevel = new QCPMarginGroup(&plot);
    for (QCPAxisRect* rect : {m_tileRect, m_accumulatorRect, m_outputRect})
        rect->setMarginGroup(QCP::msTop | QCP::msBottom, rowsLevel);

    // Each curve has its name as a title above it (a rotated axis label did not fit).
    auto* curves = new QCPLayoutGrid;
    right->addElement(0, 0, curves);
    curves->setRowSpacing(2);
    m_curves = curves;
    const QString curveTitles[4] = {tr("running max m"), tr("running sum l"), tr("rescale factor"),
                                    tr("max |O \u2212 O_std|")};
    QCPAxisRect** curveRects[4] = {&m_maxRect, &m_sumRect, &m_rescaleRect, &m_errorRect};
    for (int c = 0; c < 4; ++c) {
        auto* cell = new QCPLayoutGrid;
        curves->addElement(c / 2, c % 2, cell);
        auto* caption = new QCPTextElement(&plot, curveTitles[c]);
        caption->setMargins(QMargins(2, 0, 2, 0));
        cell->addElement(0, 0, caption);
        // No axis title on screen: the steps are those the tool row counts, and the plots keep
        // the line a title took. A figure has no tool row: paintFigure names them.
        *curveRects[c] = makeAxisRect(&plot, QString(), QString());
        cell->addElement(1, 0, *curveRects[c]);
        cell->setRowStretchFactors({0.01, 1.0});
        cell->setRowSpacing(0);
        m_curveTitles[c] = caption;
        // Few ticks: the four plots are small on a projector.
        (*curveRects[c])->axis(QCPAxis::atBottom)->setTicker(integerTicker());
        (*curveRects[c])->axis(QCPAxis::atBottom)->ticker()->setTickCount(3);
        (*curveRects[c])->axis(QCPAxis::atLeft)->ticker()->setTickCount(2);
        // The four share their steps: the lower two number them for the upper two too. Thin
        // margins (the ticks' labels still get theirs): on a projector every pixel of height
        // goes to the curves.
        if (c < 2) (*curveRects[c])->axis(QCPAxis::atBottom)->setTickLabels(false);
        (*curveRects[c])->setMinimumMargins(QMargins(8, 8, 12, 4));
    }

    // The tile legend's icons: bars with no data, drawn as the tiles are.
    const QString tileNames[4] = {tr("done"), tr("current"), tr("skipped: fully masked"),
                                  tr("still to come")};
    for (int i = 0; i < 4; ++i) {
        m_tileKeys[i] =
            new QCPBars(m_tileRect->axis(QCPAxis::atBottom), m_tileRect->axis(QCPAxis::atLeft));
        m_tileKeys[i]->setName(tileNames[i]);
        m_tileLegend->addItem(new QCPPlottableLegendItem(m_tileLegend, m_tileKeys[i]));
    }
    m_otherRowsKey =
        new QCPGraph(m_maxRect->axis(QCPAxis::atBottom), m_maxRect->axis(QCPAxis::atLeft));
    auto halves = QSharedPointer<QCPAxisTickerFixed>::create(); // the rescale lies in [0, 1]
    halves->setTickStep(0.5);
    m_rescaleRect->axis(QCPAxis::atLeft)->setTicker(halves);

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

    connect(m_plot, &QCustomPlot::afterLayout, this, &FlashStepperView::fitToLayout);
    connect(m_controls, &StepControls::stepRequested, this, [this](Index step) { goToStep(step); });
    connect(m_qBlock, &QSpinBox::valueChanged, this, [this](int value) {
        if (this->document()->session().qBlock == value) return;
        this->document()->modify([value](Session& s) { s.qBlock = value; },
                                 tr("Change the query block size"), EditMerge::QueryBlock);
    });
    connect(m_kvBlock, &QSpinBox::valueChanged, this, [this](int value) {
        if (this->document()->session().kvBlock == value) return;
        this->document()->modify([value](Session& s) { s.kvBlock = value; },
                                 tr("Change the key/value block size"), EditMerge::KeyValueBlock);
    });
    connect(document, &Document::changed, this, [this](Document::What what) {
        if (what == Document::What::Session || what == Document::What::ViewState) updateControls();
    });
    updateControls();
}

void FlashStepperView::fitToLayout() {
    // The legends share their row as their items need (on one row each where the row holds
    // both); they wrap to their column; key labels turn when they do not fit side by side.
    // These change the margins, so the layout runs again (once: the second pass changes
    // nothing).
    const QList<double> shares{std::max(1.0, double(legendRowWidth(m_tileLegend))),
                               std::max(1.0, double(legendRowWidth(m_seriesLegend))), 0.01};
    bool changed = m_legends->columnStretchFactors() != shares;
    if (changed) {
        m_legends->setColumnStretchFactors(shares);
        m_legends->update(QCPLayoutElement::upLayout);
    }
    changed = wrapLegendToWidth(m_tileLegend, m_tileLegend->outerRect().width() - 4) || changed;
    changed = wrapLegendToWidth(m_seriesLegend, m_seriesLegend->outerRect().width() - 4) || changed;
    // A legend on one row keeps its items together, the row's spare width after them: spread
    // over a wide figure, "done" and "current" stood a third of the width apart.
    for (QCPLegend* legend : {m_tileLegend, m_seriesLegend}) {
        const int together =
            legend->wrap() == 0 && legend->itemCount() > 0
                ? std::max(legendRowWidth(legend), legend->minimumOuterSizeHint().width()) + 8
                : QWIDGETSIZE_MAX;
        if (legend->maximumSize().width() == together) continue;
        legend->setMaximumSize(together, QWIDGETSIZE_MAX);
        changed = true;
    }
    QCPAxis* keyAxis = m_tileRect->axis(QCPAxis::atBottom);
    const auto ticker = keyAxis->ticker().dynamicCast<QCPAxisTickerText>();
    if (ticker && m_tileRect->width() > 0) {
        const QFontMetrics metrics(keyAxis->tickLabelFont());
        int widest = 0;
        for (const QString& label : ticker->ticks())
            widest = std::max(widest, metrics.horizontalAdvance(label));
        const double room =
            m_tileRect->width() / std::max<double>(1, static_cast<double>(ticker->ticks().size()));
        const double rotation = widest + 6 <= room                   ? 0
                                : 1.5 * metrics.height() + 2 <= room ? -45
                                                                     : -90;
        if (keyAxis->tickLabelRotation() != rotation) {
            keyAxis->setTickLabelRotation(rotation);
            changed = true;
        }
    }
    // The two rows of curves as tall as each other, though only the lower one numbers the
    // steps: each row's share is its curves' common height plus what it holds besides them.
    const int upper = m_curves->element(0, 0)->outerRect().height();
    const int lower = m_curves->element(1, 0)->outerRect().height();
    if (upper > 0 && lower > 0) {
        const double curve = (m_maxRect->height() + m_rescaleRect->height()) / 2.0;
        // A factor must be positive; on a layout still too small for its margins a row's
        // share can come out at or below zero, and the next layout pass corrects it.
        const QList<double> rows{std::max(1.0, curve + upper - m_maxRect->height()),
                                 std::max(1.0, curve + lower - m_rescaleRect->height())};
        const QList<double> now = m_curves->rowStretchFactors();
        // Only a change of more than a pixel: the layout settles instead of going on.
        if (std::abs(rows[0] - now[0]) > 1 || std::abs(rows[1] - now[1]) > 1) {
            m_curves->setRowStretchFactors(rows);
            m_curves->update(QCPLayoutElement::upLayout);
            changed = true;
        }
    }
    // More tokens than the tile map's rows or columns hold: every n-th label only.
    changed = fitTokenLabels(keyAxis) || changed;
    changed = fitTokenLabels(m_tileRect->axis(QCPAxis::atLeft), theme()) || changed;
    if (changed) {
        for (const auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins,
                                 QCPLayoutElement::upLayout})
            m_plot->plotLayout()->update(phase);
        // Once more on screen: captions wrapped before this pass wrap to the new columns.
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

bool FlashStepperView::dependsOn(Document::What what) const {
    return View::dependsOn(what) || what == Document::What::Session ||
           what == Document::What::FlashWalk;
}

QString FlashStepperView::notApplicable() const {
    const Experiment* experiment = document()->experiment();
    if (experiment && !experiment->hasQk())
        return tr("%1 holds attention weights only: there are no Q and K to cut into tiles.")
            .arg(describeSource(experiment->source));
    return {};
}

QString FlashStepperView::narrationNumber(double value) {
    if (std::isinf(value))
        return value < 0 ? QStringLiteral("\u2212\u221e") : QStringLiteral("\u221e");
    if (std::isnan(value)) return QStringLiteral("?");
    const QString text = value == 0 || std::abs(value) >= 0.01 ? QString::number(value, 'f', 2)
                                                               : QString::number(value, 'g', 2);
    return text.startsWith(QLatin1Char('-')) ? QStringLiteral("\u2212") + text.mid(1) : text;
}

QString FlashStepperView::narrate(const FlashWalk& walk, const Experiment& experiment, Index step,
                                  Index row) {
    const Index total = walk.totalSteps();
    if (total == 0) return {};
    step = std::clamp<Index>(step, 0, total);
    const Index sq = walk.sq(), sk = walk.sk();
    // The mask the walk ran under (a custom mask of another shape was left out, document.cpp).
    const MaskSpec mask = maskFor(experiment.mask, sq, sk);
    const QStringList tokens = displayTokens(experiment.queryTokens);
    const auto rowName = [&tokens](Index r) {
        const QString token = tokens.value(static_cast<int>(r));
        return token.trimmed().isEmpty() ? tr("row %1").arg(r)
                                         : tr("row %1 \u201c%2\u201d").arg(r).arg(token);
    };
    const auto n = [](double value) { return narrationNumber(value); };
    QStringList sentences;

    if (step == 0) {
        const FlashTile first = walk.tile(0);
        sentences << tr("Before the first tile every row starts with m = \u2212\u221e, l = 0 and "
                        "O = 0. The first tile is queries %1 \u00d7 keys %2.")
                         .arg(indexRange(first.qStart, first.qEnd))
                         .arg(indexRange(first.kvStart, first.kvEnd));
    } else {
        const FlashTile tile = walk.tile(step - 1);
        const QString where = tr("Tile %1 of %2 (queries %3 \u00d7 keys %4)")
                                  .arg(step)
                                  .arg(total)
                                  .arg(indexRange(tile.qStart, tile.qEnd))
                                  .arg(indexRange(tile.kvStart, tile.kvEnd));
        const std::vector<FlashRowPoint> history = walk.rowHistory(row, step);
        const bool inTile = row >= tile.qStart && row < tile.qEnd;
        if (tile.skipped) {
            // Name the one mask that alone hides the tile; else the masks together.
            QString why = tr("the masks together hide every key in it from these queries");
            MaskSpec part;
            part.causal = true;
            if (mask.causal && hidesTile(part, tile, sq, sk)) {
                why = tr("the causal mask hides every key in it (each key comes after every "
                         "query of the tile)");
            } else {
                part = MaskSpec{};
                part.window = mask.window;
                MaskSpec causalWindow;
                causalWindow.causalWindow = mask.causalWindow;
                MaskSpec padding;
                padding.validLen = mask.validLen;
                if (mask.window >= 0 && hidesTile(part, tile, sq, sk))
                    why = tr("every key in it is outside the sliding window (%1 each side)")
                              .arg(mask.window);
                else if (mask.causalWindow >= 0 && hidesTile(causalWindow, tile, sq, sk))
                    why = mask.causalWindow == 0
                              ? tr("every key in it is outside the causal window of 1 key")
                              : tr("every key in it is outside the causal window of %1 keys")
                                    .arg(mask.causalWindow + 1);
                else if (!mask.validLen.empty() && hidesTile(padding, tile, sq, sk))
                    why = tr("the padding mask hides every key in it (valid length %1)")
                              .arg(mask.validLen.front());
                else if (mask.custom)
                    why = tr("the custom mask hides every key in it");
            }
            sentences << tr("%1 is skipped: %2, so no score is computed and m, l and O stay as "
                            "they were.")
                             .arg(where)
                             .arg(why);
        } else if (inTile && !history.empty() && history.back().stepsDone == step) {
            const FlashRowPoint& now = history.back();
            const bool hasBefore = history.size() > 1;
            const FlashRowPoint before =
                hasBefore ? history[history.size() - 2]
                          : FlashRowPoint{0, -std::numeric_limits<float>::infinity(), 0.f, 1.f};
            QString what;
            if (!rowSeesTile(mask, tile, row, sq, sk)) {
                what = std::isfinite(now.rowMax)
                           ? tr("the mask hides every key of this tile from %1, so its m = %2 "
                                "and l = %3 stay as they were")
                                 .arg(rowName(row))
                                 .arg(n(now.rowMax))
                                 .arg(n(now.rowSum))
                           : tr("the mask hides every key of this tile from %1, which has seen "
                                "no key yet (m = \u2212\u221e, l = 0)")
                                 .arg(rowName(row));
            } else if (!std::isfinite(before.rowMax)) {
                what = tr("%1 sees its first keys: m = %2, its largest score here, and "
                          "l = \u03a3 e^(s \u2212 m) = %3")
                           .arg(rowName(row))
                           .arg(n(now.rowMax))
                           .arg(n(now.rowSum));
            } else if (now.rowMax > before.rowMax) {
                what = tr("%1: the max rose from %2 to %3, so the row\u2019s sum and output are "
                          "rescaled by e^(%2 \u2212 %3) = %4; l = %4 \u00d7 %5 + this "
                          "tile\u2019s \u03a3 e^(s \u2212 m) = %6")
                           .arg(rowName(row))
                           .arg(n(before.rowMax))
                           .arg(n(now.rowMax))
                           .arg(n(now.rescale))
                           .arg(n(before.rowSum))
                           .arg(n(now.rowSum));
            } else {
                what = tr("%1: the max stays %2 (no score in this tile is larger), so nothing is "
                          "rescaled (e\u2070 = %3); l = %4 + this tile\u2019s "
                          "\u03a3 e^(s \u2212 m) = %5")
                           .arg(rowName(row))
                           .arg(n(now.rowMax))
                           .arg(n(now.rescale))
                           .arg(n(before.rowSum))
                           .arg(n(now.rowSum));
            }
            sentences << tr("%1, %2.").arg(where).arg(what);
            // How many of the tile's rows had their max raised (the walk's states around it).
            const FlashState after = walk.stateAfter(step);
            const FlashState prior = walk.stateAfter(step - 1);
            Index rose = 0;
            for (Index r = tile.qStart; r < tile.qEnd; ++r) {
                const auto at = static_cast<std::size_t>(r);
                if (at < after.rowMax.size() && at < prior.rowMax.size() &&
                    after.rowMax[at] > prior.rowMax[at])
                    ++rose;
            }
            if (tile.qEnd - tile.qStart > 1)
                sentences << tr("The max rose in %1 of the tile\u2019s %2 rows.")
                                 .arg(rose)
                                 .arg(tile.qEnd - tile.qStart);
        } else if (row >= 0 && row < sq) {
            sentences << (history.empty()
                              ? tr("%1 does not touch %2, which has seen no key yet "
                                   "(m = \u2212\u221e, l = 0).")
                                    .arg(where)
                                    .arg(rowName(row))
                              : tr("%1 does not touch %2, which keeps m = %3 and l = %4 from "
                                   "step %5.")
                                    .arg(where)
                                    .arg(rowName(row))
                                    .arg(n(history.back().rowMax))
                                    .arg(n(history.back().rowSum))
                                    .arg(history.back().stepsDone));
        } else {
            sentences << tr("%1.").arg(where);
        }
        if (step == total) {
            const std::vector<FlashErrorPoint>& errors = walk.errors();
            if (!errors.empty() && errors.back().stepsDone == total)
                sentences << tr("All tiles done: O / l is standard attention (max error %1).")
                                 .arg(QString::number(errors.back().maxError, 'g', 2));
        }
    }
    if (experiment.dropout.active())
        sentences << tr("Train-mode dropout (p = %1) is on: this walk is the eval recurrence. "
                        "Dropout zeroes cells of P before P V, which changes O but not m or l.")
                         .arg(experiment.dropout.rate, 0, 'g', 3);
    return sentences.join(QLatin1Char(' '));
}

const FlashWalk* FlashStepperView::walk() {
    document()->requestFlashWalk();
    return document()->flashWalk();
}

Index FlashStepperView::totalSteps() {
    const FlashWalk* flash = walk();
    return flash ? flash->totalSteps() : 0;
}

Index FlashStepperView::currentStep() {
    return std::clamp<Index>(document()->session().viewState.flashStep, 0, totalSteps());
}

qint64 FlashStepperView::tileBytes() const {
    const Session& session = document()->session();
    return static_cast<qint64>(session.qBlock) * session.kvBlock *
           static_cast<qint64>(sizeof(float));
}

qint64 FlashStepperView::fullScoreBytes() const {
    const Experiment* experiment = document()->experiment();
    if (!experiment) return 0;
    return static_cast<qint64>(experiment->sq()) * experiment->sk() *
           static_cast<qint64>(sizeof(float));
}

bool FlashStepperView::playing() const {
    return m_controls->playing();
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
    updateControls();
    m_controls->play();
}

void FlashStepperView::pause() {
    m_controls->pause();
}

void FlashStepperView::setSpeed(int stepsPerSecond) {
    m_controls->setSpeed(stepsPerSecond);
}

void FlashStepperView::updateControls() {
    const Session& session = document()->session();
    const FlashWalk* flash = document()->flashWalk();
    const Index total = flash ? flash->totalSteps() : 0;
    {
        const QSignalBlocker b1(m_qBlock), b2(m_kvBlock);
        m_qBlock->setValue(static_cast<int>(session.qBlock));
        m_kvBlock->setValue(static_cast<int>(session.kvBlock));
    }
    m_controls->setPosition(session.viewState.flashStep, flash ? total : -1);
}

void FlashStepperView::refresh() {
    const Theme look = theme();
    const Experiment* experiment = document()->experiment();
    const ViewState& viewState = document()->session().viewState;
    const FlashWalk* flash = notApplicable().isEmpty() ? walk() : nullptr;
    const Index total = flash ? flash->totalSteps() : 0;
    const Index step = std::clamp<Index>(viewState.flashStep, 0, total);
    updateControls();
    // The legends' widths are measured again after this layout (fitToLayout): held to widths
    // of the last fonts (another theme) or of no items, the row could not be shared and
    // QCustomPlot aborted its layout.
    for (QCPLegend* legend : {m_tileLegend, m_seriesLegend})
        legend->setMaximumSize(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX);

    for (QCPItemRect* item : m_tileItems)
        m_plot->removeItem(item);
    m_tileItems.clear();
    m_seriesLegend->clearItems(); // its items point at the graphs removed next
    for (QCPGraph* graph : m_seriesGraphs)
        m_plot->removeGraph(graph);
    m_seriesGraphs.clear();
    m_trackedRows.clear();
    m_tableTiles.clear();

    const bool ready = experiment && flash && total > 0;
    const Index head = experiment ? clampedHead(*experiment, viewState.head) : 0;
    m_state = ready ? flash->stateAfter(step) : FlashState{};
    if (ready)
        for (Index k = 0; k < std::min(total, kMaxTableTiles); ++k)
            m_tableTiles.push_back(flash->tile(k));

    // Score matrix with tiles (pooled when large: the picture, not the tiles, is coarser).
    const QString colormap = QString::fromStdString(viewState.colormap);
    const ScorePicture picture = ready ? scorePicture(*experiment, head) : ScorePicture{};
    fillColorMap(m_scores, picture.values, &picture.masked);
    if (picture.factor > 1) {
        const double f = static_cast<double>(picture.factor);
        const auto span = [f](Index cells) {
            return QCPRange((f - 1) / 2, static_cast<double>(cells - 1) * f + (f - 1) / 2);
        };
        m_scores->data()->setRange(span(picture.values.cols()), span(picture.values.rows()));
    }
    m_scores->setGradient(makeGradient(colormap, look.masked));
    m_scores->rescaleDataRange(true);
    const Index sq = experiment ? experiment->sq() : 0, sk = experiment ? experiment->sk() : 0;
    const QStringList queryTokens =
        experiment ? displayTokens(experiment->queryTokens) : QStringList();
    const QStringList keyTokens = experiment ? displayTokens(experiment->keyTokens) : QStringList();
    QCPAxis* keyAxis = m_tileRect->axis(QCPAxis::atBottom);
    QCPAxis* queryAxis = m_tileRect->axis(QCPAxis::atLeft);
    setTokenLabels(keyAxis, keyTokens);
    setTokenLabels(queryAxis, queryTokens);
    keyAxis->setRange(-0.5, std::max<double>(1, static_cast<double>(sk)) - 0.5);
    queryAxis->setRange(-0.5, std::max<double>(1, static_cast<double>(sq)) - 0.5);

    auto addTile = [this](const FlashTile& tile, const QPen& pen, const QBrush& brush) {
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
        if (total <= kMaxDrawnTiles) {
            for (Index k = 0; k < total; ++k) {
                const FlashTile tile = flash->tile(k);
                QBrush brush = Qt::NoBrush;
                if (tile.skipped) brush = QBrush(look.foreground, Qt::BDiagPattern);
                addTile(tile, gridPen, brush);
                if (k >= step) addTile(tile, Qt::NoPen, veil);
            }
        } else if (step < total) {
            // Too many tiles to draw one by one: veil what is still to come in two rectangles
            // (the rest of the current q tile's row of tiles, and every later q tile).
            const FlashTile next = flash->tile(step);
            addTile(FlashTile{next.qStart, next.qEnd, next.kvStart, sk, false}, Qt::NoPen, veil);
            if (next.qEnd < sq) addTile(FlashTile{next.qEnd, sq, 0, sk, false}, Qt::NoPen, veil);
        }
        if (step > 0)
            addTile(flash->tile(step - 1), QPen(look.accent, 3 * look.lineWidth), Qt::NoBrush);
    }
    // The tile legend draws its icons as the tiles are drawn: a cell colour of the map, the
    // current tile's outline, the hatching of a skipped tile, the veil over tiles to come.
    {
        const QColor cell = makeGradient(colormap, look.masked).color(0.65, QCPRange(0, 1));
        QColor veiled = cell;
        const double veil = 185.0 / 255.0;
        veiled.setRgbF(float(cell.redF() * (1 - veil) + look.background.redF() * veil),
                       float(cell.greenF() * (1 - veil) + look.background.greenF() * veil),
                       float(cell.blueF() * (1 - veil) + look.background.blueF() * veil));
        const QPen gridPen(look.grid, 1);
        m_tileKeys[0]->setPen(gridPen);
        m_tileKeys[0]->setBrush(cell);
        m_tileKeys[1]->setPen(QPen(look.accent, 2 * look.lineWidth));
        m_tileKeys[1]->setBrush(cell);
        m_tileKeys[2]->setPen(gridPen);
        m_tileKeys[2]->setBrush(QBrush(look.foreground, Qt::BDiagPattern));
        m_tileKeys[3]->setPen(gridPen);
        m_tileKeys[3]->setBrush(veiled);
        styleLegend(m_tileLegend, look);
        fitLegendIcons(m_tileLegend);
        m_tileLegend->setVisible(ready);
    }

    // The rows whose curves are drawn: every row faintly (the current tile's first rows when
    // the head has more than kMaxFaintRows), the focus row bold and last, on top.
    m_focusRow = -1;
    if (ready) {
        const FlashTile tile = flash->tile(std::max<Index>(0, step - 1));
        m_focusRow = viewState.query >= 0 && viewState.query < sq ? viewState.query : tile.qStart;
        const Index first = sq <= kMaxFaintRows ? 0 : tile.qStart;
        const Index end = sq <= kMaxFaintRows ? sq : std::min(sq, tile.qStart + kMaxFaintRows);
        for (Index r = first; r < end; ++r)
            if (r != m_focusRow) m_trackedRows.push_back(r);
        m_trackedRows.push_back(m_focusRow);
    }
    QCPAxisRect* seriesRects[3] = {m_maxRect, m_sumRect, m_rescaleRect};
    double low[3] = {0, 0, 0}, high[3] = {1, 1, 1.05};
    bool seen[3] = {false, false, false};
    QColor faint = look.foreground;
    faint.setAlpha(look.name == QLatin1String("dark") ? 90 : 70);
    const QColor bold =
        look.name == QLatin1String("dark") ? QColor(0x56, 0xb4, 0xe9) : kRowColors[0];
    for (std::size_t t = 0; t < m_trackedRows.size(); ++t) {
        const Index row = m_trackedRows[t];
        const bool focus = row == m_focusRow;
        QVector<double> xs[3], ys[3];
        for (const FlashRowPoint& point : flash->rowHistory(row, step)) {
            const float values[3] = {point.rowMax, point.rowSum, point.rescale};
            for (int s = 0; s < 3; ++s) {
                if (!std::isfinite(values[s])) continue;
                xs[s] << static_cast<double>(point.stepsDone);
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
            if (focus) {
                graph->setPen(QPen(bold, 2.5 * look.lineWidth));
                graph->setScatterStyle(
                    QCPScatterStyle(QCPScatterStyle::ssCircle, bold, bold, 4 + 2 * look.lineWidth));
            } else {
                graph->setPen(QPen(faint, std::max(1.0, 0.8 * look.lineWidth)));
                graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, faint, faint, 3));
            }
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
    styleLegend(m_seriesLegend, look);
    fitLegendIcons(m_seriesLegend);
    // Shorter swatches than the 2:1 default, so both legends share one row on a projector.
    for (QCPLegend* legend : {m_tileLegend, m_seriesLegend}) {
        const int height = legend->iconSize().height();
        legend->setIconSize(height * 5 / 4, height);
        legend->setIconTextPadding(height / 3);
    }
    m_seriesLegend->clearItems();
    if (!m_trackedRows.empty()) {
        m_seriesLegend->addItem(new QCPPlottableLegendItem(m_seriesLegend, m_seriesGraphs.back()));
        if (m_trackedRows.size() > 1) {
            m_otherRowsKey->setPen(QPen(faint, std::max(1.0, 0.8 * look.lineWidth)));
            m_otherRowsKey->setName(sq <= kMaxFaintRows ? tr("every other row")
                                                        : tr("the tile\u2019s other rows"));
            m_seriesLegend->addItem(new QCPPlottableLegendItem(m_seriesLegend, m_otherRowsKey));
        }
    }
    m_seriesLegend->setVisible(!m_trackedRows.empty());

    // Accumulator O / l beside the standard output, on one symmetric range.
    const MatrixD empty(0, 0);
    const MatrixD& reference = ready ? flash->reference() : empty;
    MatrixD partial = ready ? normalizedOutput(m_state) : MatrixD(0, 0);
    BoolMatrix unvisited(partial.rows(), partial.cols());
    unvisited.setConstant(false);
    for (Index i = 0; i < partial.rows(); ++i)
        if (!(static_cast<std::size_t>(i) < m_state.rowSum.size() && m_state.rowSum[i] > 0))
            unvisited.row(i).setConstant(true);
    fillColorMap(m_accumulator, partial, &unvisited);
    fillColorMap(m_output, reference, nullptr);
    const double bound =
        std::max(1e-9, reference.size() > 0 ? reference.cwiseAbs().maxCoeff() : 1.0);
    for (QCPColorMap* map : {m_accumulator, m_output}) {
        map->setGradient(makeGradient(QStringLiteral("diverging"), look.masked));
        map->setDataRange(QCPRange(-bound, bound));
    }
    for (QCPAxisRect* rect : {m_accumulatorRect, m_outputRect}) {
        // Level with the tiles' rows, which carry the token labels.
        rect->axis(QCPAxis::atLeft)->setTicker(labelTicker(queryTokens, 24));
        rect->axis(QCPAxis::atLeft)->setTickLabels(false);
        rect->axis(QCPAxis::atBottom)->setTickLabels(false);
        rect->axis(QCPAxis::atLeft)
            ->setRange(-0.5, std::max<double>(1, static_cast<double>(sq)) - 0.5);
        rect->axis(QCPAxis::atBottom)
            ->setRange(-0.5, std::max<double>(1, static_cast<double>(reference.cols())) - 0.5);
        rect->axis(QCPAxis::atBottom)->setTicker(integerTicker());
    }

    // Error against standard attention (the walk's samples up to this step).
    QVector<double> ex, ey;
    double errorTop = 1e-9, errorNow = 0;
    if (ready)
        for (const FlashErrorPoint& p : flash->errors()) {
            errorTop = std::max(errorTop, p.maxError);
            if (p.stepsDone <= step) {
                ex << static_cast<double>(p.stepsDone);
                ey << p.maxError;
                errorNow = p.maxError;
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
    QString note;
    if (experiment && !experiment->usesSoftmax())
        note = tr("The variant is %1; the stepper shows softmax FlashAttention on the same Q, "
                  "K, V.")
                   .arg(QString::fromLatin1(variantName(experiment->variant)));
    m_narrationText = ready ? narrate(*flash, *experiment, step, m_focusRow) : QString();
    m_narration->setText(m_narrationText);
    m_narration->setVisible(ready);
    if (!experiment) {
        m_title->setText(tr("FlashAttention steps: no experiment yet"));
        m_counters->setText(QString());
    } else if (!ready) {
        const QString why = notApplicable();
        m_title->setText(tr("FlashAttention steps: %1")
                             .arg(!why.isEmpty() ? why
                                  : !document()->flashWalk() && total == 0 &&
                                          experiment->sq() * experiment->sk() > 0
                                      ? tr("computing the walk\u2026")
                                      : tr("nothing to step")));
        m_counters->setText(QString());
    } else {
        const Index skipped = flash->skippedAmong(step);
        const Index computed = step - skipped;
        // How far the walk is goes on the title's line. On screen the tool row above already
        // says "step n of N", so the title leaves it out; a figure has no tool row and keeps it.
        const QString error = QString::number(errorNow, 'g', 3);
        m_title->setText(
            figureStyle().wrapWidth > 0
                ? tr("FlashAttention, head %1: step %2 of %3 \u00b7 tiles computed %4, "
                     "skipped %5 \u00b7 max error now %6")
                      .arg(head)
                      .arg(step)
                      .arg(total)
                      .arg(computed)
                      .arg(skipped)
                      .arg(error)
                : tr("Head %1 \u00b7 tiles computed %2, skipped %3 \u00b7 max error now %4")
                      .arg(head)
                      .arg(computed)
                      .arg(skipped)
                      .arg(error));
        const Index dk = flash->dim(), dv = flash->dimV();
        const Session& s = document()->session();
        const qint64 tileWorking =
            tileBytes() + static_cast<qint64>(s.qBlock * dk + s.kvBlock * (dk + dv)) * 4;
        QString counters =
            tr("score tile %1\u00d7%2 = %3 (with its Q, K, V tiles %4) vs the full %5\u00d7%6 "
               "score matrix %7")
                .arg(s.qBlock)
                .arg(s.kvBlock)
                .arg(bytesText(static_cast<double>(tileBytes())))
                .arg(bytesText(static_cast<double>(tileWorking)))
                .arg(sq)
                .arg(sk)
                .arg(bytesText(static_cast<double>(fullScoreBytes())));
        if (!note.isEmpty()) counters += QStringLiteral("\n") + note;
        m_counters->setText(counters);
    }
    stylePlot(*m_plot, look);
    QFont plain = m_narration->font();
    plain.setBold(false);
    m_narration->setFont(plain);
    QFont small = plain;
    setFontSize(small, look, std::max(7, look.fontPointSize - 2));
    m_counters->setFont(small);
    for (QCPTextElement* caption : m_curveTitles)
        caption->setFont(small);

    wrapToFigureWidth(figureStyle().wrapWidth, {m_title, m_narration, m_counters});
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void FlashStepperView::paintFigure(QCPPainter& painter, const QSize& size) {
    // The lower curves number the steps for all four; a figure names them there too. A dry
    // pass first: the legends and the curves' rows settle at the figure's size.
    for (QCPAxisRect* rect : {m_rescaleRect, m_errorRect})
        rect->axis(QCPAxis::atBottom)->setLabel(tr("step"));
    QPicture scratch;
    QCPPainter dry(&scratch);
    m_plot->toPainter(&dry, size.width(), size.height());
    dry.end();
    m_plot->toPainter(&painter, size.width(), size.height());
    for (QCPAxisRect* rect : {m_rescaleRect, m_errorRect})
        rect->axis(QCPAxis::atBottom)->setLabel(QString());
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

QStringList FlashStepperView::tileLegendEntries() const {
    QStringList names;
    for (int i = 0; i < m_tileLegend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(m_tileLegend->item(i)))
            names << item->plottable()->name();
    return names;
}

QVector<QPointF> FlashStepperView::plottedError() const {
    QVector<QPointF> points;
    for (auto it = m_errorGraph->data()->constBegin(); it != m_errorGraph->data()->constEnd(); ++it)
        points << QPointF(it->key, it->value);
    return points;
}

DataTable FlashStepperView::data() const {
    // The online-softmax state drawn at the current step, one row per query: the running max
    // m, the running sum l, the factor exp(m_before - m_after) the current tile applied to the
    // row (1 where it did not touch the row, 0 where the row saw its first key), and how many
    // of the row's tiles are done. The JSON also lists every tile and whether it is done.
    DataTable table;
    const Experiment* experiment = document()->experiment();
    const FlashWalk* flash = notApplicable().isEmpty() ? document()->flashWalk() : nullptr;
    if (!experiment || !flash || flash->totalSteps() == 0) {
        table.unavailable = tr("the FlashAttention walk of this head is not ready yet");
        return table;
    }
    const Index total = flash->totalSteps();
    const Index step = std::clamp<Index>(document()->session().viewState.flashStep, 0, total);
    const FlashState after = flash->stateAfter(step);
    const FlashState before = step > 0 ? flash->stateAfter(step - 1) : after;
    const Index sq = experiment->sq();
    std::vector<double> done(static_cast<std::size_t>(sq), 0.0),
        all(static_cast<std::size_t>(sq), 0.0);
    QVariantList tiles;
    for (Index k = 0; k < total; ++k) {
        const FlashTile tile = flash->tile(k);
        for (Index r = tile.qStart; r < std::min(tile.qEnd, sq); ++r) {
            all[static_cast<std::size_t>(r)] += 1;
            if (k < step) done[static_cast<std::size_t>(r)] += 1;
        }
        if (k < kMaxTableTiles)
            tiles << QVariantMap{{QStringLiteral("step"), static_cast<qint64>(k + 1)},
                                 {QStringLiteral("q_start"), static_cast<qint64>(tile.qStart)},
                                 {QStringLiteral("q_end"), static_cast<qint64>(tile.qEnd)},
                                 {QStringLiteral("kv_start"), static_cast<qint64>(tile.kvStart)},
                                 {QStringLiteral("kv_end"), static_cast<qint64>(tile.kvEnd)},
                                 {QStringLiteral("skipped"), tile.skipped},
                                 {QStringLiteral("done"), k < step}};
    }
    const FlashTile current = step > 0 ? flash->tile(step - 1) : FlashTile{};
    table.columnLabels = {QStringLiteral("m"), QStringLiteral("l"), QStringLiteral("rescale"),
                          QStringLiteral("tiles_done"), QStringLiteral("tiles")};
    table.cols = static_cast<int>(table.columnLabels.size());
    table.rowLabels = displayTokens(experiment->queryTokens);
    const auto value = [](const std::vector<float>& values, Index at) {
        return at < static_cast<Index>(values.size()) ? double(values[static_cast<std::size_t>(at)])
                                                      : std::numeric_limits<double>::quiet_NaN();
    };
    for (Index r = 0; r < sq; ++r) {
        const double m = value(after.rowMax, r), mBefore = value(before.rowMax, r);
        const bool touched = step > 0 && !current.skipped && r >= current.qStart &&
                             r < current.qEnd && std::isfinite(m);
        // m stays -inf until the row sees an allowed key: exported as no value.
        table.values.insert(table.values.end(),
                            {std::isfinite(m) ? m : std::numeric_limits<double>::quiet_NaN(),
                             value(after.rowSum, r),
                             touched ? (std::isfinite(mBefore) ? std::exp(mBefore - m) : 0.0) : 1.0,
                             done[static_cast<std::size_t>(r)], all[static_cast<std::size_t>(r)]});
    }
    table.rows = static_cast<int>(sq);
    table.extra.insert(QStringLiteral("step"), static_cast<qint64>(step));
    table.extra.insert(QStringLiteral("total_steps"), static_cast<qint64>(total));
    table.extra.insert(QStringLiteral("q_block"),
                       static_cast<qint64>(document()->session().qBlock));
    table.extra.insert(QStringLiteral("kv_block"),
                       static_cast<qint64>(document()->session().kvBlock));
    table.extra.insert(QStringLiteral("tiles_list"), tiles);
    return table;
}

} // namespace attnlab::ui

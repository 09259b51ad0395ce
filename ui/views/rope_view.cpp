#include "ui/views/rope_view.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/state/dump_document.h"
#include "ui/state/experiment_data.h"
#include "ui/views/plot_captions.h"
#include "ui/views/teaching_plot.h"

namespace attnlab::ui {

namespace {

const QColor kQueryColor(0x00, 0x72, 0xb2);
const QColor kKeyColor(0xd5, 0x5e, 0x00);

/// The vector rotated as RoPE does at absolute position `position` (negative undoes it), with
/// each pair's frequency theta_t (ropeFrequencies: a model's rope_scaling included).
std::vector<double> rotated(const std::vector<double>& x, RopeStyle style,
                            const std::vector<double>& frequencies, double position) {
    const auto dim = static_cast<Index>(x.size());
    std::vector<double> out = x;
    for (Index t = 0; t < dim / 2; ++t) {
        const auto [a, b] = ropePair(style, t, dim);
        const double angle = position * frequencies[static_cast<std::size_t>(t)];
        const double c = std::cos(angle), s = std::sin(angle);
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        out[ua] = x[ua] * c - x[ub] * s;
        out[ub] = x[ua] * s + x[ub] * c;
    }
    return out;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double sum = 0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
        sum += a[i] * b[i];
    return sum;
}

std::vector<double> rowOf(const Tensor4& tensor, Index head, Index row) {
    std::vector<double> out;
    if (tensor.batch < 1 || head >= tensor.heads || row < 0 || row >= tensor.seq) return out;
    for (Index d = 0; d < tensor.dim; ++d)
        out.push_back(tensor(0, head, row, d));
    return out;
}

void addArrow(QCustomPlot* plot, QCPAxisRect* rect, double x, double y, const QPen& pen) {
    auto* line = new QCPItemLine(plot);
    line->setClipAxisRect(rect);
    for (QCPItemPosition* position : {line->start, line->end}) {
        position->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        position->setAxisRect(rect);
    }
    line->start->setCoords(0, 0);
    line->end->setCoords(x, y);
    line->setPen(pen);
    // QCustomPlot scales a line ending by the pen's width: keep the head about 12 x 14 px.
    const double scale = std::max(1.0, pen.widthF());
    line->setHead(QCPLineEnding(QCPLineEnding::esSpikeArrow, 12 / scale, 14 / scale));
}

constexpr double kPi = 3.14159265358979323846;

/// An arc of the circle of `radius` about the origin from angle `from` to `to` (radians).
void addCircle(QCustomPlot* plot, QCPAxisRect* rect, double from, double to, double radius,
               const QPen& pen) {
    auto* curve = new QCPCurve(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    const int points = std::max(8, static_cast<int>(std::ceil(std::abs(to - from) * 24)));
    QVector<double> t, xs, ys;
    for (int i = 0; i <= points; ++i) {
        const double angle = from + (to - from) * i / points;
        t << i;
        xs << radius * std::cos(angle);
        ys << radius * std::sin(angle);
    }
    curve->setData(t, xs, ys, true);
    curve->setPen(pen);
    curve->setBrush(Qt::NoBrush);
    Q_UNUSED(plot);
}

} // namespace

RopeView::RopeView(Document* document, QWidget* parent) : PlotView(document, parent) {
    setToolTip(tr("RoPE rotates each pair of a query and of a key by an angle proportional to "
                  "its position, with one frequency per pair. The dot product then depends only "
                  "on the difference of the positions."));
    connect(m_plot, &QCustomPlot::afterLayout, this, &RopeView::equalizePairAxes);
}

void RopeView::equalizePairAxes() {
    for (const PairPanel& panel : m_pairs) {
        const double width = panel.rect->width(), height = panel.rect->height();
        if (width <= 0 || height <= 0) continue;
        const double extent = 1.15 * panel.radius;
        panel.rect->axis(QCPAxis::atBottom)
            ->setRange(-extent * std::max(1.0, width / height),
                       extent * std::max(1.0, width / height));
        panel.rect->axis(QCPAxis::atLeft)
            ->setRange(-extent * std::max(1.0, height / width),
                       extent * std::max(1.0, height / width));
    }
}

QString RopeView::notApplicable() const {
    const Experiment* experiment = document()->experiment();
    if (experiment && !experiment->hasQk())
        return tr("%1 holds attention weights only: there are no q and k vectors to rotate.")
            .arg(describeSource(experiment->source));
    return {};
}

void RopeView::refresh() {
    const Theme look = theme();
    QCustomPlot& plot = *m_plot;
    plot.clearItems();
    plot.clearPlottables();
    plot.plotLayout()->clear();
    for (QCPGraph*& curve : m_curves)
        curve = nullptr;
    m_panelCount = 0;
    m_pairs.clear();
    m_table = DataTable{};
    m_title = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(0, 0, m_title);

    const Experiment* experiment = document()->experiment();
    const ViewState& state = document()->session().viewState;
    const Index dim = experiment ? experiment->qkv.q.dim : 0;
    if (!experiment || experiment->sq() == 0 || experiment->sk() == 0 || dim < 2 || dim % 2) {
        m_title->setText(experiment && dim % 2
                             ? tr("RoPE needs an even head dimension (it is %1)").arg(dim)
                             : tr("RoPE: no tokens to show"));
        stylePlot(plot, look);
        plot.replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const bool ropeOn = experiment->positional == Positional::RopeInterleaved ||
                        experiment->positional == Positional::RopeHalf;
    const RopeStyle style =
        experiment->positional == Positional::RopeHalf ? RopeStyle::Half : RopeStyle::Interleaved;
    const RopeStyle otherStyle =
        style == RopeStyle::Half ? RopeStyle::Interleaved : RopeStyle::Half;
    const double base = experiment->ropeBase;
    const std::vector<double> frequencies = ropeFrequencies(document(), *experiment);
    const Index head = clampedHead(*experiment, state.head);
    const Index kvHead = experiment->kvHeadOf(head);
    const Index query =
        state.query >= 0 && state.query < experiment->sq() ? state.query : experiment->sq() - 1;
    // The query's row only of held weights: a copy of the whole head is S x S (128 MB at
    // 4 000 tokens). A model's layer computes the head's map (its last head is kept).
    const Tensor4& allWeights = experiment->attention.weights;
    Index key = 0;
    if (!allWeights.empty() && allWeights.batch > 0 && head < allWeights.heads &&
        query < allWeights.seq && allWeights.dim > 0) {
        allWeights.head(0, head).row(query).maxCoeff(&key);
    } else if (experiment->maps) {
        const Matrix weights = experiment->headWeights(head);
        if (query < weights.rows() && weights.cols() > 0) weights.row(query).maxCoeff(&key);
    }
    const double queryPosition = static_cast<double>(query + experiment->sk() - experiment->sq());
    const double keyPosition = static_cast<double>(key);

    // Vectors before rotation: undo the rotation when the session applied RoPE.
    std::vector<double> q = rowOf(experiment->qkv.q, head, query);
    std::vector<double> k = rowOf(experiment->qkv.k, kvHead, key);
    if (ropeOn) {
        q = rotated(q, style, frequencies, -queryPosition);
        k = rotated(k, style, frequencies, -keyPosition);
    }
    const std::vector<double> qRot = rotated(q, style, frequencies, queryPosition);
    const std::vector<double> kRot = rotated(k, style, frequencies, keyPosition);

    const QStringList queryTokens = displayTokens(experiment->queryTokens);
    const QStringList keyTokens = displayTokens(experiment->keyTokens);
    m_title->setText(
        tr("RoPE, head %1: query %2 \u201c%3\u201d at position %4, key %5 \u201c%6\u201d at "
           "position %7\n%8%9")
            .arg(head)
            .arg(query)
            .arg(query < queryTokens.size() ? queryTokens[static_cast<int>(query)] : QString())
            .arg(queryPosition)
            .arg(key)
            .arg(key < keyTokens.size() ? keyTokens[static_cast<int>(key)] : QString())
            .arg(keyPosition)
            .arg(style == RopeStyle::Half ? tr("half pairing (i, i + D/2)")
                                          : tr("interleaved pairing (2i, 2i + 1)"))
            .arg(ropeOn ? QString()
                        : tr("; RoPE is off in this session: showing what it would do")));

    // One panel per (sampled) frequency pair.
    const Index pairs = dim / 2;
    std::vector<Index> shown;
    const Index panels = std::min<Index>(pairs, kMaxPairPanels);
    for (Index p = 0; p < panels; ++p)
        shown.push_back(panels == 1 ? 0 : p * (pairs - 1) / (panels - 1));
    auto* grid = new QCPLayoutGrid;
    plot.plotLayout()->addElement(1, 0, grid);
    m_table.columnLabels = {
        QStringLiteral("theta"),   QStringLiteral("q_x"),     QStringLiteral("q_y"),
        QStringLiteral("q_rot_x"), QStringLiteral("q_rot_y"), QStringLiteral("k_x"),
        QStringLiteral("k_y"),     QStringLiteral("k_rot_x"), QStringLiteral("k_rot_y")};
    m_table.cols = static_cast<int>(m_table.columnLabels.size());
    m_table.rowHeader = QStringLiteral("pair");
    m_table.extra = {{QStringLiteral("query"), static_cast<qint64>(query)},
                     {QStringLiteral("query_position"), queryPosition},
                     {QStringLiteral("key"), static_cast<qint64>(key)},
                     {QStringLiteral("key_position"), keyPosition},
                     {QStringLiteral("pairing"), QString::fromLatin1(ropeStyleName(style))},
                     {QStringLiteral("rope_base"), base}};
    for (Index t = 0; t < pairs; ++t) {
        const auto [a, b] = ropePair(style, t, dim);
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        const double theta = frequencies[static_cast<std::size_t>(t)];
        m_table.rowLabels << QStringLiteral("pair %1 (%2,%3)").arg(t).arg(a).arg(b);
        m_table.values.insert(m_table.values.end(), {theta, q[ua], q[ub], qRot[ua], qRot[ub], k[ua],
                                                     k[ub], kRot[ua], kRot[ub]});
    }
    m_table.rows = static_cast<int>(pairs);
    for (std::size_t p = 0; p < shown.size(); ++p) {
        const Index t = shown[p];
        const auto [a, b] = ropePair(style, t, dim);
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        const double frequency = frequencies[static_cast<std::size_t>(t)];
        PairPanel panel;
        panel.pair = t;
        panel.queryAngle = queryPosition * frequency;
        panel.keyAngle = keyPosition * frequency;
        // Two short lines (the pairing's indices are in the title and the data).
        auto* rect = makeAxisRect(&plot,
                                  tr("pair %1: \u03b8 = %2\nm\u03b8 = %3")
                                      .arg(t)
                                      .arg(QString::number(frequency, 'g', 3))
                                      .arg(QString::number(panel.queryAngle, 'g', 3)),
                                  QString());
        panel.rect = rect;
        grid->addElement(0, static_cast<int>(p), rect);
        // Rotation keeps a pair's length: the panel shows the unit circle and both vectors'
        // circles whole, at one scale on both axes (equalizePairAxes).
        const double queryRadius = std::hypot(q[ua], q[ub]);
        const double keyRadius = std::hypot(k[ua], k[ub]);
        panel.radius = std::max({1.0, queryRadius, keyRadius});
        const double extent = 1.15 * panel.radius;
        rect->axis(QCPAxis::atBottom)->setRange(-extent, extent);
        rect->axis(QCPAxis::atLeft)->setRange(-extent, extent);
        for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
            axis->setTickLabels(false);
            axis->setTicks(false); // ticks would be placed before the ranges are equalized
            axis->grid()->setVisible(false);
        }
        const QColor faint = look.grid.darker(115);
        addCircle(&plot, rect, 0, 2 * kPi, 1.0, QPen(faint, look.lineWidth));
        for (const QPointF direction : {QPointF(1, 0), QPointF(0, 1)}) { // the x and y axes
            auto* axisLine = new QCPItemStraightLine(&plot);
            axisLine->setClipAxisRect(rect);
            for (QCPItemPosition* position : {axisLine->point1, axisLine->point2}) {
                position->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
                position->setAxisRect(rect);
            }
            axisLine->point1->setCoords(0, 0);
            axisLine->point2->setCoords(direction);
            axisLine->setPen(QPen(faint, 1));
        }
        const double width = look.lineWidth;
        // The angle each vector turns through, as an arc from before to after (mod 2 pi).
        const auto arc = [&](double x, double y, double angle, double radius, const QColor& color) {
            if (std::hypot(x, y) <= 0) return;
            const double start = std::atan2(y, x);
            addCircle(&plot, rect, start, start + std::fmod(angle, 2 * kPi), radius,
                      QPen(color, width));
        };
        arc(q[ua], q[ub], panel.queryAngle, 0.5 * queryRadius, kQueryColor);
        arc(k[ua], k[ub], panel.keyAngle, 0.3 * keyRadius, kKeyColor);
        addArrow(&plot, rect, q[ua], q[ub], QPen(kQueryColor, width, Qt::DotLine));
        addArrow(&plot, rect, k[ua], k[ub], QPen(kKeyColor, width, Qt::DotLine));
        addArrow(&plot, rect, qRot[ua], qRot[ub], QPen(kQueryColor, 1.5 * width));
        addArrow(&plot, rect, kRot[ua], kRot[ub], QPen(kKeyColor, 1.5 * width));
        m_pairs.push_back(panel);
        ++m_panelCount;
    }

    // Score against relative distance, at several absolute offsets and both pairings.
    m_distanceRect = makeAxisRect(&plot, tr("m \u2212 n (query minus key position)"),
                                  tr("q\u2098 \u00b7 k\u2099"));
    auto* distanceRow = new QCPLayoutGrid;
    plot.plotLayout()->addElement(2, 0, distanceRow);
    distanceRow->addElement(0, 0, m_distanceRect);
    plot.plotLayout()->setRowStretchFactors({0.01, 1.3, 1.0});
    const int range = static_cast<int>(std::max<Index>(16, experiment->sk()));
    const QString offsetNames[4] = {
        tr("key at position %1").arg(kOffsets[0]), tr("key at position %1").arg(kOffsets[1]),
        tr("key at position %1").arg(kOffsets[2]),
        tr("other pairing (%1), key at 0")
            .arg(otherStyle == RopeStyle::Half ? tr("half") : tr("interleaved"))};
    const QCPScatterStyle::ScatterShape shapes[4] = {
        QCPScatterStyle::ssNone, QCPScatterStyle::ssCircle, QCPScatterStyle::ssCross,
        QCPScatterStyle::ssNone};
    double low = 0, high = 0;
    for (int c = 0; c < 4; ++c) {
        const RopeStyle curveStyle = c == 3 ? otherStyle : style;
        const double offset = c == 3 ? 0 : kOffsets[c];
        QVector<double> xs, ys;
        for (int delta = -range; delta <= range; ++delta) {
            const double n = offset, m = offset + delta;
            if (m < 0 && c > 0 && c < 3) continue; // positions are never negative
            const double score =
                dot(rotated(q, curveStyle, frequencies, m), rotated(k, curveStyle, frequencies, n));
            xs << delta;
            ys << score;
            low = std::min(low, score);
            high = std::max(high, score);
        }
        m_curves[c] = plot.addGraph(m_distanceRect->axis(QCPAxis::atBottom),
                                    m_distanceRect->axis(QCPAxis::atLeft));
        m_curves[c]->setData(xs, ys, true);
        m_curves[c]->setName(offsetNames[c]);
        const QColor color = c == 3 ? look.grid.darker(130) : c == 0 ? kQueryColor : kKeyColor;
        m_curves[c]->setPen(c == 0   ? QPen(color, 2.5 * look.lineWidth)
                            : c == 3 ? QPen(color, 1.5 * look.lineWidth, Qt::DashLine)
                                     : QPen(Qt::NoPen));
        if (c == 1 || c == 2) m_curves[c]->setLineStyle(QCPGraph::lsNone);
        m_curves[c]->setScatterStyle(QCPScatterStyle(shapes[c], color, 6));
        // A long text's thousands of markers merge into one band: about 400 of them read.
        m_curves[c]->setScatterSkip(std::max(0, static_cast<int>(xs.size() / 400) - 1));
    }
    auto* marker = new QCPItemStraightLine(&plot);
    marker->setClipAxisRect(m_distanceRect);
    for (QCPItemPosition* position : {marker->point1, marker->point2}) {
        position->setAxes(m_distanceRect->axis(QCPAxis::atBottom),
                          m_distanceRect->axis(QCPAxis::atLeft));
        position->setAxisRect(m_distanceRect);
    }
    marker->point1->setCoords(queryPosition - keyPosition, 0);
    marker->point2->setCoords(queryPosition - keyPosition, 1);
    marker->setPen(QPen(look.accent, 1.5 * look.lineWidth, Qt::DashDotLine));
    m_distanceRect->axis(QCPAxis::atBottom)->setRange(-range - 0.5, range + 0.5);
    const double pad = std::max(1e-6, 0.08 * (high - low));
    m_distanceRect->axis(QCPAxis::atLeft)->setRange(low - pad, high + pad);
    m_distanceRect->axis(QCPAxis::atLeft)->ticker()->setTickCount(3);
    stylePlot(plot, look);
    // The legend sits beside the curves, never on them.
    auto* legend = new QCPLegend;
    addLegendAtItsSize(distanceRow, 0, 1, legend, Qt::Vertical);
    distanceRow->setColumnStretchFactors({4.0, 1.0});
    legend->setLayer(QStringLiteral("legend"));
    styleLegend(legend, look);
    legend->clearItems();
    for (QCPGraph* curve : m_curves)
        legend->addItem(new QCPPlottableLegendItem(legend, curve));
    auto* key1 = new QCPTextElement(
        &plot, tr("arrows: dotted = before rotation, solid = after; blue = query, orange = key; "
                  "arcs = the angles m\u03b8 and n\u03b8 turned through; grey circle = the unit "
                  "circle (equal axes); dash-dot line = this pair's distance"));
    key1->setTextColor(look.foreground);
    QFont font = key1->font();
    font.setBold(false);
    setFontSize(font, look, std::max(7, look.fontPointSize - 2));
    key1->setFont(font);
    plot.plotLayout()->addElement(3, 0, key1);
    plot.plotLayout()->setRowStretchFactors({0.01, 1.0, 1.0, 0.01});
    // The pair captions in a smaller font: four panels share a row.
    for (const PairPanel& panel : m_pairs)
        panel.rect->axis(QCPAxis::atBottom)->setLabelFont(font);
    wrapToFigureWidth(figureStyle().wrapWidth, {m_title, key1});
    plot.replot(QCustomPlot::rpQueuedReplot);
}

QVector<QPointF> RopeView::plottedScores(int offsetIndex) const {
    QVector<QPointF> points;
    if (offsetIndex < 0 || offsetIndex > 3 || !m_curves[offsetIndex]) return points;
    const QCPGraph* curve = m_curves[offsetIndex];
    for (auto it = curve->data()->constBegin(); it != curve->data()->constEnd(); ++it)
        points << QPointF(it->key, it->value);
    return points;
}

DataTable RopeView::data() const {
    return m_table;
}

} // namespace attnlab::ui

#include "ui/views/statistics_view.h"

#include <QFontMetrics>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/state/experiment_data.h"
#include "ui/views/token_tooltips.h"
#include "ui/widgets/theme.h"

namespace attnlab::ui {

namespace {
/// The least of 1, 2, 2.5, 5 times a power of ten that is >= `value` (> 0), the steps the
/// axis ticker picks: an axis ending there has a count at its top however few ticks fit.
double roundedUp(double value) {
    if (!(value > 0)) return 1;
    const double power = std::pow(10.0, std::floor(std::log10(value)));
    for (const double step : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (step * power >= value * (1 - 1e-12)) return step * power;
    return 10 * power;
}

const HeadStats* focusedStats(const Document& document, Index* head) {
    const Experiment* experiment = document.experiment();
    if (!experiment || experiment->stats.empty()) return nullptr;
    *head = std::min<Index>(clampedHead(*experiment, document.session().viewState.head),
                            static_cast<Index>(experiment->stats.size()) - 1);
    return &experiment->stats[static_cast<std::size_t>(*head)];
}
/// What the rows sum to: 1 after a softmax; after train-mode dropout only in expectation.
QString rowSumNote(const Experiment& experiment, const HeadStats& stats) {
    if (!experiment.dropout.active()) return {};
    return StatisticsView::tr("<br><b>Train mode, dropout p = %1:</b> rows no longer sum to 1 "
                              "(row sums %2 \u2026 %3); dropped weights are 0, the others "
                              "\u00d7 1/(1 \u2212 p) = %4, so each row sums to 1 only on "
                              "average. Entropy and the histogram are of these weights.")
        .arg(experiment.dropout.rate, 0, 'g', 3)
        .arg(stats.minRowSum, 0, 'f', 3)
        .arg(stats.maxRowSum, 0, 'f', 3)
        .arg(1.0 / (1.0 - experiment.dropout.rate), 0, 'g', 3);
}
} // namespace

StatisticsView::StatisticsView(Document* document, QWidget* parent) : View(document, parent) {
    auto* layout = new QVBoxLayout(this);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setToolTip(tr("Seed 002's pattern analysis of the focused head."));
    layout->addWidget(m_summary);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    layout->addWidget(splitter, 1);
    m_table = new QTableWidget(splitter);
    m_table->setColumnCount(kColumns);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    // The token columns take what their words need; the numbers share the rest.
    m_table->horizontalHeader()->setSectionResizeMode(QueryColumn, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(MostAttendedColumn,
                                                      QHeaderView::ResizeToContents);
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setToolTip(tr("Per query, as seed 002 analyses it: the key it attends to most "
                           "other than itself and that weight, its weight on itself, whether "
                           "that is larger, how spread and how far its attention reaches. "
                           "Click a row to select it."));
    connect(m_table, &QTableWidget::cellClicked, this,
            [this](int row, int) { this->document()->setSelectedQuery(row); });
    m_plot = new QCustomPlot(splitter);
    // The histogram's title is laid out in a figure only (paintFigure).
    m_title = new QCPTextElement(m_plot, QString());
    m_histogram = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_plot->xAxis->setLabel(tr("weight (allowed cells)"));
    m_plot->yAxis->setLabel(tr("cells"));
    m_plot->setToolTip(tr("Histogram of the allowed attention weights of the focused head."));
    // As many count ticks as the laid-out axis holds: a long text's counts (1.5·10⁷) are two
    // text lines tall each, and the histogram under the table is short on a projector.
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        const auto ticker = m_plot->yAxis->ticker();
        const double line = QFontMetrics(m_plot->yAxis->tickLabelFont()).height();
        const int fits =
            std::clamp(static_cast<int>(m_plot->yAxis->axisRect()->height() / (2.5 * line)), 1, 3);
        if (!ticker || ticker->tickCount() == fits) return;
        ticker->setTickCount(fits);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
}

void StatisticsView::refresh() {
    const Theme look = theme();
    Index head = 0;
    const HeadStats* stats = focusedStats(*document(), &head);
    const Experiment* experiment = document()->experiment();
    m_table->setRowCount(0);
    if (!stats || !experiment) {
        m_summary->setText(tr("No result yet."));
        m_histogram->data()->clear();
        m_plot->replot();
        return;
    }
    // A number column never narrower than its numbers ("0.7…" read as nothing in a 1024-pixel
    // window): past that the table scrolls sideways.
    m_table->horizontalHeader()->setMinimumSectionSize(
        QFontMetrics(m_table->font()).horizontalAdvance(QStringLiteral("0.000")) + 14);
    const QStringList queries = displayTokens(experiment->queryTokens);
    const QStringList keys = displayTokens(experiment->keyTokens);
    m_summary->setText(
        tr("<b>Head %1.</b> Diagonal (self) mean <b>%2</b> vs off-diagonal mean <b>%3</b> "
           "(ratio %4): %5. Mean entropy %6 nats. %7 empty rows.")
            .arg(head)
            // Three significant digits: a long text's means (~1/S) are not "0.000".
            .arg(stats->diagonalMean, 0, 'g', 3)
            .arg(stats->offDiagonalMean, 0, 'g', 3)
            .arg(stats->offDiagonalMean > 0 ? stats->diagonalMean / stats->offDiagonalMean : 0.0, 0,
                 'f', 2)
            // "Mostly" is more than half its weight: a query of a long text that gives itself
            // 0.001 against 0.0003 for each other key still attends mostly elsewhere.
            .arg(
                stats->diagonalMean > 0.5 ? tr("it mostly attends to itself")
                : stats->diagonalMean > stats->offDiagonalMean
                    ? tr("it attends to itself more than to the average other key, yet most of its "
                         "weight goes to other tokens")
                    : tr("it mostly attends to other tokens"))
            .arg(stats->meanEntropy, 0, 'f', 3)
            .arg(std::count(stats->emptyRow.begin(), stats->emptyRow.end(), 1)) +
        rowSumNote(*experiment, *stats));
    // Cross-attention has no "itself": the column is the key at the query's position.
    const bool cross = experiment->source.isSession() && !experiment->session.sourceText.empty();
    const QString headers[kColumns] = {tr("query"),
                                       cross ? tr("most attended\n(not at its position)")
                                             : tr("most attended\n(not itself)"),
                                       tr("its\nweight"),
                                       cross ? tr("weight at its\nposition") : tr("self\nweight"),
                                       tr("mostly\nitself?"),
                                       tr("entropy"),
                                       tr("mean\ndistance"),
                                       tr("first-token\nweight")};
    const QString tips[kColumns] = {
        QString(),
        cross ? tr("The key the query attends to most, leaving out the key at the query's own "
                   "position (cross-attention has no \u201citself\u201d)")
              : tr("The key the query attends to most excluding itself, as seed 002 finds it "
                   "(its own weight is in the self weight column)"),
        tr("The weight on that most-attended key"),
        tr("The query's weight on itself: the diagonal of the weights"),
        tr("Yes when the self weight is larger than the most-attended weight (seed 002 asks "
           "whether a token mainly attends to itself)"),
        tr("Entropy of the query's weights, in nats"),
        tr("Weighted mean of |query position \u2212 key position|"),
        tr("The weight on the first token")};
    for (int c = 0; c < kColumns; ++c) {
        auto* item = new QTableWidgetItem(headers[c]);
        item->setToolTip(tips[c]);
        m_table->setHorizontalHeaderItem(c, item);
    }
    const MatrixD weights = headWeights(*experiment, head);
    const Index sq = experiment->sq(), sk = experiment->sk();
    const int rows = static_cast<int>(std::min<std::size_t>(stats->entropy.size(), 4096));
    m_table->setRowCount(rows);
    for (int i = 0; i < rows; ++i) {
        const auto at = static_cast<std::size_t>(i);
        const Index most = at < stats->mostAttended.size() ? stats->mostAttended[at] : -1;
        const double mostWeight =
            at < stats->mostAttendedWeight.size() ? stats->mostAttendedWeight[at] : 0.0;
        const Index own = i + sk - sq; // the key at the query's own position (stats.h)
        const bool hasSelf = own >= 0 && own < sk && i < weights.rows() && own < weights.cols();
        const double self = hasSelf ? weights(i, own) : 0.0;
        const bool empty = at < stats->emptyRow.size() && stats->emptyRow[at];
        auto set = [this, i](int column, const QString& text) {
            m_table->setItem(i, column, new QTableWidgetItem(text));
        };
        set(QueryColumn, QStringLiteral("%1 %2").arg(i).arg(queries.value(i)));
        set(MostAttendedColumn,
            most >= 0 ? QStringLiteral("%1 %2").arg(most).arg(keys.value(static_cast<int>(most)))
                      : tr("(none)"));
        // Hover: the token as shown and its raw form (token_tooltips.h).
        if (at < experiment->queryTokens.size())
            m_table->item(i, QueryColumn)->setToolTip(tokenTooltip(experiment->queryTokens[at]));
        if (most >= 0 && most < static_cast<Index>(experiment->keyTokens.size()))
            m_table->item(i, MostAttendedColumn)
                ->setToolTip(tokenTooltip(experiment->keyTokens[static_cast<std::size_t>(most)]));
        set(MostAttendedWeightColumn, most >= 0 ? QString::number(mostWeight, 'f', 3) : QString());
        set(SelfWeightColumn, hasSelf ? QString::number(self, 'f', 3) : QStringLiteral("\u2014"));
        set(MostlySelfColumn, !hasSelf || empty   ? QStringLiteral("\u2014")
                              : self > mostWeight ? tr("yes")
                                                  : tr("no"));
        set(EntropyColumn, QString::number(stats->entropy[at], 'f', 3));
        set(MeanDistanceColumn, at < stats->meanDistance.size()
                                    ? QString::number(stats->meanDistance[at], 'f', 2)
                                    : QString());
        set(FirstTokenColumn, at < stats->firstTokenWeight.size()
                                  ? QString::number(stats->firstTokenWeight[at], 'f', 3)
                                  : QString());
    }
    const Index selected = document()->session().viewState.query;
    if (selected >= 0 && selected < rows) m_table->selectRow(static_cast<int>(selected));

    QVector<double> centres, counts;
    const int bins = static_cast<int>(stats->histogram.size());
    double highest = 1;
    for (int b = 0; b < bins; ++b) {
        centres << (b + 0.5) / bins;
        counts << static_cast<double>(stats->histogram[static_cast<std::size_t>(b)]);
        highest = std::max(highest, counts.back());
    }
    m_histogram->setData(centres, counts, true);
    m_histogram->setWidth(bins > 0 ? 0.9 / bins : 0.05);
    m_histogram->setBrush(look.name == QLatin1String("dark") ? QColor(0x56, 0xb4, 0xe9)
                                                             : QColor(0x00, 0x72, 0xb2));
    m_histogram->setPen(Qt::NoPen);
    auto counter = QSharedPointer<QCPAxisTickerFixed>::create();
    counter->setTickStep(1);
    counter->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    // Few ticks: at 720 px in the projector theme the histogram is short.
    counter->setTickCount(3);
    m_plot->yAxis->setTicker(counter);
    m_plot->xAxis->setRange(0, 1);
    m_plot->yAxis->setRange(0, roundedUp(highest * 1.1));
    // The table asked for all its rows and the splitter left the histogram a 10 px strip on a
    // 1280 x 720 projector: the histogram keeps seven lines of the theme's text (its axis, its
    // label and some four lines of bars); the table scrolls if it must. On screen the summary
    // above says what its title would (a figure has the title): the table keeps that line.
    QFont text = m_plot->font();
    setFontSize(text, look, look.fontPointSize);
    m_plot->setMinimumHeight(7 * QFontMetrics(text).height());
    m_heading = tr("Head %1: diagonal mean %2, off-diagonal mean %3")
                    .arg(head)
                    .arg(stats->diagonalMean, 0, 'g', 3)
                    .arg(stats->offDiagonalMean, 0, 'g', 3);

    stylePlot(*m_plot, look);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StatisticsView::paintFigure(QCPPainter& painter, const QSize& size) {
    QCPLayoutGrid* layout = m_plot->plotLayout();
    layout->insertRow(0);
    layout->addElement(0, 0, m_title);
    m_title->setText(m_heading);
    m_plot->toPainter(&painter, size.width(), size.height());
    m_title->setText(QString());
    layout->take(m_title);
    layout->simplify();
}

DataTable StatisticsView::data() const {
    DataTable table;
    Index head = 0;
    const HeadStats* stats = focusedStats(*document(), &head);
    const Experiment* experiment = document()->experiment();
    if (!stats || !experiment) return table;
    table.columnLabels = {tr("most_attended"),           tr("most_attended_weight"),
                          QStringLiteral("self_weight"), tr("entropy"),
                          tr("mean_distance"),           tr("first_token_weight")};
    table.rowLabels = displayTokens(experiment->queryTokens);
    table.rows = static_cast<int>(stats->entropy.size());
    table.cols = 6;
    // most_attended excludes the query's own key (stats.h); self_weight is w(i, i + Sk - Sq).
    const MatrixD weights = headWeights(*experiment, head);
    const Index sq = experiment->sq(), sk = experiment->sk();
    for (std::size_t i = 0; i < stats->entropy.size(); ++i) {
        auto value = [](const auto& values, std::size_t at) {
            return at < values.size() ? static_cast<double>(values[at]) : 0.0;
        };
        // A query with no key other than itself has none: no value, as the table's "(none)".
        const bool none = i >= stats->mostAttended.size() || stats->mostAttended[i] < 0;
        const double noValue = std::numeric_limits<double>::quiet_NaN();
        table.values.push_back(none ? noValue : value(stats->mostAttended, i));
        table.values.push_back(none ? noValue : value(stats->mostAttendedWeight, i));
        const Index row = static_cast<Index>(i), own = row + sk - sq;
        table.values.push_back(
            own >= 0 && own < weights.cols() && row < weights.rows() ? weights(row, own) : noValue);
        table.values.push_back(stats->entropy[i]);
        table.values.push_back(value(stats->meanDistance, i));
        table.values.push_back(value(stats->firstTokenWeight, i));
    }
    return table;
}

} // namespace attnlab::ui

#include "ui/views/next_token_view.h"

#include <QDoubleSpinBox>
#include <QKeyEvent>
#include <QLabel>
#include <QPushButton>
#include <QRandomGenerator>
#include <QShortcut>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/views/flow_layout.h"
#include "ui/views/teaching_plot.h"
#include "ui/views/token_tooltips.h"

namespace attnlab::ui {

namespace {

/// A token as a tick label: quoted, so a leading space shows, with control characters escaped.
QString quotedToken(QString text) {
    text.replace(QLatin1Char('\\'), QStringLiteral("\\\\"));
    text.replace(QLatin1Char('\n'), QStringLiteral("\\n"));
    text.replace(QLatin1Char('\r'), QStringLiteral("\\r"));
    text.replace(QLatin1Char('\t'), QStringLiteral("\\t"));
    return QStringLiteral("\u201c%1\u201d").arg(text);
}

QString percent(double p) {
    return p >= 0.001 || p == 0 ? QStringLiteral("%1 %").arg(100 * p, 0, 'f', 1)
                                : QStringLiteral("%1 %").arg(100 * p, 0, 'g', 2);
}

} // namespace

NextTokenView::NextTokenView(Document* document, QWidget* parent)
    : View(document, parent), m_stack(new QStackedWidget(this)), m_placeholder(new QLabel(this)),
      m_plot(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    // The controls wrap rather than widen the window (a 1024-pixel projector).
    auto* controlRow = new QWidget(this);
    auto* controls = new FlowLayout(controlRow);
    controls->setContentsMargins(0, 0, 0, 0);
    m_temperature = new QDoubleSpinBox(this);
    m_temperature->setRange(0.0, 5.0);
    m_temperature->setSingleStep(0.1);
    m_temperature->setDecimals(2);
    m_temperature->setValue(1.0);
    m_temperature->setSpecialValueText(tr("0 (greedy)"));
    m_temperature->setToolTip(tr("Divides the logits before the softmax: below 1 sharpens the "
                                 "distribution, above 1 flattens it; 0 always takes the most "
                                 "likely token."));
    m_topK = new QSpinBox(this);
    m_topK->setRange(0, 1000);
    m_topK->setValue(10);
    m_topK->setSpecialValueText(tr("off"));
    m_topK->setToolTip(tr("Keep only the k most likely tokens (off: keep all)."));
    m_topP = new QDoubleSpinBox(this);
    m_topP->setRange(0.01, 1.0);
    m_topP->setSingleStep(0.05);
    m_topP->setDecimals(2);
    m_topP->setValue(1.0);
    m_topP->setToolTip(tr("Nucleus: of those, keep the fewest most likely tokens whose "
                          "probability adds up to at least p (1: keep all)."));
    m_sample = new QPushButton(tr("Sample"), this);
    m_sample->setToolTip(tr("Choose a token at random with the probabilities shown."));
    m_append = new QPushButton(tr("Append"), this);
    m_append->setToolTip(tr("Append the chosen token to the text (Ctrl+Return); the model "
                            "continues from its KV cache."));
    controls->addPair(new QLabel(tr("Temperature"), this), m_temperature);
    controls->addPair(new QLabel(tr("Top-k"), this), m_topK);
    controls->addPair(new QLabel(tr("Top-p"), this), m_topP);
    controls->addWidget(m_sample);
    controls->addWidget(m_append);
    layout->addWidget(controlRow);

    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_stack->addWidget(m_placeholder);
    m_stack->addWidget(m_plot);
    layout->addWidget(m_stack, 1);
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    layout->addWidget(m_note);

    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, QString());
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
    m_bars->setName(tr("probability after temperature, top-k, top-p"));
    m_bars->setWidth(0.7);
    m_selectedBar = new QCPBars(m_plot->yAxis, m_plot->xAxis);
    m_selectedBar->setName(tr("chosen token"));
    m_selectedBar->setWidth(0.7);
    m_model = new QCPGraph(m_plot->yAxis, m_plot->xAxis);
    m_model->setName(tr("model's own probability (T = 1, no cut)"));
    m_model->setLineStyle(QCPGraph::lsNone);
    m_baselineGraph = new QCPGraph(m_plot->yAxis, m_plot->xAxis);
    m_baselineGraph->setName(tr("model's own, with every head on"));
    m_baselineGraph->setLineStyle(QCPGraph::lsNone);
    m_plot->xAxis->setLabel(tr("probability"));
    m_plot->yAxis->setRangeReversed(true);
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    m_plot->setToolTip(tr("Click a bar to choose that token; Up/Down move the choice."));
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
        const double key = m_plot->yAxis->pixelToCoord(event->pos().y());
        const int rank = static_cast<int>(std::lround(key)) - 1;
        if (rank >= 0 && rank < std::min<int>(kMaxBars, static_cast<int>(m_distribution.size())))
            setSelectedRank(rank);
    });

    const auto controlsChanged = [this] {
        model::SamplingOptions options;
        options.temperature = m_temperature->value();
        options.topK = m_topK->value();
        options.topP = m_topP->value();
        setSampling(options);
    };
    connect(m_temperature, &QDoubleSpinBox::valueChanged, this, controlsChanged);
    connect(m_topK, &QSpinBox::valueChanged, this, controlsChanged);
    connect(m_topP, &QDoubleSpinBox::valueChanged, this, controlsChanged);
    connect(m_append, &QPushButton::clicked, this, &NextTokenView::appendSelected);
    connect(m_sample, &QPushButton::clicked, this,
            [this] { sampleWith(QRandomGenerator::global()->generateDouble()); });
    auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
    shortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(shortcut, &QShortcut::activated, this, &NextTokenView::appendSelected);
    m_sampling.topK = 10;
    recompute();
}

void NextTokenView::setInput(NextTokenInput input) {
    m_input = std::move(input);
    recompute();
    // A new position: the most likely token is the natural next choice.
    m_selected = m_distribution.empty() ? -1 : 0;
    markStale();
}

void NextTokenView::setSampling(const model::SamplingOptions& options) {
    if (model::validateSampling(options)) return;
    m_sampling = options;
    const QSignalBlocker b1(m_temperature), b2(m_topK), b3(m_topP);
    m_temperature->setValue(options.temperature);
    m_topK->setValue(static_cast<int>(std::min<std::int64_t>(options.topK, m_topK->maximum())));
    m_topP->setValue(options.topP);
    const std::int64_t previous = selectedId();
    recompute();
    m_selected = m_distribution.empty() ? -1 : 0;
    for (std::size_t r = 0; r < m_distribution.size(); ++r)
        if (m_distribution[r].id == previous) m_selected = static_cast<int>(r);
    emit samplingChanged();
    markStale();
}

void NextTokenView::recompute() {
    m_distribution = m_input.logits.empty()
                         ? std::vector<model::TokenProbability>{}
                         : model::nextTokenDistribution(m_input.logits, m_sampling);
    if (m_selected >= static_cast<int>(m_distribution.size()))
        m_selected = m_distribution.empty() ? -1 : 0;
    // The kept tokens' probabilities with every head on: the model's own distribution of the
    // baseline logits.
    m_baseline.clear();
    const auto& baseline = m_input.baselineLogits;
    if (!m_distribution.empty() && baseline.size() == m_input.logits.size()) {
        const std::vector<double> probabilities = model::modelProbabilities(baseline);
        if (!probabilities.empty())
            for (const auto& token : m_distribution)
                m_baseline.push_back(probabilities[static_cast<std::size_t>(token.id)]);
    }
}

void NextTokenView::setSelectedRank(int rank) {
    if (rank < 0 || rank >= static_cast<int>(m_distribution.size()) || rank == m_selected) return;
    m_selected = rank;
    markStale();
}

std::int64_t NextTokenView::selectedId() const {
    return m_selected >= 0 && m_selected < static_cast<int>(m_distribution.size())
               ? m_distribution[static_cast<std::size_t>(m_selected)].id
               : -1;
}

void NextTokenView::appendSelected() {
    const std::int64_t id = selectedId();
    if (id >= 0) emit appendRequested(id);
}

void NextTokenView::sampleWith(double uniform) {
    if (m_distribution.empty()) return;
    const std::int64_t id = model::sampleToken(m_distribution, uniform);
    for (std::size_t r = 0; r < m_distribution.size(); ++r)
        if (m_distribution[r].id == id) setSelectedRank(static_cast<int>(r));
}

void NextTokenView::keyPressEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Down && m_selected + 1 < static_cast<int>(m_distribution.size()) &&
        m_selected + 1 < kMaxBars) {
        setSelectedRank(m_selected + 1);
        return;
    }
    if (event->key() == Qt::Key_Up && m_selected > 0) {
        setSelectedRank(m_selected - 1);
        return;
    }
    View::keyPressEvent(event);
}

QString NextTokenView::tokenText(std::int64_t id) const {
    return m_input.tokenText ? m_input.tokenText(id) : QString::number(id);
}

QString NextTokenView::placeholderText() const {
    if (m_input.modelName.isEmpty())
        return tr("Open a model: File \u25b8 Open Model\u2026 — the next-token view shows "
                  "what a real model predicts after your text.");
    if (!m_input.noNextToken.isEmpty()) return m_input.noNextToken;
    if (m_input.logits.empty()) return tr("Type some text: the model predicts what comes next.");
    if (m_distribution.empty()) return tr("The model's logits are not finite here.");
    return {};
}

void NextTokenView::refresh() {
    const Theme look = theme();
    const QString placeholder = placeholderText();
    m_placeholder->setText(placeholder);
    m_stack->setCurrentWidget(placeholder.isEmpty() ? static_cast<QWidget*>(m_plot)
                                                    : m_placeholder);
    const bool ready = placeholder.isEmpty();
    m_append->setEnabled(ready);
    m_sample->setEnabled(ready);
    QFont big = font();
    setFontSize(big, look, look.fontPointSize * 1.3);
    m_placeholder->setFont(big);

    const int shown = std::min<int>(kMaxBars, static_cast<int>(m_distribution.size()));
    QVector<double> keys, values, selectedKeys, selectedValues, modelValues;
    QStringList labels;
    m_plot->clearItems();
    double top = 0.05;
    for (int r = 0; r < shown; ++r) {
        const auto& token = m_distribution[static_cast<std::size_t>(r)];
        const double key = r + 1;
        (r == m_selected ? selectedKeys : keys) << key;
        (r == m_selected ? selectedValues : values) << token.probability;
        modelValues << token.modelProbability;
        labels << quotedToken(tokenText(token.id));
        top = std::max({top, token.probability, token.modelProbability});
    }
    QVector<double> allKeys;
    for (int r = 0; r < shown; ++r)
        allKeys << r + 1;
    m_bars->setData(keys, values, true);
    m_selectedBar->setData(selectedKeys, selectedValues, true);
    m_model->setData(allKeys, modelValues, true);
    QVector<double> baselineValues;
    for (int r = 0; r < shown && r < static_cast<int>(m_baseline.size()); ++r) {
        baselineValues << m_baseline[static_cast<std::size_t>(r)];
        top = std::max(top, m_baseline[static_cast<std::size_t>(r)]);
    }
    m_baselineGraph->setData(allKeys.mid(0, static_cast<int>(baselineValues.size())),
                             baselineValues, true);
    m_baselineGraph->setVisible(!baselineValues.isEmpty());
    if (baselineValues.isEmpty())
        m_baselineGraph->removeFromLegend();
    else
        m_baselineGraph->addToLegend();
    // The markers' size, set below with their style: a percentage starts past the half of the
    // widest marker that sits at the bar's end, so the two never overlap.
    const double modelMarker = 6 + 3 * look.lineWidth;
    const double baselineMarker = 8 + 3 * look.lineWidth;
    for (int r = 0; r < shown; ++r) {
        const auto& token = m_distribution[static_cast<std::size_t>(r)];
        const bool hasBaseline = r < static_cast<int>(baselineValues.size());
        const double reach = std::max(
            {token.probability, token.modelProbability, hasBaseline ? baselineValues[r] : 0.0});
        const double marker =
            std::max(modelMarker, hasBaseline ? baselineMarker : 0.0) / 2 + 2 * look.lineWidth;
        auto* label = new QCPItemText(m_plot);
        label->setClipToAxisRect(false);
        label->position->setAxes(m_plot->xAxis, m_plot->yAxis);
        label->position->setCoords(reach, r + 1);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        // Measured from whichever of the bar and its markers reaches farthest.
        label->setPadding(QMargins(static_cast<int>(std::ceil(marker)) + 4, 0, 0, 0));
        label->setText(percent(token.probability));
        label->setColor(look.foreground);
        QFont labelFont = font();
        setFontSize(labelFont, look, look.fontPointSize * 0.9);
        label->setFont(labelFont);
    }
    // One tick per bar at its rank (1 = most likely, at the top).
    auto shifted = QSharedPointer<QCPAxisTickerText>::create();
    for (int r = 0; r < labels.size(); ++r)
        shifted->addTick(r + 1, labels[r]);
    m_plot->yAxis->setTicker(shifted);
    // The raw token and its id over each label (the bars keep their own click tooltip).
    std::vector<std::string> raws;
    std::vector<std::int64_t> ids;
    for (int r = 0; r < shown; ++r) {
        const std::int64_t id = m_distribution[static_cast<std::size_t>(r)].id;
        raws.push_back(m_input.rawToken ? m_input.rawToken(id) : tokenText(id).toStdString());
        ids.push_back(id);
    }
    TokenTooltips::of(m_plot)->setTokens(m_plot->yAxis, raws, ids, QString(), false, 1.0);
    m_plot->yAxis->setSubTicks(false);
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->yAxis->setRange(0.4, std::max(1, shown) + 0.6);
    m_plot->xAxis->setRange(0, std::min(1.0, top * 1.25 + 0.02));

    const QColor barColor =
        look.name == QLatin1String("dark") ? QColor(0x56, 0xb4, 0xe9) : QColor(0x00, 0x72, 0xb2);
    m_bars->setBrush(barColor);
    m_bars->setPen(Qt::NoPen);
    m_selectedBar->setBrush(look.accent);
    m_selectedBar->setPen(Qt::NoPen);
    m_model->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond,
                                             QPen(look.foreground, 1.5 * look.lineWidth),
                                             Qt::NoBrush, modelMarker));
    m_baselineGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross,
                                                     QPen(look.foreground, 2 * look.lineWidth),
                                                     Qt::NoBrush, baselineMarker));

    QString title;
    if (!m_input.modelName.isEmpty()) {
        // Line 1: what is predicted; line 2: by which model, under which controls.
        title = m_input.context.isEmpty()
                    ? tr("Next token")
                    : tr("Next token after \u201c%1\u201d").arg(m_input.context);
        const QString controls =
            m_sampling.temperature == 0
                ? tr("greedy (temperature 0)")
                : tr("temperature %1, top-k %2, top-p %3")
                      .arg(m_sampling.temperature, 0, 'g', 3)
                      .arg(m_sampling.topK == 0 ? tr("off") : QString::number(m_sampling.topK))
                      .arg(m_sampling.topP, 0, 'g', 3);
        title += QLatin1Char('\n') + tr("%1 \u00b7 %2").arg(m_input.modelName, controls);
        if (m_input.ablatedHeads > 0)
            title += m_input.ablatedHeads == 1
                         ? tr(" \u2014 1 head switched off")
                         : tr(" \u2014 %1 heads switched off").arg(m_input.ablatedHeads);
    }
    m_title->setText(title);
    QString note;
    if (static_cast<int>(m_distribution.size()) > shown) {
        double rest = 0;
        for (std::size_t r = static_cast<std::size_t>(shown); r < m_distribution.size(); ++r)
            rest += m_distribution[r].probability;
        note = tr("%1 more tokens kept, %2 of the probability together.")
                   .arg(m_distribution.size() - static_cast<std::size_t>(shown))
                   .arg(percent(rest));
    }
    if (selectedId() >= 0)
        note +=
            (note.isEmpty() ? QString() : QStringLiteral(" ")) +
            tr("Chosen: %1 (id %2).").arg(quotedToken(tokenText(selectedId()))).arg(selectedId());
    m_note->setText(note);
    stylePlot(*m_plot, look);
    QFont titleFont = font();
    setFontSize(titleFont, look, look.fontPointSize * 1.1);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_title->setTextColor(look.foreground);
    styleLegend(m_plot->legend, look);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void NextTokenView::paintFigure(QCPPainter& painter, const QSize& size) {
    if (!placeholderText().isEmpty()) {
        View::paintFigure(painter, size);
        return;
    }
    m_plot->toPainter(&painter, size.width(), size.height());
}

DataTable NextTokenView::data() const {
    DataTable table;
    table.cols = m_baseline.empty() ? 3 : 4;
    table.columnLabels = {tr("id"), tr("probability"), tr("model_probability")};
    if (!m_baseline.empty()) table.columnLabels << tr("every_head_on_probability");
    for (std::size_t r = 0; r < m_distribution.size(); ++r) {
        const auto& token = m_distribution[r];
        table.rowLabels << tokenText(token.id);
        table.values.push_back(static_cast<double>(token.id));
        table.values.push_back(token.probability);
        table.values.push_back(token.modelProbability);
        if (!m_baseline.empty()) table.values.push_back(m_baseline[r]);
    }
    table.rows = static_cast<int>(m_distribution.size());
    return table;
}

} // namespace attnlab::ui

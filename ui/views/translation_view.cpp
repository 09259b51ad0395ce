#include "ui/views/translation_view.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "ui/state/experiment_data.h"
#include "ui/state/model_document.h"
#include "ui/views/colormap.h"
#include "ui/views/step_controls.h"
#include "ui/views/plot_captions.h"
#include "ui/views/teaching_plot.h"

namespace attnlab::ui {

namespace {

/// Words a second when a new translation plays: slow enough to follow on a projector.
constexpr int kWordsPerSecond = 2;

/// A token as a title quotes it: without the leading space of its display form ("sat", not
/// " sat"); a token that is only space reads ␣.
QString quotedToken(const QString& token) {
    const QString word = token.trimmed();
    return word.isEmpty() ? QStringLiteral("\u2423") : word;
}

bool isTranslationModel(const ModelDocument& models) {
    return models.model() && models.model()->config.kind == model::ModelKind::EncoderDecoder;
}

} // namespace

TranslationView::TranslationView(Document* document, QWidget* parent) : View(document, parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_controls = new StepControls(tr("Write the next word"), true, this);
    m_controls->setSpeed(kWordsPerSecond);
    m_controls->setCountFromOne(true); // "2 / 7" beside the title's "word 2 of 7"
    m_mean = new QCheckBox(tr("Mean of heads"), this);
    m_mean->setToolTip(tr("Draw the mean of the layer's heads instead of the focused head"));
    m_controls->bar()->addWidget(m_mean);
    layout->addWidget(m_controls);
    m_plot = new QCustomPlot(this);
    layout->addWidget(m_plot, 1);

    QCustomPlot& plot = *m_plot;
    plot.plotLayout()->clear();
    m_title = new QCPTextElement(&plot, QString());
    m_sentence = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(0, 0, m_title);
    plot.plotLayout()->addElement(1, 0, m_sentence);
    m_mapRect = makeAxisRect(&plot, tr("source token (key, value)"), tr("word written (query)"));
    setupMatrixAxes(m_mapRect);
    // The newest word's row sits under the map, column under column (one margin group), so
    // it needs no token labels of its own: the map's bottom axis names the columns.
    m_rowRect = makeAxisRect(&plot, QString(), tr("weight"));
    m_rowRect->axis(QCPAxis::atBottom)->setTickLabels(false);
    auto* columns = new QCPMarginGroup(&plot);
    m_mapRect->setMarginGroup(QCP::msLeft | QCP::msRight, columns);
    m_rowRect->setMarginGroup(QCP::msLeft | QCP::msRight, columns);
    plot.plotLayout()->addElement(2, 0, m_rowRect);
    plot.plotLayout()->addElement(3, 0, m_mapRect);
    plot.plotLayout()->setRowStretchFactors({0.01, 0.01, 1.0, 4.0});

    m_map = new QCPColorMap(m_mapRect->axis(QCPAxis::atBottom), m_mapRect->axis(QCPAxis::atLeft));
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);
    m_rowOutline = outlineItem(&plot, m_mapRect);
    m_rowBars = new QCPBars(m_rowRect->axis(QCPAxis::atBottom), m_rowRect->axis(QCPAxis::atLeft));
    m_alignedBar =
        new QCPBars(m_rowRect->axis(QCPAxis::atBottom), m_rowRect->axis(QCPAxis::atLeft));
    for (QCPBars* bars : {m_rowBars, m_alignedBar}) {
        bars->setWidth(0.7);
        bars->setPen(Qt::NoPen);
    }

    setToolTip(tr("Cross-attention while the model translates: each word the decoder writes "
                  "is a query; the keys and values are the encoder's source tokens. The row "
                  "of the newest word shows which source words it reads."));
    connect(m_controls, &StepControls::stepRequested, this, [this](Index step) { goToStep(step); });
    connect(m_mean, &QCheckBox::toggled, this, [this] { refresh(); });
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        bool changed = false;
        for (QCPAxis* axis : {m_mapRect->axis(QCPAxis::atBottom), m_mapRect->axis(QCPAxis::atLeft)})
            changed = fitTokenLabels(axis) || changed;
        if (changed) m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    // The model document publishes each run to the document (the experiment changes), which
    // refreshes this view; its layer changes without an experiment change.
    ModelDocument* models = ModelDocument::of(document);
    connect(models, &ModelDocument::layerChanged, this, [this] { markStale(); });
    connect(models, &ModelDocument::runChanged, this, [this] { markStale(); });
    // A text the model refuses (too long) brings no run, only the refusal: the title says why.
    connect(models, &ModelDocument::errorOccurred, this, [this] { markStale(); });
}

QString TranslationView::notApplicable() const {
    if (QString why = imageClassifierRefusal(document()); !why.isEmpty()) return why;
    // Without a model the view says how to open one; another kind of model cannot translate.
    const ModelDocument* models = ModelDocument::of(document());
    if (models->model() && !isTranslationModel(*models))
        return tr("The translation view needs a translation model (an encoder-decoder such as "
                  "File > Examples > tiny-marian-en-zh).");
    return {};
}

bool TranslationView::meanOfHeads() const {
    return m_mean->isChecked();
}

void TranslationView::setMeanOfHeads(bool mean) {
    m_mean->setChecked(mean);
}

Index TranslationView::rowCount() const {
    return static_cast<Index>(m_rowLabels.size());
}

Index TranslationView::currentStep() const {
    const Index rows = rowCount();
    if (rows == 0) return 0;
    return m_step < 0 ? rows - 1 : std::min(m_step, rows - 1);
}

void TranslationView::goToStep(Index step) {
    const Index rows = rowCount();
    m_step = rows == 0 ? -1 : std::clamp<Index>(step, 0, rows - 1);
    if (m_step == rows - 1) m_step = -1; // at the end: stay at the end of a longer sentence
    refresh();
}

MatrixD TranslationView::weightsOf(const model::ModelRun& run) const {
    const ModelDocument* models = ModelDocument::of(document());
    const model::Model& net = *models->model();
    const model::AttentionShape cross =
        model::attentionShape(net, run, model::AttentionOf::Cross);
    const Index layer = std::clamp<Index>(models->layer(), 0, cross.layers - 1);
    const Index heads = cross.heads;
    auto map = [&](Index head) {
        return model::attentionMap(net, run, layer, head, model::AttentionOf::Cross)
            .cast<double>();
    };
    MatrixD out = MatrixD::Zero(cross.queries, cross.keys);
    if (meanOfHeads()) {
        for (Index h = 0; h < heads; ++h)
            out += map(h);
        out /= static_cast<double>(heads);
    } else {
        out = map(std::clamp<Index>(document()->session().viewState.head, 0, heads - 1));
    }
    return out;
}

void TranslationView::refresh() {
    const Theme look = theme();
    const ModelDocument* models = ModelDocument::of(document());
    const std::shared_ptr<const model::ModelRun> run = models->sharedRun();
    const bool translates = isTranslationModel(*models);
    // Nothing to translate (a source of only </s>), or more tokens than the model reads (the
    // run is refused, so the first run never comes): the tab says so instead of a figure.
    const bool empty = translates && models->text().trimmed().isEmpty();
    const auto tokens = static_cast<Index>(models->ids().size());
    const bool tooLong = translates && tokens > models->model()->config.maxPositions;
    const bool applies = translates && !empty && !tooLong && run && !run->crossQ.empty();
    m_mapRect->setVisible(applies);
    m_rowRect->setVisible(applies);

    if (applies && run != m_drawnRun.lock()) {
        // A new translation of a text typed while the view is on screen is written again
        // from its first word; the first one shown, figures and a view off screen show the
        // whole sentence.
        const bool typed = m_drawnOnce;
        m_drawnRun = run;
        m_drawnOnce = true;
        m_step = -1;
        if (typed && isVisible() && figureStyle().fontPoints == 0 &&
            figureStyle().caption.isEmpty()) {
            m_step = 0;
            QMetaObject::invokeMethod(m_controls, &StepControls::play, Qt::QueuedConnection);
        }
    }

    MatrixD all = applies ? weightsOf(*run) : MatrixD(0, 0);
    const std::vector<std::string> written = applies ? models->writtenTokenLabels()
                                                     : std::vector<std::string>();
    m_rowLabels = displayTokens(written);
    m_columnLabels = applies ? displayTokens(models->tokenLabels()) : QStringList();
    // The written words label the rows when the decoder ran on its own output; a run of typed
    // target ids keeps its input tokens.
    if (m_rowLabels.size() != all.rows()) m_rowLabels = QStringList();
    while (m_rowLabels.size() < all.rows())
        m_rowLabels << QString::number(m_rowLabels.size());
    if (m_columnLabels.size() != all.cols()) {
        m_columnLabels.clear();
        for (Index j = 0; j < all.cols(); ++j)
            m_columnLabels << QString::number(j);
    }
    const Index rows = all.rows();
    const Index cols = all.cols();
    const Index step = currentStep();
    m_controls->setPosition(step, rows - 1);

    // Rows still to write are blank.
    m_shown = all;
    BoolMatrix hidden(rows, cols);
    hidden.setConstant(false);
    for (Index i = step + 1; i < rows; ++i) {
        hidden.row(i).setConstant(true);
        m_shown.row(i).setConstant(std::numeric_limits<double>::quiet_NaN());
    }
    const QString colormap = QString::fromStdString(document()->session().viewState.colormap);
    fillColorMap(m_map, all, &hidden);
    m_map->setGradient(makeGradient(colormap, maskedColor(look, colormap)));
    m_map->setDataRange(QCPRange(0, 1));
    QCPAxis* sourceAxis = m_mapRect->axis(QCPAxis::atBottom);
    QCPAxis* writtenAxis = m_mapRect->axis(QCPAxis::atLeft);
    setTokenLabels(sourceAxis, m_columnLabels);
    sourceAxis->setTickLabelRotation(cols > 12 ? -45 : 0);
    setTokenLabels(writtenAxis, m_rowLabels);
    sourceAxis->setRange(-0.5, std::max<Index>(1, cols) - 0.5);
    writtenAxis->setRange(-0.5, std::max<Index>(1, rows) - 0.5);
    m_rowOutline->setVisible(rows > 0);
    m_rowOutline->topLeft->setCoords(-0.5, step - 0.5);
    m_rowOutline->bottomRight->setCoords(cols - 0.5, step + 0.5);
    m_rowOutline->setPen(QPen(look.accent, 3 * look.lineWidth));

    // The newest word's row as bars, its strongest source token in the accent colour.
    QVector<double> keys, values, alignedKey, alignedValue;
    m_aligned = -1;
    if (rows > 0) {
        Index best = 0;
        for (Index j = 0; j < cols; ++j) {
            keys << static_cast<double>(j);
            values << all(step, j);
            if (all(step, j) > all(step, best)) best = j;
        }
        if (cols > 0) {
            m_aligned = best;
            alignedKey << static_cast<double>(best);
            alignedValue << all(step, best);
        }
    }
    m_rowBars->setData(keys, values, true);
    m_alignedBar->setData(alignedKey, alignedValue, true);
    QColor faded = look.foreground;
    faded.setAlphaF(0.35);
    m_rowBars->setBrush(faded);
    m_alignedBar->setBrush(look.accent);
    QCPAxis* rowAxis = m_rowRect->axis(QCPAxis::atBottom);
    setTokenLabels(rowAxis, m_columnLabels);
    rowAxis->setSubTicks(false);
    rowAxis->setRange(-0.5, std::max<Index>(1, cols) - 0.5);
    m_rowRect->axis(QCPAxis::atLeft)->setRange(0, 1.05);
    auto weightTicker = QSharedPointer<QCPAxisTickerFixed>::create();
    weightTicker->setTickStep(0.5);
    m_rowRect->axis(QCPAxis::atLeft)->setTicker(weightTicker);

    // The sentence so far: source, arrow, the words written, the newest one in brackets.
    QString sentence;
    if (applies) {
        QStringList words;
        for (Index i = 0; i <= step && i < rows; ++i)
            words << (i == step ? QStringLiteral("[%1]").arg(m_rowLabels[static_cast<int>(i)])
                                : m_rowLabels[static_cast<int>(i)]);
        // A long source is shortened here (the text box holds it whole): the words written are
        // what the line is for, and the figure has no height to spare for a long sentence.
        QString source = models->text().simplified();
        constexpr int kSourceChars = 60;
        if (source.size() > kSourceChars) {
            const int cut = source.lastIndexOf(QLatin1Char(' '), kSourceChars);
            source = source.left(cut > 0 ? cut : kSourceChars) + QStringLiteral(" \u2026");
        }
        sentence = QStringLiteral("%1  \u2192  %2").arg(source, words.join(QLatin1Char(' ')));
        // A long text's translation is cut at the window's limit: said, not left to be seen
        // (on the same line: the figure has no height to spare for a long sentence).
        if (models->translationCutShort())
            sentence += QStringLiteral("  ") +
                        tr("(stopped after %1 tokens: the rest of the text is not translated)")
                            .arg(ModelDocument::translationTokenLimit());
    }
    m_sentence->setText(sentence);
    QFont sentenceFont = m_sentence->font();
    setFontSize(sentenceFont, look, look.fontPointSize * 1.3);
    m_sentence->setFont(sentenceFont);
    m_sentence->setTextColor(look.foreground);

    if (!applies) {
        if (tooLong)
            m_title->setText(tr("Translation: the text is %1 tokens; %2 reads at most %3. "
                                "Shorten it to translate.")
                                 .arg(tokens)
                                 .arg(models->displayName())
                                 .arg(models->model()->config.maxPositions));
        else if (empty)
            m_title->setText(tr("Translation: type a sentence in Text and the model writes "
                                "its translation here, one word at a time."));
        else if (translates)
            m_title->setText(tr("Translation: waiting for the first run"));
        else
            m_title->setText(tr("Open a translation model (File > Examples > "
                                "tiny-marian-en-zh), type English and watch it write Chinese "
                                "word by word."));
    } else {
        const Index layer = std::clamp<Index>(models->layer(), 0,
                                              static_cast<Index>(run->crossQ.size()) - 1);
        const QString who =
            meanOfHeads()
                ? tr("decoder layer %1, mean of heads").arg(layer)
                : tr("decoder layer %1, head %2")
                      .arg(layer)
                      .arg(std::clamp<Index>(document()->session().viewState.head, 0,
                                             run->crossQ.front().heads() - 1));
        const QString reads =
            m_aligned >= 0
                ? tr("“%1” reads “%2” (%3)")
                      .arg(quotedToken(m_rowLabels[static_cast<int>(step)]),
                           quotedToken(m_columnLabels[static_cast<int>(m_aligned)]))
                      .arg(all(step, m_aligned), 0, 'f', 2)
                : QString();
        // How sure the model was of the word (its own probability, as the command line's
        // `attnlab model --translate` prints it).
        const std::vector<double>& sure = models->writtenProbabilities();
        const QString probability =
            step < static_cast<Index>(sure.size()) && static_cast<Index>(sure.size()) == rows
                ? QStringLiteral(", ") +
                      tr("its probability %1 %")
                          .arg(100.0 * sure[static_cast<std::size_t>(step)], 0, 'f', 1)
                : QString();
        m_title->setText(tr("Cross-attention, %1: word %2 of %3, %4")
                             .arg(who)
                             .arg(step + 1)
                             .arg(rows)
                             .arg(reads) +
                         probability);
    }
    stylePlot(*m_plot, look);
    m_sentence->setTextColor(look.foreground);
    wrapToFigureWidth(figureStyle().wrapWidth, {m_title, m_sentence});
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void TranslationView::paintFigure(QCPPainter& painter, const QSize& size) {
    m_plot->toPainter(&painter, size.width(), size.height());
}

DataTable TranslationView::data() const {
    DataTable table;
    if (rowCount() == 0) {
        table.unavailable = notApplicable().isEmpty()
                                ? tr("Translation: waiting for the first run")
                                : notApplicable();
        return table;
    }
    // The rows written so far: one per word, one column per source token.
    const Index rows = currentStep() + 1;
    table = DataTable::fromMatrix(m_shown.topRows(rows), m_rowLabels.mid(0, static_cast<int>(rows)),
                                  m_columnLabels);
    table.rowHeader = QStringLiteral("written");
    table.extra.insert(QStringLiteral("attention"), QStringLiteral("cross"));
    table.extra.insert(QStringLiteral("mean_of_heads"), meanOfHeads());
    return table;
}

} // namespace attnlab::ui

#include "ui/views/fill_mask_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "attnlab/model/sampling.h"
#include "ui/state/experiment_data.h"
#include "ui/state/model_document.h"
#include "ui/views/plot_captions.h"
#include "ui/views/teaching_plot.h"

namespace attnlab::ui {

namespace {

/// A model whose runs can fill a mask: an encoder with its masked-LM head.
bool fillsMasks(const model::Model& net) {
    return net.config.kind == model::ModelKind::Encoder && !net.lmHead.empty();
}

/// The tokenizer's mask token id ([MASK] in BERT's vocabularies, <mask> in RoBERTa's).
std::optional<std::int64_t> maskIdOf(const model::Tokenizer& tokenizer) {
    for (const char* name : {"[MASK]", "<mask>"})
        if (auto id = tokenizer.tokenToId(name)) return id;
    return std::nullopt;
}

QString percentText(double p) {
    return QStringLiteral("%1 %").arg(100 * p, 0, 'f', p >= 0.1 ? 0 : 1);
}

} // namespace

FillMaskView::FillMaskView(Document* document, QWidget* parent) : View(document, parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 2, 4, 2);
    m_maskBox = new QComboBox(this);
    m_maskBox->setToolTip(tr("Which [MASK] of the text to fill, when it has several"));
    auto* label = new QLabel(tr("Mask"), this);
    label->setBuddy(m_maskBox);
    bar->addWidget(label);
    bar->addWidget(m_maskBox);
    bar->addStretch(1);
    layout->addLayout(bar);
    m_plot = new QCustomPlot(this);
    layout->addWidget(m_plot, 1);

    QCustomPlot& plot = *m_plot;
    plot.plotLayout()->clear();
    m_title = new QCPTextElement(&plot, QString());
    m_sentence = new QCPTextElement(&plot, QString());
    plot.plotLayout()->addElement(0, 0, m_title);
    plot.plotLayout()->addElement(1, 0, m_sentence);
    m_fillRect = makeAxisRect(&plot, tr("filler (the masked-LM head's top %1)").arg(kFillers),
                              tr("probability"));
    m_rowRect = makeAxisRect(&plot, tr("token (key)"), tr("mask's weight"));
    plot.plotLayout()->addElement(2, 0, m_fillRect);
    plot.setAutoAddPlottableToLegend(false);

    m_fillBars = new QCPBars(m_fillRect->axis(QCPAxis::atBottom), m_fillRect->axis(QCPAxis::atLeft));
    QCPAxis* rowX = m_rowRect->axis(QCPAxis::atBottom);
    QCPAxis* rowY = m_rowRect->axis(QCPAxis::atLeft);
    m_leftBars = new QCPBars(rowX, rowY);
    m_rightBars = new QCPBars(rowX, rowY);
    m_maskBar = new QCPBars(rowX, rowY);
    for (QCPBars* bars : {m_fillBars, m_leftBars, m_rightBars, m_maskBar}) {
        bars->setWidth(0.7);
        bars->setPen(Qt::NoPen);
    }
    m_leftBars->setName(tr("before the mask"));
    m_rightBars->setName(tr("after the mask"));
    m_maskBar->setName(tr("the mask itself"));
    m_legend = legendAbove(plot.plotLayout(), 3, 0, m_rowRect);
    for (QCPBars* bars : {m_leftBars, m_rightBars, m_maskBar})
        m_legend->addItem(new QCPPlottableLegendItem(m_legend, bars));
    plot.plotLayout()->setRowStretchFactors({0.01, 0.01, 1.0, 1.2});

    setToolTip(tr("An encoder reads the whole sentence at once: the [MASK] position attends to "
                  "the words on both sides (a decoder's causal mask would hide the right "
                  "side), and the masked-LM head turns its last hidden state into a word."));
    connect(m_maskBox, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0) setCurrentMask(index);
    });
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        bool changed = false;
        for (QCPAxis* axis : {m_fillRect->axis(QCPAxis::atBottom),
                              m_rowRect->axis(QCPAxis::atBottom)})
            changed = fitTokenLabels(axis) || changed;
        if (changed) m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    ModelDocument* models = ModelDocument::of(document);
    connect(models, &ModelDocument::layerChanged, this, [this] { markStale(); });
    connect(models, &ModelDocument::runChanged, this, [this] { markStale(); });
    connect(models, &ModelDocument::modelChanged, this, [this] { markStale(); });
}

QString FillMaskView::notApplicable() const {
    if (QString why = imageClassifierRefusal(document()); !why.isEmpty()) return why;
    const ModelDocument* models = ModelDocument::of(document());
    if (models->model() && !fillsMasks(*models->model()))
        return tr("Filling a [MASK] needs an encoder with its masked-LM head (BERT; File > "
                  "Examples > tiny-bert-en).");
    return {};
}

void FillMaskView::setCurrentMask(int index) {
    if (index == m_mask) return;
    m_mask = index;
    refresh();
}

void FillMaskView::refresh() {
    const Theme look = theme();
    const ModelDocument* models = ModelDocument::of(document());
    const model::Model* net = models->model();
    const model::Tokenizer* tokenizer = models->tokenizer();
    const std::shared_ptr<const model::ModelRun> run = models->sharedRun();
    const std::optional<std::int64_t> maskId =
        tokenizer ? maskIdOf(*tokenizer) : std::optional<std::int64_t>();
    const bool applies = net && tokenizer && fillsMasks(*net) && run && maskId &&
                         run->logits.rows() == static_cast<Index>(run->ids.size());

    m_masks.clear();
    if (applies)
        for (std::size_t i = 0; i < run->ids.size(); ++i)
            if (run->ids[i] == *maskId) m_masks.push_back(static_cast<Index>(i));
    m_tokens = applies ? displayTokens(models->tokenLabels()) : QStringList();
    m_mask = std::clamp(m_mask, 0, std::max(0, static_cast<int>(m_masks.size()) - 1));
    {
        const QSignalBlocker blocker(m_maskBox);
        m_maskBox->clear();
        for (Index position : m_masks)
            m_maskBox->addItem(tr("position %1").arg(position));
        m_maskBox->setCurrentIndex(m_masks.empty() ? -1 : m_mask);
        m_maskBox->setEnabled(m_masks.size() > 1);
    }

    // The fillers: the model's own distribution at the mask (temperature 1, no cut).
    m_fillerIds.clear();
    m_fillerProbabilities.clear();
    m_fillerTexts.clear();
    const Index position = m_masks.empty() ? -1 : m_masks[static_cast<std::size_t>(m_mask)];
    if (position >= 0) {
        const auto row = run->logits.row(position);
        const std::vector<model::TokenProbability> best = model::nextTokenDistribution(
            std::span<const float>(row.data(), static_cast<std::size_t>(row.size())),
            {.temperature = 1.0, .topK = kFillers, .topP = 1.0});
        for (const model::TokenProbability& token : best) {
            m_fillerIds.push_back(token.id);
            m_fillerProbabilities.push_back(token.modelProbability);
            m_fillerTexts << QString::fromStdString(tokenizer->displayToken(token.id)).trimmed();
        }
    }
    QVector<double> ranks, probabilities;
    for (std::size_t i = 0; i < m_fillerIds.size(); ++i) {
        ranks << static_cast<double>(i);
        probabilities << m_fillerProbabilities[i];
    }
    m_fillBars->setData(ranks, probabilities, true);
    m_fillBars->setBrush(QColor(0x00, 0x9e, 0x73));
    QCPAxis* fillX = m_fillRect->axis(QCPAxis::atBottom);
    setTokenLabels(fillX, m_fillerTexts);
    fillX->setSubTicks(false);
    fillX->setRange(-0.6, kFillers - 0.4);
    m_fillRect->axis(QCPAxis::atLeft)->setRange(0, 1.05);

    // The mask's row: every token, both sides.
    const Index layer = applies ? std::clamp<Index>(models->layer(), 0,
                                                    static_cast<Index>(run->q.size()) - 1)
                                : 0;
    const Index head = applies ? std::clamp<Index>(document()->session().viewState.head, 0,
                                                   run->q.front().heads() - 1)
                               : 0;
    m_row.clear();
    m_left = m_right = 0;
    QVector<double> leftKeys, leftValues, rightKeys, rightValues, selfKey, selfValue;
    if (position >= 0) {
        const RowVector weights =
            model::attentionRows(*models->model(), *run, layer, head, position, 1);
        for (Index j = 0; j < weights.size(); ++j) {
            const double w = weights(j);
            m_row.push_back(w);
            if (j < position) {
                leftKeys << double(j);
                leftValues << w;
                m_left += w;
            } else if (j > position) {
                rightKeys << double(j);
                rightValues << w;
                m_right += w;
            } else {
                selfKey << double(j);
                selfValue << w;
            }
        }
    }
    m_leftBars->setData(leftKeys, leftValues, true);
    m_rightBars->setData(rightKeys, rightValues, true);
    m_maskBar->setData(selfKey, selfValue, true);
    m_leftBars->setBrush(QColor(0x00, 0x72, 0xb2));
    m_rightBars->setBrush(QColor(0xd5, 0x5e, 0x00));
    QColor self = look.foreground;
    self.setAlphaF(0.4);
    m_maskBar->setBrush(self);
    QCPAxis* rowX = m_rowRect->axis(QCPAxis::atBottom);
    setTokenLabels(rowX, m_tokens);
    rowX->setSubTicks(false);
    rowX->setTickLabelRotation(m_tokens.size() > 12 ? -45 : 0);
    rowX->setRange(-0.6, std::max<qsizetype>(1, m_tokens.size()) - 0.4);
    m_rowRect->axis(QCPAxis::atLeft)->setRange(0, 1.05);
    for (QCPAxisRect* rect : {m_fillRect, m_rowRect}) {
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(0.5);
        rect->axis(QCPAxis::atLeft)->setTicker(ticker);
    }

    // The sentence read back with the best filler in the mask's place.
    QString sentence;
    if (position >= 0 && !m_fillerTexts.isEmpty()) {
        QStringList words = m_tokens;
        words[static_cast<int>(position)] = QStringLiteral("[%1]").arg(m_fillerTexts.front());
        sentence = words.join(QLatin1Char(' '));
    }
    m_sentence->setText(sentence);
    QFont sentenceFont = m_sentence->font();
    setFontSize(sentenceFont, look, look.fontPointSize * 1.3);
    m_sentence->setFont(sentenceFont);

    if (!net) {
        m_title->setText(tr("Open an encoder (File > Examples > tiny-bert-en) and type a "
                            "sentence with [MASK] in it."));
    } else if (!fillsMasks(*net)) {
        m_title->setText(notApplicable());
    } else if (!run || !maskId) {
        m_title->setText(tr("Fill mask: waiting for the first run"));
    } else if (m_masks.empty()) {
        m_title->setText(tr("Type [MASK] in the text where a word should be filled in."));
    } else {
        m_title->setText(tr("[MASK] at position %1 is most likely “%2” (%3); layer %4, head %5 "
                            "reads %6 before it and %7 after it")
                             .arg(position)
                             .arg(m_fillerTexts.value(0), percentText(m_fillerProbabilities[0]))
                             .arg(layer)
                             .arg(head)
                             .arg(percentText(m_left), percentText(m_right)));
    }
    stylePlot(*m_plot, look);
    styleLegend(m_legend, look);
    fitLegendIcons(m_legend);
    m_sentence->setTextColor(look.foreground);
    wrapToFigureWidth(figureStyle().wrapWidth, {m_title, m_sentence});
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void FillMaskView::paintFigure(QCPPainter& painter, const QSize& size) {
    m_plot->toPainter(&painter, size.width(), size.height());
}

DataTable FillMaskView::data() const {
    DataTable table;
    if (m_fillerIds.empty()) {
        table.unavailable = notApplicable().isEmpty()
                                ? tr("Type [MASK] in the text where a word should be filled in.")
                                : notApplicable();
        return table;
    }
    // One row per filler: its id and the model's probability.
    table.rowHeader = QStringLiteral("filler");
    table.columnLabels = {QStringLiteral("id"), QStringLiteral("probability")};
    table.cols = 2;
    for (std::size_t i = 0; i < m_fillerIds.size(); ++i) {
        table.rowLabels << m_fillerTexts[static_cast<int>(i)];
        table.values.push_back(static_cast<double>(m_fillerIds[i]));
        table.values.push_back(m_fillerProbabilities[i]);
    }
    table.rows = static_cast<int>(m_fillerIds.size());
    table.extra.insert(QStringLiteral("mask_position"),
                       static_cast<qlonglong>(m_masks[static_cast<std::size_t>(m_mask)]));
    QVariantList row;
    for (double w : m_row)
        row << w;
    table.extra.insert(QStringLiteral("mask_attention"), row);
    table.extra.insert(QStringLiteral("left_share"), m_left);
    table.extra.insert(QStringLiteral("right_share"), m_right);
    return table;
}

} // namespace attnlab::ui

#include "ui/window/inputs_panel.h"
#include "ui/state/model_document.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStyle>
#include <QVBoxLayout>

#include <cmath>

#include "ui/state/experiment_data.h"
#include "ui/window/dropout_box.h"
#include "ui/window/model_tool_bar.h"

namespace attnlab::ui {

namespace {

constexpr const char* kDefaultSource = "le chat est assis sur le tapis";

/// What the text box holds while a model is shown: its text, or an image classifier's image.
QString modelText(const ModelDocument& models) {
    if (!models.readsImages()) return models.text();
    return models.image() ? models.image()->name : QString();
}

void setTextKeepingCursor(QLineEdit* edit, const QString& text) {
    if (edit->text() == text) return;
    const QSignalBlocker blocker(edit);
    edit->setText(text);
}

template <typename Spin, typename Value> void setSpin(Spin* spin, Value value) {
    if (spin->value() == value) return;
    const QSignalBlocker blocker(spin);
    spin->setValue(value);
}

void setCheck(QCheckBox* box, bool checked) {
    const QSignalBlocker blocker(box);
    box->setChecked(checked);
}

} // namespace

VariantPreset classifySession(const Session& session) {
    if (session.kvPrefill >= 0) return VariantPreset::KvCache;
    if (session.variant == Variant::Flash) return VariantPreset::Flash;
    if (session.variant == Variant::Linear) return VariantPreset::Linear;
    if (session.variant == Variant::Additive) return VariantPreset::Additive;
    if (!session.sourceText.empty()) return VariantPreset::Cross;
    if (session.mask.window >= 0 || session.mask.causalWindow >= 0)
        return VariantPreset::SlidingWindow;
    if (session.heads > 1 && session.kvHeads == 1) return VariantPreset::Mqa;
    if (session.heads > 1 && session.kvHeads < session.heads) return VariantPreset::Gqa;
    if (session.heads > 1) return VariantPreset::MultiHead;
    return VariantPreset::Softmax;
}

void applyPreset(Session& session, VariantPreset preset) {
    auto ensureHeads = [&session](Index heads, Index kvHeads) {
        if (session.dModel % heads != 0) session.dModel = 16;
        session.heads = heads;
        session.kvHeads = kvHeads;
    };
    session.kvPrefill = -1;
    switch (preset) {
    case VariantPreset::Softmax:
        session.variant = Variant::Softmax;
        session.sourceText.clear();
        session.mask.window = -1;
        session.mask.causalWindow = -1;
        ensureHeads(1, 1);
        break;
    case VariantPreset::MultiHead:
        session.variant = Variant::Softmax;
        ensureHeads(4, 4);
        break;
    case VariantPreset::Cross:
        session.variant = Variant::Softmax;
        if (session.sourceText.empty()) session.sourceText = kDefaultSource;
        session.mask.causal = false;
        break;
    case VariantPreset::Gqa:
        session.variant = Variant::Softmax;
        ensureHeads(4, 2);
        break;
    case VariantPreset::Mqa:
        session.variant = Variant::Softmax;
        ensureHeads(4, 1);
        break;
    case VariantPreset::SlidingWindow:
        session.variant = Variant::Softmax;
        if (session.mask.window < 0 && session.mask.causalWindow < 0) session.mask.window = 2;
        break;
    case VariantPreset::Linear:
        session.variant = Variant::Linear;
        break;
    case VariantPreset::Additive:
        session.variant = Variant::Additive;
        break;
    case VariantPreset::Flash:
        session.variant = Variant::Flash;
        break;
    case VariantPreset::KvCache:
        session.variant = Variant::Softmax;
        session.sourceText.clear();
        session.mask.causal = true;
        session.kvPrefill = defaultKvPrefill(session);
        break;
    }
}

InputsPanel::InputsPanel(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    outer->addWidget(scroll);
    auto* content = new QWidget(scroll);
    m_content = content;
    scroll->setWidget(content);
    auto* layout = new QVBoxLayout(content);

    // Tokens
    // While a model dump is shown the inputs below are still the lab session's: say so, and
    // keep the session's problems out of the way (they are not about what is on screen). The
    // note heads the panel above what scrolls: scrolled with the inputs, it could stop with
    // only fragments of its first line in view.
    m_sourceNote = new QLabel(this);
    m_sourceNote->setWordWrap(true);
    m_sourceNote->setStyleSheet(QStringLiteral("QLabel { font-weight: bold; }"));
    const QMargins margins = layout->contentsMargins();
    m_sourceNote->setContentsMargins(margins.left(), margins.top(), margins.right(), 0);
    m_sourceNote->setVisible(false);
    outer->insertWidget(0, m_sourceNote);

    auto* tokens = new QGroupBox(tr("Tokens"), content);
    auto* tokensForm = new QFormLayout(tokens);
    m_text = new QLineEdit(tokens);
    m_text->setToolTip(tr("The text whose tokens attend to each other (the queries)."));
    m_text->setPlaceholderText(tr("type a sentence"));
    tokensForm->addRow(tr("&Text"), m_text);
    m_cross = new QCheckBox(tr("&Cross-attention"), tokens);
    m_cross->setToolTip(tr("Queries from the text, keys and values from a second source text."));
    tokensForm->addRow(m_cross);
    m_source = new QLineEdit(tokens);
    m_source->setToolTip(tr("Source text: the keys and values of cross-attention."));
    tokensForm->addRow(tr("&Source"), m_source);
    m_tokenizer = new QComboBox(tokens);
    // A model's tokenizer is named here while the model is shown: its name must not widen
    // the panel (the tooltip has it whole).
    m_tokenizer->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_tokenizer->setMinimumContentsLength(10);
    tokensForm->addRow(tr("To&kenizer"), m_tokenizer);
    m_chips = new QListWidget(tokens);
    m_chips->setViewMode(QListView::IconMode);
    m_chips->setFlow(QListView::LeftToRight);
    m_chips->setWrapping(true);
    m_chips->setResizeMode(QListView::Adjust);
    m_chips->setMovement(QListView::Static);
    m_chips->setSpacing(3);
    m_chips->setMaximumHeight(72);
    m_chips->setStyleSheet(
        QStringLiteral("QListWidget { background: transparent; border: none; }"
                       "QListWidget::item { border: 1px solid palette(mid); border-radius: 9px;"
                       " padding: 1px 7px; margin: 1px; }"
                       "QListWidget::item:selected { background: palette(highlight);"
                       " color: palette(highlighted-text); border-color: palette(highlight); }"));
    m_chips->setToolTip(tr("The query tokens; click one to select it in every view."));
    tokensForm->addRow(m_chips);
    // What a shown model cannot read: the text's words outside its vocabulary (the chips show
    // them as <unk> or spelt in pieces) and, for a model trained on a small grammar, which.
    m_modelNote = new QLabel(tokens);
    m_modelNote->setWordWrap(true);
    m_modelNote->setTextFormat(Qt::RichText);
    m_modelNote->setVisible(false);
    tokensForm->addRow(m_modelNote);
    layout->addWidget(tokens);

    // Model
    auto* model = new QGroupBox(tr("Model"), content);
    auto* modelForm = new QFormLayout(model);
    m_dModel = new QSpinBox(model);
    m_dModel->setRange(1, 1024);
    m_dModel->setToolTip(tr("Embedding width d_model; heads must divide it."));
    modelForm->addRow(tr("&d_model"), m_dModel);
    m_heads = new QSpinBox(model);
    m_heads->setRange(1, 64);
    m_heads->setToolTip(tr("Number of query heads H."));
    modelForm->addRow(tr("&Heads"), m_heads);
    m_kvHeads = new QSpinBox(model);
    m_kvHeads->setRange(1, 64);
    m_kvHeads->setToolTip(
        tr("Key/value heads: equal to heads is MHA, fewer is GQA, one is MQA. Must divide heads."));
    modelForm->addRow(tr("&KV heads"), m_kvHeads);
    m_positional = new QComboBox(model);
    m_positional->addItem(tr("none"), int(Positional::None));
    m_positional->addItem(tr("sinusoidal"), int(Positional::Sinusoidal));
    m_positional->addItem(tr("RoPE interleaved"), int(Positional::RopeInterleaved));
    m_positional->addItem(tr("RoPE half"), int(Positional::RopeHalf));
    m_positional->setToolTip(tr("Positional encoding added to (sinusoidal) or rotating (RoPE) "
                                "the queries and keys."));
    modelForm->addRow(tr("&Positions"), m_positional);
    m_seed = new QSpinBox(model);
    m_seed->setRange(0, 1'000'000);
    m_seed->setToolTip(tr("Seed of the embeddings and projection matrices."));
    modelForm->addRow(tr("S&eed"), m_seed);
    m_identity = new QCheckBox(tr("&Identity projections"), model);
    m_identity->setToolTip(tr("Q = K = V = X: skip the learned projections, as the tutorials do."));
    modelForm->addRow(m_identity);
    layout->addWidget(model);

    // Scale
    auto* scale = new QGroupBox(tr("Scale"), content);
    auto* scaleLayout = new QVBoxLayout(scale);
    m_scale = new QSlider(Qt::Horizontal, scale);
    m_scale->setRange(-30, 30);
    m_scale->setTickPosition(QSlider::TicksBelow);
    m_scale->setTickInterval(10);
    m_scale->setToolTip(tr("Multiplies the logits; the centre tick is the default 1/\u221ad. "
                           "Each tick doubles or halves it."));
    scaleLayout->addWidget(m_scale);
    auto* ticks = new QHBoxLayout;
    ticks->addWidget(new QLabel(tr("\u215b\u00d7"), scale));
    ticks->addStretch();
    auto* centre = new QLabel(tr("1/\u221ad"), scale);
    centre->setToolTip(tr("The default scale of scaled dot-product attention."));
    ticks->addWidget(centre);
    ticks->addStretch();
    ticks->addWidget(new QLabel(tr("8\u00d7"), scale));
    scaleLayout->addLayout(ticks);
    m_scaleLabel = new QLabel(scale);
    scaleLayout->addWidget(m_scaleLabel);
    auto* temperatureRow = new QHBoxLayout;
    auto* temperatureLabel = new QLabel(tr("&Temperature"), scale);
    temperatureRow->addWidget(temperatureLabel);
    m_temperature = new QDoubleSpinBox(scale);
    temperatureLabel->setBuddy(m_temperature);
    m_temperature->setRange(0.01, 100);
    m_temperature->setDecimals(2);
    m_temperature->setSingleStep(0.1);
    m_temperature->setToolTip(tr("The logits are divided by it: high is flatter, low is sharper."));
    temperatureRow->addWidget(m_temperature);
    scaleLayout->addLayout(temperatureRow);
    layout->addWidget(scale);

    // Variant
    auto* variant = new QGroupBox(tr("Variant"), content);
    auto* variantLayout = new QVBoxLayout(variant);
    m_variant = new QComboBox(variant);
    m_variant->addItem(tr("softmax (single head)"), int(VariantPreset::Softmax));
    m_variant->addItem(tr("multi-head"), int(VariantPreset::MultiHead));
    m_variant->addItem(tr("cross-attention"), int(VariantPreset::Cross));
    m_variant->addItem(tr("grouped-query (GQA)"), int(VariantPreset::Gqa));
    m_variant->addItem(tr("multi-query (MQA)"), int(VariantPreset::Mqa));
    m_variant->addItem(tr("sliding window"), int(VariantPreset::SlidingWindow));
    m_variant->addItem(tr("linear"), int(VariantPreset::Linear));
    m_variant->addItem(tr("additive"), int(VariantPreset::Additive));
    m_variant->addItem(tr("flash (tiled)"), int(VariantPreset::Flash));
    m_variant->addItem(tr("KV cache decoding"), int(VariantPreset::KvCache));
    m_variant->setToolTip(tr("The attention variant; picking one sets the settings it needs."));
    variantLayout->addWidget(m_variant);
    layout->addWidget(variant);
    layout->addWidget(new DropoutBox(m_document, content)); // train/eval, rate, seed

    // Masks
    auto* masks = new QGroupBox(tr("Masks (combined)"), content);
    auto* maskForm = new QFormLayout(masks);
    m_causal = new QCheckBox(tr("C&ausal"), masks);
    m_causal->setToolTip(tr("A query sees only itself and earlier keys."));
    maskForm->addRow(m_causal);
    m_padding = new QCheckBox(tr("Pa&dding, length"), masks);
    m_padding->setToolTip(tr("Keys at or after the valid length are padding and masked."));
    m_validLen = new QSpinBox(masks);
    m_validLen->setRange(0, int(Session::kMaxTokens));
    m_validLen->setToolTip(tr("Number of real (non-padding) keys."));
    maskForm->addRow(m_padding, m_validLen);
    m_window = new QCheckBox(tr("&Window, W"), masks);
    m_window->setToolTip(tr("A query sees keys within W positions on either side."));
    m_windowSize = new QSpinBox(masks);
    m_windowSize->setRange(-99, int(Session::kMaxTokens));
    m_windowSize->setToolTip(tr("Window half-width W (0 or more)."));
    maskForm->addRow(m_window, m_windowSize);
    m_causalWindow = new QCheckBox(tr("Causal wi&ndow, W"), masks);
    m_causalWindow->setToolTip(tr("A query sees itself and the W keys before it."));
    m_causalWindowSize = new QSpinBox(masks);
    m_causalWindowSize->setRange(-99, int(Session::kMaxTokens));
    m_causalWindowSize->setToolTip(
        tr("How many earlier keys the causal window keeps (0 or more)."));
    maskForm->addRow(m_causalWindow, m_causalWindowSize);
    m_custom = new QCheckBox(tr("C&ustom mask"), masks);
    m_custom->setToolTip(tr("A hand-made mask: show the mask in the heatmap and click cells to "
                            "toggle them."));
    maskForm->addRow(m_custom);
    layout->addWidget(masks);

    m_problemLabel = new QLabel(content);
    m_problemLabel->setWordWrap(true);
    m_problemLabel->setStyleSheet(QStringLiteral("QLabel { color: #c62828; font-weight: bold; }"));
    m_problemLabel->setToolTip(tr("What is wrong with the settings; the last good result stays "
                                  "on screen until it is fixed."));
    layout->addWidget(m_problemLabel);
    layout->addStretch();

    // Edits -> document
    Document* doc = m_document;
    connect(m_text, &QLineEdit::textEdited, this, [doc](const QString& text) {
        // While a real model is shown, the text runs the model (model_document.h).
        if (ModelDocument* models = ModelDocument::of(doc); models->active())
            return models->editText(text);
        doc->modify([&](Session& s) { s.text = text.toStdString(); }, tr("Edit text"),
                    EditMerge::Text);
    });
    connect(m_source, &QLineEdit::textEdited, this, [doc](const QString& text) {
        doc->modify([&](Session& s) { s.sourceText = text.toStdString(); }, tr("Edit source"),
                    EditMerge::Source);
    });
    connect(m_cross, &QCheckBox::toggled, this, [doc, this](bool on) {
        doc->modify(
            [&](Session& s) {
                s.sourceText = on ? (m_source->text().isEmpty() ? std::string(kDefaultSource)
                                                                : m_source->text().toStdString())
                                  : std::string();
                if (on) s.kvPrefill = -1;
            },
            on ? tr("Cross-attention on") : tr("Cross-attention off"));
    });
    connect(m_tokenizer, &QComboBox::activated, this, [doc, this](int) {
        const auto tokenizer = static_cast<Tokenizer>(m_tokenizer->currentData().toInt());
        doc->modify([&](Session& s) { s.tokenizer = tokenizer; }, tr("Change tokenizer"));
    });
    connect(m_chips, &QListWidget::itemClicked, this, [doc, this](QListWidgetItem* item) {
        const Index row = m_chips->row(item);
        doc->setSelectedQuery(doc->session().viewState.query == row ? -1 : row);
    });
    auto spinEdit = [doc](QSpinBox* spin, Index Session::*field, const QString& what,
                          EditMerge key) {
        connect(spin, &QSpinBox::valueChanged, spin, [doc, field, what, key](int value) {
            doc->modify([&](Session& s) { s.*field = value; }, what, key);
        });
    };
    spinEdit(m_dModel, &Session::dModel, tr("Change d_model"), EditMerge::DModel);
    spinEdit(m_heads, &Session::heads, tr("Change heads"), EditMerge::Heads);
    spinEdit(m_kvHeads, &Session::kvHeads, tr("Change KV heads"), EditMerge::KvHeads);
    connect(m_seed, &QSpinBox::valueChanged, this, [doc](int value) {
        doc->modify([&](Session& s) { s.seed = static_cast<std::uint64_t>(value); },
                    tr("Change seed"), EditMerge::Seed);
    });
    connect(m_positional, &QComboBox::activated, this, [doc, this](int) {
        const auto positional = static_cast<Positional>(m_positional->currentData().toInt());
        doc->modify([&](Session& s) { s.positional = positional; }, tr("Change positions"));
    });
    connect(m_identity, &QCheckBox::toggled, this, [doc](bool on) {
        doc->modify([&](Session& s) { s.identityProjections = on; }, tr("Identity projections"));
    });
    connect(m_scale, &QSlider::valueChanged, this, &InputsPanel::editScale);
    connect(m_temperature, &QDoubleSpinBox::valueChanged, this, [doc](double value) {
        doc->modify([&](Session& s) { s.temperature = value; }, tr("Change temperature"),
                    EditMerge::Temperature);
    });
    connect(m_variant, &QComboBox::activated, this, [doc, this](int) {
        const auto preset = static_cast<VariantPreset>(m_variant->currentData().toInt());
        doc->modify([&](Session& s) { applyPreset(s, preset); },
                    tr("Variant: %1").arg(m_variant->currentText()));
    });
    for (QCheckBox* box : {m_causal, m_padding, m_window, m_causalWindow, m_custom})
        connect(box, &QCheckBox::toggled, this, &InputsPanel::editMask);
    for (QSpinBox* spin : {m_validLen, m_windowSize, m_causalWindowSize})
        connect(spin, &QSpinBox::valueChanged, this, &InputsPanel::editMask);

    // Document -> widgets
    connect(doc, &Document::changed, this, [this](Document::What what) {
        if (what == Document::What::Session) updateFromSession();
        if (what == Document::What::Problems || what == Document::What::Experiment)
            updateProblems();
        if (what == Document::What::Experiment) {
            updateTokenizer(); // a model shown or left
            showShownText();
        }
        if (what == Document::What::Selection) updateChips();
    });
    // A real model: the text box shows its text, the chips its tokens.
    ModelDocument* models = ModelDocument::of(doc);
    connect(models, &ModelDocument::textChanged, this, [this, models] {
        if (models->active()) setTextKeepingCursor(m_text, modelText(*models));
    });
    connect(models, &ModelDocument::runChanged, this, [this, models] {
        if (models->active()) setTextKeepingCursor(m_text, modelText(*models));
        updateTokenizer();
        updateChips();
        updateProblems();
    });
    // A click on a check box (or on the panel around it) leaves the keyboard where it was, in
    // the text box: a space typed next goes into the text and does not toggle the box. Tab
    // still reaches every box.
    for (QCheckBox* box : content->findChildren<QCheckBox*>())
        box->setFocusPolicy(Qt::TabFocus);
    scroll->setFocusPolicy(Qt::TabFocus);
    updateFromSession();
    updateProblems();
    fitWidth();
}

void InputsPanel::showShownText() {
    // The box holds the text of what the views show: the model's own text while it is shown,
    // the lab's while the lab is (each keeps its own text across the switches).
    if (ModelDocument* models = ModelDocument::of(m_document); models->active())
        setTextKeepingCursor(m_text, modelText(*models));
    else if (!m_document->hasExternalExperiment())
        setTextKeepingCursor(m_text, QString::fromStdString(m_document->session().text));
}

void InputsPanel::updateModelNote() {
    const ModelDocument* models = ModelDocument::of(m_document);
    QStringList parts;
    if (models->active() && models->tokenizer()) {
        // Tokenizing the text's words is the note's cost, and the panel is updated several times
        // a keystroke: they are looked up again only when the model or its text has changed.
        const QString key = QString::number(reinterpret_cast<quintptr>(models->tokenizer())) +
                            QLatin1Char('\n') + models->directory() + QLatin1Char('\n') +
                            models->text();
        if (key != m_outsideKey) {
            m_outside = wordsOutsideVocabulary(*models);
            m_outsideKey = key;
        }
        if (!m_outside.empty()) {
            QStringList words;
            for (const OutsideWord& word : m_outside)
                words << (word.unknown
                              ? tr("\u201c%1\u201d (unknown token)").arg(word.word)
                              : tr("\u201c%1\u201d (spelt %2)")
                                    .arg(word.word, word.pieces.join(QStringLiteral(" \u00b7 "))))
                             .toHtmlEscaped();
            parts << tr("<b>Not in the model's vocabulary:</b> %1. It never saw these words, so "
                        "what it does with them is a guess.")
                         .arg(words.join(tr(", ", "between the items of a list")));
        }
        const QString grammar = grammarNote(*models);
        if (!grammar.isEmpty()) parts << grammar;
    }
    m_modelNote->setText(parts.join(QStringLiteral("<br>")));
    m_modelNote->setVisible(!parts.isEmpty());
}

void InputsPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) fitWidth();
}

void InputsPanel::fitWidth() {
    if (!m_content) return;
    const int scrollBar = style()->pixelMetric(QStyle::PM_ScrollBarExtent);
    setMinimumWidth(m_content->minimumSizeHint().width() + scrollBar + 8);
}

double InputsPanel::sliderFactor(int position) {
    return std::pow(2.0, position / 10.0);
}

void InputsPanel::editScale(int position) {
    const Session& session = m_document->session();
    const Index headDim = std::max<Index>(1, session.dModel / std::max<Index>(1, session.heads));
    const double base = 1.0 / std::sqrt(static_cast<double>(headDim));
    std::optional<double> scale;
    if (position != 0) scale = base * sliderFactor(position);
    m_document->modify([&](Session& s) { s.scale = scale; }, tr("Change scale"), EditMerge::Scale);
}

void InputsPanel::editMask() {
    const bool windowBad = m_window->isChecked() && m_windowSize->value() < 0;
    const bool causalWindowBad = m_causalWindow->isChecked() && m_causalWindowSize->value() < 0;
    if (windowBad || causalWindowBad) {
        m_document->reportInputError(
            tr("The window W must be 0 or more (it is %1).")
                .arg(windowBad ? m_windowSize->value() : m_causalWindowSize->value()));
        return;
    }
    const QObject* origin = sender();
    EditMerge key = EditMerge::None;
    if (origin == m_validLen) key = EditMerge::ValidLen;
    if (origin == m_windowSize) key = EditMerge::Window;
    if (origin == m_causalWindowSize) key = EditMerge::CausalWindow;
    m_document->modify(
        [this](Session& s) {
            s.mask.causal = m_causal->isChecked();
            s.mask.validLen.clear();
            if (m_padding->isChecked()) s.mask.validLen.push_back(m_validLen->value());
            s.mask.window = m_window->isChecked() ? m_windowSize->value() : -1;
            s.mask.causalWindow = m_causalWindow->isChecked() ? m_causalWindowSize->value() : -1;
            if (!m_custom->isChecked()) {
                s.mask.custom.reset();
            } else if (!s.mask.custom) {
                const SequenceLengths lengths = sequenceLengths(s);
                s.mask.custom = BoolMatrix::Constant(lengths.queries, lengths.keys, true);
                s.viewState.show = "mask";
            }
        },
        tr("Change mask"), key);
}

void InputsPanel::updateFromSession() {
    const Session& s = m_document->session();
    setTextKeepingCursor(m_text, QString::fromStdString(s.text));
    setCheck(m_cross, !s.sourceText.empty());
    if (!s.sourceText.empty()) setTextKeepingCursor(m_source, QString::fromStdString(s.sourceText));
    m_source->setEnabled(!s.sourceText.empty());
    updateTokenizer();
    setSpin(m_dModel, static_cast<int>(s.dModel));
    setSpin(m_heads, static_cast<int>(s.heads));
    setSpin(m_kvHeads, static_cast<int>(s.kvHeads));
    setSpin(m_seed, static_cast<int>(s.seed));
    {
        const QSignalBlocker blocker(m_positional);
        m_positional->setCurrentIndex(m_positional->findData(int(s.positional)));
    }
    setCheck(m_identity, s.identityProjections);
    const Index headDim = std::max<Index>(1, s.dModel / std::max<Index>(1, s.heads));
    const double base = 1.0 / std::sqrt(static_cast<double>(headDim));
    const double used = s.scale.value_or(base);
    setSpin(m_scale, static_cast<int>(std::lround(10.0 * std::log2(std::max(used, 1e-9) / base))));
    m_scaleLabel->setText(
        tr("scale %1 (1/\u221a%2 = %3)").arg(used, 0, 'g', 4).arg(headDim).arg(base, 0, 'g', 4));
    setSpin(m_temperature, s.temperature);
    {
        const QSignalBlocker blocker(m_variant);
        m_variant->setCurrentIndex(m_variant->findData(int(classifySession(s))));
    }
    setCheck(m_causal, s.mask.causal);
    setCheck(m_padding, !s.mask.validLen.empty());
    if (!s.mask.validLen.empty())
        setSpin(m_validLen, static_cast<int>(s.mask.validLen.front()));
    else
        setSpin(m_validLen, static_cast<int>(sequenceLengths(s).queries));
    m_validLen->setEnabled(!s.mask.validLen.empty());
    setCheck(m_window, s.mask.window >= 0);
    if (s.mask.window >= 0) setSpin(m_windowSize, static_cast<int>(s.mask.window));
    m_windowSize->setEnabled(s.mask.window >= 0);
    setCheck(m_causalWindow, s.mask.causalWindow >= 0);
    if (s.mask.causalWindow >= 0)
        setSpin(m_causalWindowSize, static_cast<int>(s.mask.causalWindow));
    m_causalWindowSize->setEnabled(s.mask.causalWindow >= 0);
    setCheck(m_custom, s.mask.custom.has_value());
    updateChips();
}

void InputsPanel::updateTokenizer() {
    const Session& s = m_document->session();
    const ModelDocument* models = ModelDocument::of(m_document);
    const QSignalBlocker blocker(m_tokenizer);
    m_tokenizer->clear();
    const bool model = models->active() && models->tokenizer();
    if (model) {
        const QString kind = QString::fromStdString(models->tokenizer()->kind());
        m_tokenizer->addItem(tr("%1 (the model's)").arg(kind));
        m_tokenizer->setToolTip(
            tr("The model %1 splits the text with its own %2 tokenizer (%3). Whitespace and "
               "character splitting are the lab's, for its random projections.")
                .arg(models->displayName(), kind,
                     QFileInfo(QString::fromStdString(models->tokenizer()->source())).fileName()));
    } else {
        m_tokenizer->addItem(tr("whitespace"), int(Tokenizer::Whitespace));
        m_tokenizer->addItem(tr("character"), int(Tokenizer::Character));
        m_tokenizer->setCurrentIndex(m_tokenizer->findData(int(s.tokenizer)));
        m_tokenizer->setToolTip(tr("How the text is split into tokens."));
    }
    m_tokenizer->setEnabled(!model);
    // An image classifier reads its image: the box names it and takes no typing.
    const bool image = models->active() && models->readsImages();
    if (image) {
        m_tokenizer->clear();
        m_tokenizer->addItem(tr("image patches (the model's)"));
        m_tokenizer->setToolTip(tr("%1 cuts its image into patches; each patch is a token, after "
                                   "the class token [CLS].")
                                    .arg(models->displayName()));
        m_tokenizer->setEnabled(false);
    }
    m_text->setReadOnly(image);
    m_text->setPlaceholderText(image ? tr("open an image: File > Open Image (Ctrl+I)")
                                     : tr("type a sentence"));
}

void InputsPanel::updateChips() {
    const Session& s = m_document->session();
    const ModelDocument* models = ModelDocument::of(m_document);
    const QStringList tokens =
        displayTokens(models->active() ? models->tokenLabels() : tokenize(s.text, s.tokenizer));
    const QSignalBlocker blocker(m_chips);
    constexpr int kMaxChips = 256;
    bool same = m_chips->count() == std::min<int>(tokens.size(), kMaxChips);
    for (int i = 0; same && i < m_chips->count(); ++i)
        same = m_chips->item(i)->text() == tokens[i];
    if (!same) {
        m_chips->clear();
        for (int i = 0; i < std::min<int>(tokens.size(), kMaxChips); ++i) {
            auto* item = new QListWidgetItem(tokens[i], m_chips);
            item->setToolTip(tr("query %1: \u201c%2\u201d").arg(i).arg(tokens[i]));
            item->setTextAlignment(Qt::AlignCenter);
        }
    }
    const Index selected = s.viewState.query;
    m_chips->clearSelection();
    if (selected >= 0 && selected < m_chips->count()) {
        m_chips->item(static_cast<int>(selected))->setSelected(true);
        m_chips->scrollToItem(m_chips->item(static_cast<int>(selected)));
    }
}

void InputsPanel::updateProblems() {
    const bool external = m_document->hasExternalExperiment() && m_document->experiment();
    ModelDocument* models = ModelDocument::of(m_document);
    if (external && models->active() && !models->translation().isEmpty()) {
        // The translation ends with its own full stop ("。", "."): none is added after it.
        QString note = tr("Showing the model %1. The text is translated as <b>%2</b>")
                           .arg(describeSource(m_document->experiment()->source),
                                models->translation().toHtmlEscaped());
        if (models->translationCutShort())
            note += QStringLiteral("<br><span style=\"color:#c62828\">%1</span>")
                        .arg(tr("The translation stopped after %1 tokens, the most written "
                                "here: the end of the text is not translated. Shorten the text "
                                "to translate all of it.")
                                 .arg(ModelDocument::translationTokenLimit()));
        // Each word written and how sure the model was of it (its own probability).
        const std::vector<std::string> written = models->writtenTokenLabels();
        const std::vector<double>& sure = models->writtenProbabilities();
        if (!written.empty() && written.size() == sure.size()) {
            QStringList words;
            for (std::size_t i = 0; i < written.size(); ++i)
                words << tr("%1 %2 %")
                             .arg(QString::fromStdString(written[i]).trimmed())
                             .arg(100.0 * sure[i], 0, 'f', 1)
                             .toHtmlEscaped();
            note += QStringLiteral("<br>") +
                    tr("How sure the model was of each word it wrote: %1")
                        .arg(words.join(tr(", ", "between the items of a list")));
        }
        note += QStringLiteral("<br>") +
                tr("Each row of the cross-attention is the step that wrote that word, reading "
                   "the source words (keys and values).");
        m_sourceNote->setText(note);
    } else if (external && models->active() && models->readsImages())
        m_sourceNote->setText(
            tr("Showing the model %1. The image runs the model (File > Open Image, Ctrl+I); its "
               "tokens are [CLS] and the patches, row by row. The other inputs are the lab "
               "session's: editing one goes back to it.")
                .arg(describeSource(m_document->experiment()->source)));
    else if (external && models->active())
        m_sourceNote->setText(
            tr("Showing the model %1. The text runs the model; the other inputs are the lab "
               "session's: editing one goes back to it.")
                .arg(describeSource(m_document->experiment()->source)));
    else if (external)
        m_sourceNote->setText(
            tr("Showing %1. The inputs below are the lab session's: editing one goes back to it.")
                .arg(describeSource(m_document->experiment()->source)));
    m_sourceNote->setVisible(external);
    updateModelNote();
    const QStringList& problems = m_document->problems();
    m_problemLabel->setText(problems.join(QLatin1Char('\n')));
    m_problemLabel->setVisible(!external && !problems.isEmpty());
}

} // namespace attnlab::ui

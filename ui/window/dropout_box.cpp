#include "ui/window/dropout_box.h"

#include <QButtonGroup>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QRadioButton>
#include <QSignalBlocker>
#include <QSpinBox>

namespace attnlab::ui {

DropoutBox::DropoutBox(Document* document, QWidget* parent)
    : QGroupBox(tr("Dropout"), parent), m_document(document) {
    auto* form = new QFormLayout(this);
    auto* modeRow = new QHBoxLayout;
    m_eval = new QRadioButton(tr("Eval"), this);
    m_eval->setToolTip(tr("Evaluation: no weight is dropped; the attention is exactly the one "
                          "without dropout."));
    m_train = new QRadioButton(tr("Train"), this);
    m_train->setToolTip(tr("Training: each weight is zeroed with probability p and the others "
                           "are divided by 1 \u2212 p, so rows no longer sum to 1."));
    auto* mode = new QButtonGroup(this);
    mode->addButton(m_eval);
    mode->addButton(m_train);
    modeRow->addWidget(m_eval);
    modeRow->addWidget(m_train);
    modeRow->addStretch();
    form->addRow(tr("Mode"), modeRow);

    m_rate = new QDoubleSpinBox(this);
    m_rate->setRange(0.0, 0.95);
    m_rate->setSingleStep(0.05);
    m_rate->setDecimals(2);
    m_rate->setToolTip(tr("The dropout rate p: the chance that a weight is zeroed in train "
                          "mode (0 \u2264 p < 1)."));
    form->addRow(tr("Rate p"), m_rate);

    m_seed = new QSpinBox(this);
    m_seed->setRange(0, 1'000'000);
    m_seed->setToolTip(tr("Seed of the drop pattern: whether a cell drops depends only on the "
                          "seed, the head, the query and the key."));
    form->addRow(tr("Drop seed"), m_seed);

    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    form->addRow(m_note);

    Document* doc = m_document;
    connect(m_train, &QRadioButton::toggled, this, [doc](bool train) {
        if (doc->session().train == train) return;
        doc->modify([train](Session& s) { s.train = train; },
                    train ? tr("Dropout: train mode") : tr("Dropout: eval mode"));
    });
    connect(m_rate, &QDoubleSpinBox::valueChanged, this, [doc](double rate) {
        doc->modify([rate](Session& s) { s.dropoutRate = rate; }, tr("Change dropout rate"));
    });
    connect(m_seed, &QSpinBox::valueChanged, this, [doc](int seed) {
        doc->modify([seed](Session& s) { s.dropoutSeed = static_cast<std::uint64_t>(seed); },
                    tr("Change drop seed"));
    });
    connect(doc, &Document::changed, this, [this](Document::What what) {
        if (what == Document::What::Session) updateFromSession();
    });
    updateFromSession();
}

void DropoutBox::updateFromSession() {
    const Session& s = m_document->session();
    {
        const QSignalBlocker evalBlocker(m_eval);
        const QSignalBlocker trainBlocker(m_train);
        m_train->setChecked(s.train);
        m_eval->setChecked(!s.train);
    }
    if (m_rate->value() != s.dropoutRate) {
        const QSignalBlocker blocker(m_rate);
        m_rate->setValue(s.dropoutRate);
    }
    if (m_seed->value() != static_cast<int>(s.dropoutSeed)) {
        const QSignalBlocker blocker(m_seed);
        m_seed->setValue(static_cast<int>(s.dropoutSeed));
    }
    if (!s.train)
        m_note->setText(tr("Eval: nothing dropped, rows sum to 1."));
    else if (s.variant == Variant::Linear)
        m_note->setText(tr("Linear attention forms no weights to drop: shown as eval."));
    else
        m_note->setText(tr("Train: about %1% of the weights dropped, the rest \u00d7 %2.")
                            .arg(s.dropoutRate * 100, 0, 'g', 3)
                            .arg(s.dropoutRate < 1 ? 1.0 / (1.0 - s.dropoutRate) : 0.0, 0, 'g', 3));
}

} // namespace attnlab::ui

#include "ui/views/difference_view.h"

#include <QComboBox>
#include <QFileDialog>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "ui/state/dump_document.h"
#include "ui/state/experiment_data.h"
#include "ui/views/flow_layout.h"

namespace attnlab::ui {

DifferenceView::DifferenceView(Document* document, QWidget* parent)
    : PlotView(document, parent), m_dumps(DumpDocument::of(document)), m_matrix(m_plot),
      m_mode(new QComboBox(this)), m_a(new QSpinBox(this)), m_b(new QSpinBox(this)),
      m_open(new QPushButton(tr("Open second dump\u2026"), this)) {
    m_mode->addItem(tr("two heads of the current layer"), int(Mode::Heads));
    m_mode->addItem(tr("two layers of the focused head"), int(Mode::Layers));
    m_mode->addItem(tr("two dumps, current layer and head"), int(Mode::Dumps));
    m_a->setPrefix(tr("A = "));
    m_b->setPrefix(tr("B = "));
    m_b->setValue(1);
    auto* bar = new QWidget(this);
    auto* row = new FlowLayout(bar);
    row->setContentsMargins(4, 2, 4, 2);
    row->addPair(new QLabel(tr("B \u2212 A between"), bar), m_mode);
    row->addWidget(m_a);
    row->addWidget(m_b);
    row->addWidget(m_open);
    static_cast<QVBoxLayout*>(layout())->insertWidget(0, bar);
    // The controls take the height their rows need, the map all the rest.
    static_cast<QVBoxLayout*>(layout())->setStretchFactor(m_plot, 1);
    connect(m_mode, &QComboBox::activated, this, [this](int) { markStale(); });
    connect(m_a, &QSpinBox::valueChanged, this, [this](int) { markStale(); });
    connect(m_b, &QSpinBox::valueChanged, this, [this](int) { markStale(); });
    connect(m_open, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open second attention dump"), QString(), tr("Attention dumps (*.npz *.npy)"));
        if (!path.isEmpty() && m_dumps->openComparison(path)) {
            m_mode->setCurrentIndex(m_mode->findData(int(Mode::Dumps)));
            markStale();
        }
    });
    connect(m_dumps, &DumpDocument::dumpChanged, this, [this] { markStale(); });
    connect(m_dumps, &DumpDocument::layerChanged, this, [this] { markStale(); });
}

void DifferenceView::setComparison(Mode mode, int a, int b) {
    m_mode->setCurrentIndex(m_mode->findData(int(mode)));
    syncControls();
    m_a->setValue(a);
    m_b->setValue(b);
    markStale();
}

void DifferenceView::syncControls() {
    const AttentionDump* dump = m_dumps->dump();
    const auto mode = static_cast<Mode>(m_mode->currentData().toInt());
    const int top = !dump                 ? 0
                    : mode == Mode::Heads ? static_cast<int>(dump->heads - 1)
                                          : static_cast<int>(dump->layers - 1);
    const QSignalBlocker blockA(m_a), blockB(m_b);
    m_a->setRange(0, top);
    m_b->setRange(0, top);
    m_a->setVisible(mode != Mode::Dumps);
    m_b->setVisible(mode != Mode::Dumps);
}

MatrixFigure DifferenceView::figure() const {
    MatrixFigure out;
    out.signedValues = true;
    out.quantity = tr("weight B \u2212 A");
    const AttentionDump* dump = m_dumps->dump();
    if (!dump) {
        out.title = tr("Dump difference \u2014 open a model dump first");
        return out;
    }
    const Index batch = m_dumps->batch();
    const Index layer = m_dumps->layer();
    const Index head = std::clamp<Index>(document()->session().viewState.head, 0, dump->heads - 1);
    out.rowLabels = displayTokens(dump->queryTokens(batch));
    out.columnLabels = displayTokens(dump->keyTokens(batch));
    out.rawRows = dump->queryTokens(batch);
    out.rawColumns = dump->keyTokens(batch);
    const auto mode = static_cast<Mode>(m_mode->currentData().toInt());
    const Index a = m_a->value();
    const Index b = m_b->value();
    switch (mode) {
    case Mode::Heads:
        if (a >= dump->heads || b >= dump->heads) return out;
        out.values = (dump->head(batch, layer, b).cast<double>() -
                      dump->head(batch, layer, a).cast<double>());
        out.title = tr("Layer %1: head %2 \u2212 head %3").arg(layer).arg(b).arg(a);
        break;
    case Mode::Layers:
        if (a >= dump->layers || b >= dump->layers) return out;
        out.values =
            (dump->head(batch, b, head).cast<double>() - dump->head(batch, a, head).cast<double>());
        out.title = tr("Head %1: layer %2 \u2212 layer %3").arg(head).arg(b).arg(a);
        break;
    case Mode::Dumps: {
        const AttentionDump* other = m_dumps->comparison();
        if (!other) {
            out.title = tr("Open a second dump of the same shape to compare (button above)");
            return out;
        }
        const Index otherBatch = std::min(batch, other->batch - 1);
        out.values = (other->head(otherBatch, layer, head).cast<double>() -
                      dump->head(batch, layer, head).cast<double>());
        out.title = tr("Layer %1, head %2: %3 \u2212 %4")
                        .arg(layer)
                        .arg(head)
                        .arg(QFileInfo(QString::fromStdString(other->source)).fileName(),
                             m_dumps->displayName());
        break;
    }
    }
    return out;
}

void DifferenceView::refresh() {
    syncControls();
    m_matrix.show(figure(), theme(),
                  QString::fromStdString(document()->session().viewState.colormap));
}

} // namespace attnlab::ui

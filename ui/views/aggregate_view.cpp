#include "ui/views/aggregate_view.h"

#include <QComboBox>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "ui/state/dump_document.h"
#include "ui/state/experiment_data.h"

namespace attnlab::ui {

AggregateView::AggregateView(Document* document, QWidget* parent)
    : PlotView(document, parent), m_dumps(DumpDocument::of(document)), m_matrix(m_plot),
      m_choice(new QComboBox(this)) {
    m_choice->addItem(tr("Mean over heads (current layer)"), int(Kind::MeanOverHeads));
    m_choice->addItem(tr("Mean over layers (focused head)"), int(Kind::MeanOverLayers));
    m_choice->addItem(tr("Mean over layers and heads"), int(Kind::MeanOverAll));
    m_choice->addItem(tr("Attention rollout through the current layer"), int(Kind::Rollout));
    m_choice->setToolTip(tr("Rollout (Abnar & Zuidema 2020): A_l = rownorm(\u00bd mean_h W + "
                            "\u00bd I), R_l = A_l R_(l-1): how much each input token flows into "
                            "each position, counting the residual path."));
    static_cast<QVBoxLayout*>(layout())->insertWidget(0, m_choice);
    connect(m_choice, &QComboBox::activated, this,
            [this](int) { setKind(static_cast<Kind>(m_choice->currentData().toInt())); });
    connect(m_dumps, &DumpDocument::dumpChanged, this, [this] { markStale(); });
    connect(m_dumps, &DumpDocument::layerChanged, this, [this] { markStale(); });
}

void AggregateView::setKind(Kind kind) {
    m_kind = kind;
    m_choice->setCurrentIndex(m_choice->findData(int(kind)));
    markStale();
}

MatrixFigure AggregateView::figure() const {
    MatrixFigure out;
    const AttentionDump* dump = m_dumps->dump();
    if (!dump) {
        out.title =
            tr("Aggregates \u2014 open a model dump (File \u203a Open Attention Dump\u2026)");
        return out;
    }
    const Index b = m_dumps->batch();
    const Index l = m_dumps->layer();
    const Index h = std::clamp<Index>(document()->session().viewState.head, 0, dump->heads - 1);
    out.rowLabels = displayTokens(dump->queryTokens(b));
    out.columnLabels = displayTokens(dump->keyTokens(b));
    out.rawRows = dump->queryTokens(b);
    out.rawColumns = dump->keyTokens(b);
    out.quantity = tr("weight");
    const QString name = m_dumps->displayName();
    switch (m_kind) {
    case Kind::MeanOverHeads:
        out.values = meanOverHeads(*dump, b, l).cast<double>();
        out.title = tr("%1 \u2014 layer %2, mean over %3 heads").arg(name).arg(l).arg(dump->heads);
        break;
    case Kind::MeanOverLayers:
        out.values = meanOverLayers(*dump, b, h).cast<double>();
        out.title = tr("%1 \u2014 head %2, mean over %3 layers").arg(name).arg(h).arg(dump->layers);
        break;
    case Kind::MeanOverAll:
        out.values = meanOverLayers(*dump, b, -1).cast<double>();
        out.title = tr("%1 \u2014 mean over %2 layers \u00d7 %3 heads")
                        .arg(name)
                        .arg(dump->layers)
                        .arg(dump->heads);
        break;
    case Kind::Rollout:
        if (dump->sq != dump->sk) {
            out.title = tr("Rollout needs square attention (Sq = Sk); this dump is %1 \u00d7 %2")
                            .arg(dump->sq)
                            .arg(dump->sk);
            return out;
        }
        out.values = attentionRollout(*dump, b, l).cast<double>();
        out.title = tr("%1 \u2014 attention rollout through layer %2").arg(name).arg(l);
        out.quantity = tr("rollout");
        break;
    }
    return out;
}

void AggregateView::refresh() {
    m_matrix.show(figure(), theme(),
                  QString::fromStdString(document()->session().viewState.colormap));
}

} // namespace attnlab::ui

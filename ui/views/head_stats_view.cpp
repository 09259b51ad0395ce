#include "ui/views/head_stats_view.h"

#include <QHeaderView>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/state/dump_document.h"

namespace attnlab::ui {

namespace {
QStandardItem* numberItem(double value) {
    auto* item = new QStandardItem;
    item->setData(value, Qt::DisplayRole); // a number, so the column sorts numerically
    item->setEditable(false);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}
} // namespace

HeadStatsView::HeadStatsView(Document* document, QWidget* parent)
    : View(document, parent), m_dumps(DumpDocument::of(document)), m_table(new QTableView(this)),
      m_model(new QStandardItemModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_table);
    m_model->setHorizontalHeaderLabels({tr("layer"), tr("head"), tr("entropy (nats)"),
                                        tr("distance (tokens)"), tr("first-token mass")});
    m_table->setModel(m_model);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(0, Qt::AscendingOrder); // layer 0 first until a header is clicked
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->verticalHeader()->setVisible(false);
    m_table->setToolTip(tr("Click a column header to sort; double-click a row to open the head. "
                           "Entropy: -\u03a3 w log w per query, averaged; distance: \u03a3 w |i - "
                           "j|; first-token mass: w_i0 (attention sinks)."));
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        const int row = index.row();
        const int layer = m_model->item(row, 0)->data(Qt::DisplayRole).toInt();
        const int head = m_model->item(row, 1)->data(Qt::DisplayRole).toInt();
        m_dumps->focus(layer, head);
        ViewState state = this->document()->session().viewState;
        state.view = "heatmap";
        this->document()->setViewState(state);
    });
    connect(m_dumps, &DumpDocument::dumpChanged, this, [this] {
        ++m_generation;
        markStale();
    });
}

void HeadStatsView::refresh() {
    if (m_builtGeneration == m_generation) return;
    m_builtGeneration = m_generation;
    m_model->removeRows(0, m_model->rowCount());
    if (!m_dumps->dump()) return;
    const bool sorting = m_table->isSortingEnabled();
    m_table->setSortingEnabled(false);
    for (const HeadSummary& row : m_dumps->headTable())
        m_model->appendRow({numberItem(static_cast<double>(row.layer)),
                            numberItem(static_cast<double>(row.head)), numberItem(row.meanEntropy),
                            numberItem(row.meanDistance), numberItem(row.firstTokenMass)});
    m_table->setSortingEnabled(sorting);
}

DataTable HeadStatsView::data() const {
    DataTable table;
    table.cols = 5;
    table.rows = m_model->rowCount();
    table.rowHeader = QStringLiteral("head");
    for (int c = 0; c < table.cols; ++c)
        table.columnLabels << m_model->horizontalHeaderItem(c)->text();
    for (int r = 0; r < table.rows; ++r) {
        table.rowLabels << tr("L%1 H%2")
                               .arg(m_model->item(r, 0)->data(Qt::DisplayRole).toInt())
                               .arg(m_model->item(r, 1)->data(Qt::DisplayRole).toInt());
        for (int c = 0; c < table.cols; ++c)
            table.values.push_back(m_model->item(r, c)->data(Qt::DisplayRole).toDouble());
    }
    return table;
}

} // namespace attnlab::ui

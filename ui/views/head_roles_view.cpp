#include "ui/views/head_roles_view.h"

#include <QContextMenuEvent>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

#include "ui/views/flow_layout.h"

namespace attnlab::ui {

namespace {

constexpr int kSortRole = Qt::UserRole;         ///< the number a column sorts by
constexpr int kFractionRole = Qt::UserRole + 1; ///< 0..1: how much of the cell the bar fills

/// Draws a score cell with a bar behind its number, so a column reads as a ranking at a glance.
class ScoreBarDelegate : public QStyledItemDelegate {
public:
    ScoreBarDelegate(QColor color, QObject* parent) : QStyledItemDelegate(parent), m_color(color) {}
    void setColor(QColor color) { m_color = color; }
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override {
        const QVariant fraction = index.data(kFractionRole);
        if (fraction.isValid()) {
            const double f = std::clamp(fraction.toDouble(), 0.0, 1.0);
            QRect bar = option.rect.adjusted(2, 3, -2, -3);
            bar.setWidth(static_cast<int>(bar.width() * f));
            QColor fill = m_color;
            fill.setAlphaF(0.35);
            painter->fillRect(bar, fill);
        }
        QStyledItemDelegate::paint(painter, option, index);
    }

private:
    QColor m_color;
};

QStandardItem* scoreItem(double value, double fraction, int decimals) {
    auto* item = new QStandardItem(QString::number(value, 'f', decimals));
    item->setData(value, kSortRole);
    item->setData(fraction, kFractionRole);
    item->setEditable(false);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QStandardItem* indexItem(Index value) {
    auto* item = new QStandardItem(QString::number(value));
    item->setData(static_cast<double>(value), kSortRole);
    item->setEditable(false);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

} // namespace

HeadRolesView::HeadRolesView(Document* document, QWidget* parent)
    : View(document, parent), m_summary(new QLabel(this)), m_stack(new QStackedWidget(this)),
      m_placeholder(new QLabel(this)), m_table(new QTableView(this)),
      m_model(new QStandardItemModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_controls = new QWidget(this);
    auto* controls = new FlowLayout(m_controls);
    controls->setContentsMargins(0, 0, 0, 0);
    m_probeLength = new QSpinBox(this);
    m_probeLength->setRange(2, 64);
    m_probeLength->setValue(32);
    m_probeLength->setSuffix(tr(" tokens"));
    m_probeLength->setToolTip(tr("Length of the random sequence the probe repeats."));
    m_seed = new QSpinBox(this);
    m_seed->setRange(0, 1000000);
    m_seed->setToolTip(tr("The probe's random draw; the same seed gives the same tokens as "
                          "`attnlab model --roles --probe N --seed S`."));
    m_runProbe = new QPushButton(tr("Run probe"), this);
    m_runProbe->setToolTip(tr("Run the model on BOS + random tokens + the same tokens again, "
                              "and rank the heads by how much the repeat attends to the token "
                              "that followed its first occurrence (induction)."));
    m_showText = new QPushButton(tr("Show text"), this);
    m_showText->setToolTip(tr("Back to the scores on the text you typed."));
    m_restoreAll = new QPushButton(tr("Restore all heads"), this);
    m_restoreAll->setToolTip(tr("Switch every ablated head back on."));
    controls->addPair(new QLabel(tr("Probe"), this), m_probeLength);
    controls->addPair(new QLabel(tr("seed"), this), m_seed);
    controls->addWidget(m_runProbe);
    controls->addWidget(m_showText);
    controls->addWidget(m_restoreAll);
    layout->addWidget(m_controls);
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    layout->addWidget(m_summary);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_stack->addWidget(m_placeholder);
    m_stack->addWidget(m_table);
    layout->addWidget(m_stack, 1);

    m_model->setHorizontalHeaderLabels({tr("off"), tr("layer"), tr("head"), tr("previous-token"),
                                        tr("induction"), tr("first-token"), tr("self"),
                                        tr("distance")});
    m_model->horizontalHeaderItem(Ablate)->setToolTip(
        tr("Checked: the head is switched off (its output zeroed) in every run."));
    m_model->horizontalHeaderItem(PreviousToken)
        ->setToolTip(tr("Mean weight a query puts on the token just before it."));
    m_model->horizontalHeaderItem(Induction)->setToolTip(
        tr("Mean weight a repeated token puts on the token that followed its "
           "earlier occurrence (\u2014: the text repeats no token)."));
    m_model->horizontalHeaderItem(FirstToken)
        ->setToolTip(tr("Mean weight on the first token (an attention sink)."));
    m_model->horizontalHeaderItem(Self)->setToolTip(tr("Mean weight a query puts on itself."));
    m_model->horizontalHeaderItem(Distance)->setToolTip(
        tr("Mean of \u03a3 w |i \u2212 j|: how far back the head looks, in tokens."));
    m_model->setSortRole(kSortRole);
    m_table->setModel(m_model);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(Layer, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(Ablate, QHeaderView::ResizeToContents);
    m_table->verticalHeader()->setVisible(false);
    m_table->setToolTip(tr("Click a column header to sort; tick a head to switch it off; "
                           "double-click a row to show that head."));
    auto* bars = new ScoreBarDelegate(QColor(0x00, 0x72, 0xb2), this);
    for (int c = PreviousToken; c <= Distance; ++c)
        m_table->setItemDelegateForColumn(c, bars);

    connect(m_runProbe, &QPushButton::clicked, this, [this] {
        if (m_probeRunning)
            emit probeCancelRequested();
        else
            requestProbe();
    });
    connect(m_showText, &QPushButton::clicked, this, &HeadRolesView::showText);
    connect(m_restoreAll, &QPushButton::clicked, this, [this] {
        if (!m_input.ablated.empty()) emit ablationRequested({});
    });
    connect(m_model, &QStandardItemModel::itemChanged, this, [this](QStandardItem* item) {
        if (m_rebuilding || item->column() != Ablate) return;
        const auto [layer, head] = headAtRow(item->row());
        toggle(layer, head, item->checkState() == Qt::Checked);
    });
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        if (index.column() == Ablate) return;
        const auto [layer, head] = headAtRow(index.row());
        emit focusRequested(layer, head);
    });
}

void HeadRolesView::setInput(HeadRolesInput input) {
    if (input.modelName != m_input.modelName || input.layers != m_input.layers ||
        input.heads != m_input.heads) {
        m_probe.reset(); // another model: the old probe says nothing about it
        m_showProbe = false;
    }
    m_input = std::move(input);
    m_probeLength->setMaximum(std::max<Index>(2, std::min<Index>(m_input.maxProbeLength, 100000)));
    markStale();
}

void HeadRolesView::setProbeResult(HeadRolesProbe probe) {
    m_probe = std::move(probe);
    m_showProbe = true;
    markStale();
    // The probe's point: rank the heads by induction.
    m_table->sortByColumn(Induction, Qt::DescendingOrder);
}

void HeadRolesView::setProbeRunning(bool running) {
    if (running == m_probeRunning) return;
    m_probeRunning = running;
    m_runProbe->setText(running ? tr("Cancel probe") : tr("Run probe"));
    m_runProbe->setToolTip(
        running ? tr("Stop the probe running on the model.")
                : tr("Run the model on BOS + random tokens + the same tokens again, "
                     "and rank the heads by how much the repeat attends to the token "
                     "that followed its first occurrence (induction)."));
    m_probeLength->setEnabled(!running);
    m_seed->setEnabled(!running);
}

void HeadRolesView::showText() {
    m_showProbe = false;
    markStale();
}

const std::vector<model::HeadRole>& HeadRolesView::shownRoles() const {
    return showingProbe() ? m_probe->roles : m_input.roles;
}

void HeadRolesView::requestProbe() {
    if (m_input.modelName.isEmpty()) return;
    emit probeRequested(m_probeLength->value(), static_cast<quint64>(m_seed->value()));
}

void HeadRolesView::toggle(Index layer, Index head, bool off) {
    auto heads = m_input.ablated;
    if (off)
        heads.insert({layer, head});
    else
        heads.erase({layer, head});
    if (heads != m_input.ablated) emit ablationRequested(heads);
}

std::pair<Index, Index> HeadRolesView::headAtRow(int row) const {
    return {static_cast<Index>(m_model->item(row, Layer)->data(kSortRole).toDouble()),
            static_cast<Index>(m_model->item(row, Head)->data(kSortRole).toDouble())};
}

QString HeadRolesView::placeholderText() const {
    if (m_input.modelName.isEmpty())
        return tr("Open a model: File \u25b8 Open Model\u2026 — head roles are measured on a "
                  "real model's attention.");
    if (m_input.roles.empty() && m_input.measuring && !showingProbe())
        return tr("Measuring every head on the text\u2026");
    if (m_input.roles.empty() && !showingProbe())
        return tr("Type some text, or run the induction probe.");
    return {};
}

QString HeadRolesView::summaryText() const {
    if (m_input.modelName.isEmpty()) return {};
    const auto& roles = shownRoles();
    QString text =
        showingProbe() ? tr("%1, induction probe: %2 random tokens repeated twice (seed %3).")
                             .arg(m_input.modelName)
                             .arg(m_probe->length)
                             .arg(m_probe->seed)
        : m_input.tokens == 1
            ? tr("%1, on your text (1 token).").arg(m_input.modelName)
            : tr("%1, on your text (%2 tokens).").arg(m_input.modelName).arg(m_input.tokens);
    if (!roles.empty()) {
        const auto best = [&](model::RoleScore score) {
            return model::rankHeads(roles, score).front();
        };
        const model::HeadRole previous = best(model::RoleScore::PreviousToken);
        text += QLatin1Char(' ') + tr("Best previous-token head: L%1 H%2 (%3).")
                                       .arg(previous.layer)
                                       .arg(previous.head)
                                       .arg(previous.previousToken, 0, 'f', 2);
        const model::HeadRole induction = best(model::RoleScore::Induction);
        if (induction.inductionQueries > 0)
            text += QLatin1Char(' ') + tr("Best induction head: L%1 H%2 (%3).")
                                           .arg(induction.layer)
                                           .arg(induction.head)
                                           .arg(induction.induction, 0, 'f', 2);
        else
            text += QLatin1Char(' ') + tr("No token repeats, so no induction score: run the "
                                          "probe.");
    }
    const auto& ablated = showingProbe() ? m_probe->ablated : m_input.ablated;
    if (!ablated.empty())
        text += QLatin1Char(' ') + (ablated.size() == 1
                                        ? tr("1 head switched off.")
                                        : tr("%1 heads switched off.").arg(ablated.size()));
    return text;
}

void HeadRolesView::rebuild() {
    m_rebuilding = true;
    const bool sorting = m_table->isSortingEnabled();
    m_table->setSortingEnabled(false);
    m_model->removeRows(0, m_model->rowCount());
    const auto& roles = shownRoles();
    double maxDistance = 1;
    for (const auto& role : roles)
        maxDistance = std::max(maxDistance, role.meanDistance);
    for (const model::HeadRole& role : roles) {
        auto* off = new QStandardItem;
        off->setCheckable(true);
        off->setEditable(false);
        const bool ablated = m_input.ablated.count({role.layer, role.head}) > 0;
        off->setCheckState(ablated ? Qt::Checked : Qt::Unchecked);
        off->setData(ablated ? 1.0 : 0.0, kSortRole);
        off->setToolTip(tr("Switch layer %1 head %2 off").arg(role.layer).arg(role.head));
        QStandardItem* induction = role.inductionQueries > 0
                                       ? scoreItem(role.induction, role.induction, 3)
                                       : new QStandardItem(QStringLiteral("\u2014"));
        if (role.inductionQueries == 0) {
            induction->setData(-1.0, kSortRole);
            induction->setEditable(false);
            induction->setTextAlignment(Qt::AlignCenter);
        }
        m_model->appendRow({off, indexItem(role.layer), indexItem(role.head),
                            scoreItem(role.previousToken, role.previousToken, 3), induction,
                            scoreItem(role.firstToken, role.firstToken, 3),
                            scoreItem(role.self, role.self, 3),
                            scoreItem(role.meanDistance, role.meanDistance / maxDistance, 2)});
    }
    m_table->setSortingEnabled(sorting);
    m_rebuilding = false;
}

void HeadRolesView::waitForWork() {
    if (m_input.measuring) emit rolesAwaited();
}

void HeadRolesView::refresh() {
    if (m_input.measuring) emit rolesWanted();
    const Theme look = theme();
    const QString placeholder = placeholderText();
    m_placeholder->setText(placeholder);
    QFont big = font();
    setFontSize(big, look, look.fontPointSize * 1.3);
    m_placeholder->setFont(big);
    m_stack->setCurrentWidget(placeholder.isEmpty() ? static_cast<QWidget*>(m_table)
                                                    : m_placeholder);
    const bool hasModel = !m_input.modelName.isEmpty();
    m_runProbe->setEnabled(hasModel);
    m_showText->setVisible(showingProbe());
    m_restoreAll->setEnabled(!m_input.ablated.empty());
    m_summary->setText(summaryText());
    m_summary->setVisible(hasModel);
    auto* bars = static_cast<ScoreBarDelegate*>(m_table->itemDelegateForColumn(PreviousToken));
    bars->setColor(look.name == QLatin1String("dark") ? QColor(0x56, 0xb4, 0xe9)
                                                      : QColor(0x00, 0x72, 0xb2));
    rebuild();
}

void HeadRolesView::contextMenuEvent(QContextMenuEvent* event) {
    const QModelIndex index = m_table->indexAt(m_table->viewport()->mapFrom(this, event->pos()));
    if (!index.isValid()) {
        View::contextMenuEvent(event);
        return;
    }
    const auto [layer, head] = headAtRow(index.row());
    const bool off = m_input.ablated.count({layer, head}) > 0;
    QMenu menu(this);
    menu.addAction(off ? tr("Switch layer %1 head %2 back on").arg(layer).arg(head)
                       : tr("Switch layer %1 head %2 off").arg(layer).arg(head),
                   this, [this, layer = layer, head = head, off] { toggle(layer, head, !off); });
    menu.addAction(tr("Show layer %1 head %2").arg(layer).arg(head), this,
                   [this, layer = layer, head = head] { emit focusRequested(layer, head); });
    if (!m_input.ablated.empty())
        menu.addAction(tr("Restore all heads"), this, [this] { emit ablationRequested({}); });
    menu.exec(event->globalPos());
}

void HeadRolesView::paintFigure(QCPPainter& painter, const QSize& size) {
    // A figure is the summary and the table; the probe controls are the window's.
    const bool controls = m_controls->isVisibleTo(this);
    m_controls->setVisible(false);
    View::paintFigure(painter, size);
    m_controls->setVisible(controls);
}

DataTable HeadRolesView::data() const {
    DataTable table;
    table.cols = kColumns - 1;
    for (int c = Layer; c < kColumns; ++c)
        table.columnLabels << m_model->horizontalHeaderItem(c)->text();
    table.columnLabels << tr("ablated");
    table.cols = static_cast<int>(table.columnLabels.size());
    table.rows = m_model->rowCount();
    table.rowHeader = QStringLiteral("head");
    for (int r = 0; r < table.rows; ++r) {
        const auto [layer, head] = headAtRow(r);
        table.rowLabels << tr("L%1 H%2").arg(layer).arg(head);
        for (int c = Layer; c < kColumns; ++c) {
            const double value = m_model->item(r, c)->data(kSortRole).toDouble();
            table.values.push_back(
                c == Induction && value < 0 ? std::numeric_limits<double>::quiet_NaN() : value);
        }
        table.values.push_back(m_model->item(r, Ablate)->checkState() == Qt::Checked ? 1 : 0);
    }
    return table;
}

} // namespace attnlab::ui

#pragma once
/// HeadStatsView: one row per (layer, head) of a model dump with its mean entropy, mean
/// distance and first-token mass; sortable by any column; double-click opens the head.

#include "ui/views/view.h"

class QStandardItemModel;
class QTableView;

namespace attnlab::ui {

class DumpDocument;

class HeadStatsView : public View {
    Q_OBJECT
public:
    explicit HeadStatsView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("head-stats"); }
    QString title() const override { return tr("Head statistics"); }
    void refresh() override;
    DataTable data() const override;

    QTableView* table() const { return m_table; }
    QStandardItemModel* model() const { return m_model; }

private:
    DumpDocument* m_dumps;
    QTableView* m_table;
    QStandardItemModel* m_model;
    quint64 m_generation = 1;
    quint64 m_builtGeneration = 0;
};

} // namespace attnlab::ui

#pragma once
/// HeadRolesView: every head of a real model with its five role scores (head_roles.h:
/// previous-token, induction, first-token mass, self mass, mean distance) in a sortable table,
/// a check box per head that switches it off (ablation), and "Run probe", which measures the
/// scores on the standard induction probe (a random token sequence repeated twice) and ranks
/// the heads by induction. Double-click a row to show that layer and head.
///
/// The view takes plain data (setInput, setProbeResult) and reports what the person asks for
/// as signals: it is tested alone, and bindHeadRolesView() (model_views_binding.h) connects it
/// to the window's ModelDocument.

#include <QString>

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "ui/views/view.h"

#include "attnlab/model/head_roles.h"

class QLabel;
class QPushButton;
class QSpinBox;
class QStandardItemModel;
class QStackedWidget;
class QTableView;

namespace attnlab::ui {

/// What the table shows for a model: the roles measured on the current text.
struct HeadRolesInput {
    QString modelName; ///< empty: no model is loaded
    Index layers = 0;
    Index heads = 0;
    std::vector<model::HeadRole> roles;        ///< of the current text, layer-major
    Index tokens = 0;                          ///< tokens of the current text
    std::set<std::pair<Index, Index>> ablated; ///< heads switched off in the run
    Index maxProbeLength = 64;                 ///< the longest probe the model takes
    /// The text has run and its roles are not measured yet (they are measured when shown).
    bool measuring = false;
};

/// The roles measured on the induction probe.
struct HeadRolesProbe {
    std::vector<model::HeadRole> roles;
    Index length = 0;
    quint64 seed = 0;
    std::set<std::pair<Index, Index>> ablated; ///< heads that were off in the probe's run
};

class HeadRolesView : public View {
    Q_OBJECT
public:
    /// Table columns.
    enum Column { Ablate, Layer, Head, PreviousToken, Induction, FirstToken, Self, Distance };
    static constexpr int kColumns = 8;

    explicit HeadRolesView(Document* document, QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("head-roles"); }
    QString title() const override { return tr("Head roles"); }
    void refresh() override;
    void paintFigure(QCPPainter& painter, const QSize& size) override;
    DataTable data() const override;
    QString notApplicable() const override { return imageClassifierRefusal(document()); }

    void setInput(HeadRolesInput input);
    const HeadRolesInput& input() const { return m_input; }
    /// Shows the probe's scores, ranked by induction (highest first).
    void setProbeResult(HeadRolesProbe probe);
    /// Back to the current text's scores.
    void showText();
    bool showingProbe() const { return m_showProbe && m_probe.has_value(); }
    const std::optional<HeadRolesProbe>& probe() const { return m_probe; }
    /// While a probe runs (on a worker): the button cancels it, the length and seed wait.
    void setProbeRunning(bool running);
    bool probeRunning() const { return m_probeRunning; }
    /// The roles the table shows (the probe's or the text's).
    const std::vector<model::HeadRole>& shownRoles() const;

    QTableView* table() const { return m_table; }
    QStandardItemModel* model() const { return m_model; }
    QPushButton* probeButton() const { return m_runProbe; }
    QSpinBox* probeLengthBox() const { return m_probeLength; }
    QSpinBox* seedBox() const { return m_seed; }
    /// The line above the table (what the scores were measured on, the best heads).
    QString summaryText() const;
    /// The message shown instead of the table, empty when the table shows.
    QString placeholderText() const;

public slots:
    /// Asks for the probe with the length and seed of the spin boxes.
    void requestProbe();

signals:
    /// The person asked for the probe: BOS + `length` random tokens, twice.
    void probeRequested(qint64 length, quint64 seed);
    /// The person stopped the probe that is running.
    void probeCancelRequested();
    /// The person switched heads on or off: exactly `heads` should be off now.
    void ablationRequested(const std::set<std::pair<Index, Index>>& heads);
    /// The person wants to see (layer, head).
    void focusRequested(qint64 layer, qint64 head);
    /// The view is drawn while its input is still measuring: the roles are wanted now.
    void rolesWanted();
    /// Export or a test waits for the roles being measured (ensureComplete()).
    void rolesAwaited();

protected:
    void contextMenuEvent(QContextMenuEvent* event) override;
    void waitForWork() override;

private:
    void rebuild();
    void toggle(Index layer, Index head, bool off);
    std::pair<Index, Index> headAtRow(int row) const;

    HeadRolesInput m_input;
    std::optional<HeadRolesProbe> m_probe;
    bool m_showProbe = false;
    bool m_probeRunning = false;
    bool m_rebuilding = false;

    QWidget* m_controls;
    QLabel* m_summary;
    QStackedWidget* m_stack;
    QLabel* m_placeholder;
    QTableView* m_table;
    QStandardItemModel* m_model;
    QSpinBox* m_probeLength;
    QSpinBox* m_seed;
    QPushButton* m_runProbe;
    QPushButton* m_showText;
    QPushButton* m_restoreAll;
};

} // namespace attnlab::ui

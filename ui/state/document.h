#pragma once
/// ui::Document: the single source of truth of the window. It owns the Session and the
/// latest good Experiment, validates every edit, keeps the undo stack, coalesces bursts of
/// edits and runs the core off the GUI thread when the work is large.

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"
#include "ui/state/flash_walk_runner.h"

class QUndoStack;

namespace attnlab {
class FlashWalk;
}

namespace attnlab::ui {

template <typename T> class LatestTask;

/// Undo merge ids: consecutive edits with the same id (typing in one field, dragging one
/// slider) become one undo step. None never merges.
enum class EditMerge {
    None = -1,
    Text = 1,
    Source,
    DModel,
    Heads,
    KvHeads,
    Seed,
    Scale,
    Temperature,
    ValidLen,
    Window,
    CausalWindow,
    QueryBlock,
    KeyValueBlock,
};

/// A second configuration derived from the current session, shown by the compare view.
/// OtherSession: B is a second session file (setComparisonSession).
enum class Comparison {
    None,
    FullVsCausal,
    SoftmaxVsLinear,
    MhaVsGqa,
    MhaVsMqa,
    NoneVsRope,
    OtherSession
};
/// The B side of the compare view, in words ("causal mask", "linear attention" ...).
QString comparisonName(Comparison comparison);

/// What a recompute produced (on the worker or on the GUI thread).
struct RunOutput {
    std::optional<Experiment> experiment;
    std::optional<Experiment> comparison;
    Comparison comparisonKind = Comparison::None; ///< what `comparison` was computed for
    QString error;
};

class Document : public QObject {
    Q_OBJECT
public:
    /// What changed; views redraw only what they need.
    enum class What {
        Session,    ///< the session was edited (the inputs panel follows it)
        Experiment, ///< a new experiment is available
        Selection,  ///< the selected query row or focused head
        ViewState,  ///< colormap, theme, shown quantity, active view
        Busy,       ///< the worker started or finished
        Problems,   ///< the list of validation problems changed
        FlashWalk,  ///< the focused head's FlashAttention walk is ready (flashWalk())
    };
    Q_ENUM(What)

    explicit Document(QObject* parent = nullptr);
    ~Document() override;

    /// The session as last edited (may be invalid: see problems()).
    const Session& session() const { return m_session; }
    /// The latest good experiment; null until the first successful run.
    const Experiment* experiment() const { return m_experiment ? &*m_experiment : nullptr; }
    /// The comparison experiment (B side), null when comparison() is None or it failed.
    const Experiment* comparisonExperiment() const {
        return m_comparisonExperiment ? &*m_comparisonExperiment : nullptr;
    }
    Comparison comparison() const { return m_comparison; }
    /// What comparisonExperiment() was computed for (None when there is none): its caption.
    Comparison shownComparison() const {
        return m_comparisonExperiment ? m_shownComparison : Comparison::None;
    }
    /// The session the compare view shows on its B side.
    static Session comparisonSession(const Session& session, Comparison comparison);
    /// Validation problems of session(); empty when it is fine.
    const QStringList& problems() const { return m_problems; }
    bool busy() const { return m_busy; }
    QUndoStack* undoStack() const { return m_undo; }
    QString filePath() const { return m_filePath; }
    bool isModified() const;

    /// Every problem of a session: the core's validate(), as sentences (the one checker).
    static QStringList problemsOf(const Session& session);
    /// True when the experiment on screen is not the session's: the session has problems (the
    /// last good figure stays, marked out of date) or a run is pending.
    bool experimentOutOfDate() const;

    /// The FlashAttention walk (attnlab/flash_walk.h) of the focused head of experiment(),
    /// null until computed or when the experiment holds no Q/K (a dump of weights).
    const attnlab::FlashWalk* flashWalk() const;
    /// Asks for flashWalk(): computed at once when the head is small, else on the worker
    /// (changed(FlashWalk) when it is ready). Nothing happens when the walk is current.
    void requestFlashWalk();

    /// An undoable edit: replaces the session. Consecutive edits with the same `merge` id
    /// become one undo step (typing in one field).
    void edit(const Session& next, const QString& description, EditMerge merge = EditMerge::None);
    /// Convenience: applies `change` to a copy of the session and edits with the result.
    void modify(const std::function<void(Session&)>& change, const QString& description,
                EditMerge merge = EditMerge::None);
    /// Replaces the session without undo history (New, Open, Examples); clears the stack.
    void reset(const Session& session, const QString& filePath = {});
    /// Reports a problem found by a widget before it reached the session (e.g. W < 0).
    void reportInputError(const QString& message);

    /// Not undoable, saved with the session: selection and display settings.
    void setSelectedQuery(Index query);
    void setFocusedHead(Index head);
    void setViewState(const ViewState& state);
    void setComparison(Comparison comparison);
    /// B for Comparison::OtherSession: a second session (`name` captions it, e.g. its file).
    void setComparisonSession(const Session& other, const QString& name);
    /// The name given with setComparisonSession; empty when there is none.
    QString comparisonSessionName() const { return m_otherSessionName; }
    /// The theme is the application's preference, not the session's: every session shown
    /// (New, Open, an example, undo) takes this theme and a session file's "theme" key is
    /// ignored. Not undoable, does not mark the session modified; changed(ViewState).
    void setTheme(const QString& name);
    QString theme() const { return m_theme; }

    /// Session files. Errors come back as messages (and errorOccurred).
    bool open(const QString& path);
    bool save(const QString& path);

    /// Work size above which run() goes to the worker thread (S_q * S_k * H).
    void setWorkerThreshold(qint64 cells) { m_workerThreshold = cells; }
    /// Runs any pending recompute now and waits for it (tests, export, headless render).
    void flush();
    /// Waits (processing events) until no run is pending or running; false on timeout.
    bool waitForIdle(int timeoutMs = 30000);

    /// Applies a session without touching the undo stack (used by undo commands).
    void applySession(const Session& session);

    /// Shows an experiment that was not computed from the session (one layer of a model dump,
    /// attnlab/dump.h): the views draw it unchanged and nothing recomputes until the next
    /// session edit, reset or open, which goes back to run(session).
    void setExternalExperiment(Experiment experiment);
    bool hasExternalExperiment() const { return m_external; }

signals:
    void changed(attnlab::ui::Document::What what);
    void errorOccurred(const QString& message);

private:
    void scheduleRun();
    void finishRun(RunOutput output);
    static RunOutput compute(const Session& session, Comparison comparison,
                             std::shared_ptr<const Session> other);
    /// Busy while the run or the flash walk works on the worker; changed(Busy) when it turns.
    void updateBusy();
    /// Stores a new experiment on screen (the walk of the old one is dropped).
    void setExperiment(std::optional<Experiment> experiment);
    void finishWalk();
    /// The head the views focus, clamped to the experiment's heads.
    Index focusedHead() const;

    Session m_session;
    std::optional<Experiment> m_experiment;
    std::optional<Experiment> m_comparisonExperiment;
    Comparison m_comparison = Comparison::None;
    Comparison m_shownComparison = Comparison::None;
    std::shared_ptr<const Session> m_otherSession; ///< B of Comparison::OtherSession
    QString m_otherSessionName;
    QStringList m_problems;
    QUndoStack* m_undo = nullptr;
    QString m_filePath;
    QString m_theme = QStringLiteral("light");
    std::unique_ptr<LatestTask<RunOutput>> m_runs; ///< run(session): the latest edit's result wins
    bool m_busy = false;
    bool m_external = false; ///< m_experiment came from setExternalExperiment()
    qint64 m_workerThreshold = 64 * 64 * 16;

    quint64 m_experimentSerial = 0;     ///< bumped whenever m_experiment is replaced
    FlashWalkRunner* m_walks = nullptr; ///< the focused head's walk, keyed by that serial
};

} // namespace attnlab::ui

#pragma once
/// PatchingDocument: activation patching (attnlab/model/lens.h) of the window's model, beside
/// its ModelDocument. The clean prompt is the model's current text; this document owns the
/// rest of the request — the corrupted text, the metric's two tokens, what to patch — with one
/// undo step per edit (typing in one field merges), and runs the patching on a worker thread:
/// progress as it goes, a cancel flag the core checks between runs, a new request superseding
/// the one in flight, and a cancelled run leaving the previous result in place.
///
///   auto* patching = PatchingDocument::of(document);
///   patching->setCorruptedText("The owl hat fox ...");   // inputsChanged(); undoable
///   patching->request();                                 // runs unless its result is current
///   patching->result()->patching.heads                    // [L, H] once finished()
///
/// Bad input (no corrupted text, prompts of different token lengths, a metric token that is not
/// one token, the same token twice, prompts whose metric is the same) is found before the run
/// where it can be and reported as one line in message(), with no result.

#include <QObject>
#include <QString>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "attnlab/base/result.h"
#include "attnlab/model/lens.h"

namespace attnlab::ui {

class Document;
class ModelDocument;

/// What a patched run takes from the clean run.
enum class PatchTarget {
    Heads,    ///< each head's output: a layers × heads map
    Residual, ///< the residual stream entering each layer at each position: (layers + 1) × S
};

/// The person's side of the request (the clean text is the ModelDocument's).
struct PatchingInputs {
    QString corrupted; ///< the corrupted text; empty: nothing to patch yet
    QString tokenA;    ///< metric logit(A) - logit(B); empty: the clean run's prediction
    QString tokenB;    ///< empty: the corrupted run's prediction
    PatchTarget target = PatchTarget::Heads;
    bool operator==(const PatchingInputs&) const = default;
};

/// A request made concrete: token ids, the metric's tokens where typed, the model and heads.
struct PatchingKey {
    std::shared_ptr<const model::Model> model;
    std::vector<std::int64_t> clean, corrupted;
    std::optional<std::int64_t> a, b; ///< nullopt: the default prediction
    PatchTarget target = PatchTarget::Heads;
    std::set<std::pair<Index, Index>> ablated;
    bool operator==(const PatchingKey&) const = default;
};

/// A finished patching and what it was computed for.
struct PatchingResult {
    PatchingKey key;
    model::Patching patching;
    model::LogitDifference metric; ///< the tokens used (defaults resolved)
    double milliseconds = 0;       ///< wall time of the whole computation on the worker
};

template <typename T> class LatestTask;

class PatchingDocument : public QObject {
    Q_OBJECT
public:
    /// The PatchingDocument of `document` (created as its child on first use).
    static PatchingDocument* of(Document* document);
    ~PatchingDocument() override;

    const PatchingInputs& inputs() const { return m_inputs; }
    /// One undo step each; consecutive edits of the same field merge (typing).
    void setCorruptedText(const QString& text);
    void setMetricTokens(const QString& tokenA, const QString& tokenB);
    void setTarget(PatchTarget target);
    /// Replaces the inputs without undo (undo commands, render, lessons).
    void applyInputs(const PatchingInputs& inputs);

    /// The request for the current inputs and the model's text, or why there is none (one line
    /// for the tab: bad input, or what to do first).
    std::optional<PatchingKey> currentKey(QString* why = nullptr) const;
    /// Starts patching the current inputs unless the result shown or the run in flight is
    /// theirs, or the person cancelled exactly this request. Bad input sets message() and
    /// clears the result at once. A run in flight for other inputs is cancelled and the new
    /// one starts when it stops.
    void request();
    /// The same, even when this request was cancelled before.
    void rerun();
    /// Stops the run in flight; the previous result stays.
    void cancel();

    bool running() const;
    /// Runs done and in all of the run in flight (0, 0 before its first report).
    std::pair<Index, Index> progress() const { return m_progress; }
    /// The latest finished patching; nullopt when there is none or the input is bad.
    const std::optional<PatchingResult>& result() const { return m_result; }
    /// One line about the latest request: bad input, a failure or a cancel; empty when fine.
    QString message() const { return m_message; }
    /// True when no run is in flight or waiting.
    bool idle() const { return !running(); }
    /// Waits (processing events) until idle(); false on timeout.
    bool waitForIdle(int timeoutMs = 120000);

signals:
    void inputsChanged();
    void runningChanged(bool running);
    void progressChanged(qint64 done, qint64 total);
    /// A result or a message arrived (or the result was cleared).
    void finished();

private:
    explicit PatchingDocument(Document* document);
    void start(PatchingKey key);
    /// The latest request's result or failure (the task hands over nothing else).
    void finish(Result<PatchingResult> done);
    /// The task went idle: a run the person cancelled says so.
    void stopped();
    void edit(const PatchingInputs& next, int mergeId, const QString& description);

    Document* m_document;
    ModelDocument* m_models;
    PatchingInputs m_inputs;
    std::optional<PatchingResult> m_result;
    QString m_message;
    std::unique_ptr<LatestTask<PatchingResult>> m_task;
    /// The latest request started (in flight while running()).
    std::optional<PatchingKey> m_requested;
    /// Cancelled by the person, or failed: not run again by itself (rerun() runs it).
    std::optional<PatchingKey> m_heldKey;
    QString m_heldMessage; ///< what the held request said
    bool m_userCancelled = false;
    std::pair<Index, Index> m_progress{0, 0};
    quint64 m_generation = 0; ///< of the latest request: its progress reports are shown
};

} // namespace attnlab::ui

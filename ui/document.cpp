#include "ui/document.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QTimer>
#include <QUndoCommand>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>
#include <utility>

namespace attnlab::ui {

namespace {

/// One undoable edit: the whole session before and after (simple and always correct).
class SessionCommand : public QUndoCommand {
public:
    SessionCommand(Document* document, Session before, Session after, const QString& text,
                   int mergeKey)
        : QUndoCommand(text), m_document(document), m_before(std::move(before)),
          m_after(std::move(after)), m_mergeKey(mergeKey) {}

    void undo() override { m_document->applySession(m_before); }
    void redo() override { m_document->applySession(m_after); }
    int id() const override { return m_mergeKey; }
    bool mergeWith(const QUndoCommand* other) override {
        if (other->id() != id() || m_mergeKey < 0) return false;
        m_after = static_cast<const SessionCommand*>(other)->m_after;
        return true;
    }

private:
    Document* m_document;
    Session m_before;
    Session m_after;
    int m_mergeKey;
};

Index tokenCount(const std::string& text, Tokenizer tokenizer) {
    return static_cast<Index>(tokenize(text, tokenizer).size());
}

/// Keeps a custom mask the shape of the tokens: overlapping cells are kept, new ones allowed.
void fitCustomMask(Session& session) {
    if (!session.mask.custom) return;
    const Index sq = tokenCount(session.text, session.tokenizer);
    const Index sk =
        session.sourceText.empty() ? sq : tokenCount(session.sourceText, session.tokenizer);
    BoolMatrix& old = *session.mask.custom;
    if (old.rows() == sq && old.cols() == sk) return;
    BoolMatrix fitted = BoolMatrix::Constant(sq, sk, true);
    const Index rows = std::min(sq, static_cast<Index>(old.rows()));
    const Index cols = std::min(sk, static_cast<Index>(old.cols()));
    fitted.topLeftCorner(rows, cols) = old.topLeftCorner(rows, cols);
    old = fitted;
}

} // namespace

Document::Document(QObject* parent)
    : QObject(parent), m_undo(new QUndoStack(this)), m_timer(new QTimer(this)),
      m_watcher(new QFutureWatcher<RunOutput>(this)) {
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &Document::startRun);
    connect(m_watcher, &QFutureWatcher<RunOutput>::finished, this,
            [this] { finishRun(m_watcher->result()); });
    m_problems = problemsOf(m_session);
    scheduleRun();
}

Document::~Document() {
    m_timer->stop();
    if (m_running) m_watcher->waitForFinished();
}

bool Document::isModified() const {
    return !m_undo->isClean();
}

QStringList Document::problemsOf(const Session& session) {
    QStringList problems;
    try {
        for (const std::string& problem : validate(session))
            problems << QString::fromStdString(problem);
    } catch (const std::exception& error) {
        problems << QString::fromUtf8(error.what());
    }
    if (!problems.isEmpty()) return problems;
    // Window-level limits, in case the core accepts something the window cannot show.
    const Index sq = tokenCount(session.text, session.tokenizer);
    const Index sk =
        session.sourceText.empty() ? sq : tokenCount(session.sourceText, session.tokenizer);
    if (sq == 0) problems << tr("The text has no tokens: type at least one word.");
    if (!session.sourceText.empty() && sk == 0) problems << tr("The source text has no tokens.");
    if (std::max(sq, sk) > Session::kMaxTokens)
        problems << tr("%1 tokens is more than the limit of %2.")
                        .arg(std::max(sq, sk))
                        .arg(Session::kMaxTokens);
    if (session.heads <= 0 || session.dModel <= 0 || session.dModel % session.heads != 0)
        problems
            << tr("heads (%1) must divide d_model (%2).").arg(session.heads).arg(session.dModel);
    if (session.kvHeads <= 0 || (session.heads > 0 && session.heads % session.kvHeads != 0))
        problems
            << tr("kv heads (%1) must divide heads (%2).").arg(session.kvHeads).arg(session.heads);
    if (session.mask.window < -1 || session.mask.causalWindow < -1)
        problems << tr("The window must be 0 or more.");
    return problems;
}

void Document::edit(const Session& next, const QString& description, int mergeKey) {
    Session fitted = next;
    fitCustomMask(fitted);
    m_undo->push(new SessionCommand(this, m_session, std::move(fitted), description, mergeKey));
}

void Document::modify(const std::function<void(Session&)>& change, const QString& description,
                      int mergeKey) {
    Session next = m_session;
    change(next);
    edit(next, description, mergeKey);
}

void Document::reset(const Session& session, const QString& filePath) {
    m_undo->clear();
    m_filePath = filePath;
    Session fitted = session;
    fitCustomMask(fitted);
    applySession(fitted);
    m_undo->setClean();
}

void Document::applySession(const Session& session) {
    m_session = session;
    m_external = false;
    const QStringList problems = problemsOf(m_session);
    const bool problemsChanged = problems != m_problems;
    m_problems = problems;
    emit changed(What::Session);
    if (problemsChanged) emit changed(What::Problems);
    scheduleRun();
}

void Document::setExternalExperiment(Experiment experiment) {
    m_timer->stop();
    m_external = true;
    m_doneGeneration = ++m_generation; // a run still in flight is dropped when it finishes
    m_experiment = std::move(experiment);
    m_comparisonExperiment.reset();
    emit changed(What::Experiment);
}

void Document::reportInputError(const QString& message) {
    m_problems = QStringList{message};
    emit changed(What::Problems);
    emit errorOccurred(message);
}

void Document::setSelectedQuery(Index query) {
    if (m_session.viewState.query == query) return;
    m_session.viewState.query = query;
    emit changed(What::Selection);
}

void Document::setFocusedHead(Index head) {
    if (m_session.viewState.head == head) return;
    m_session.viewState.head = head;
    emit changed(What::Selection);
}

void Document::setViewState(const ViewState& state) {
    const bool selection =
        state.head != m_session.viewState.head || state.query != m_session.viewState.query;
    m_session.viewState = state;
    emit changed(What::ViewState);
    if (selection) emit changed(What::Selection);
}

void Document::setComparison(Comparison comparison) {
    if (comparison == m_comparison) return;
    m_comparison = comparison;
    if (comparison == Comparison::None) {
        m_comparisonExperiment.reset(); // only the hidden compare view showed it
        return;
    }
    scheduleRun();
}

Session Document::comparisonSession(const Session& session, Comparison comparison) {
    Session other = session;
    switch (comparison) {
    case Comparison::None:
        break;
    case Comparison::FullVsCausal:
        other.mask.causal = true;
        break;
    case Comparison::SoftmaxVsLinear:
        other.variant = Variant::Linear;
        break;
    case Comparison::MhaVsGqa:
        other.kvHeads = std::max<Index>(1, session.heads / 2);
        break;
    case Comparison::MhaVsMqa:
        other.kvHeads = 1;
        break;
    case Comparison::NoneVsRope:
        other.positional = Positional::RopeHalf;
        break;
    }
    return other;
}

bool Document::open(const QString& path) {
    // A file from anyone: whatever it holds is reported through errorOccurred, never an
    // abort, and a refused file leaves the session as it was.
    try {
        const Result<Session> loaded = loadSession(path.toStdString());
        if (!loaded) {
            emit errorOccurred(QString::fromStdString(loaded.error()));
            return false;
        }
        reset(*loaded, path);
    } catch (const std::exception& error) {
        emit errorOccurred(QStringLiteral("%1: %2").arg(path, QString::fromUtf8(error.what())));
        return false;
    }
    return true;
}

bool Document::save(const QString& path) {
    if (const Status status = saveSession(path.toStdString(), m_session)) {
        emit errorOccurred(QString::fromStdString(status->message));
        return false;
    }
    m_filePath = path;
    m_undo->setClean();
    return true;
}

void Document::scheduleRun() {
    if (m_external) return; // a dump is shown; the next session edit clears m_external
    ++m_generation;
    if (!m_problems.isEmpty()) {
        m_timer->stop();
        emit errorOccurred(m_problems.join(QLatin1Char('\n')));
        return;
    }
    const Index sq = tokenCount(m_session.text, m_session.tokenizer);
    const Index sk =
        m_session.sourceText.empty() ? sq : tokenCount(m_session.sourceText, m_session.tokenizer);
    const qint64 work = static_cast<qint64>(sq) * sk * std::max<Index>(1, m_session.heads);
    // Small work runs at the next event-loop turn; large work waits 10 ms for more keystrokes.
    // Edits made while the worker runs are coalesced: only the latest runs next.
    m_timer->start(work > m_workerThreshold ? 10 : 0);
}

RunOutput Document::compute(const Session& session, Comparison comparison, quint64 generation) {
    RunOutput output;
    output.generation = generation;
    try {
        output.experiment = run(session);
        if (comparison != Comparison::None) {
            const Session other = comparisonSession(session, comparison);
            if (validate(other).empty()) output.comparison = run(other);
        }
    } catch (const std::exception& error) {
        output.error = QString::fromUtf8(error.what());
    } catch (...) {
        output.error = tr("The computation failed for an unknown reason.");
    }
    return output;
}

void Document::startRun() {
    if (m_running || !m_problems.isEmpty() || m_doneGeneration == m_generation) return;
    const Index sq = tokenCount(m_session.text, m_session.tokenizer);
    const Index sk =
        m_session.sourceText.empty() ? sq : tokenCount(m_session.sourceText, m_session.tokenizer);
    const qint64 work = static_cast<qint64>(sq) * sk * std::max<Index>(1, m_session.heads);
    if (work <= m_workerThreshold) {
        finishRun(compute(m_session, m_comparison, m_generation));
        return;
    }
    m_running = true;
    if (!m_busy) {
        m_busy = true;
        emit changed(What::Busy);
    }
    m_watcher->setFuture(
        QtConcurrent::run(&Document::compute, m_session, m_comparison, m_generation));
}

void Document::finishRun(RunOutput output) {
    m_running = false;
    if (output.generation > m_doneGeneration) {
        m_doneGeneration = output.generation;
        if (output.experiment) {
            m_experiment = std::move(output.experiment);
            m_comparisonExperiment = std::move(output.comparison);
            emit changed(What::Experiment);
        } else if (!output.error.isEmpty()) {
            emit errorOccurred(output.error);
        }
    }
    if (m_generation != m_doneGeneration && m_problems.isEmpty()) {
        startRun(); // edits arrived while the worker ran: compute the latest one
        return;
    }
    if (m_busy) {
        m_busy = false;
        emit changed(What::Busy);
    }
}

void Document::flush() {
    if (m_running) m_watcher->waitForFinished();
    QCoreApplication::processEvents();
    if (m_timer->isActive() || (m_doneGeneration != m_generation && m_problems.isEmpty())) {
        m_timer->stop();
        if (!m_running && m_problems.isEmpty() && m_doneGeneration != m_generation)
            finishRun(compute(m_session, m_comparison, m_generation));
    }
}

bool Document::waitForIdle(int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (m_running || m_timer->isActive()) {
        if (clock.elapsed() > timeoutMs) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return true;
}

} // namespace attnlab::ui

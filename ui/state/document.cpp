#include "ui/state/document.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QUndoStack>

#include <algorithm>
#include <exception>
#include <memory>
#include <utility>

#include "attnlab/attention/flash_walk.h"
#include "ui/state/apply_command.h"
#include "ui/state/latest_task.h"

namespace attnlab::ui {

namespace {

/// Cells of a session's attention (S_q * S_k * H): what decides worker or GUI thread.
qint64 workOf(const Session& session) {
    const SequenceLengths lengths = sequenceLengths(session);
    return static_cast<qint64>(lengths.queries) * lengths.keys * std::max<Index>(1, session.heads);
}

/// Keeps a custom mask the shape of the tokens: overlapping cells are kept, new ones allowed.
void fitCustomMask(Session& session) {
    if (!session.mask.custom) return;
    const SequenceLengths lengths = sequenceLengths(session);
    const Index sq = lengths.queries;
    const Index sk = lengths.keys;
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
    : QObject(parent), m_undo(new QUndoStack(this)), m_walks(new FlashWalkRunner(this)) {
    // Edits made while a run works are coalesced: only the latest runs next. The run in flight
    // goes on, and a result newer than the one shown is shown even when edits came since:
    // typing sees the maps follow.
    m_runs = std::make_unique<LatestTask<RunOutput>>(
        this, WorkPolicy{false, WorkPolicy::Hand::Newer},
        [this](Result<RunOutput> output, bool) { finishRun(std::move(*output)); });
    m_runs->onBusyChanged([this](bool) { updateBusy(); });
    connect(m_walks, &FlashWalkRunner::finished, this, &Document::finishWalk);
    m_problems = problemsOf(m_session);
    scheduleRun();
}

Document::~Document() = default;

bool Document::isModified() const {
    return !m_undo->isClean();
}

QStringList Document::problemsOf(const Session& session) {
    // validate() is the one checker: token limits, shapes, windows ... are its sentences.
    QStringList problems;
    try {
        for (const std::string& problem : validate(session))
            problems << QString::fromStdString(problem);
    } catch (const std::exception& error) {
        problems << QString::fromUtf8(error.what());
    }
    return problems;
}

bool Document::experimentOutOfDate() const {
    if (!m_experiment || m_external) return false;
    return !m_problems.isEmpty() || !m_runs->idle();
}

void Document::edit(const Session& next, const QString& description, EditMerge merge) {
    Session fitted = next;
    fitCustomMask(fitted);
    // The whole session before and after: simple and always correct.
    m_undo->push(new ApplyCommand<Session>(
        this, [this](const Session& session) { applySession(session); }, m_session,
        std::move(fitted), static_cast<int>(merge), description));
}

void Document::modify(const std::function<void(Session&)>& change, const QString& description,
                      EditMerge merge) {
    Session next = m_session;
    change(next);
    edit(next, description, merge);
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
    m_session.viewState.theme = m_theme.toStdString();
    m_external = false;
    const QStringList problems = problemsOf(m_session);
    const bool problemsChanged = problems != m_problems;
    m_problems = problems;
    emit changed(What::Session);
    if (problemsChanged) emit changed(What::Problems);
    scheduleRun();
}

void Document::setExternalExperiment(Experiment experiment) {
    m_external = true;
    m_runs->stop(); // a run still in flight is dropped when it finishes
    setExperiment(std::move(experiment));
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
    m_session.viewState.theme = m_theme.toStdString();
    emit changed(What::ViewState);
    if (selection) emit changed(What::Selection);
}

void Document::setTheme(const QString& name) {
    if (name == m_theme) return;
    m_theme = name;
    m_session.viewState.theme = name.toStdString();
    emit changed(What::ViewState);
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

void Document::setComparisonSession(const Session& other, const QString& name) {
    m_otherSession = std::make_shared<const Session>(other);
    m_otherSessionName = name;
    m_comparison = Comparison::OtherSession;
    m_comparisonExperiment.reset();
    scheduleRun(); // B changed: the next run computes it
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
    case Comparison::OtherSession: // not derived from A: see setComparisonSession
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
    if (!m_problems.isEmpty()) {
        // Nothing runs for this session: a waiting run is dropped (one in flight still shows,
        // as any result newer than the one shown).
        m_runs->request([]() -> std::optional<LatestTask<RunOutput>::Job> { return std::nullopt; });
        emit errorOccurred(m_problems.join(QLatin1Char('\n')));
        return;
    }
    // The session as it is when the run starts, with the comparison asked for then.
    auto prepare = [this]() -> std::optional<LatestTask<RunOutput>::Job> {
        if (!m_problems.isEmpty()) return std::nullopt;
        return LatestTask<RunOutput>::Job{
            [session = m_session, comparison = m_comparison,
             other = m_otherSession](const std::atomic<bool>*) -> Result<RunOutput> {
                return compute(session, comparison, other);
            },
            workOf(m_session) <= m_workerThreshold};
    };
    // Small work runs at the next event-loop turn; large work waits 10 ms for more keystrokes.
    m_runs->request(prepare, workOf(m_session) > m_workerThreshold ? 10 : 0);
}

RunOutput Document::compute(const Session& session, Comparison comparison,
                            std::shared_ptr<const Session> otherSession) {
    RunOutput output;
    try {
        output.experiment = run(session);
        if (comparison == Comparison::OtherSession && !otherSession) comparison = Comparison::None;
        if (comparison != Comparison::None) {
            const Session other = comparison == Comparison::OtherSession
                                      ? *otherSession
                                      : comparisonSession(session, comparison);
            if (validate(other).empty()) {
                output.comparison = run(other);
                output.comparisonKind = comparison;
            }
        }
    } catch (const std::exception& error) {
        output.error = QString::fromUtf8(error.what());
    } catch (...) {
        output.error = tr("The computation failed for an unknown reason.");
    }
    return output;
}

void Document::finishRun(RunOutput output) {
    if (output.experiment) {
        setExperiment(std::move(output.experiment));
        m_comparisonExperiment = std::move(output.comparison);
        m_shownComparison = output.comparisonKind;
        emit changed(What::Experiment);
    } else if (!output.error.isEmpty()) {
        emit errorOccurred(output.error);
    }
}

void Document::updateBusy() {
    const bool busy = m_runs->busy() || m_walks->running();
    if (busy == m_busy) return;
    m_busy = busy;
    emit changed(What::Busy);
}

QString comparisonName(Comparison comparison) {
    switch (comparison) {
    case Comparison::None:
        return Document::tr("nothing");
    case Comparison::FullVsCausal:
        return Document::tr("causal mask");
    case Comparison::SoftmaxVsLinear:
        return Document::tr("linear attention");
    case Comparison::MhaVsGqa:
        return Document::tr("GQA (half the kv heads)");
    case Comparison::MhaVsMqa:
        return Document::tr("MQA (one kv head)");
    case Comparison::NoneVsRope:
        return Document::tr("RoPE positions");
    case Comparison::OtherSession:
        return Document::tr("another session");
    }
    return {};
}

void Document::setExperiment(std::optional<Experiment> experiment) {
    m_experiment = std::move(experiment);
    ++m_experimentSerial;
    m_walks->clear();
}

Index Document::focusedHead() const {
    return std::clamp<Index>(m_session.viewState.head, 0,
                             std::max<Index>(1, m_experiment ? m_experiment->headCount() : 1) - 1);
}

const FlashWalk* Document::flashWalk() const {
    return m_experiment ? m_walks->walk(m_experimentSerial, focusedHead()) : nullptr;
}

void Document::requestFlashWalk() {
    if (flashWalk() || !m_experiment) return;
    if (m_walks->request(*m_experiment, m_experimentSerial, focusedHead(), m_workerThreshold))
        updateBusy();
}

void Document::finishWalk() {
    updateBusy();
    emit changed(What::FlashWalk); // the view asks again if it now wants another head
}

void Document::flush() {
    m_walks->wait();
    m_runs->wait();
}

bool Document::waitForIdle(int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (!m_runs->idle() || m_walks->running()) {
        if (clock.elapsed() > timeoutMs) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return true;
}

} // namespace attnlab::ui

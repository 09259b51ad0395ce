#pragma once
// LatestTask<T>: the window's one kind of background work. One computation runs on a worker
// thread at a time for an owner that shows the latest request's result; every request
// supersedes the ones before it, so only the latest waiting one runs next. What differs between
// its users is stated as its policy (WorkPolicy) and per request:
//
// - coalescing: a request may wait on a timer (a burst of edits becomes one run) or start at once;
// - cancelling: a newer request stops the run in flight at the core's cancel flag, or lets it end;
// - handing over: the latest request's result alone, any result newer than the last handed
//   over (typing sees the maps follow), or every result marked latest or not;
// - inline: a request's job may run at once on the owner's thread (work too small for a thread).
//
// Results are handed to `done` on the owner's (GUI) thread; stop() hands nothing more over. The
// worker holds its inputs and the flag, never the owner: it may outlive both. Exceptions from
// the work become the result's error. Used by the session's run (Document), the model's load,
// run and head roles (ModelDocument), the layer of a dump (DumpDocument), the stepper's flash
// walk (FlashWalkRunner), patching (PatchingDocument), the logit-lens and attribution tabs, the
// model view's thumbnails and the Hub's download dialog.
//
//   LatestTask<Table> task(view, [view](Result<Table> t) { view->show(std::move(t)); });
//   task.start([inputs](const std::atomic<bool>* cancel) { return compute(inputs, cancel); });

#include <QCoreApplication>
#include <QEventLoop>
#include <QFutureWatcher>
#include <QObject>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "attnlab/base/result.h"

namespace attnlab::ui {

/// How a LatestTask treats a request that comes while a run is in flight, and which finished
/// run's result it hands over.
struct WorkPolicy {
    /// A newer request stops the run in flight at its cancel flag; false: the run goes on to its
    /// end, and its result is handed over as `hand` says.
    bool cancelStale = true;
    enum class Hand {
        Latest, ///< the latest request's result alone
        Newer,  ///< a result newer than the last handed over, even while newer requests wait
        Every,  ///< every finished run's result, marked latest or not: the owner chooses
    };
    Hand hand = Hand::Latest;
};

template <typename T> class LatestTask {
public:
    /// The computation, run with the flag it stops at.
    using Work = std::function<Result<T>(const std::atomic<bool>* cancel)>;
    /// What a request runs: on the worker, or at once on the owner's thread (`here`).
    struct Job {
        Work work;
        bool here = false;
    };
    /// Makes a request's job when it starts, from the owner's state then; nothing: there is
    /// nothing to run, and the request is done.
    using Prepare = std::function<std::optional<Job>()>;
    /// Receives a result, and whether it is the latest request's.
    using Done = std::function<void(Result<T>, bool latest)>;

    /// `done` runs in `owner`'s thread, never after `owner` is gone. The policy: a newer request
    /// cancels, and the latest request's result alone is handed over.
    LatestTask(QObject* owner, std::function<void(Result<T>)> done)
        : LatestTask(owner, WorkPolicy{}, [done = std::move(done)](Result<T> result, bool) {
              done(std::move(result));
          }) {}
    LatestTask(QObject* owner, WorkPolicy policy, Done done)
        : m_watcher(std::make_unique<QFutureWatcher<Output>>()), m_done(std::move(done)),
          m_policy(policy) {
        QObject::connect(m_watcher.get(), &QFutureWatcher<Output>::finished, owner,
                         [this] { finishRun(); });
        m_timer.setSingleShot(true);
        QObject::connect(&m_timer, &QTimer::timeout, owner, [this] { startWaiting(); });
    }
    ~LatestTask() {
        stop();
        m_watcher->waitForFinished(); // the run stops at its flag; its watcher goes with it
    }
    LatestTask(const LatestTask&) = delete;
    LatestTask& operator=(const LatestTask&) = delete;

    /// Called with true when a run starts on the worker from idle, and false when the last one
    /// has ended (a progress indicator, a Cancel button). Jobs run here never make it busy.
    void onBusyChanged(std::function<void(bool)> changed) { m_busyChanged = std::move(changed); }

    /// A request whose work is known now, started on the worker at once (or once the run in
    /// flight has stopped).
    void start(Work work) {
        request([work = std::move(work)]() -> std::optional<Job> { return Job{work}; });
    }
    /// A request whose job is made when it starts: after `delayMs` on a timer (0: the next turn
    /// of the event loop, so every change made in this turn is one request), at once for -1,
    /// and never before the run in flight has ended (then at once).
    void request(Prepare prepare, int delayMs = -1) {
        ++m_latest;
        m_waiting = std::move(prepare);
        if (m_running || m_preparing) {
            if (m_running && m_policy.cancelStale) m_cancel->store(true);
            return;
        }
        if (delayMs >= 0) {
            m_timer.start(delayMs);
            return;
        }
        m_timer.stop();
        startWaiting();
    }
    /// Cancels the run in flight and the waiting request; nothing more is handed over.
    void stop() {
        m_waiting.reset();
        m_timer.stop();
        if (m_running) {
            m_cancel->store(true);
            m_stopped = true;
        }
    }
    /// From a run's start on the worker until the last run has ended with nothing waiting: what
    /// onBusyChanged reports.
    bool busy() const { return m_busy; }
    /// Nothing runs and no request waits.
    bool idle() const { return !m_running && !m_waiting; }
    /// Starts a request waiting on its timer now, and processes events until every request
    /// has run and its result has been handed over (export, tests, headless rendering).
    void wait() {
        while (!idle()) {
            if (!m_running) {
                m_timer.stop();
                startWaiting();
                continue;
            }
            m_watcher->waitForFinished();
            QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        }
    }

private:
    struct Output {
        std::optional<Result<T>> result; // a QFuture's result is default-constructed
    };

    static Output run(const Work& work, const std::atomic<bool>* cancel) {
        Output out;
        try {
            out.result = work(cancel);
        } catch (const std::exception& error) {
            out.result = Result<T>(Error{error.what()});
        }
        return out;
    }

    /// Starts the waiting request, and the one after it where a job runs here.
    void startWaiting() {
        while (!m_running && m_waiting) {
            Prepare prepare = std::move(*m_waiting);
            m_waiting.reset();
            const std::uint64_t ticket = m_latest;
            m_preparing = true; // a request made while the job is made waits for it
            std::optional<Job> job;
            try {
                job = prepare();
            } catch (...) {
                m_preparing = false;
                throw;
            }
            m_preparing = false;
            if (!job) continue;
            if (job->here) {
                const std::atomic<bool> never{false};
                hand(ticket, run(job->work, &never).result);
                continue;
            }
            m_running = true;
            m_ticket = ticket;
            m_cancel = std::make_shared<std::atomic<bool>>(false);
            m_watcher->setFuture(QtConcurrent::run(
                [work = std::move(job->work), flag = m_cancel] { return run(work, flag.get()); }));
            if (!m_busy) {
                m_busy = true;
                if (m_busyChanged) m_busyChanged(true);
            }
        }
    }

    void finishRun() {
        Output out = m_watcher->result();
        const bool stopped = std::exchange(m_stopped, false);
        m_running = false;
        // With nothing waiting the task is idle before the owner has the result, so what the
        // owner does with it sees no work in flight (and may ask for more).
        if (!m_waiting && m_busy) {
            m_busy = false;
            if (m_busyChanged) m_busyChanged(false);
        }
        if (!stopped) hand(m_ticket, std::move(out.result));
        startWaiting();
    }

    void hand(std::uint64_t ticket, std::optional<Result<T>> result) {
        if (!result) return;
        const bool latest = ticket == m_latest;
        switch (m_policy.hand) {
        case WorkPolicy::Hand::Latest:
            if (!latest) return;
            break;
        case WorkPolicy::Hand::Newer:
            if (ticket <= m_handed) return;
            break;
        case WorkPolicy::Hand::Every:
            break;
        }
        m_handed = std::max(m_handed, ticket);
        m_done(std::move(*result), latest);
    }

    std::unique_ptr<QFutureWatcher<Output>> m_watcher;
    QTimer m_timer; ///< a request's delay
    Done m_done;
    WorkPolicy m_policy;
    std::function<void(bool)> m_busyChanged;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::optional<Prepare> m_waiting; ///< the latest request, not started
    std::uint64_t m_latest = 0;       ///< the latest request's number
    std::uint64_t m_ticket = 0;       ///< the number of the request running
    std::uint64_t m_handed = 0;       ///< the newest request whose result was handed over
    bool m_running = false;
    bool m_preparing = false;
    bool m_stopped = false; ///< stop() came while the run was in flight
    bool m_busy = false;
};

} // namespace attnlab::ui

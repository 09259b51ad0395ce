#pragma once
// LatestTask<T>: one computation on a worker thread at a time, for an owner that only ever
// shows the latest request's result. A request while one runs cancels it (through the core's
// cancel flag) and runs when it stops; only the latest request's result is handed to `done`,
// on the owner's (GUI) thread; stop() hands nothing over. The worker holds its inputs and the
// flag, never the owner: it may outlive both. Used by opening a model (ModelDocument), the
// logit-lens and attribution tabs, the head-roles probe, PatchingDocument, the stepper's flash
// walk (FlashWalkRunner) and the Hub's download dialog; the session's and the model's runs, which
// coalesce bursts of edits on a timer and reuse earlier runs, keep their loops on LatestRequest.
//
//   LatestTask<Table> task(view, [view](Result<Table> t) { view->show(std::move(t)); });
//   task.start([inputs](const std::atomic<bool>* cancel) { return compute(inputs, cancel); });

#include <QCoreApplication>
#include <QEventLoop>
#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "attnlab/base/result.h"

namespace attnlab::ui {

template <typename T> class LatestTask {
public:
    /// The computation, run on the worker with the flag it stops at.
    using Work = std::function<Result<T>(const std::atomic<bool>* cancel)>;

    /// `done` runs in `owner`'s thread, never after `owner` is gone.
    LatestTask(QObject* owner, std::function<void(Result<T>)> done)
        : m_watcher(std::make_unique<QFutureWatcher<Output>>()), m_done(std::move(done)) {
        QObject::connect(m_watcher.get(), &QFutureWatcher<Output>::finished, owner,
                         [this] { finish(); });
    }
    ~LatestTask() {
        stop();
        m_watcher->waitForFinished(); // the run stops at its flag; its watcher goes with it
    }
    LatestTask(const LatestTask&) = delete;
    LatestTask& operator=(const LatestTask&) = delete;

    /// Called with true when a run starts from idle and false when the last one ends (a
    /// progress indicator, a Cancel button).
    void onBusyChanged(std::function<void(bool)> changed) { m_busyChanged = std::move(changed); }

    void start(Work work) {
        if (m_running) {
            m_next = std::move(work);
            m_cancel->store(true);
            return;
        }
        launch(std::move(work));
        if (m_busyChanged) m_busyChanged(true);
    }
    /// Cancels the request in flight and any waiting one; nothing is handed over.
    void stop() {
        m_next.reset();
        if (m_cancel) m_cancel->store(true);
    }
    /// True from a request until its result is handed over (or dropped).
    bool busy() const { return m_running; }
    /// Processes events until the latest request's result is handed over (export, tests).
    void wait() {
        while (m_running) {
            m_watcher->waitForFinished();
            QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        }
    }

private:
    struct Output {
        std::optional<Result<T>> result; // a QFuture's result is default-constructed
    };

    void launch(Work work) {
        m_running = true;
        m_cancel = std::make_shared<std::atomic<bool>>(false);
        m_watcher->setFuture(QtConcurrent::run([work = std::move(work), flag = m_cancel] {
            Output out;
            try {
                out.result = work(flag.get());
            } catch (const std::exception& error) {
                out.result = Result<T>(Error{error.what()});
            }
            return out;
        }));
    }
    void finish() {
        Output out = m_watcher->result();
        // Read here, not on the worker: a stop before this point drops even a finished run.
        const bool stopped = m_cancel->load();
        if (m_next) {
            Work next = std::move(*m_next);
            m_next.reset();
            launch(std::move(next));
            return;
        }
        m_running = false;
        if (m_busyChanged) m_busyChanged(false);
        if (!stopped && out.result) m_done(std::move(*out.result));
    }

    std::unique_ptr<QFutureWatcher<Output>> m_watcher;
    std::function<void(Result<T>)> m_done;
    std::function<void(bool)> m_busyChanged;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::optional<Work> m_next;
    bool m_running = false;
};

} // namespace attnlab::ui

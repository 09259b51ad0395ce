#pragma once
// The stepper's FlashAttention walk (attnlab/attention/flash_walk.h) of one head of the
// experiment on screen: computed at once when the head is small, else on a worker thread.
// A walk is keyed by the experiment's serial and the head; one of an experiment or head no
// longer shown is never handed out. The Document owns one and keeps to its file and undo
// history.

#include <QObject>

#include <memory>

#include "attnlab/base/tensor.h"

namespace attnlab {
class FlashWalk;
struct Experiment;
} // namespace attnlab

namespace attnlab::ui {

template <typename T> class LatestTask;

class FlashWalkRunner : public QObject {
    Q_OBJECT

public:
    explicit FlashWalkRunner(QObject* parent = nullptr);
    ~FlashWalkRunner() override;

    /// The walk of `head` of the experiment numbered `serial`; nullptr until it is ready.
    const FlashWalk* walk(quint64 serial, Index head) const;
    /// Asks for walk(serial, head) of `experiment`: computed here when its S_q x S_k is at most
    /// `workerThreshold` cells, else on the worker (finished() when it is ready; while another
    /// walk runs, the caller asks again on finished()). True when a worker started.
    bool request(const Experiment& experiment, quint64 serial, Index head, qint64 workerThreshold);
    bool running() const;
    /// Waits for the running walk and takes its result (finished() is emitted).
    void wait();
    /// Forgets the walk shown (a new experiment); a running one is dropped when it ends.
    void clear() { m_walk.reset(); }

signals:
    void finished();

private:
    /// A walk with the experiment and head it was made for.
    struct Keyed {
        std::shared_ptr<const FlashWalk> walk;
        quint64 serial = 0;
        Index head = -1;
    };

    std::shared_ptr<const FlashWalk> m_walk;
    quint64 m_serial = 0;
    Index m_head = -1;
    std::unique_ptr<LatestTask<Keyed>> m_task; ///< the worker, one walk at a time
};

} // namespace attnlab::ui

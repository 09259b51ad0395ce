#include "ui/state/flash_walk_runner.h"

#include <algorithm>
#include <optional>

#include "attnlab/attention/flash_walk.h"
#include "attnlab/lab/session.h"
#include "ui/state/latest_task.h"

namespace attnlab::ui {

namespace {

/// The focused head's walk: its Q, K, V copied out of the experiment (one head, small).
struct WalkJob {
    Matrix q, k, v;
    MaskSpec mask;
    double scale = 1;
    Index qBlock = 1, kvBlock = 1;
};

std::optional<WalkJob> walkJobOf(const Experiment& experiment, Index head) {
    if (!experiment.hasQk() || experiment.headCount() == 0) return std::nullopt;
    head = std::clamp<Index>(head, 0, experiment.headCount() - 1);
    const Index kvHead = experiment.kvHeadOf(head);
    WalkJob job;
    job.q = experiment.qkv.q.head(0, head);
    job.k = experiment.qkv.k.head(0, kvHead);
    job.v = experiment.qkv.v.head(0, kvHead);
    job.mask = maskFor(experiment.mask, job.q.rows(), job.k.rows());
    job.scale = experiment.scale;
    // Blocks: the session's (the stepper edits them); a dump re-run uses the defaults.
    job.qBlock = std::max<Index>(1, experiment.session.qBlock);
    job.kvBlock = std::max<Index>(1, experiment.session.kvBlock);
    return job;
}

std::shared_ptr<const FlashWalk> runWalk(const WalkJob& job) {
    try {
        return std::make_shared<const FlashWalk>(job.q, job.k, job.v, job.mask, 0, job.scale,
                                                 job.qBlock, job.kvBlock);
    } catch (const std::exception&) {
        return nullptr; // the view says there is nothing to step
    }
}

} // namespace

FlashWalkRunner::FlashWalkRunner(QObject* parent)
    : QObject(parent), m_task(std::make_unique<LatestTask<Keyed>>(this, [this](Result<Keyed> done) {
          // A walk of an experiment replaced since (clear()) is dropped by walk()'s key check.
          if (done) {
              m_walk = std::move(done->walk);
              m_serial = done->serial;
              m_head = done->head;
          }
          emit finished();
      })) {}

FlashWalkRunner::~FlashWalkRunner() = default; // the task waits for a walk in flight

const FlashWalk* FlashWalkRunner::walk(quint64 serial, Index head) const {
    return m_walk && m_serial == serial && m_head == head ? m_walk.get() : nullptr;
}

bool FlashWalkRunner::running() const {
    return m_task->busy();
}

bool FlashWalkRunner::request(const Experiment& experiment, quint64 serial, Index head,
                              qint64 workerThreshold) {
    if (running()) return false; // finished() follows; the caller asks again then
    const std::optional<WalkJob> job = walkJobOf(experiment, head);
    if (!job) return false;
    const qint64 work = static_cast<qint64>(job->q.rows()) * job->k.rows();
    if (work <= workerThreshold) {
        m_walk = runWalk(*job);
        m_serial = serial;
        m_head = head;
        return false; // the caller reads walk() now; nothing else changed
    }
    m_task->start([job = *job, serial, head](const std::atomic<bool>*) -> Result<Keyed> {
        return Keyed{runWalk(job), serial, head}; // a walk has no place to stop: it finishes
    });
    return true;
}

void FlashWalkRunner::wait() {
    m_task->wait();
}

} // namespace attnlab::ui

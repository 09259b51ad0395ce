#include "ui/state/flash_walk_runner.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <optional>

#include "attnlab/attention/flash_walk.h"
#include "attnlab/lab/session.h"

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
    job.mask = experiment.mask;
    if (job.mask.custom &&
        (job.mask.custom->rows() != job.q.rows() || job.mask.custom->cols() != job.k.rows()))
        job.mask.custom.reset();
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
    : QObject(parent), m_watcher(new QFutureWatcher<std::shared_ptr<const FlashWalk>>(this)) {
    connect(m_watcher, &QFutureWatcher<std::shared_ptr<const FlashWalk>>::finished, this,
            &FlashWalkRunner::take);
}

FlashWalkRunner::~FlashWalkRunner() {
    if (m_running) m_watcher->waitForFinished();
}

const FlashWalk* FlashWalkRunner::walk(quint64 serial, Index head) const {
    return m_walk && m_serial == serial && m_head == head ? m_walk.get() : nullptr;
}

bool FlashWalkRunner::request(const Experiment& experiment, quint64 serial, Index head,
                              qint64 workerThreshold) {
    if (m_running) return false; // take() says finished(); the caller asks again then
    const std::optional<WalkJob> job = walkJobOf(experiment, head);
    if (!job) return false;
    const qint64 work = static_cast<qint64>(job->q.rows()) * job->k.rows();
    if (work <= workerThreshold) {
        m_walk = runWalk(*job);
        m_serial = serial;
        m_head = head;
        return false; // the caller reads walk() now; nothing else changed
    }
    m_running = true;
    m_runningSerial = serial;
    m_runningHead = head;
    m_watcher->setFuture(QtConcurrent::run(&runWalk, *job));
    return true;
}

void FlashWalkRunner::wait() {
    if (!m_running) return;
    m_watcher->waitForFinished();
    take();
}

void FlashWalkRunner::take() {
    if (!m_running) return; // wait() took the result already
    m_running = false;
    // A walk of an experiment replaced since (clear()) is dropped by walk()'s key check.
    m_walk = m_watcher->result();
    m_serial = m_runningSerial;
    m_head = m_runningHead;
    emit finished();
}

} // namespace attnlab::ui

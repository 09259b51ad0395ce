#pragma once
// parallelFor: the one worker pool of attnlab_core, shared by every parallel loop of the
// process (attention, the model's GEMMs, dumps). Internal; kernels never see threads.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>

#include "attnlab/base/tensor.h"
#include "attnlab/base/threads.h"

namespace attnlab::detail {

/// A non-owning reference to a callable taking an item index (what the pool runs).
class ItemTask {
public:
    template <typename Task>
    explicit ItemTask(const Task& task)
        : m_object(&task),
          m_call([](const void* object, Index item) { (*static_cast<const Task*>(object))(item); }) {}
    void operator()(Index item) const { m_call(m_object, item); }

private:
    const void* m_object;
    void (*m_call)(const void*, Index);
};

/// Runs task(0 .. count-1) on `workers` threads: the caller and up to workers - 1 threads of
/// the process's pool (started on first use, grown on demand, kept until exit). Items are
/// handed out one at a time, so which thread runs an item depends on timing: a task's result
/// must depend on its item only. The first exception a task throws is rethrown here after
/// every started item has finished (the rest are skipped). A parallelFor inside a task runs
/// on the calling thread alone.
void runOnPool(Index count, int workers, const ItemTask& task);

/// Threads the pool has started so far (for tests and benchmarks).
int poolThreads();

/// Workers worth waking for `items` items of about `workPerItem` multiply-adds each: at
/// most `threads` (0 = hardware), at most one per item, and no more than gives each worker
/// kMinWork (waking a sleeping thread costs microseconds; a step smaller than that, such as
/// one appended token's attention, runs on fewer threads, or on the caller alone).
inline int workersFor(Index items, double workPerItem, int threads) {
    constexpr double kMinWork = 1 << 16;
    const double byWork = std::floor(static_cast<double>(items) * workPerItem / kMinWork);
    const double most = std::min<double>(resolveThreads(threads), static_cast<double>(items));
    return static_cast<int>(std::max(1.0, std::min(most, byWork)));
}

/// Runs task(0 .. count-1) over up to `threads` threads (0 = hardware), the caller's included.
template <typename Task> void parallelFor(Index count, int threads, const Task& task) {
    if (count <= 0) return;
    const int workers = static_cast<int>(std::min<Index>(resolveThreads(threads), count));
    if (workers <= 1) {
        for (Index i = 0; i < count; ++i)
            task(i);
        return;
    }
    runOnPool(count, workers, ItemTask(task));
}

/// parallelFor with the workers limited by the work (workersFor): for loops whose items may
/// be too small to be worth a thread each.
template <typename Task>
void parallelFor(Index count, int threads, double workPerItem, const Task& task) {
    parallelFor(count, workersFor(count, workPerItem, threads), task);
}

/// The items of a parallelRuns, split into one run of consecutive items per worker: the owner
/// of a run takes its items from the front, in order; a worker whose run is done takes the
/// others' from the back. Each run's front and back are one atomic word.
class Runs {
public:
    Runs(Index count, int runs);
    /// The front item of `run`, or -1 when it has none left; `next` is then the item after it
    /// while one is left (-1 otherwise): what its owner takes next unless another takes it first.
    Index takeFront(int run, Index& next);
    /// The back item of `run` (-1 when none is left), `next` the one before it (or -1).
    Index takeBack(int run, Index& next);

private:
    Index take(int run, bool front, Index& next);

    std::unique_ptr<std::atomic<std::uint64_t>[]> m_bounds; ///< front << 32 | back
};

/// Runs task(item, next) for item 0 .. count-1 over up to `threads` threads (0 = hardware), as
/// many as the work is worth (workersFor). Each worker goes through its own run of consecutive
/// items in order, and then takes the last items of the runs not yet done, so the work stays
/// balanced when a worker starts late. `next` is the item the same worker will probably run
/// after this one (-1 where none is left): a task may ask for that item's data while it works.
/// Which thread runs an item depends on timing: a task's result must depend on its item only.
/// A task's exception stops the handing out and is rethrown after the running items finish.
template <typename Task>
void parallelRuns(Index count, int threads, double workPerItem, const Task& task) {
    if (count <= 0) return;
    const int workers = workersFor(count, workPerItem, threads);
    if (workers <= 1) {
        for (Index i = 0; i < count; ++i)
            task(i, i + 1 < count ? i + 1 : Index{-1});
        return;
    }
    Runs runs(count, workers);
    std::atomic<bool> failed{false};
    auto guarded = [&](Index item, Index next) {
        try {
            task(item, next);
        } catch (...) {
            failed = true;
            throw;
        }
    };
    parallelFor(workers, workers, [&](Index own) {
        Index next = -1;
        for (Index item = runs.takeFront(static_cast<int>(own), next); item >= 0 && !failed;
             item = runs.takeFront(static_cast<int>(own), next))
            guarded(item, next);
        for (int step = 1; step < workers && !failed; ++step) {
            const int other = static_cast<int>((own + step) % workers);
            for (Index item = runs.takeBack(other, next); item >= 0 && !failed;
                 item = runs.takeBack(other, next))
                guarded(item, next);
        }
    });
}

} // namespace attnlab::detail

// The process's worker pool: threads started on first use and kept, sleeping on a condition
// variable between jobs, so a parallel loop costs a wake-up rather than a thread start (a
// model's forward runs hundreds of them; appending one token got slower with more threads
// when each started its own). A worker that has just finished, and a caller waiting for the
// last items, spin a moment before they sleep: the next job of a forward is usually that close.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "attnlab/base/parallel.h"

#include "attnlab/base/check.h"

namespace attnlab::detail {
namespace {

/// The most threads the pool starts, whatever is asked.
constexpr int kMostThreads = 256;

/// How long a worker spins for the next job, and the caller for its job's last items, before
/// they sleep. A wake-up from sleep takes tens of microseconds on a virtual machine, and a job
/// can pay two (the worker's at its start, the caller's at its end); a forward runs five jobs
/// a layer, with gaps between them (a norm, a head split) shorter than this. A thread that
/// spins in vain spends this once, then sleeps. With more threads than the CPUs can run at
/// once nobody spins: a spinning thread would hold a CPU that a thread with items waits for
/// (appending a token at 16 threads on 2 CPUs took 35 ms sleeping, 38-46 spinning). Nothing
/// computed depends on it.
constexpr auto kSpin = std::chrono::microseconds(200);

void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
}

/// Spins until ready() or kSpin has passed; whether ready() held.
template <typename Ready> bool spinUntil(const Ready& ready) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    do {
        for (int i = 0; i < 64; ++i) {
            if (ready()) return true;
            relax();
        }
    } while (std::chrono::steady_clock::now() < until);
    return ready();
}

/// True on a pool thread, and on any thread while it runs a job's items: a parallelFor there
/// runs serially (a nested job could otherwise wait on the threads that wait on it).
thread_local bool t_insideJob = false;

/// One parallelFor: its items, and the helpers that joined it.
struct Job {
    const ItemTask* task = nullptr;
    Index count = 0;
    std::atomic<Index> next{0};
    int openSlots = 0;          ///< helpers that may still join (under the pool's mutex)
    std::atomic<int> active{0}; ///< helpers inside work() (changed under the pool's mutex)
    std::exception_ptr failure;
    std::mutex failureMutex;

    /// Runs items until none are left; the first failure stops the handing out.
    void work() {
        for (Index item = next++; item < count; item = next++) {
            try {
                (*task)(item);
            } catch (...) {
                std::lock_guard lock(failureMutex);
                if (!failure) failure = std::current_exception();
                next = count;
            }
        }
    }
};

class Pool {
public:
    ~Pool() {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_wake.notify_all();
        for (auto& thread : m_threads)
            thread.join();
    }

    void run(Index count, int workers, const ItemTask& task) {
        Job job;
        job.task = &task;
        job.count = count;
        const int helpers = std::min(workers, kMostThreads + 1) - 1;
        {
            std::lock_guard lock(m_mutex);
            while (static_cast<int>(m_threads.size()) < helpers) {
                m_threads.emplace_back([this] { serve(); });
                m_spin = static_cast<int>(m_threads.size()) < hardwareThreads();
            }
            job.openSlots = helpers;
            m_jobs.push_back(&job);
            m_openSlots += helpers;
        }
        for (int i = 0; i < helpers; ++i)
            m_wake.notify_one();
        t_insideJob = true;
        job.work();
        t_insideJob = false;
        std::unique_lock lock(m_mutex);
        // No helper joins from now on; wait for those inside (they hold items).
        if (job.openSlots > 0) std::erase(m_jobs, &job);
        m_openSlots -= job.openSlots;
        job.openSlots = 0;
        if (job.active > 0 && m_spin) {
            lock.unlock();
            spinUntil([&] { return job.active == 0; });
            lock.lock();
        }
        // Under the mutex: the last helper has left its notify before the job goes.
        m_finished.wait(lock, [&] { return job.active == 0; });
        lock.unlock();
        if (job.failure) std::rethrow_exception(job.failure);
    }

    int threads() {
        std::lock_guard lock(m_mutex);
        return static_cast<int>(m_threads.size());
    }

private:
    void serve() {
        t_insideJob = true;
        std::unique_lock lock(m_mutex);
        for (;;) {
            if (m_jobs.empty() && !m_stopping && m_spin) {
                lock.unlock();
                spinUntil([&] { return m_openSlots > 0 || m_stopping; });
                lock.lock();
            }
            m_wake.wait(lock, [&] { return m_stopping || !m_jobs.empty(); });
            if (m_stopping) return;
            Job* job = m_jobs.front();
            if (--job->openSlots == 0) m_jobs.pop_front();
            --m_openSlots;
            ++job->active;
            lock.unlock();
            job->work();
            lock.lock();
            if (--job->active == 0) m_finished.notify_all();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_finished;
    std::deque<Job*> m_jobs; ///< jobs with open slots, oldest first
    std::vector<std::thread> m_threads;
    // Changed under the mutex, read without it by spinning threads.
    std::atomic<int> m_openSlots{0}; ///< the queued jobs' open slots
    std::atomic<bool> m_stopping{false};
    std::atomic<bool> m_spin{false}; ///< whether the threads, the caller's with them, fit the CPUs
};

Pool& pool() {
    static Pool instance;
    return instance;
}

} // namespace

void runOnPool(Index count, int workers, const ItemTask& task) {
    if (t_insideJob || workers <= 1 || count <= 1) {
        for (Index i = 0; i < count; ++i)
            task(i);
        return;
    }
    pool().run(count, workers, task);
}

namespace {

constexpr std::uint64_t kBackMask = 0xffffffffu;

std::uint64_t bounds(Index front, Index back) {
    return static_cast<std::uint64_t>(front) << 32 | static_cast<std::uint64_t>(back);
}

} // namespace

Runs::Runs(Index count, int runs) {
    ATTN_CHECK(count >= 0 && count <= static_cast<Index>(kBackMask) && runs > 0,
               "Runs: " << count << " items in " << runs << " runs");
    m_bounds = std::make_unique<std::atomic<std::uint64_t>[]>(static_cast<std::size_t>(runs));
    for (int r = 0; r < runs; ++r)
        m_bounds[static_cast<std::size_t>(r)] = bounds(count * r / runs, count * (r + 1) / runs);
}

Index Runs::takeFront(int run, Index& next) {
    return take(run, true, next);
}

Index Runs::takeBack(int run, Index& next) {
    return take(run, false, next);
}

Index Runs::take(int run, bool front, Index& next) {
    auto& word = m_bounds[static_cast<std::size_t>(run)];
    std::uint64_t now = word.load();
    for (;;) {
        const auto first = static_cast<Index>(now >> 32);
        const auto last = static_cast<Index>(now & kBackMask); // one past
        if (first >= last) break;
        // What is left after the item: [lo, hi), whose end on the same side comes next.
        const Index lo = front ? first + 1 : first;
        const Index hi = front ? last : last - 1;
        if (word.compare_exchange_weak(now, bounds(lo, hi))) {
            next = lo < hi ? (front ? lo : hi - 1) : -1;
            return front ? first : last - 1;
        }
    }
    next = -1;
    return -1;
}

int poolThreads() {
    return pool().threads();
}

} // namespace attnlab::detail

namespace attnlab {

int hardwareThreads() {
    static const int count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return count;
}

} // namespace attnlab

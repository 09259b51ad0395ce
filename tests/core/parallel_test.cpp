// The process's worker pool (parallel.h): every item runs once whatever the thread count, a
// task's exception reaches the caller, nested and concurrent loops finish, the pool keeps its
// threads instead of starting new ones per loop, and small steps use few workers.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "attnlab/base/parallel.h"

namespace attnlab::detail {
namespace {

TEST(ParallelFor, RunsEveryItemOnceAtAnyThreadCount) {
    for (int threads : {0, 1, 2, 3, 7, 16})
        for (Index count : {0, 1, 2, 5, 64, 1000}) {
            std::vector<std::atomic<int>> runs(static_cast<std::size_t>(count));
            parallelFor(count, threads, [&](Index i) { ++runs[static_cast<std::size_t>(i)]; });
            for (Index i = 0; i < count; ++i)
                EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 1)
                    << "item " << i << " of " << count << ", " << threads << " threads";
        }
}

TEST(ParallelFor, UsesSeveralThreadsAndKeepsThem) {
    std::mutex mutex;
    std::set<std::thread::id> seen;
    // Items that wait for one another can only finish when two threads run them at once.
    std::atomic<int> arrived{0};
    parallelFor(2, 2, [&](Index) {
        {
            std::lock_guard lock(mutex);
            seen.insert(std::this_thread::get_id());
        }
        ++arrived;
        while (arrived.load() < 2)
            std::this_thread::yield();
    });
    EXPECT_EQ(seen.size(), 2u);
    const int started = poolThreads();
    EXPECT_GE(started, 1);
    for (int i = 0; i < 200; ++i)
        parallelFor(8, 4, [](Index) {});
    EXPECT_LE(poolThreads(), std::max(started, 3)) << "a loop started threads of its own";
}

TEST(ParallelFor, RethrowsATasksExceptionAndStaysUsable) {
    for (int threads : {1, 2, 5}) {
        std::atomic<int> ran{0};
        EXPECT_THROW(parallelFor(100, threads,
                                 [&](Index i) {
                                     ++ran;
                                     if (i == 17) throw std::runtime_error("item 17");
                                 }),
                     std::runtime_error);
        EXPECT_GE(ran.load(), 1);
        std::atomic<Index> sum{0};
        parallelFor(100, threads, [&](Index i) { sum += i; });
        EXPECT_EQ(sum.load(), 4950);
    }
}

TEST(ParallelFor, NestedAndConcurrentLoopsFinish) {
    std::atomic<Index> total{0};
    parallelFor(6, 3, [&](Index) { parallelFor(10, 3, [&](Index j) { total += j; }); });
    EXPECT_EQ(total.load(), 6 * 45);

    std::vector<std::thread> callers;
    std::vector<Index> sums(4, 0);
    for (int c = 0; c < 4; ++c)
        callers.emplace_back([&sums, c] {
            for (int round = 0; round < 50; ++round) {
                std::atomic<Index> sum{0};
                parallelFor(37, 3, [&](Index i) { sum += i; });
                sums[static_cast<std::size_t>(c)] += sum.load();
            }
        });
    for (auto& caller : callers)
        caller.join();
    for (Index sum : sums)
        EXPECT_EQ(sum, 50 * 666);
}

TEST(ParallelFor, SmallStepsUseFewWorkers) {
    EXPECT_EQ(workersFor(12, 100.0, 16), 1);         // one appended token's heads
    EXPECT_EQ(workersFor(1000, 1e6, 16), 16);        // a prompt's GEMM
    EXPECT_EQ(workersFor(3, 1e9, 16), 3);            // never more workers than items
    EXPECT_EQ(workersFor(64, double(1 << 16), 8), 8);
    EXPECT_EQ(workersFor(4, double(1 << 16), 8), 4);
    EXPECT_EQ(workersFor(0, 1.0, 8), 1);
}

// parallelRuns: consecutive items per worker, in order, the rest taken from the back.

constexpr double kBigWork = 1e9; // items worth a worker each

TEST(ParallelRuns, RunsEveryItemOnceAtAnyThreadCount) {
    for (int threads : {1, 2, 3, 7, 16})
        for (Index count : {0, 1, 2, 5, 64, 1000}) {
            std::vector<std::atomic<int>> runs(static_cast<std::size_t>(count));
            parallelRuns(count, threads, kBigWork,
                         [&](Index i, Index) { ++runs[static_cast<std::size_t>(i)]; });
            for (Index i = 0; i < count; ++i)
                EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 1)
                    << "item " << i << " of " << count << ", " << threads << " threads";
        }
}

TEST(ParallelRuns, OneWorkerGoesInOrderAndNamesEachNextItem) {
    std::vector<Index> order;
    std::vector<Index> nexts;
    parallelRuns(9, 1, kBigWork, [&](Index i, Index next) {
        order.push_back(i);
        nexts.push_back(next);
    });
    EXPECT_EQ(order, (std::vector<Index>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(nexts, (std::vector<Index>{1, 2, 3, 4, 5, 6, 7, 8, -1}));
}

/// What each thread ran, in order, with the `next` it was given.
struct Trace {
    std::mutex mutex;
    std::map<std::thread::id, std::vector<std::pair<Index, Index>>> byThread;
    void add(Index item, Index next) {
        std::lock_guard lock(mutex);
        byThread[std::this_thread::get_id()].emplace_back(item, next);
    }
};

TEST(ParallelRuns, NextIsWhatTheSameThreadRunsUnlessAnotherTookIt) {
    for (int threads : {2, 3, 4})
        for (int round = 0; round < 20; ++round) {
            Trace trace;
            parallelRuns(200, threads, kBigWork, [&](Index i, Index next) { trace.add(i, next); });
            std::map<Index, std::thread::id> ranBy;
            for (const auto& [thread, items] : trace.byThread)
                for (const auto& item : items)
                    ranBy[item.first] = thread;
            ASSERT_EQ(ranBy.size(), 200u);
            for (const auto& [thread, items] : trace.byThread)
                for (std::size_t k = 0; k < items.size(); ++k) {
                    const auto [item, next] = items[k];
                    if (next < 0) continue;
                    const bool ranNext = k + 1 < items.size() && items[k + 1].first == next;
                    EXPECT_TRUE(ranNext || ranBy[next] != thread)
                        << "item " << item << " named " << next << ", which its thread skipped";
                    EXPECT_TRUE(next == item + 1 || next == item - 1) << item << " -> " << next;
                }
        }
}

TEST(ParallelRuns, AWorkerThatStallsHasItsRunTakenOver) {
    // The item that starts the second run waits until every other item has run: only a worker
    // that takes items from the back of another's run lets the loop finish. (Bounded, so that a
    // failure is a failed expectation rather than a hang.)
    constexpr Index kCount = 40;
    std::atomic<Index> done{0};
    bool othersFinished = false;
    parallelRuns(kCount, 2, kBigWork, [&](Index i, Index) {
        if (i == kCount / 2) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            while (done.load() < kCount - 1 && std::chrono::steady_clock::now() < until)
                std::this_thread::yield();
            othersFinished = done.load() == kCount - 1;
        }
        ++done;
    });
    EXPECT_TRUE(othersFinished);
    EXPECT_EQ(done.load(), kCount);
}

TEST(ParallelRuns, RethrowsATasksExceptionAndStops) {
    for (int threads : {1, 2, 5}) {
        // The first task to start throws. A fixed item could be the last one left (the others'
        // runs taken from the back while its run's owner was still waking), and every item would
        // then have run however the loop stopped; each other task takes long enough that the
        // rest cannot all run before the failure is seen, even under Valgrind.
        std::atomic<int> ran{0};
        EXPECT_THROW(parallelRuns(1000, threads, kBigWork,
                                  [&](Index, Index) {
                                      if (ran++ == 0) throw std::runtime_error("the first");
                                      std::this_thread::sleep_for(std::chrono::microseconds(200));
                                  }),
                     std::runtime_error);
        EXPECT_LT(ran.load(), 1000) << threads << " threads";
        std::atomic<Index> sum{0};
        parallelRuns(100, threads, kBigWork, [&](Index i, Index) { sum += i; });
        EXPECT_EQ(sum.load(), 4950);
    }
}

} // namespace
} // namespace attnlab::detail

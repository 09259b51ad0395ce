// The process's worker pool (parallel.h): every item runs once whatever the thread count, a
// task's exception reaches the caller, nested and concurrent loops finish, the pool keeps its
// threads instead of starting new ones per loop, and small steps use few workers.

#include <gtest/gtest.h>

#include <atomic>
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

} // namespace
} // namespace attnlab::detail

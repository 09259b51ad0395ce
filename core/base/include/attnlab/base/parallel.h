#pragma once
// parallelFor: the one worker pool of attnlab_core. Internal; kernels never see threads.

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "attnlab/base/tensor.h"

namespace attnlab::detail {

/// Runs task(0 .. count-1) over up to `threads` threads (0 = hardware), the caller's included.
template <typename Task> void parallelFor(Index count, int threads, const Task& task) {
    unsigned wanted = threads > 0 ? static_cast<unsigned>(threads)
                                  : std::max(1u, std::thread::hardware_concurrency());
    const auto workers = static_cast<unsigned>(std::min<Index>(wanted, count));
    if (workers <= 1) {
        for (Index i = 0; i < count; ++i)
            task(i);
        return;
    }
    std::atomic<Index> next{0};
    std::exception_ptr failure;
    std::mutex failureMutex;
    auto work = [&] {
        try {
            for (Index i = next++; i < count; i = next++)
                task(i);
        } catch (...) {
            std::lock_guard lock(failureMutex);
            if (!failure) failure = std::current_exception();
            next = count;
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    for (unsigned t = 1; t < workers; ++t)
        pool.emplace_back(work);
    work();
    for (auto& thread : pool)
        thread.join();
    if (failure) std::rethrow_exception(failure);
}

} // namespace attnlab::detail

// LatestTask: the window's one kind of background work, under each policy its users state. The
// worker's runs wait on gates the test opens, so what overlaps what is fixed by the test, never
// by timing.
#include "ui/state/latest_task.h"

#include <QObject>

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::ui {
namespace {

/// A run that waits for its gate, then gives its name and whether its flag was set by then.
struct Gate {
    std::promise<void> open;
    std::shared_future<void> opened = open.get_future().share();

    static std::shared_future<void> alreadyOpen() {
        Gate gate;
        gate.open.set_value();
        return gate.opened;
    }
};

struct Handed {
    std::string value;
    bool latest = false;
    bool busy = false; ///< the task's busy() as the owner got the result
};

struct Fixture {
    QObject owner;
    std::vector<Handed> handed;
    std::vector<bool> busy;
    std::unique_ptr<LatestTask<std::string>> task;

    explicit Fixture(WorkPolicy policy) {
        task = std::make_unique<LatestTask<
            std::string>>(&owner, policy, [this](Result<std::string> result, bool latest) {
            handed.push_back({result ? *result : "error: " + result.error(), latest, task->busy()});
        });
        task->onBusyChanged([this](bool b) { busy.push_back(b); });
    }
    /// A worker run named `name` that ends when `gate` opens, noting whether it was cancelled.
    static LatestTask<std::string>::Work gated(std::string name, std::shared_future<void> gate) {
        return [name = std::move(name), gate](const std::atomic<bool>* cancel) {
            gate.wait();
            return Result<std::string>(name + (cancel->load() ? " (cancelled)" : ""));
        };
    }
};

TEST(LatestTask, ALatestPolicyCancelsTheRunInFlightAndRunsOnlyTheLastRequest) {
    Fixture f(WorkPolicy{});
    Gate first;
    const std::shared_future<void> open = Gate::alreadyOpen();
    f.task->start(Fixture::gated("a", first.opened));
    f.task->start(Fixture::gated("b", open)); // superseded before it starts: never runs
    f.task->start(Fixture::gated("c", open));
    EXPECT_TRUE(f.task->busy());
    first.open.set_value();
    f.task->wait();
    ASSERT_EQ(f.handed.size(), 1u);
    EXPECT_EQ(f.handed[0].value, "c");
    EXPECT_TRUE(f.handed[0].latest);
    // With nothing waiting, the owner gets the result from an idle task: what it starts then
    // (a model loaded, its first run) is not taken for the load still in flight.
    EXPECT_FALSE(f.handed[0].busy);
    // Busy once, from a's start to c's end: no flicker between the runs.
    EXPECT_EQ(f.busy, (std::vector<bool>{true, false}));
    EXPECT_TRUE(f.task->idle());
}

TEST(LatestTask, ANewerPolicyLetsTheRunEndAndShowsItsResultBeforeTheLatest) {
    // The session's run: typing sees the maps follow.
    Fixture f(WorkPolicy{false, WorkPolicy::Hand::Newer});
    Gate first;
    const std::shared_future<void> open = Gate::alreadyOpen();
    f.task->start(Fixture::gated("a", first.opened));
    f.task->start(Fixture::gated("b", open));
    f.task->start(Fixture::gated("c", open));
    first.open.set_value();
    f.task->wait();
    ASSERT_EQ(f.handed.size(), 2u);
    EXPECT_EQ(f.handed[0].value, "a"); // not cancelled, and newer than nothing shown
    EXPECT_FALSE(f.handed[0].latest);
    EXPECT_TRUE(f.handed[0].busy); // c waits: the task stays busy, no flicker
    EXPECT_EQ(f.handed[1].value, "c");
    EXPECT_TRUE(f.handed[1].latest);
}

TEST(LatestTask, AnEveryPolicyHandsAStaleRunOverMarkedStale) {
    // The model's run: a stale run stops at its flag, and the owner shows it where nothing is.
    Fixture f(WorkPolicy{true, WorkPolicy::Hand::Every});
    Gate first;
    const std::shared_future<void> open = Gate::alreadyOpen();
    f.task->start(Fixture::gated("a", first.opened));
    f.task->start(Fixture::gated("b", open));
    first.open.set_value();
    f.task->wait();
    ASSERT_EQ(f.handed.size(), 2u);
    EXPECT_EQ(f.handed[0].value, "a (cancelled)");
    EXPECT_FALSE(f.handed[0].latest);
    EXPECT_EQ(f.handed[1].value, "b");
    EXPECT_TRUE(f.handed[1].latest);
}

TEST(LatestTask, RequestsOnATimerAreOneRunMadeFromTheStateWhenItStarts) {
    Fixture f(WorkPolicy{});
    int state = 0;
    int prepared = 0;
    auto prepare = [&]() -> std::optional<LatestTask<std::string>::Job> {
        ++prepared;
        const int now = state;
        return LatestTask<std::string>::Job{
            [now](const std::atomic<bool>*) { return Result<std::string>(std::to_string(now)); },
            true};
    };
    for (state = 1; state <= 3; ++state)
        f.task->request(prepare, 0); // a burst of edits in one turn of the event loop
    state = 7;
    EXPECT_EQ(prepared, 0); // nothing starts before control is back in the event loop
    f.task->wait();
    EXPECT_EQ(prepared, 1);
    ASSERT_EQ(f.handed.size(), 1u);
    EXPECT_EQ(f.handed[0].value, "7");
    // A job run here never makes the task busy: no progress bar flashes for it.
    EXPECT_TRUE(f.busy.empty());
}

TEST(LatestTask, NothingToRunEndsTheRequestAndAStopHandsNothingOver) {
    Fixture f(WorkPolicy{});
    f.task->request([]() -> std::optional<LatestTask<std::string>::Job> { return std::nullopt; });
    EXPECT_TRUE(f.task->idle());
    Gate gate;
    f.task->start(Fixture::gated("a", gate.opened));
    f.task->stop();
    gate.open.set_value();
    f.task->wait();
    EXPECT_TRUE(f.handed.empty());
    EXPECT_EQ(f.busy, (std::vector<bool>{true, false}));
    // A throwing run gives its message as the result's error.
    f.task->start([](const std::atomic<bool>*) -> Result<std::string> {
        throw std::runtime_error("the file ends early");
    });
    f.task->wait();
    ASSERT_EQ(f.handed.size(), 1u);
    EXPECT_EQ(f.handed[0].value, "error: the file ends early");
}

} // namespace
} // namespace attnlab::ui

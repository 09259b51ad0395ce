#pragma once
// "Latest request wins", the bookkeeping every document that recomputes in the background
// shares: each change that needs a new result bumps a generation; one run goes at a time,
// carrying the generation it started for; when it ends its result is shown only if it is
// newer than what is shown, and the document runs again while a newer change waits.

#include <cstdint>

namespace attnlab::ui {

class LatestRequest {
public:
    /// Something changed that needs a new result; the new generation.
    std::uint64_t change() { return ++m_latest; }
    /// The latest generation needs no run (nothing to compute, or its result is shown).
    void settle() { m_done = m_latest; }

    std::uint64_t latest() const { return m_latest; }
    bool running() const { return m_running; }
    /// A change waits for a run (running or not).
    bool pending() const { return m_done != m_latest; }
    /// Nothing runs and nothing waits.
    bool idle() const { return !m_running && !pending(); }
    /// A run may start now: a change waits and nothing runs.
    bool canStart() const { return !m_running && pending(); }
    /// A run starts for the latest generation; the ticket its result comes back with.
    std::uint64_t start() {
        m_running = true;
        return m_latest;
    }
    /// The run with `ticket` ended. True when its result is newer than the shown one, which it
    /// now is (a caller that shows only the latest result also asks isLatest(ticket)).
    bool finish(std::uint64_t ticket) {
        m_running = false;
        if (ticket <= m_done) return false;
        m_done = ticket;
        return true;
    }
    bool isLatest(std::uint64_t ticket) const { return ticket == m_latest; }

private:
    std::uint64_t m_latest = 0;
    std::uint64_t m_done = 0;
    bool m_running = false;
};

} // namespace attnlab::ui

#pragma once
/// What a `threads` argument means everywhere in the core and the commands: 0 asks for the
/// hardware's concurrency, any other count is taken as given.

namespace attnlab {

/// The hardware's concurrency, at least 1, asked of the system once (each ask is a system call,
/// about 6 µs here, and every parallel loop wants it).
int hardwareThreads();

/// `threads` as asked (0 = the hardware's concurrency), at least 1.
inline int resolveThreads(int threads) {
    return threads > 0 ? threads : hardwareThreads();
}

} // namespace attnlab

#pragma once
/// Result<T>: a value or an error message, for parsers and readers whose failures are
/// ordinary user input (a truncated .npy, a malformed session) rather than misuse.
///
/// The core's one error convention: whatever comes from a file or a person (npy/npz,
/// sessions, dumps, tokens) is checked by a reader that returns Result<T> / Status whose
/// message names the file (and the key or member) and the problem, and throws nothing for
/// bad input; ATTN_CHECK (check.h) throws InvalidArgument only for misuse by the calling
/// code (a shape mismatch handed to a kernel, a layer index out of range).

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace attnlab {

struct Error {
    std::string message;
};

template <typename T> class [[nodiscard]] Result {
public:
    Result(T value) : m_state(std::move(value)) {}
    Result(Error error) : m_state(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_state); }
    explicit operator bool() const { return ok(); }

    const T& value() const& { return std::get<T>(m_state); }
    T& value() & { return std::get<T>(m_state); }
    T&& value() && { return std::get<T>(std::move(m_state)); }
    const T& operator*() const& { return value(); }
    T& operator*() & { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }

    const std::string& error() const { return std::get<Error>(m_state).message; }

private:
    std::variant<T, Error> m_state;
};

/// Result<void> analogue: empty on success.
using Status = std::optional<Error>;

} // namespace attnlab

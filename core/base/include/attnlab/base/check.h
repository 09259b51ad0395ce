#pragma once
/// Error reporting for the core: ATTN_CHECK throws on misuse, ATTN_ASSERT guards
/// internal invariants in debug builds only.

#include <cassert>
#include <sstream>
#include <stdexcept>
#include <string>

namespace attnlab {

/// Thrown when a caller hands the core something it cannot work with (bad shape,
/// H % Hkv != 0, odd D with RoPE ...). The message is written for a person.
class InvalidArgument : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

namespace detail {
[[noreturn]] inline void throwInvalid(const std::string& message) {
    throw InvalidArgument(message);
}
} // namespace detail

} // namespace attnlab

/// ATTN_CHECK(cond, "message " << value) throws attnlab::InvalidArgument when cond is false.
#define ATTN_CHECK(cond, msg)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::ostringstream attnCheckStream_;                                                   \
            attnCheckStream_ << msg;                                                               \
            ::attnlab::detail::throwInvalid(attnCheckStream_.str());                               \
        }                                                                                          \
    } while (false)

#define ATTN_ASSERT(cond) assert(cond)

#pragma once
// Reading untrusted JSON (sessions, lessons): one exception type that carries "key: problem",
// the type names and whole-number check every reader's messages use. Internal to the core.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"

namespace attnlab::detail {

/// Thrown while reading; the reader's entry point turns it into its Error.
struct JsonProblem {
    std::string message;
};

/// Throws JsonProblem{"key: what"}.
[[noreturn]] void fail(const std::string& key, const std::string& what);

/// "an integer", "a number", "a string", "true/false", "null", "a list" or "an object".
std::string typeOf(const nlohmann::json& value);

/// A whole number that fits an Index: an integer, or a float with no fractional part below
/// 9e15 (JSON writers that print 3 as 3.0); anything else fails naming `where`.
Index wholeNumber(const nlohmann::json& value, const std::string& where);

/// Parses JSON text. A number nlohmann cannot hold (1e400 overflows a double) is an error
/// naming the key it belongs to ("attention.scale: the number 1e400 is too large ..."); a
/// syntax error is "not valid JSON: ..." without nlohmann's exception prefix.
Result<nlohmann::json> parseJson(std::string_view text);

} // namespace attnlab::detail

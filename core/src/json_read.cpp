#include "json_read.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace attnlab::detail {

void fail(const std::string& key, const std::string& what) {
    throw JsonProblem{key + ": " + what};
}

std::string typeOf(const nlohmann::json& value) {
    if (value.is_number_integer()) return "an integer";
    if (value.is_number_float()) return "a number";
    if (value.is_string()) return "a string";
    if (value.is_boolean()) return "true/false";
    if (value.is_null()) return "null";
    if (value.is_array()) return "a list";
    return "an object";
}

Index wholeNumber(const nlohmann::json& v, const std::string& where) {
    if (v.is_number_integer()) {
        if (v.is_number_unsigned() &&
            v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<Index>::max()))
            fail(where, v.dump() + " is too large (at most " +
                            std::to_string(std::numeric_limits<Index>::max()) + ")");
        return v.get<Index>();
    }
    if (v.is_number_float()) {
        // Integers beyond 64 bits arrive as floats: say they are too large, not fractional.
        const double value = v.get<double>();
        if (std::isfinite(value) && value == std::floor(value) && std::abs(value) < 9.0e15)
            return static_cast<Index>(value);
        if (std::isfinite(value) && value == std::floor(value))
            fail(where, v.dump() + " is too large for a whole number here");
        fail(where, "expected a whole number, got " + v.dump());
    }
    fail(where, "expected a whole number, got " + typeOf(v));
}

} // namespace attnlab::detail

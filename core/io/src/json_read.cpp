#include "attnlab/io/json_read.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

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

using Json = nlohmann::json;

Result<nlohmann::json> parseJson(std::string_view text) {
    // An empty file is common (a failed save, a new file) and the parser's words for it are not.
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        return Error{"the file is empty"};
    std::vector<std::string> keys; // keys[d] is the key being read at nesting depth d + 1
    const Json::parser_callback_t track = [&keys](int depth, Json::parse_event_t event,
                                                  Json& parsed) {
        if (event == Json::parse_event_t::key && depth >= 1 && parsed.is_string()) {
            keys.resize(static_cast<std::size_t>(depth - 1));
            keys.push_back(parsed.get<std::string>());
        }
        return true;
    };
    try {
        return Json::parse(text.begin(), text.end(), track);
    } catch (const Json::out_of_range& e) {
        std::string where;
        for (const auto& key : keys)
            if (!key.empty()) where += (where.empty() ? "" : ".") + key;
        // nlohmann says "number overflow parsing '1e400'": keep only the number.
        std::string number;
        const std::string what = e.what();
        const auto open = what.find('\'');
        const auto close = what.rfind('\'');
        if (open != std::string::npos && close != std::string::npos && close > open)
            number = what.substr(open + 1, close - open - 1);
        return Error{(where.empty() ? std::string("a value") : where) + ": the number " +
                     (number.empty() ? std::string("given") : number) +
                     " is too large to be read (beyond the range of a double)"};
    } catch (const Json::exception& e) {
        // parse_error; type_error cannot occur while parsing text, but never let one escape.
        std::string message = e.what();
        // Drop nlohmann's "[json.exception.parse_error.101] " prefix: the rest is readable.
        if (const auto bracket = message.find("] ");
            message.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos)
            message.erase(0, bracket + 2);
        return Error{"not valid JSON: " + message};
    }
}

} // namespace attnlab::detail

#pragma once
// The command-line conventions every attnlab command shares: `--opt VALUE` or `--opt=VALUE`,
// each option at most once, and every problem a CommandError whose message becomes the one
// line on stderr before exit status 2.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "attnlab/tensor.h"

namespace attnlab::app {

/// A problem with what the person asked for.
struct CommandError {
    std::string message;
};

[[noreturn]] void fail(const std::string& message);

struct OptionSpec {
    std::string_view name;
    bool takesValue;
};

/// The options as given: name -> value ("" for flags).
using Arguments = std::map<std::string, std::string, std::less<>>;

/// Parses argv against `options` ("-h" is --help). `command` names the command in messages;
/// options listed in `emptyAllowed` may take an empty value.
Arguments parseArguments(int argc, char** argv, std::span<const OptionSpec> options,
                         std::string_view command,
                         std::span<const std::string_view> emptyAllowed = {});

std::optional<std::string> get(const Arguments& args, std::string_view name);
/// The value of a required option, or fail naming it.
std::string require(const Arguments& args, std::string_view name);

/// A whole-word integer; `what` names the option in the message.
Index parseInteger(const std::string& text, const std::string& what);
/// An integer >= minimum.
Index parseAtLeast(const std::string& text, const std::string& what, Index minimum);
/// A finite real number.
double parseReal(const std::string& text, const std::string& what);

} // namespace attnlab::app

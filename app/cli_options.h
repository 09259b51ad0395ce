#pragma once
// The command-line conventions every attnlab command shares: `--opt VALUE` or `--opt=VALUE`,
// each option at most once, and every problem a CommandError whose message becomes the one
// line on stderr before exit status 2.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "attnlab/base/tensor.h"

namespace attnlab::app {

/// A problem with what the person asked for.
struct CommandError {
    std::string message;
};

[[noreturn]] void fail(const std::string& message);

struct OptionSpec {
    std::string_view name;
    bool takesValue;
    /// A value that may be left out (the option alone, or followed by another option): it is
    /// then "" (e.g. `model --attribution`: the model's own prediction).
    bool valueOptional = false;
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

/// The folder a --model argument names: the argument itself when it is a folder, else the
/// snapshot of a Hub id (ORG/NAME[@REVISION]) in the Hugging Face cache
/// (attnlab/model/hub_cache.h); fails naming --model when it is neither.
std::string modelFolder(const std::string& argument);

/// A whole-word integer; `what` names the option in the message.
Index parseInteger(const std::string& text, const std::string& what);
/// An integer >= minimum.
Index parseAtLeast(const std::string& text, const std::string& what, Index minimum);
/// An integer in [minimum, maximum]; the message names both ends.
Index parseInRange(const std::string& text, const std::string& what, Index minimum, Index maximum);
/// A finite real number.
double parseReal(const std::string& text, const std::string& what);
/// A real number the float32 kernels can use as it is: finite, at most FLT_MAX in magnitude,
/// and 0 or at least FLT_MIN (a smaller one would become 0 or a denormal as a float).
double parseFloat32(const std::string& text, const std::string& what);

/// The largest sequence position, window, length or block size an option takes: no
/// attention over more keys than this fits in memory, and larger values would overflow
/// the position arithmetic.
constexpr Index kMaxExtentOption = (Index(1) << 31) - 1;

/// Runs a command's body and turns whatever it throws (CommandError, the core's
/// InvalidArgument, running out of memory, any other exception) into the convention every
/// command shares: one line "attnlab COMMAND: message" on stderr and exit status 2.
/// `outOfMemory` says what was too large for this command.
int runCommandBody(std::string_view command, int (*body)(int, char**), int argc, char** argv,
                   std::string_view outOfMemory = "not enough memory");

/// The process's peak resident set so far, in bytes (getrusage's ru_maxrss, the kernel's
/// VmHWM: mapped file pages that were read count, as the heap does).
double peakResidentBytes();

} // namespace attnlab::app

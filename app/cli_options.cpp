#include "cli_options.h"

#include "attnlab/base/check.h"
#include "attnlab/model/hub_cache.h"
#include "attnlab/model/hub_download.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <new>
#include <stdexcept>

namespace attnlab::app {

void fail(const std::string& message) {
    throw CommandError{message};
}

namespace {

const OptionSpec* findOption(std::span<const OptionSpec> options, std::string_view name) {
    for (const OptionSpec& option : options)
        if (option.name == name) return &option;
    return nullptr;
}

} // namespace

Arguments parseArguments(int argc, char** argv, std::span<const OptionSpec> options,
                         std::string_view command, std::span<const std::string_view> emptyAllowed) {
    Arguments args;
    for (int i = 0; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-h") {
            args["help"] = "";
            continue;
        }
        if (arg.size() < 3 || arg.substr(0, 2) != "--")
            fail("unexpected argument '" + std::string(arg) + "' (options start with --)");
        std::string_view name = arg.substr(2);
        std::optional<std::string> value;
        if (const auto eq = name.find('='); eq != std::string_view::npos) {
            value = std::string(name.substr(eq + 1));
            name = name.substr(0, eq);
        }
        const OptionSpec* option = findOption(options, name);
        const std::string flag = "--" + std::string(name);
        if (!option)
            fail("unknown option " + flag + " (see attnlab " + std::string(command) + " --help)");
        if (args.count(name)) fail(flag + " is given more than once");
        if (!option->takesValue) {
            if (value) fail(flag + " takes no value");
            args[std::string(name)] = "";
            continue;
        }
        if (!value) {
            // The next word is the value, unless it is another option.
            const bool nextIsOption = i + 1 < argc && std::string_view(argv[i + 1]).size() > 2 &&
                                      std::string_view(argv[i + 1]).substr(0, 2) == "--" &&
                                      findOption(options, std::string_view(argv[i + 1]).substr(2));
            if (i + 1 >= argc || nextIsOption) {
                if (!option->valueOptional) fail(flag + " needs a value");
                value = std::string();
            } else {
                value = argv[++i];
            }
        }
        const bool mayBeEmpty =
            std::find(emptyAllowed.begin(), emptyAllowed.end(), name) != emptyAllowed.end();
        if (value->empty() && !mayBeEmpty) fail(flag + " needs a value");
        args[std::string(name)] = *value;
    }
    return args;
}

std::optional<std::string> get(const Arguments& args, std::string_view name) {
    const auto it = args.find(name);
    if (it == args.end()) return std::nullopt;
    return it->second;
}

std::string require(const Arguments& args, std::string_view name) {
    auto value = get(args, name);
    if (!value) fail("missing required option --" + std::string(name));
    return *value;
}

std::string modelFolder(const std::string& argument) {
    // A Hub id that is not in the cache is downloaded (hub_download.h): a line that updates on
    // a terminal, one line per file otherwise.
    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    const auto start = std::chrono::steady_clock::now();
    model::DownloadRate rate;
    model::HubDownloadOptions options;
    options.progress = [&](const model::HubDownloadProgress& progress) {
        if (!terminal || progress.file.empty()) return true;
        rate.add(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                 progress.done);
        std::cerr << "\r\033[Kattnlab: " << model::downloadStatusLine(progress, rate) << std::flush;
        return true;
    };
    options.fileDone = [&](const std::string& line) {
        std::cerr << (terminal ? "\r\033[K" : "") << "attnlab: " << line << '\n';
    };
    const auto planned = [](const model::HubDownloadPlan& plan) {
        std::cerr << "attnlab: " << plan.id.repo << "@" << plan.id.revision << " (commit "
                  << plan.commit.substr(0, 12) << "): " << plan.files.size() << " files, "
                  << model::sizeText(plan.missing) << " to download from " << plan.endpoint
                  << " into " << plan.cacheRoot << '\n';
    };
    auto folder = model::fetchModelArgument(argument, options, planned);
    if (!folder) fail("--model: " + folder.error());
    return *folder;
}

Index parseInteger(const std::string& text, const std::string& what) {
    long long value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec == std::errc::result_out_of_range) fail(what + ": '" + text + "' is out of range");
    if (ec != std::errc() || ptr != end) fail(what + ": '" + text + "' is not an integer");
    return static_cast<Index>(value);
}

Index parseAtLeast(const std::string& text, const std::string& what, Index minimum) {
    const Index value = parseInteger(text, what);
    if (value < minimum) fail(what + " must be >= " + std::to_string(minimum) + ", got " + text);
    return value;
}

Index parseInRange(const std::string& text, const std::string& what, Index minimum, Index maximum) {
    const Index value = parseInteger(text, what);
    if (value < minimum || value > maximum)
        fail(what + " must be between " + std::to_string(minimum) + " and " +
             std::to_string(maximum) + ", got " + text);
    return value;
}

double parseFloat32(const std::string& text, const std::string& what) {
    const double value = parseReal(text, what);
    const double magnitude = std::abs(value);
    if (magnitude > std::numeric_limits<float>::max())
        fail(what + ": " + text + " is beyond the float32 range (at most " +
             std::to_string(std::numeric_limits<float>::max()) + ")");
    if (value != 0 && magnitude < std::numeric_limits<float>::min())
        fail(what + ": " + text + " is too small for float32 (it would be 0); use 0 or at least " +
             "1.2e-38 in magnitude");
    return value;
}

double parseReal(const std::string& text, const std::string& what) {
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size())
        fail(what + ": '" + text + "' is not a number");
    if (!std::isfinite(value) || errno == ERANGE) fail(what + ": '" + text + "' is not finite");
    return value;
}

int runCommandBody(std::string_view command, int (*body)(int, char**), int argc, char** argv,
                   std::string_view outOfMemory) {
    std::string message;
    try {
        return body(argc, argv);
    } catch (const CommandError& error) {
        message = error.message;
    } catch (const InvalidArgument& error) {
        message = error.what();
    } catch (const std::bad_alloc&) {
        message = outOfMemory;
    } catch (const std::length_error&) {
        message = "these sizes are too large to hold in memory";
    } catch (const std::exception& error) {
        message = std::string("failed: ") + error.what();
    }
    for (char& c : message)
        if (c == '\n' || c == '\r') c = ' ';
    std::cerr << "attnlab " << command << ": " << message << '\n';
    return 2;
}

double peakResidentBytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

} // namespace attnlab::app

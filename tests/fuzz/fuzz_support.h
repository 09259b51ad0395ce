#pragma once
// Shared by the libFuzzer harnesses: the readers that take a path get the fuzzer's bytes
// through one temporary file per process (removed at exit), named with the extension the
// reader looks at.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>

namespace attnlab::fuzz {

/// Writes `data` to "<tmp>/attnlab_fuzz_<pid>.<extension>" and returns its path. The files
/// of this process are removed when it exits.
inline std::string writeInput(const std::uint8_t* data, std::size_t size,
                              const std::string& extension) {
    static std::map<std::string, std::string> paths;
    auto& path = paths[extension];
    if (path.empty()) {
        path = (std::filesystem::temp_directory_path() /
                ("attnlab_fuzz_" + std::to_string(::getpid()) + "." + extension))
                   .string();
        static bool registered = false;
        if (!registered) {
            registered = true;
            std::atexit([] {
                for (const auto& [ext, p] : paths)
                    std::remove(p.c_str());
            });
        }
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) std::abort(); // the harness itself failed, not the reader
    return path;
}

} // namespace attnlab::fuzz

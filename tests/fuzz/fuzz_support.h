#pragma once
// Shared by the libFuzzer harnesses: the readers that take a path get the fuzzer's bytes
// through one temporary file per process (removed at exit), named with the extension the
// reader looks at; the readers of a folder get one temporary folder per process, its files cut
// from the input by splitSections.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

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

/// The parts of `data` between the lines "--8<--" ("\n--8<--\n" separates them), at most
/// `count` (the last part holds the rest, separators and all). The seed corpora write a folder's
/// files this way, so that the fuzzer mutates each file and can drop the later ones.
inline std::vector<std::string_view> splitSections(const std::uint8_t* data, std::size_t size,
                                                   std::size_t count) {
    static constexpr std::string_view separator = "\n--8<--\n";
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> sections;
    while (sections.size() + 1 < count) {
        const std::size_t at = rest.find(separator);
        if (at == std::string_view::npos) break;
        sections.push_back(rest.substr(0, at));
        rest.remove_prefix(at + separator.size());
    }
    sections.push_back(rest);
    return sections;
}

/// An empty folder "<tmp>/attnlab_fuzz_<pid>_<name>" (emptied on each call) for a reader that
/// takes a folder; removed when the process exits.
inline std::filesystem::path emptyFolder(const std::string& name) {
    static std::map<std::string, std::filesystem::path> folders;
    auto& folder = folders[name];
    if (folder.empty()) {
        folder = std::filesystem::temp_directory_path() /
                 ("attnlab_fuzz_" + std::to_string(::getpid()) + "_" + name);
        static bool registered = false;
        if (!registered) {
            registered = true;
            std::atexit([] {
                std::error_code ignored;
                for (const auto& [n, f] : folders)
                    std::filesystem::remove_all(f, ignored);
            });
        }
    }
    std::error_code error;
    std::filesystem::remove_all(folder, error);
    if (!std::filesystem::create_directories(folder, error) || error) std::abort();
    return folder;
}

/// Writes `bytes` to `folder`/`name`.
inline void writeFile(const std::filesystem::path& folder, const std::string& name,
                      std::string_view bytes) {
    std::ofstream out(folder / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) std::abort(); // the harness itself failed, not the reader
}

} // namespace attnlab::fuzz

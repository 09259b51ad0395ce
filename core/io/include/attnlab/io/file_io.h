#pragma once
/// Whole-file reading and writing for the core's readers and the CLI: bounded reads, atomic
/// writes (temp file beside the target, then rename), and several outputs that commit
/// together or not at all.

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "attnlab/base/result.h"

namespace attnlab {

/// Reads a whole file; the error names the file. A file larger than maxBytes is refused
/// before it is read (and a stream that grows past it is refused as soon as it does).
Result<std::string> readFile(const std::string& path,
                             std::size_t maxBytes = std::numeric_limits<std::size_t>::max());

/// Writes `contents` to a new file "<path>.tmp-XXXXXX" beside path and returns its name, for
/// callers that publish several files together (see StagedFiles). On failure nothing is left
/// behind.
Result<std::string> writeTempBeside(const std::string& path, const std::string& contents);

/// Writes `contents` to path atomically (temp file in the same folder, then rename).
Status writeFileAtomic(const std::string& path, const std::string& contents);

/// Outputs of one command: each is written beside its target under a temporary name, and
/// commit() renames them all only when every one was written and every target can take a
/// file (it is not a folder, nor named twice). Whatever was not committed is removed when
/// the object goes away, so a failed command leaves the user's files as they were.
class StagedFiles {
public:
    StagedFiles() = default;
    StagedFiles(const StagedFiles&) = delete;
    StagedFiles& operator=(const StagedFiles&) = delete;
    ~StagedFiles();

    /// Writes contents to a temp file beside path.
    Status stage(const std::string& path, const std::string& contents);
    /// Checks every target, then renames every staged file to its target.
    Status commit();

private:
    struct File {
        std::string path;
        std::string temp;
        bool renamed = false;
    };
    std::vector<File> m_files;
};

} // namespace attnlab

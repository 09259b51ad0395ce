#include "attnlab/io/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <set>

namespace attnlab {

Result<std::string> readFile(const std::string& path, std::size_t maxBytes) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                         &std::fclose);
    if (!file) return Error{"cannot open " + path + ": " + std::strerror(errno)};
    struct stat info {};
    const bool haveInfo = ::fstat(::fileno(file.get()), &info) == 0;
    if (haveInfo && S_ISDIR(info.st_mode))
        return Error{"cannot read " + path + ": it is a directory"};
    auto tooLarge = [&](const std::string& size) {
        return Error{path + ": the file is " + size + " bytes; at most " +
                     std::to_string(maxBytes) + " are read"};
    };
    std::string contents;
    if (haveInfo && S_ISREG(info.st_mode) && info.st_size > 0) {
        const auto size = static_cast<std::uintmax_t>(info.st_size);
        if (size > maxBytes) return tooLarge(std::to_string(size));
        contents.reserve(static_cast<std::size_t>(size));
    }
    char buffer[1 << 16];
    std::size_t got;
    while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
        if (got > maxBytes - contents.size())
            return tooLarge("more than " + std::to_string(maxBytes));
        contents.append(buffer, got);
    }
    if (std::ferror(file.get())) return Error{"cannot read " + path + ": " + std::strerror(errno)};
    return contents;
}

Result<std::string> writeTempBeside(const std::string& path, const std::string& contents) {
    std::random_device device;
    std::string temp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, ".tmp-%06x", device() & 0xffffffu);
        temp = path + suffix;
        fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return Error{"cannot write " + path + ": " + std::strerror(errno)};

    const char* data = contents.data();
    std::size_t left = contents.size();
    int writeError = 0;
    while (left > 0) {
        const ssize_t written = ::write(fd, data, left);
        if (written < 0) {
            if (errno == EINTR) continue;
            writeError = errno;
            break;
        }
        data += written;
        left -= static_cast<std::size_t>(written);
    }
    if (::close(fd) != 0 && writeError == 0) writeError = errno;
    if (writeError != 0) {
        ::unlink(temp.c_str());
        return Error{"cannot write " + path + ": " + std::strerror(writeError)};
    }
    return temp;
}

Status writeFileAtomic(const std::string& path, const std::string& contents) {
    StagedFiles files;
    if (auto error = files.stage(path, contents)) return error;
    return files.commit();
}

StagedFiles::~StagedFiles() {
    for (const auto& file : m_files)
        if (!file.renamed) ::unlink(file.temp.c_str());
}

Status StagedFiles::stage(const std::string& path, const std::string& contents) {
    Result<std::string> temp = writeTempBeside(path, contents);
    if (!temp) return Error{temp.error()};
    m_files.push_back({path, std::move(*temp), false});
    return std::nullopt;
}

Status StagedFiles::commit() {
    // Every check that can be made before the first rename is made first: a rename that
    // would fail (a folder in the way, the same target twice) must not leave the earlier
    // outputs replaced and the later ones not.
    std::set<std::string> targets;
    for (const auto& file : m_files) {
        if (!targets.insert(file.path).second)
            return Error{"cannot write " + file.path + ": it is named as two outputs"};
        struct stat info {};
        if (::stat(file.path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
            return Error{"cannot write " + file.path + ": it is a directory"};
        if (::access(file.temp.c_str(), F_OK) != 0)
            return Error{"cannot write " + file.path + ": its staged copy disappeared"};
    }
    for (auto& file : m_files) {
        if (std::rename(file.temp.c_str(), file.path.c_str()) != 0)
            return Error{"cannot write " + file.path + ": " + std::strerror(errno)};
        file.renamed = true;
    }
    return std::nullopt;
}

} // namespace attnlab

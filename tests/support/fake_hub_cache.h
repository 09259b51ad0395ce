#pragma once
// A Hugging Face cache built by hand in a test's folder, laid out as huggingface_hub lays it
// out (its file_download.py and utils/_cache_manager.py):
//
//   ROOT/models--ORG--NAME/blobs/ETAG                    the file's bytes
//   ROOT/models--ORG--NAME/snapshots/COMMIT/FILE         -> ../../blobs/ETAG (relative link)
//   ROOT/models--ORG--NAME/refs/REF                      COMMIT, no newline
//
// and the environment variables that say where the cache is, set for one test and restored.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::test {

/// Sets and unsets environment variables for its lifetime; the old values come back after.
class EnvironmentScope {
public:
    EnvironmentScope() {
        // The cache's variables start unset; HOME and QT_QPA_PLATFORM keep their values.
        for (const char* name :
             {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME",
              "HF_HUB_OFFLINE", "HF_ENDPOINT", "HF_TOKEN", "HF_TOKEN_PATH", "QT_QPA_PLATFORM"}) {
            const char* value = std::getenv(name);
            m_saved[name] = value ? std::optional<std::string>(value) : std::nullopt;
            if (std::string(name) != "HOME" && std::string(name) != "QT_QPA_PLATFORM")
                ::unsetenv(name);
        }
    }
    ~EnvironmentScope() {
        for (const auto& [name, value] : m_saved) {
            if (value)
                ::setenv(name.c_str(), value->c_str(), 1);
            else
                ::unsetenv(name.c_str());
        }
    }
    EnvironmentScope(const EnvironmentScope&) = delete;
    EnvironmentScope& operator=(const EnvironmentScope&) = delete;

    /// Any variable, restored afterwards like the cache's.
    void set(const std::string& name, const std::string& value) {
        remember(name);
        ::setenv(name.c_str(), value.c_str(), 1);
    }
    void unset(const std::string& name) {
        remember(name);
        ::unsetenv(name.c_str());
    }

private:
    void remember(const std::string& name) {
        if (m_saved.count(name)) return;
        const char* value = std::getenv(name.c_str());
        m_saved[name] = value ? std::optional<std::string>(value) : std::nullopt;
    }

    std::map<std::string, std::optional<std::string>> m_saved;
};

/// Writes models into a cache folder the way huggingface_hub's downloads leave them.
class FakeHubCache {
public:
    explicit FakeHubCache(std::filesystem::path root) : m_root(std::move(root)) {
        std::filesystem::create_directories(m_root);
    }
    const std::filesystem::path& root() const { return m_root; }

    /// The repository folder of `repo` ("ORG/NAME" or "NAME").
    std::filesystem::path repoFolder(const std::string& repo) const {
        std::string name = "models--";
        for (char c : repo)
            name += c == '/' ? std::string("--") : std::string(1, c);
        return m_root / name;
    }

    /// Adds the files of `folder` (the named ones) as snapshot `commit` of `repo`: each file a
    /// blob named by an etag and a relative link to it from the snapshot.
    void addSnapshot(const std::string& repo, const std::string& commit,
                     const std::filesystem::path& folder, const std::vector<std::string>& files) {
        namespace fs = std::filesystem;
        const fs::path repoPath = repoFolder(repo);
        fs::create_directories(repoPath / "blobs");
        fs::create_directories(repoPath / "snapshots" / commit);
        for (const auto& file : files) {
            const std::string etag = etagOf(folder / file);
            const fs::path blob = repoPath / "blobs" / etag;
            if (!fs::exists(blob)) fs::copy_file(folder / file, blob);
            fs::create_symlink(fs::path("..") / ".." / "blobs" / etag,
                               repoPath / "snapshots" / commit / file);
        }
    }

    /// refs/REF holding `commit` (no newline, as huggingface_hub writes it).
    void setRef(const std::string& repo, const std::string& ref, const std::string& commit) {
        const auto path = repoFolder(repo) / "refs" / ref;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary | std::ios::trunc) << commit;
    }

private:
    /// A stand-in for the Hub's etag (a sha256 for LFS files, a git sha1 for the others): 64
    /// hex digits derived from the file's path and size, distinct per file.
    static std::string etagOf(const std::filesystem::path& file) {
        std::uint64_t h = 1469598103934665603ull;
        for (char c : file.string() + "#" + std::to_string(std::filesystem::file_size(file)))
            h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        static const char digits[] = "0123456789abcdef";
        std::string etag;
        for (int i = 0; i < 64; ++i)
            etag += digits[(h >> ((i % 16) * 4)) & 15];
        return etag;
    }

    std::filesystem::path m_root;
};

/// Commits as the Hub writes them: 40 hex digits.
inline const std::string kCommitA = "1d0d7b2f3a4c5e6f708192a3b4c5d6e7f8091a2b";
inline const std::string kCommitB = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807";

} // namespace attnlab::test

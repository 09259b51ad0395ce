#pragma once
// runCommand: runs the built attnlab binary with arguments, waits for it, and returns its exit
// status with what it printed, for the end-to-end command-line tests.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace attnlab::test {

struct CommandResult {
    int status = -1; ///< the exit status, or -1 when the process did not exit normally
    std::string out;
    std::string err;
};

inline std::string readWholeFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Runs `binary args...`; stdout and stderr are captured through files in `captureDir`.
inline CommandResult runCommand(const std::string& binary, const std::vector<std::string>& args,
                                const std::filesystem::path& captureDir) {
    std::vector<std::string> all = {binary};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : all)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::filesystem::create_directories(captureDir);
    const std::string outPath = (captureDir / "stdout").string();
    const std::string errPath = (captureDir / "stderr").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    pid_t pid = 0;
    CommandResult result;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
        ADD_FAILURE() << "cannot run " << binary;
        return result;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = readWholeFile(outPath);
    result.err = readWholeFile(errPath);
    return result;
}

/// A fresh folder per test: `work` holds the files the command sees, `capture` its stdout and
/// stderr (kept apart, so a listing of `work` shows only what the command wrote).
class CommandFolderTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::random_device device;
        m_root = std::filesystem::temp_directory_path() /
                 ("attnlab_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
                  std::to_string(device()));
        std::filesystem::create_directories(m_root / "work");
        std::filesystem::create_directories(m_root / "capture");
    }
    void TearDown() override {
        std::error_code ignored;
        std::filesystem::remove_all(m_root, ignored);
    }

    std::string file(const std::string& name) const { return (m_root / "work" / name).string(); }

    std::set<std::string> listing() const {
        std::set<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(m_root / "work"))
            names.insert(entry.path().filename().string());
        return names;
    }

    /// Runs `binary command args...` with its output captured.
    CommandResult runIn(const std::string& binary, const std::string& command,
                        const std::vector<std::string>& args) const {
        std::vector<std::string> all = {command};
        all.insert(all.end(), args.begin(), args.end());
        return runCommand(binary, all, m_root / "capture");
    }

    std::filesystem::path m_root;
};

} // namespace attnlab::test

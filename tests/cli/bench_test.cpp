// `attnlab bench` on bad input keeps the convention of every command: exit status 2, one line
// on stderr, nothing on stdout and no file written. Sizes beyond the machine's memory are
// refused before anything runs, and a run that cannot have the memory it asks for (the address
// space limited here with ulimit -v) says so in one line instead of terminating on
// std::bad_alloc.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "command_runner.h"
#include "temp_dir.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define ATTNLAB_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATTNLAB_TEST_SANITIZED 1
#endif

namespace attnlab {
namespace {

class BenchCommand : public ::testing::Test {
protected:
    /// Runs `binary args...` in the work folder, stdout and stderr captured apart.
    test::CommandResult run(const std::string& binary, const std::vector<std::string>& args) const {
        return test::runCommand(binary, args, m_capture.path());
    }
    /// Status 2, nothing on stdout, one line "attnlab bench: ..." naming `culprit`, no file.
    void expectOneLine(const test::CommandResult& result, const std::string& culprit) const {
        EXPECT_EQ(result.status, 2) << culprit << ": " << result.err;
        EXPECT_TRUE(result.out.empty()) << culprit << ": " << result.out;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
            << culprit << ": " << result.err;
        EXPECT_EQ(result.err.rfind("attnlab bench: ", 0), 0u) << result.err;
        EXPECT_NE(result.err.find(culprit), std::string::npos)
            << "stderr does not name " << culprit << ": " << result.err;
        EXPECT_EQ(m_work.listing(), m_before) << culprit << ": files were added or removed";
    }

    test::TempDir m_work{"attnlab_bench_work"};
    test::TempDir m_capture{"attnlab_bench_capture"};
    std::vector<std::string> m_before;
};

TEST_F(BenchCommand, BadOptionsAndFilesAreOneLineAndNothingElse) {
    // A model folder whose config.json is not JSON.
    const std::filesystem::path broken = m_work.path() / "broken";
    std::filesystem::create_directories(broken);
    std::ofstream(broken / "config.json") << "{ not json";
    m_before = m_work.listing();
    struct Case {
        std::vector<std::string> args;
        std::string culprit;
    };
    const std::vector<Case> cases = {
        {{"--sizes", "0"}, "--sizes"},
        {{"--sizes", "64,x"}, "--sizes"},
        {{"--dim", "-3"}, "--dim"},
        {{"--heads", "99999999999999999999"}, "--heads"},
        {{"--frobnicate"}, "--frobnicate"},
        {{"--logits"}, "--logits"}, // a model's forward: no model named
        {{"--model", (m_work.path() / "absent").string()}, "absent: not a folder"},
        {{"--model", broken.string()}, "config.json"},
        // Q, K, V and the output alone are 4 x 1024 x 10^9 x 4096 floats: no machine's memory.
        {{"--sizes", "1000000000", "--heads", "1024", "--dim", "4096"}, "this machine has"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = {"bench"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        expectOneLine(run(ATTNLAB_BINARY, args), c.culprit);
    }
}

TEST_F(BenchCommand, RunningOutOfMemoryIsOneLineNamingWhatRanOut) {
#ifdef ATTNLAB_TEST_SANITIZED
    GTEST_SKIP() << "a sanitizer's shadow memory does not fit under ulimit -v";
#else
    m_before = m_work.listing();
    // 1 GiB of address space; S = 32768 needs 4.3 GB for the Eigen reference's S x S floats
    // alone (so a machine with less memory than that refuses the sizes instead: one line too).
    const test::CommandResult result =
        run("/bin/sh", {"-c", "ulimit -v 1048576 && exec \"$0\" \"$@\"", ATTNLAB_BINARY, "bench",
                        "--sizes", "32768", "--threads", "1", "--repeats", "1"});
    expectOneLine(result, "memory");
#endif
}

} // namespace
} // namespace attnlab

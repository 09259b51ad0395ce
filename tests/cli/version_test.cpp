// `attnlab --version` and ATTNLAB_ISA end to end: the binary names the kernel target it runs,
// the widest this CPU runs unless ATTNLAB_ISA names another it runs; an unknown name is ignored
// with one line on stderr, and so is a target the CPU lacks.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "attnlab/base/isa.h"
#include "command_runner.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

/// `attnlab --version` with ATTNLAB_ISA set to `value` (unset when empty).
test::CommandResult versionWith(const std::string& value, const test::TempDir& dir) {
    if (value.empty())
        unsetenv("ATTNLAB_ISA");
    else
        setenv("ATTNLAB_ISA", value.c_str(), 1);
    auto result = test::runCommand(ATTNLAB_BINARY, {"--version"}, dir.path());
    unsetenv("ATTNLAB_ISA");
    return result;
}

std::string kernelsLine(Isa isa) {
    return "kernels: " + std::string(isaName(isa)) + " ";
}

TEST(Version, NamesTheWidestTargetByDefault) {
    test::TempDir dir("attnlab_version");
    const auto result = versionWith("", dir);
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_NE(result.out.find("attnlab "), std::string::npos) << result.out;
    EXPECT_NE(result.out.find(kernelsLine(bestIsa())), std::string::npos) << result.out;
    EXPECT_EQ(result.err, "");
}

TEST(Version, AttnlabIsaChoosesEachTargetTheCpuRuns) {
    test::TempDir dir("attnlab_version");
    for (Isa isa : kAllIsas) {
        const auto result = versionWith(std::string(isaName(isa)), dir);
        ASSERT_EQ(result.status, 0) << result.err;
        if (isaSupported(isa)) {
            EXPECT_NE(result.out.find(kernelsLine(isa)), std::string::npos) << result.out;
            EXPECT_EQ(result.err, "");
        } else {
            EXPECT_NE(result.out.find(kernelsLine(bestIsa())), std::string::npos) << result.out;
            EXPECT_NE(result.err.find("cannot run it"), std::string::npos) << result.err;
        }
    }
}

TEST(Version, AnUnknownTargetIsIgnoredWithOneLine) {
    test::TempDir dir("attnlab_version");
    const auto result = versionWith("sse9", dir);
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_NE(result.out.find(kernelsLine(bestIsa())), std::string::npos) << result.out;
    EXPECT_NE(result.err.find("ATTNLAB_ISA=sse9 is not a kernel target"), std::string::npos)
        << result.err;
}

} // namespace
} // namespace attnlab

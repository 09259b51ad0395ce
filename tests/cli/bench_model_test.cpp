// `attnlab bench --model` end to end on checkpoints saved by transformers itself: it loads them
// with their pages touched, runs the forward and the one-token extension, and reports. An F16
// (GPT-2) and a sharded BF16 (Llama) checkpoint have their vectors widened at load: the
// page-touching once read a moved-from buffer there and crashed (SIGSEGV, nothing printed) on
// every such checkpoint.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "command_runner.h"
#include "temp_dir.h"

namespace attnlab {
namespace {

class BenchModel : public ::testing::TestWithParam<std::string> {};

TEST_P(BenchModel, LoadsRunsAndReports) {
    test::TempDir dir("attnlab_bench_model");
    const std::string model =
        std::string(ATTNLAB_SOURCE_DIR) + "/tests/model/fixtures/" + GetParam();
    const test::CommandResult result = test::runCommand(
        ATTNLAB_BINARY,
        {"bench", "--model", model, "--tokens", "6", "--threads", "2", "--repeats", "1"},
        dir.path());
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_NE(result.out.find("6 tokens, 2 threads"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("forward, all layers"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("of which attention"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("append one token"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("peak RSS"), std::string::npos) << result.out;
}

// --logits: the forward as `attnlab model --logits` runs it, every position's logits in it.
TEST_P(BenchModel, TimesEveryPositionsLogitsWhenAsked) {
    test::TempDir dir("attnlab_bench_model");
    const std::string model =
        std::string(ATTNLAB_SOURCE_DIR) + "/tests/model/fixtures/" + GetParam();
    const test::CommandResult result =
        test::runCommand(ATTNLAB_BINARY,
                         {"bench", "--model", model, "--tokens", "5", "--threads", "1", "--repeats",
                          "1", "--logits"},
                         dir.path());
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_NE(result.out.find("forward, all layers, every position's logits"), std::string::npos)
        << result.out;
}

INSTANTIATE_TEST_SUITE_P(WidenedAndMapped, BenchModel,
                         ::testing::Values("gpt2_base_f16", "llama_gqa_llama3_bf16_sharded",
                                           "qwen2_bias_tied"));

} // namespace
} // namespace attnlab

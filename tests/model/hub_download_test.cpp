// Downloads from a server that answers as the Hub does (tests/support/fake_hub_server.h,
// loopback only): the cache they leave is read back as huggingface_hub reads it (refs ->
// snapshot -> blob), with the blobs' hashes from OpenSSL; a cut download resumes with a Range;
// wrong bytes never enter blobs/; gated repositories ask for a token; offline makes no request.

#include "attnlab/model/hub_download.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "attnlab/model/model.h"
#include "checkpoint_builder.h"
#include "command_runner.h"
#include "fake_hub_cache.h"
#include "fake_hub_server.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using test::EnvironmentScope;
using test::FakeHubServer;
using test::fixtureDir;
using test::hexDigest;
using test::kCommitA;
using test::TempDir;

/// GPT-2's fixture as a Hub repository: config.json in git, the weights in LFS, and files
/// AttnLab does not read (a README, a pickle beside the safetensors, a subfolder).
std::vector<FakeHubServer::File> gpt2Files() {
    const std::string folder = fixtureDir("hf/gpt2");
    return {
        {"config.json", test::readWholeFile(folder + "/config.json"), false},
        {"model.safetensors", test::readWholeFile(folder + "/model.safetensors"), true},
        {"README.md", "# tiny gpt2\n", false},
        {"pytorch_model.bin", std::string(4096, 'p'), true},
        {"onnx/model.onnx", std::string(2048, 'o'), true},
    };
}

class HubDownload : public ::testing::Test {
protected:
    void SetUp() override {
        m_env.set("HF_HUB_CACHE", (m_dir.path() / "hub").string());
        m_env.set("HF_ENDPOINT", m_server.endpoint() + "/"); // a trailing '/' is dropped
        m_env.set("HF_HOME", (m_dir.path() / "hf-home").string());
        // A proxy set on the machine must not see the loopback server.
        m_env.set("no_proxy", "127.0.0.1");
        m_env.set("NO_PROXY", "127.0.0.1");
    }
    fs::path repoFolder(const std::string& repo) const {
        return hubRepoFolder((m_dir.path() / "hub").string(), repo);
    }

    TempDir m_dir{"attnlab_hubdl"};
    EnvironmentScope m_env;
    FakeHubServer m_server;
};

TEST_F(HubDownload, AModelLandsInHuggingFaceHubsLayoutAndOpensByItsName) {
    const auto files = gpt2Files();
    m_server.addRepo("openai-community/gpt2", kCommitA, files);

    std::vector<std::string> lines;
    HubDownloadOptions options;
    options.fileDone = [&](const std::string& line) { lines.push_back(line); };
    auto folder = fetchModelArgument("openai-community/gpt2", options);
    ASSERT_TRUE(folder.ok()) << folder.error();

    // As huggingface_hub reads it: refs/main -> snapshots/COMMIT/FILE -> ../../blobs/ETAG.
    const fs::path repo = repoFolder("openai-community/gpt2");
    EXPECT_EQ(test::readWholeFile(repo / "refs" / "main"), kCommitA);
    const fs::path snapshot = repo / "snapshots" / kCommitA;
    EXPECT_EQ(fs::path(*folder), snapshot);
    const std::string configEtag = hexDigest(files[0].bytes, true);   // git blob sha1
    const std::string weightsEtag = hexDigest(files[1].bytes, false); // sha256
    EXPECT_EQ(fs::read_symlink(snapshot / "config.json"), fs::path("../../blobs") / configEtag);
    EXPECT_EQ(fs::read_symlink(snapshot / "model.safetensors"),
              fs::path("../../blobs") / weightsEtag);
    EXPECT_EQ(test::readWholeFile(repo / "blobs" / configEtag), files[0].bytes);
    EXPECT_EQ(test::readWholeFile(repo / "blobs" / weightsEtag), files[1].bytes);
    // Only what AttnLab reads: no README, no pickle beside safetensors, no subfolder.
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(snapshot))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"config.json", "model.safetensors"}));
    EXPECT_EQ(lines.size(), 2u);
    for (const auto& request : m_server.requests())
        EXPECT_EQ(request.find("pytorch_model"), std::string::npos) << request;

    // It opens by its name, as a folder opens.
    auto model = loadModel(*resolveModelArgument("openai-community/gpt2"));
    ASSERT_TRUE(model.ok()) << model.error();
    EXPECT_EQ(model->config.layers, loadModel(fixtureDir("hf/gpt2"))->config.layers);

    // Asked again, the cache answers and the server hears nothing.
    const std::size_t heard = m_server.requestCount();
    auto again = fetchModelArgument("openai-community/gpt2", options);
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_EQ(m_server.requestCount(), heard);
}

TEST_F(HubDownload, ACutDownloadKeepsItsBytesAndResumesWithARange) {
    auto files = gpt2Files();
    const std::size_t half = files[1].bytes.size() / 2;
    files[1].cutAfter = half;
    m_server.addRepo("gpt2", kCommitA, files);

    auto plan = planHubDownload(*parseHubId("gpt2"));
    ASSERT_TRUE(plan.ok()) << plan.error();
    EXPECT_EQ(plan->bytes, files[0].bytes.size() + files[1].bytes.size());
    EXPECT_EQ(plan->missing, plan->bytes);
    auto cut = downloadHubModel(*plan);
    ASSERT_FALSE(cut.ok());
    EXPECT_NE(cut.error().find("the next try resumes there"), std::string::npos) << cut.error();
    const fs::path blobs = repoFolder("gpt2") / "blobs";
    const std::string etag = hexDigest(files[1].bytes, false);
    EXPECT_EQ(fs::file_size(blobs / (etag + ".incomplete")), half);
    EXPECT_FALSE(fs::exists(blobs / etag));

    auto resumed = downloadHubModel(*plan);
    ASSERT_TRUE(resumed.ok()) << resumed.error();
    EXPECT_EQ(test::readWholeFile(blobs / etag), files[1].bytes);
    EXPECT_FALSE(fs::exists(blobs / (etag + ".incomplete")));
    const auto requests = m_server.requests();
    EXPECT_NE(std::find(requests.begin(), requests.end(),
                        "GET /cdn/" + etag + " Range: bytes=" + std::to_string(half) + "-"),
              requests.end());
    // The config, fetched whole the first time, is linked from its blob the second.
    EXPECT_EQ(std::count_if(requests.begin(), requests.end(),
                            [](const std::string& r) {
                                return r == "GET /gpt2/resolve/" + kCommitA + "/config.json";
                            }),
              1);
}

TEST_F(HubDownload, BytesThatAreNotTheHashTheHubGivesNeverEnterTheCache) {
    auto files = gpt2Files();
    files[1].servedBytes = files[1].bytes;
    files[1].servedBytes[100] ^= 1; // one bit
    m_server.addRepo("gpt2", kCommitA, files);
    auto folder = fetchModelArgument("gpt2");
    ASSERT_FALSE(folder.ok());
    const std::string etag = hexDigest(files[1].bytes, false);
    EXPECT_NE(folder.error().find("sha256 is " + hexDigest(files[1].servedBytes, false) +
                                  ", the Hub says " + etag),
              std::string::npos)
        << folder.error();
    const fs::path blobs = repoFolder("gpt2") / "blobs";
    EXPECT_FALSE(fs::exists(blobs / etag));
    EXPECT_FALSE(fs::exists(blobs / (etag + ".incomplete")));
    EXPECT_FALSE(fs::exists(repoFolder("gpt2") / "snapshots" / kCommitA / "model.safetensors"));

    // A git file's etag is its blob's sha1, checked the same way.
    files = gpt2Files();
    files[0].servedBytes = files[0].bytes + " ";
    m_server.addRepo("org/other", kCommitA, files);
    folder = fetchModelArgument("org/other");
    ASSERT_FALSE(folder.ok());
    EXPECT_NE(folder.error().find("config.json: its git sha1 is " +
                                  hexDigest(files[0].servedBytes, true) + ", the Hub says " +
                                  hexDigest(files[0].bytes, true)),
              std::string::npos)
        << folder.error();
    EXPECT_FALSE(fs::exists(repoFolder("org/other") / "blobs" / hexDigest(files[0].bytes, true)));
}

TEST_F(HubDownload, AGatedModelAsksForATokenAndOpensWithOne) {
    m_server.addRepo("meta/gated", kCommitA, gpt2Files());
    m_server.requireToken("meta/gated", "hf_right");

    auto none = fetchModelArgument("meta/gated");
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().find("needs a token"), std::string::npos) << none.error();
    EXPECT_NE(none.error().find("HF_TOKEN"), std::string::npos) << none.error();

    m_env.set("HF_TOKEN", "hf_wrong");
    auto refused = fetchModelArgument("meta/gated");
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("is gated and this token has no access yet: ask for it at " +
                                   m_server.endpoint() + "/meta/gated"),
              std::string::npos)
        << refused.error();
    EXPECT_NE(refused.error().find("not in the authorized list"), std::string::npos);
    EXPECT_FALSE(fs::exists(repoFolder("meta/gated") / "snapshots"));

    // The token file huggingface_hub's login writes, at HF_HOME/token.
    m_env.unset("HF_TOKEN");
    fs::create_directories(m_dir.path() / "hf-home");
    std::ofstream(m_dir.path() / "hf-home" / "token") << "hf_right\n";
    auto folder = fetchModelArgument("meta/gated");
    ASSERT_TRUE(folder.ok()) << folder.error();
    EXPECT_TRUE(loadModel(*folder).ok());
}

TEST_F(HubDownload, WhatTheServerRefusesIsSaidAndNothingIsWritten) {
    m_server.addRepo("org/tiny", kCommitA, gpt2Files());
    auto missing = fetchModelArgument("org/absent");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("org/absent@main is not on " + m_server.endpoint()),
              std::string::npos)
        << missing.error();
    EXPECT_NE(missing.error().find("Repository not found"), std::string::npos);
    auto revision = fetchModelArgument("org/tiny@v9");
    ASSERT_FALSE(revision.ok());
    EXPECT_NE(revision.error().find("Invalid rev id: v9"), std::string::npos) << revision.error();

    // No config.json: not a model.
    m_server.addRepo("org/data", kCommitA, {{"data.csv", "a,b\n", false}});
    auto data = fetchModelArgument("org/data");
    ASSERT_FALSE(data.ok());
    EXPECT_NE(data.error().find("has no config.json"), std::string::npos) << data.error();
    EXPECT_FALSE(fs::exists(m_dir.path() / "hub"));

    // No server at all.
    m_env.set("HF_ENDPOINT", "http://127.0.0.1:1");
    auto unreachable = fetchModelArgument("org/tiny");
    ASSERT_FALSE(unreachable.ok());
    EXPECT_NE(unreachable.error().find("cannot reach http://127.0.0.1:1"), std::string::npos)
        << unreachable.error();
}

TEST_F(HubDownload, ARenamedRepositoryIsFollowedAndCachedUnderTheNameAsked) {
    const auto files = gpt2Files();
    m_server.addRepo("openai-community/gpt2", kCommitA, files);
    m_server.renameRepo("gpt2", "openai-community/gpt2");
    auto folder = fetchModelArgument("gpt2");
    ASSERT_TRUE(folder.ok()) << folder.error();
    // huggingface_hub keeps it under the id it was asked for.
    EXPECT_EQ(fs::path(*folder), repoFolder("gpt2") / "snapshots" / kCommitA);
    EXPECT_EQ(test::readWholeFile(fs::path(*folder) / "model.safetensors"), files[1].bytes);
    const auto requests = m_server.requests();
    EXPECT_NE(std::find(requests.begin(), requests.end(),
                        "HEAD /openai-community/gpt2/resolve/" + kCommitA + "/config.json"),
              requests.end());
}

TEST_F(HubDownload, OfflineMakesNoRequest) {
    m_server.addRepo("gpt2", kCommitA, gpt2Files());
    m_env.set("HF_HUB_OFFLINE", "1");
    auto folder = fetchModelArgument("gpt2");
    ASSERT_FALSE(folder.ok());
    EXPECT_NE(folder.error().find("HF_HUB_OFFLINE is set"), std::string::npos) << folder.error();
    EXPECT_FALSE(planHubDownload(*parseHubId("gpt2")).ok());
    EXPECT_EQ(m_server.requestCount(), 0u);
}

TEST_F(HubDownload, ACancelledDownloadStopsKeepsItsBytesAndFinishesNextTime) {
    auto files = gpt2Files();
    files[1].bytes = std::string(4 << 20, 'w'); // large enough to be cancelled mid-way
    files[1].name = "model-00001-of-00001.safetensors";
    files[1].pauseMsPer64k = 5; // about 0.3 s for the whole: cancelled mid-way
    m_server.addRepo("gpt2", kCommitA, files);
    auto plan = planHubDownload(*parseHubId("gpt2"));
    ASSERT_TRUE(plan.ok()) << plan.error();
    ASSERT_EQ(plan->files.size(), 2u);

    HubDownloadOptions options;
    std::uint64_t seen = 0;
    options.progress = [&](const HubDownloadProgress& p) {
        EXPECT_LE(p.done, p.total);
        EXPECT_EQ(p.total, plan->bytes);
        seen = p.done;
        return p.fileIndex == 0 || p.fileDone == 0; // cancel once the weights' bytes arrive
    };
    auto cancelled = downloadHubModel(*plan, options);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error(), "cancelled");
    EXPECT_GT(seen, files[0].bytes.size());
    const std::string etag = hexDigest(files[1].bytes, false);
    const fs::path incomplete = repoFolder("gpt2") / "blobs" / (etag + ".incomplete");
    ASSERT_TRUE(fs::exists(incomplete));
    const auto kept = fs::file_size(incomplete);
    EXPECT_GT(kept, 0u);
    EXPECT_LT(kept, files[1].bytes.size());

    options.progress = [&](const HubDownloadProgress& p) {
        seen = p.done;
        return true;
    };
    auto folder = downloadHubModel(*plan, options);
    ASSERT_TRUE(folder.ok()) << folder.error();
    EXPECT_EQ(seen, plan->bytes);
    EXPECT_EQ(test::readWholeFile(fs::path(*folder) / "model-00001-of-00001.safetensors"),
              files[1].bytes);
    const auto requests = m_server.requests();
    EXPECT_NE(std::find(requests.begin(), requests.end(),
                        "GET /cdn/" + etag + " Range: bytes=" + std::to_string(kept) + "-"),
              requests.end());
}

TEST(HubFiles, OnlyWhatTheLoaderReadsAndPickleOnlyWithoutSafetensors) {
    EXPECT_EQ(filesAttnLabReads({"README.md", "config.json", "model.safetensors",
                                 "pytorch_model.bin", "tokenizer.json", "tokenizer_config.json",
                                 "onnx/model.onnx", "flax_model.msgpack", "source.spm",
                                 "vocab.json", "generation_config.json", "../config.json",
                                 "preprocessor_config.json"}),
              (std::vector<std::string>{"config.json", "model.safetensors", "tokenizer.json",
                                        "tokenizer_config.json", "source.spm", "vocab.json",
                                        "generation_config.json", "preprocessor_config.json"}));
    EXPECT_EQ(filesAttnLabReads({"config.json", "pytorch_model-00001-of-00002.bin",
                                 "pytorch_model-00002-of-00002.bin", "pytorch_model.bin.index.json",
                                 "tf_model.h5"}),
              (std::vector<std::string>{"config.json", "pytorch_model-00001-of-00002.bin",
                                        "pytorch_model-00002-of-00002.bin",
                                        "pytorch_model.bin.index.json"}));
}

TEST(HubFiles, TheModelApisAnswerIsCheckedBeforeItIsUsed) {
    auto info = parseHubModelInfo(R"({"sha": ")" + kCommitA +
                                  R"(", "siblings": [{"rfilename": "config.json"}]})");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->commit, kCommitA);
    EXPECT_EQ(info->files, std::vector<std::string>{"config.json"});
    for (const std::string& bad : std::vector<std::string>{
             "", "[]", "{\"sha\": 3}", "{\"sha\": \"../../etc\", \"siblings\": []}",
             "{\"sha\": \"" + kCommitA + "\"}",
             "{\"sha\": \"" + kCommitA + "\", \"siblings\": [1]}",
             "{\"sha\": \"" + kCommitA + "\", \"siblings\": [{\"rfilename\": 2}]}"})
        EXPECT_FALSE(parseHubModelInfo(bad).ok()) << bad;
}

TEST(HubFiles, SpeedAndTimeLeftComeFromTheLastSeconds) {
    DownloadRate rate;
    EXPECT_EQ(rate.bytesPerSecond(), 0);
    EXPECT_LT(rate.secondsLeft(100), 0);
    rate.add(0.0, 0);
    rate.add(1.0, 2'000'000);
    EXPECT_DOUBLE_EQ(rate.bytesPerSecond(), 2e6);
    EXPECT_DOUBLE_EQ(rate.secondsLeft(10'000'000), 4.0);
    // A stall five seconds ago no longer counts.
    rate.add(2.0, 4'000'000);
    rate.add(8.0, 5'000'000);
    rate.add(9.0, 6'000'000);
    EXPECT_DOUBLE_EQ(rate.bytesPerSecond(), 2e6 / 7.0);
    EXPECT_EQ(durationText(65), "1:05");
    EXPECT_EQ(durationText(3723), "1:02:03");
    HubDownloadProgress progress;
    progress.file = "model.safetensors";
    progress.fileIndex = 1;
    progress.fileCount = 3;
    progress.done = 45'200'000;
    progress.total = 548'100'000;
    DownloadRate steady;
    steady.add(0, 0);
    steady.add(4, 45'200'000);
    EXPECT_EQ(downloadStatusLine(progress, steady),
              "model.safetensors (2/3)  45.2 MB of 548.1 MB  11.3 MB/s  0:45 left");
}

} // namespace
} // namespace attnlab::model

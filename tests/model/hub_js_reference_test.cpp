// The Hugging Face cache as the Hub's own JavaScript client reads it (@huggingface/hub 2.17.5,
// installed by the npm_packages CTest fixture, run with node): getHFHubCachePath() is where
// hubCacheRoot() looks, under each combination of the variables, and scanCacheDir() finds in a
// cache built here the repositories, commits, refs and sizes listHubCache() finds; and
// snapshotDownload() and downloadHubModel() fetch from one server (fake_hub_server.h) caches
// that each side reads back.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "attnlab/model/hub_cache.h"
#include "attnlab/model/hub_download.h"
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
using test::FakeHubCache;
using test::fixtureDir;
using test::kCommitA;
using test::kCommitB;
using test::TempDir;

const std::string kHub = std::string(ATTNLAB_NPM_MODULES_DIR) + "/@huggingface/hub";

/// Runs a node script with the client bound to `hub`; its stdout, trimmed.
std::string node(const std::string& script, const fs::path& capture) {
    fs::create_directories(capture);
    const auto run = test::runCommand(
        "/usr/bin/env",
        {"node", "-e", "const hub = require(" + nlohmann::json(kHub).dump() + ");\n" + script},
        capture);
    EXPECT_EQ(run.status, 0) << run.err;
    std::string out = run.out;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
        out.pop_back();
    return out;
}

/// What the client's scanCacheDir() finds in the cache at `root`: per repository its id, type
/// and revisions, each with its commit, sorted refs, sorted file names and size.
nlohmann::json scanCacheDir(const fs::path& root, const fs::path& capture) {
    return nlohmann::json::parse(node(
        "hub.scanCacheDir(" + nlohmann::json(root.string()).dump() +
            ").then(r => console.log(JSON.stringify(r.repos.map(repo => ({id: repo.id.name, "
            "type: repo.id.type, revisions: repo.revisions.map(v => ({commit: v.commitOid, "
            "refs: [...v.refs].sort(), files: v.files.map(f => f.path.split('/').pop()).sort(), "
            "size: Number(v.size)}))})))));",
        capture));
}

class HubJsReference : public ::testing::Test {
protected:
    void SetUp() override {
        if (!fs::exists(kHub + "/package.json"))
            FAIL() << kHub << " is missing: the npm_packages fixture installs it "
                   << "(scripts/npm_test_packages.sh "
                   << fs::path(ATTNLAB_NPM_MODULES_DIR).parent_path() << ")";
    }
};

TEST_F(HubJsReference, TheCacheIsWhereTheHubsClientLooks) {
    TempDir dir("attnlab_hubjs");
    EnvironmentScope env;
    env.set("HOME", "/home/teacher");
    // Each step sets one more variable, of higher precedence than the ones before.
    const std::vector<std::pair<std::string, std::string>> steps = {
        {"", ""},
        {"XDG_CACHE_HOME", "/xdg"},
        {"HF_HOME", "/hf-home"},
        {"HUGGINGFACE_HUB_CACHE", "/legacy"},
        {"HF_HUB_CACHE", "/hub-cache"},
    };
    for (const auto& [name, value] : steps) {
        if (!name.empty()) env.set(name, value);
        const std::string theirs =
            node("console.log(hub.getHFHubCachePath());", dir.path() / "capture");
        EXPECT_EQ(hubCacheRoot(), theirs) << (name.empty() ? "HOME only" : name);
    }
}

TEST_F(HubJsReference, ScanCacheDirFindsWhatTheListFinds) {
    TempDir dir("attnlab_hubjs");
    const fs::path root = dir.path() / "hub";
    FakeHubCache cache(root);
    cache.addSnapshot("openai-community/gpt2", kCommitA, fixtureDir("hf/gpt2"),
                      {"config.json", "model.safetensors"});
    cache.addSnapshot("openai-community/gpt2", kCommitB, fixtureDir("hf/gpt2"), {"config.json"});
    cache.setRef("openai-community/gpt2", "main", kCommitA);
    cache.setRef("openai-community/gpt2", "v1", kCommitB);
    cache.addSnapshot("tiny", kCommitB, fixtureDir("hf/llama_gqa"),
                      {"config.json", "model.safetensors"});
    cache.setRef("tiny", "main", kCommitB);

    // repo -> commit -> (refs, size), as the client reports them.
    const auto theirs = scanCacheDir(root, dir.path() / "capture");
    const std::string json = theirs.dump();
    ASSERT_EQ(theirs.size(), 2u) << json;

    const auto ours = listHubCache(root.string());
    ASSERT_EQ(ours.size(), 2u);
    for (const auto& model : ours) {
        const auto repo = std::find_if(theirs.begin(), theirs.end(),
                                       [&](const auto& r) { return r["id"] == model.id; });
        ASSERT_NE(repo, theirs.end()) << model.id << " is not in " << json;
        EXPECT_EQ((*repo)["type"], "model");
        ASSERT_EQ((*repo)["revisions"].size(), model.snapshots.size()) << json;
        for (const auto& snapshot : model.snapshots) {
            const auto& revisions = (*repo)["revisions"];
            const auto revision =
                std::find_if(revisions.begin(), revisions.end(),
                             [&](const auto& v) { return v["commit"] == snapshot.commit; });
            ASSERT_NE(revision, revisions.end()) << model.id << "@" << snapshot.commit;
            EXPECT_EQ((*revision)["refs"].get<std::vector<std::string>>(), snapshot.refs)
                << model.id << "@" << snapshot.commit;
            EXPECT_EQ((*revision)["size"].get<std::uintmax_t>(), snapshot.bytes)
                << model.id << "@" << snapshot.commit;
            // And every snapshot the client lists resolves here to the same folder.
            for (const auto& ref : snapshot.refs) {
                HubId id;
                id.repo = model.id;
                id.revision = ref;
                auto folder = resolveHubSnapshot(id, root.string());
                ASSERT_TRUE(folder.ok()) << folder.error();
                EXPECT_EQ(fs::path(*folder).filename(), snapshot.commit);
            }
        }
    }
}

/// GPT-2's fixture as a repository: config in git, weights in LFS, and a README.
std::vector<test::FakeHubServer::File> tinyRepository() {
    const auto read = [](const std::string& path) { return test::readWholeFile(path); };
    const std::string folder = fixtureDir("hf/gpt2");
    return {{"config.json", read(folder + "/config.json")},
            {"model.safetensors", read(folder + "/model.safetensors"), true},
            {"README.md", "# tiny\n"}};
}

TEST_F(HubJsReference, ACacheTheHubsClientDownloadedOpensHereOffline) {
    TempDir dir("attnlab_hubjs");
    EnvironmentScope env;
    env.set("no_proxy", "127.0.0.1");
    test::FakeHubServer server;
    server.addRepo("org/tiny", kCommitA, tinyRepository(), {"main", "v1"});
    const fs::path root = dir.path() / "hub";
    const std::string out =
        node("hub.snapshotDownload({repo: 'org/tiny', revision: 'v1', cacheDir: " +
                 nlohmann::json(root.string()).dump() +
                 ", hubUrl: " + nlohmann::json(server.endpoint()).dump() +
                 "}).then(p => console.log('SNAPSHOT ' + p));",
             dir.path() / "capture");
    ASSERT_NE(
        out.find("SNAPSHOT " + (root / "models--org--tiny" / "snapshots" / kCommitA).string()),
        std::string::npos)
        << out;

    env.set("HF_HUB_CACHE", root.string());
    env.set("HF_HUB_OFFLINE", "1");
    const std::size_t heard = server.requestCount();
    for (const std::string& id : std::vector<std::string>{"org/tiny@v1", "org/tiny@" + kCommitA}) {
        auto folder = fetchModelArgument(id);
        ASSERT_TRUE(folder.ok()) << folder.error();
        auto model = loadModel(*folder);
        EXPECT_TRUE(model.ok()) << id << ": " << model.error();
    }
    EXPECT_EQ(server.requestCount(), heard);
}

TEST_F(HubJsReference, ACacheDownloadedHereIsWhatTheHubsClientScans) {
    TempDir dir("attnlab_hubjs");
    EnvironmentScope env;
    env.set("no_proxy", "127.0.0.1");
    test::FakeHubServer server;
    const auto files = tinyRepository();
    server.addRepo("org/tiny", kCommitA, files, {"main", "v1"});
    const fs::path root = dir.path() / "hub";
    env.set("HF_HUB_CACHE", root.string());
    env.set("HF_ENDPOINT", server.endpoint());
    ASSERT_TRUE(fetchModelArgument("org/tiny").ok());
    ASSERT_TRUE(fetchModelArgument("org/tiny@v1").ok());

    const auto theirs = scanCacheDir(root, dir.path() / "capture");
    const std::string json = theirs.dump();
    ASSERT_EQ(theirs.size(), 1u) << json;
    EXPECT_EQ(theirs[0]["id"], "org/tiny");
    ASSERT_EQ(theirs[0]["revisions"].size(), 1u) << json;
    const auto& revision = theirs[0]["revisions"][0];
    EXPECT_EQ(revision["commit"], kCommitA);
    EXPECT_EQ(revision["refs"], nlohmann::json({"main", "v1"}));
    EXPECT_EQ(revision["files"], nlohmann::json({"config.json", "model.safetensors"})) << json;
    EXPECT_EQ(revision["size"].get<std::size_t>(), files[0].bytes.size() + files[1].bytes.size());
}

} // namespace
} // namespace attnlab::model

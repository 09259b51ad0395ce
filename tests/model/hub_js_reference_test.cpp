// The Hugging Face cache as the Hub's own JavaScript client reads it (@huggingface/hub 2.17.5,
// installed by the npm_packages CTest fixture, run with node): getHFHubCachePath() is where
// hubCacheRoot() looks, under each combination of the variables, and scanCacheDir() finds in a
// cache built here the repositories, commits, refs and sizes listHubCache() finds.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "attnlab/model/hub_cache.h"
#include "checkpoint_builder.h"
#include "command_runner.h"
#include "fake_hub_cache.h"
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
    const std::string json = node(
        "hub.scanCacheDir(" + nlohmann::json(root.string()).dump() +
            ").then(r => console.log("
            "JSON.stringify(r.repos.map(repo => ({id: repo.id.name, type: repo.id.type, "
            "revisions: repo.revisions.map(v => ({commit: v.commitOid, refs: [...v.refs].sort(), "
            "size: Number(v.size)}))})))));",
        dir.path() / "capture");
    const auto theirs = nlohmann::json::parse(json);
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

} // namespace
} // namespace attnlab::model

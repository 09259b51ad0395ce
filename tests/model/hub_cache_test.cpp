// Models by their Hub id from a Hugging Face cache laid out as huggingface_hub lays it out
// (refs -> snapshots -> blobs, tests/support/fake_hub_cache.h), built here from the tiny
// checkpoints in tests/model/fixtures: where the cache is (HF_HUB_CACHE, HF_HOME,
// XDG_CACHE_HOME, ~), revisions by ref and by commit, what is missing said clearly, and the
// listing `attnlab model --list` prints.

#include "attnlab/model/hub_cache.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "attnlab/model/model.h"
#include "checkpoint_builder.h"
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

const std::vector<std::string> kGpt2Files = {"config.json", "model.safetensors"};

TEST(HubId, ReadsIdsAsHuggingfaceHubDoes) {
    auto id = parseHubId("gpt2");
    ASSERT_TRUE(id);
    EXPECT_EQ(id->repo, "gpt2");
    EXPECT_EQ(id->revision, "main");
    EXPECT_FALSE(id->revisionGiven);
    id = parseHubId("Qwen/Qwen2.5-0.5B@v1.0");
    ASSERT_TRUE(id);
    EXPECT_EQ(id->repo, "Qwen/Qwen2.5-0.5B");
    EXPECT_EQ(id->revision, "v1.0");
    EXPECT_EQ(parseHubId("org/name@refs/pr/1")->revision, "refs/pr/1");
    EXPECT_EQ(parseHubId("HuggingFaceTB/SmolLM2-135M")->repo, "HuggingFaceTB/SmolLM2-135M");
    // Paths and what huggingface_hub's validate_repo_id refuses are not ids.
    for (const char* notAnId :
         {"./gpt2", "/models/gpt2", "a/b/c", "models--gpt2", "org/a..b", "-gpt2", "gpt2-",
          "org/.name", "", "gpt2@", "gpt2@../x", "gpt2@/main", "org/name.git", "~/gpt2", "a b"})
        EXPECT_FALSE(parseHubId(notAnId)) << notAnId;
    EXPECT_FALSE(parseHubId(std::string(97, 'a'))) << "longer than 96 characters";
    EXPECT_TRUE(parseHubId(std::string(96, 'a')));
}

TEST(HubCache, RootFollowsHuggingfaceHubsPrecedence) {
    EnvironmentScope env;
    env.set("HOME", "/home/teacher");
    EXPECT_EQ(hubCacheRoot(), "/home/teacher/.cache/huggingface/hub");
    env.set("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(hubCacheRoot(), "/xdg/huggingface/hub");
    env.set("HF_HOME", "/hf-home");
    EXPECT_EQ(hubCacheRoot(), "/hf-home/hub") << "HF_HOME before XDG_CACHE_HOME";
    env.set("HUGGINGFACE_HUB_CACHE", "/legacy");
    EXPECT_EQ(hubCacheRoot(), "/legacy") << "the old name of HF_HUB_CACHE";
    env.set("HF_HUB_CACHE", "~/hub-cache");
    EXPECT_EQ(hubCacheRoot(), "/home/teacher/hub-cache") << "HF_HUB_CACHE first, ~ expanded";
    env.set("HF_HUB_CACHE", "");
    EXPECT_EQ(hubCacheRoot(), "/legacy") << "an empty variable counts as unset";
}

TEST(HubCache, OpensAModelByItsIdFromEachPlaceTheCacheCanBe) {
    TempDir dir("attnlab_hub");
    EnvironmentScope env;
    env.set("HOME", (dir.path() / "home").string());
    const std::vector<std::pair<std::string, fs::path>> places = {
        {"", dir.path() / "home" / ".cache" / "huggingface" / "hub"},
        {"XDG_CACHE_HOME", dir.path() / "xdg" / "huggingface" / "hub"},
        {"HF_HOME", dir.path() / "hf-home" / "hub"},
        {"HF_HUB_CACHE", dir.path() / "hub-cache"},
    };
    for (const auto& [variable, root] : places) {
        FakeHubCache cache(root);
        cache.addSnapshot("openai-community/gpt2", kCommitA, fixtureDir("hf/gpt2"), kGpt2Files);
        cache.setRef("openai-community/gpt2", "main", kCommitA);
        if (variable == "XDG_CACHE_HOME") env.set(variable, (dir.path() / "xdg").string());
        if (variable == "HF_HOME") env.set(variable, (dir.path() / "hf-home").string());
        if (variable == "HF_HUB_CACHE") env.set(variable, root.string());
        auto folder = resolveModelArgument("openai-community/gpt2");
        ASSERT_TRUE(folder.ok()) << (variable.empty() ? "~" : variable) << ": " << folder.error();
        EXPECT_EQ(fs::path(*folder),
                  root / "models--openai-community--gpt2" / "snapshots" / kCommitA);
        auto model = loadModel(*folder);
        ASSERT_TRUE(model.ok()) << model.error();
        EXPECT_EQ(model->name, "openai-community/gpt2") << "titled by its id, not its commit";
        EXPECT_EQ(model->config.layers, 2);
        fs::remove_all(root); // the next place must be the one read
    }
}

TEST(HubCache, RevisionsByRefAndByCommit) {
    TempDir dir("attnlab_hub");
    EnvironmentScope env;
    FakeHubCache cache(dir.path());
    env.set("HF_HUB_CACHE", dir.path().string());
    cache.addSnapshot("org/tiny", kCommitA, fixtureDir("hf/gpt2"), kGpt2Files);
    cache.addSnapshot("org/tiny", kCommitB, fixtureDir("hf/llama_gqa"), kGpt2Files);
    cache.setRef("org/tiny", "main", kCommitA);
    cache.setRef("org/tiny", "v2", kCommitB);
    cache.setRef("org/tiny", "refs/pr/3", kCommitB);
    const fs::path snapshots = cache.repoFolder("org/tiny") / "snapshots";

    EXPECT_EQ(fs::path(*resolveModelArgument("org/tiny")), snapshots / kCommitA);
    EXPECT_EQ(fs::path(*resolveModelArgument("org/tiny@main")), snapshots / kCommitA);
    EXPECT_EQ(fs::path(*resolveModelArgument("org/tiny@v2")), snapshots / kCommitB);
    EXPECT_EQ(fs::path(*resolveModelArgument("org/tiny@refs/pr/3")), snapshots / kCommitB);
    EXPECT_EQ(fs::path(*resolveModelArgument("org/tiny@" + kCommitB)), snapshots / kCommitB);
    auto llama = loadModel(*resolveModelArgument("org/tiny@v2"));
    ASSERT_TRUE(llama.ok()) << llama.error();
    EXPECT_EQ(llama->config.arch().modelType, "llama");

    auto missing = resolveModelArgument("org/tiny@v9");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("revision 'v9' of org/tiny is not in the cache"),
              std::string::npos)
        << missing.error();
    EXPECT_NE(missing.error().find("refs there: main, refs/pr/3, v2"), std::string::npos)
        << missing.error();

    // A ref naming a commit whose snapshot is gone, and a ref that holds no commit.
    cache.setRef("org/tiny", "gone", std::string(40, 'c'));
    auto gone = resolveModelArgument("org/tiny@gone");
    ASSERT_FALSE(gone.ok());
    EXPECT_NE(gone.error().find("whose snapshot is not in the cache"), std::string::npos)
        << gone.error();
    cache.setRef("org/tiny", "junk", "not a commit");
    auto junk = resolveModelArgument("org/tiny@junk");
    ASSERT_FALSE(junk.ok());
    EXPECT_NE(junk.error().find("not a 40-digit commit hash"), std::string::npos) << junk.error();
}

TEST(HubCache, AModelNotInTheCacheSaysWhereTheCacheIs) {
    TempDir dir("attnlab_hub");
    EnvironmentScope env;
    env.set("HF_HUB_CACHE", dir.path().string());
    auto missing = resolveModelArgument("gpt2");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error(),
              "'gpt2' is not a folder, and no model 'gpt2' in the Hugging Face cache at " +
                  dir.path().string() +
                  " (no folder models--gpt2 there); it is not downloaded yet (attnlab downloads "
                  "it from the Hub when it opens it, or give a folder)");
    env.set("HF_HUB_OFFLINE", "1");
    EXPECT_NE(resolveModelArgument("gpt2").error().find("HF_HUB_OFFLINE is set"),
              std::string::npos);
}

TEST(HubCache, AFolderIsAFolderEvenWhenItReadsAsAnId) {
    TempDir dir("attnlab_hub");
    EnvironmentScope env;
    env.set("HF_HUB_CACHE", (dir.path() / "cache").string());
    fs::create_directories(dir.path() / "org" / "name");
    const fs::path before = fs::current_path();
    fs::current_path(dir.path());
    auto folder = resolveModelArgument("org/name");
    fs::current_path(before);
    ASSERT_TRUE(folder.ok()) << folder.error();
    EXPECT_EQ(*folder, "org/name");
    // Not an id and not a folder: returned as given, for the loader's own message.
    EXPECT_EQ(*resolveModelArgument("/no/such/folder"), "/no/such/folder");
}

TEST(HubCache, ListsEverySnapshotWithItsSizeTypeAndWhetherItRuns) {
    TempDir dir("attnlab_hub");
    FakeHubCache cache(dir.path());
    cache.addSnapshot("openai-community/gpt2", kCommitA, fixtureDir("hf/gpt2"), kGpt2Files);
    cache.setRef("openai-community/gpt2", "main", kCommitA);
    // The same files at a second commit share their blobs; a config alone (what
    // AutoConfig.from_pretrained leaves) has no weights.
    cache.addSnapshot("openai-community/gpt2", kCommitB, fixtureDir("hf/gpt2"), {"config.json"});
    cache.setRef("openai-community/gpt2", "v1", kCommitB);
    // A family AttnLab does not run.
    const fs::path mamba = dir.path() / "mamba-src";
    fs::create_directories(mamba);
    std::ofstream(mamba / "config.json") << R"({"model_type": "mamba", "hidden_size": 8})";
    cache.addSnapshot("state-spaces/mamba", kCommitA, mamba, {"config.json"});
    // Datasets are not models.
    fs::create_directories(dir.path() / "datasets--org--data" / "snapshots");

    const auto models = listHubCache(dir.path().string());
    ASSERT_EQ(models.size(), 2u);
    EXPECT_EQ(models[0].id, "openai-community/gpt2");
    EXPECT_EQ(models[1].id, "state-spaces/mamba");
    const auto& gpt2 = models[0].snapshots;
    ASSERT_EQ(gpt2.size(), 2u);
    EXPECT_EQ(gpt2[0].refs, std::vector<std::string>{"main"});
    EXPECT_EQ(gpt2[0].commit, kCommitA);
    EXPECT_EQ(gpt2[0].bytes, fs::file_size(fixtureDir("hf/gpt2/config.json")) +
                                 fs::file_size(fixtureDir("hf/gpt2/model.safetensors")));
    EXPECT_EQ(gpt2[0].modelType, "gpt2");
    EXPECT_TRUE(gpt2[0].runs) << gpt2[0].why;
    EXPECT_EQ(gpt2[1].refs, std::vector<std::string>{"v1"});
    EXPECT_FALSE(gpt2[1].runs);
    EXPECT_EQ(gpt2[1].why, "no weights in this snapshot (model.safetensors or pytorch_model.bin)");
    const auto& v = models[1].snapshots.at(0);
    EXPECT_EQ(v.modelType, "mamba");
    EXPECT_FALSE(v.runs);
    EXPECT_NE(v.why.find("model_type 'mamba' is not one AttnLab runs"), std::string::npos) << v.why;
    EXPECT_TRUE(v.refs.empty());

    const std::string table = cachedModelsTable(models, dir.path().string());
    EXPECT_NE(table.find("Hugging Face cache: " + dir.path().string()), std::string::npos);
    EXPECT_NE(table.find("openai-community/gpt2  main"), std::string::npos) << table;
    EXPECT_NE(table.find(kCommitA.substr(0, 12)), std::string::npos) << table;

    EXPECT_TRUE(listHubCache((dir.path() / "absent").string()).empty());
}

} // namespace
} // namespace attnlab::model

// --model by Hub id, end to end: the built binary finds a model in a Hugging Face cache laid
// out as huggingface_hub lays it out (tests/support/fake_hub_cache.h) and writes the same
// bytes as from the folder; `model --list` prints what the cache holds; a model missing from
// the cache is one line naming the cache (render and the window: window_hub_test.cpp, which
// only a build with the window has); one that is not is downloaded from HF_ENDPOINT (a loopback
// server answering as the Hub, fake_hub_server.h). And pytorch_model.bin, end to end: the GPT-2
// fixture saved by torch.save writes the bytes its safetensors twin writes.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "command_runner.h"
#include "fake_hub_cache.h"
#include "fake_hub_server.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;
using test::EnvironmentScope;
using test::FakeHubCache;
using test::kCommitA;
using test::kCommitB;

std::string source(const std::string& path) {
    return std::string(ATTNLAB_SOURCE_DIR) + "/" + path;
}

const std::string kIds = "3,17,5,39,0,22,8";

class ModelHub : public test::CommandFolderTest {
protected:
    void SetUp() override {
        test::CommandFolderTest::SetUp();
        m_cache.emplace(m_root / "hub");
        m_env.set("HF_HUB_CACHE", m_cache->root().string());
        // No test reaches the real Hub: downloads go to a server that is not there unless a
        // test starts one.
        m_env.set("HF_ENDPOINT", "http://127.0.0.1:1");
        m_env.set("no_proxy", "127.0.0.1");
        m_cache->addSnapshot("openai-community/gpt2", kCommitA,
                             source("tests/model/fixtures/hf/gpt2"),
                             {"config.json", "model.safetensors"});
        m_cache->setRef("openai-community/gpt2", "main", kCommitA);
        m_cache->addSnapshot("attnlab/tiny-llama-induction", kCommitB,
                             source("resources/models/tiny-llama-induction"),
                             {"config.json", "model.safetensors", "tokenizer.json"});
        m_cache->setRef("attnlab/tiny-llama-induction", "main", kCommitB);
    }

    test::CommandResult attnlab(const std::vector<std::string>& args) const {
        return test::runCommand(ATTNLAB_BINARY, args, m_root / "capture");
    }

    EnvironmentScope m_env;
    std::optional<FakeHubCache> m_cache;
};

TEST_F(ModelHub, AModelByItsIdWritesWhatItsFolderWrites) {
    const auto byId = attnlab({"model", "--model", "openai-community/gpt2", "--ids", kIds, "--out",
                               file("id.npz"), "--logits"});
    ASSERT_EQ(byId.status, 0) << byId.err;
    const auto byFolder = attnlab({"model", "--model", source("tests/model/fixtures/hf/gpt2"),
                                   "--ids", kIds, "--out", file("folder.npz"), "--logits"});
    ASSERT_EQ(byFolder.status, 0) << byFolder.err;
    EXPECT_EQ(test::readWholeFile(file("id.npz")), test::readWholeFile(file("folder.npz")));
    // The same with the revision named, by ref and by commit.
    for (const std::string& id :
         {std::string("openai-community/gpt2@main"), "openai-community/gpt2@" + kCommitA}) {
        const auto run =
            attnlab({"model", "--model", id, "--ids", kIds, "--out", file("rev.npz"), "--logits"});
        ASSERT_EQ(run.status, 0) << id << ": " << run.err;
        EXPECT_EQ(test::readWholeFile(file("rev.npz")), test::readWholeFile(file("folder.npz")));
    }
}

TEST_F(ModelHub, AModelMissingFromTheCacheIsOneLineNamingTheCache) {
    const auto run =
        attnlab({"model", "--model", "org/absent", "--ids", "1,2", "--out", file("x.npz")});
    EXPECT_EQ(run.status, 2);
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_NE(run.err.find("attnlab model: --model: 'org/absent' is not a folder, and no model "
                           "'org/absent' in the Hugging Face cache at " +
                           m_cache->root().string()),
              std::string::npos)
        << run.err;
    const auto revision = attnlab(
        {"model", "--model", "openai-community/gpt2@v7", "--ids", "1,2", "--out", file("x.npz")});
    EXPECT_EQ(revision.status, 2);
    EXPECT_NE(revision.err.find("revision 'v7' of openai-community/gpt2 is not in the cache"),
              std::string::npos)
        << revision.err;
    EXPECT_NE(revision.err.find("(refs there: main;"), std::string::npos) << revision.err;
    EXPECT_FALSE(fs::exists(file("x.npz")));
}

TEST_F(ModelHub, AModelNotInTheCacheIsDownloadedThenWritesWhatItsFolderWrites) {
    test::FakeHubServer server;
    const auto read = [](const std::string& path) { return test::readWholeFile(path); };
    server.addRepo("org/gpt2", kCommitB,
                   {{"config.json", read(source("tests/model/fixtures/hf/gpt2/config.json"))},
                    {"model.safetensors",
                     read(source("tests/model/fixtures/hf/gpt2/model.safetensors")), true},
                    {"README.md", "# gpt2\n"}});
    m_env.set("HF_ENDPOINT", server.endpoint());
    const auto byId =
        attnlab({"model", "--model", "org/gpt2", "--ids", kIds, "--out", file("id.npz"), "--logits"});
    ASSERT_EQ(byId.status, 0) << byId.err;
    const auto byFolder = attnlab({"model", "--model", source("tests/model/fixtures/hf/gpt2"),
                                   "--ids", kIds, "--out", file("folder.npz"), "--logits"});
    ASSERT_EQ(byFolder.status, 0) << byFolder.err;
    EXPECT_EQ(test::readWholeFile(file("id.npz")), test::readWholeFile(file("folder.npz")));
    // Not a terminal: what will be fetched, then one line per file.
    EXPECT_NE(byId.err.find("attnlab: org/gpt2@main (commit " + kCommitB.substr(0, 12) +
                            "): 2 files, 154.5 kB to download from " + server.endpoint() +
                            " into " + m_cache->root().string() + "\n"),
              std::string::npos)
        << byId.err;
    EXPECT_NE(byId.err.find("attnlab: config.json 825 B downloaded\n"), std::string::npos)
        << byId.err;
    EXPECT_NE(byId.err.find("attnlab: model.safetensors 153.6 kB downloaded\n"),
              std::string::npos)
        << byId.err;

    // Offline, a model not in the cache is refused without a request.
    m_env.set("HF_HUB_OFFLINE", "1");
    const std::size_t heard = server.requestCount();
    const auto offline =
        attnlab({"model", "--model", "org/other", "--ids", "1,2", "--out", file("x.npz")});
    EXPECT_EQ(offline.status, 2);
    EXPECT_NE(offline.err.find("HF_HUB_OFFLINE is set"), std::string::npos) << offline.err;
    EXPECT_EQ(server.requestCount(), heard);
}

TEST_F(ModelHub, ListPrintsEveryCachedModel) {
    const auto run = attnlab({"model", "--list"});
    ASSERT_EQ(run.status, 0) << run.err;
    const std::string& out = run.out;
    EXPECT_EQ(out.rfind("Hugging Face cache: " + m_cache->root().string() + "\n", 0), 0u) << out;
    EXPECT_NE(out.find("id "), std::string::npos) << out;
    const auto gpt2 = out.find("openai-community/gpt2 ");
    const auto tiny = out.find("attnlab/tiny-llama-induction ");
    ASSERT_NE(gpt2, std::string::npos) << out;
    ASSERT_NE(tiny, std::string::npos) << out;
    EXPECT_LT(tiny, gpt2) << "sorted by id";
    const std::string gpt2Row = out.substr(gpt2, out.find('\n', gpt2) - gpt2);
    EXPECT_NE(gpt2Row.find(" main "), std::string::npos) << gpt2Row;
    EXPECT_NE(gpt2Row.find(kCommitA.substr(0, 12)), std::string::npos) << gpt2Row;
    EXPECT_NE(gpt2Row.find(" gpt2 "), std::string::npos) << gpt2Row;
    EXPECT_EQ(gpt2Row.substr(gpt2Row.size() - 3), "yes") << gpt2Row;

    m_env.set("HF_HUB_CACHE", (m_root / "empty").string());
    const auto empty = attnlab({"model", "--list"});
    ASSERT_EQ(empty.status, 0) << empty.err;
    EXPECT_NE(empty.out.find("no models in the cache"), std::string::npos) << empty.out;
}

TEST_F(ModelHub, BenchTakesAnIdToo) {
    const auto bench = attnlab({"bench", "--model", "attnlab/tiny-llama-induction", "--tokens", "4",
                                "--threads", "1", "--repeats", "1"});
    ASSERT_EQ(bench.status, 0) << bench.err;
    EXPECT_NE(bench.out.find("forward, all layers"), std::string::npos) << bench.out;
}

TEST_F(ModelHub, PytorchModelBinWritesWhatItsSafetensorsTwinWrites) {
    const auto bin = attnlab({"model", "--model", source("tests/model/fixtures/torch/gpt2_bin"),
                              "--ids", kIds, "--out", file("bin.npz"), "--logits"});
    ASSERT_EQ(bin.status, 0) << bin.err;
    const auto safetensors = attnlab({"model", "--model", source("tests/model/fixtures/hf/gpt2"),
                                      "--ids", kIds, "--out", file("st.npz"), "--logits"});
    ASSERT_EQ(safetensors.status, 0) << safetensors.err;
    EXPECT_EQ(test::readWholeFile(file("bin.npz")), test::readWholeFile(file("st.npz")));
}

} // namespace
} // namespace attnlab

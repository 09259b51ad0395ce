// The Hub's download dialog against a loopback server that answers as the Hub
// (tests/support/fake_hub_server.h): it lists the files AttnLab reads with their sizes, downloads
// them into the cache with a progress bar, stops on Cancel keeping what arrived and resumes
// there, and says a refusal (a gated model) in the dialog. File ▸ Open Model's Hub field offers
// Download only for a Hub id, and never offline.

#include <gtest/gtest.h>

#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTest>
#include <QTreeWidget>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "attnlab/model/hub_cache.h"
#include "command_runner.h"
#include "fake_hub_cache.h"
#include "fake_hub_server.h"
#include "temp_dir.h"
#include "ui/window/hub_download_dialog.h"
#include "ui/window/open_model_dialog.h"

namespace attnlab::ui {
namespace {

namespace fs = std::filesystem;
using test::EnvironmentScope;
using test::FakeHubServer;
using test::kCommitA;
using test::TempDir;

const fs::path kGpt2 = fs::path(ATTNLAB_SOURCE_DIR) / "tests/model/fixtures/hf/gpt2";

class HubDownloadDialogTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_env.set("HF_HUB_CACHE", (m_dir.path() / "hub").string());
        m_env.set("HF_ENDPOINT", m_server.endpoint());
        m_env.set("no_proxy", "127.0.0.1");
    }
    /// Waits for the dialog's worker (asking the Hub, or downloading) to end.
    static void settle(HubDownloadDialog& dialog) {
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.busy(), 30000);
        QCoreApplication::processEvents();
    }

    TempDir m_dir{"attnlab_hubui"};
    EnvironmentScope m_env;
    FakeHubServer m_server;
};

TEST_F(HubDownloadDialogTest, ListsTheFilesThenDownloadsThemIntoTheCache) {
    m_server.addRepo("org/gpt2", kCommitA,
                     {{"config.json", test::readWholeFile(kGpt2 / "config.json")},
                      {"model.safetensors", test::readWholeFile(kGpt2 / "model.safetensors"), true},
                      {"README.md", "# gpt2\n"}});
    HubDownloadDialog dialog(QStringLiteral("org/gpt2"));
    settle(dialog);
    ASSERT_EQ(dialog.files()->topLevelItemCount(), 2);
    EXPECT_EQ(dialog.files()->topLevelItem(0)->text(0), QStringLiteral("config.json"));
    EXPECT_EQ(dialog.files()->topLevelItem(0)->text(1), QStringLiteral("825 B"));
    EXPECT_EQ(dialog.files()->topLevelItem(1)->text(0), QStringLiteral("model.safetensors"));
    EXPECT_EQ(dialog.files()->topLevelItem(1)->text(1), QStringLiteral("153.6 kB"));
    EXPECT_EQ(dialog.files()->topLevelItem(1)->text(2), QStringLiteral("to download"));
    EXPECT_EQ(dialog.summary()->text(),
              QStringLiteral("2 files, 154.5 kB in all; 154.5 kB to download."));
    ASSERT_TRUE(dialog.downloadButton()->isEnabled());

    dialog.downloadButton()->click();
    settle(dialog);
    EXPECT_EQ(dialog.result(), QDialog::Accepted) << dialog.status()->text().toStdString();
    const fs::path snapshot =
        fs::path(model::hubRepoFolder((m_dir.path() / "hub").string(), "org/gpt2")) / "snapshots" /
        kCommitA;
    EXPECT_EQ(dialog.folder().toStdString(), snapshot.string());
    EXPECT_EQ(test::readWholeFile(snapshot / "model.safetensors"),
              test::readWholeFile(kGpt2 / "model.safetensors"));
    EXPECT_EQ(dialog.bar()->value(), dialog.bar()->maximum());

    // Asked again, every file is already there.
    HubDownloadDialog again(QStringLiteral("org/gpt2"));
    settle(again);
    EXPECT_EQ(again.files()->topLevelItem(1)->text(2), QStringLiteral("in the cache"));
    EXPECT_TRUE(again.summary()->text().endsWith(QStringLiteral("0 B to download.")));
}

TEST_F(HubDownloadDialogTest, CancelStopsKeepsWhatArrivedAndResumeFinishes) {
    FakeHubServer::File weights{"model.safetensors", std::string(4 << 20, 'w'), true};
    weights.pauseMsPer64k = 5; // about 0.3 s in all
    m_server.addRepo("org/slow", kCommitA, {{"config.json", "{}"}, weights});
    HubDownloadDialog dialog(QStringLiteral("org/slow"));
    settle(dialog);
    dialog.downloadButton()->click();
    // Once the weights' bytes arrive, Cancel.
    QTRY_VERIFY_WITH_TIMEOUT(
        dialog.status()->text().startsWith(QStringLiteral("model.safetensors")), 30000);
    dialog.reject();
    settle(dialog);
    EXPECT_TRUE(dialog.isVisible() || dialog.result() != QDialog::Accepted);
    EXPECT_EQ(dialog.downloadButton()->text(), QStringLiteral("Resume"));
    EXPECT_TRUE(dialog.status()->text().contains(QStringLiteral("kept in the cache")));
    const fs::path blobs =
        fs::path(model::hubRepoFolder((m_dir.path() / "hub").string(), "org/slow")) / "blobs";
    const fs::path incomplete = blobs / (test::hexDigest(weights.bytes, false) + ".incomplete");
    ASSERT_TRUE(fs::exists(incomplete));
    EXPECT_LT(fs::file_size(incomplete), weights.bytes.size());

    dialog.downloadButton()->click();
    settle(dialog);
    EXPECT_EQ(dialog.result(), QDialog::Accepted) << dialog.status()->text().toStdString();
    EXPECT_EQ(test::readWholeFile(fs::path(dialog.folder().toStdString()) / "model.safetensors"),
              weights.bytes);
}

TEST_F(HubDownloadDialogTest, AGatedModelIsSaidInTheDialog) {
    m_server.addRepo("meta/gated", kCommitA, {{"config.json", "{}"}});
    m_server.requireToken("meta/gated", "hf_right");
    HubDownloadDialog dialog(QStringLiteral("meta/gated"));
    settle(dialog);
    EXPECT_EQ(dialog.files()->topLevelItemCount(), 0);
    EXPECT_TRUE(dialog.status()->text().contains(QStringLiteral("needs a token")))
        << dialog.status()->text().toStdString();
    EXPECT_EQ(dialog.downloadButton()->text(), QStringLiteral("Try Again"));
    EXPECT_FALSE(fs::exists(m_dir.path() / "hub"));
}

TEST_F(HubDownloadDialogTest, OpenModelOffersDownloadForAHubIdAndNotOffline) {
    OpenModelDialog open({});
    EXPECT_FALSE(open.hubDownloadButton()->isEnabled());
    open.hubId()->setText(QStringLiteral("openai-community/gpt2"));
    EXPECT_TRUE(open.hubDownloadButton()->isEnabled());
    open.hubId()->setText(QStringLiteral("not an id/at all/x"));
    EXPECT_FALSE(open.hubDownloadButton()->isEnabled());

    m_env.set("HF_HUB_OFFLINE", "1");
    OpenModelDialog offline({});
    offline.hubId()->setText(QStringLiteral("openai-community/gpt2"));
    EXPECT_FALSE(offline.hubDownloadButton()->isEnabled());
    EXPECT_TRUE(offline.hubDownloadButton()->toolTip().contains(QStringLiteral("HF_HUB_OFFLINE")));
    EXPECT_EQ(m_server.requestCount(), 0u);
}

} // namespace
} // namespace attnlab::ui

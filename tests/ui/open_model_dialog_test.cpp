// File > Open Model…'s list: the bundled models and every snapshot of a Hugging Face cache built
// here as huggingface_hub lays one out (tests/support/fake_hub_cache.h), with the sizes the
// files have on disk, the model_type their config.json names, and the reason a model that does
// not run is listed but cannot be opened; the model chosen opens, titled by its Hub id.

#include <gtest/gtest.h>

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTest>
#include <QTreeWidget>

#include <filesystem>
#include <fstream>

#include "attnlab/model/hub_cache.h"
#include "fake_hub_cache.h"
#include "temp_dir.h"
#include "ui/state/model_document.h"
#include "ui/window/main_window.h"
#include "ui/window/open_model_dialog.h"

namespace attnlab::ui {
namespace {

namespace fs = std::filesystem;
using test::EnvironmentScope;
using test::FakeHubCache;
using test::kCommitA;
using test::kCommitB;
using test::TempDir;

const fs::path kLlama = fs::path(ATTNLAB_SOURCE_DIR) / "resources/models/tiny-llama-induction";

/// The rows under the group row `group` (0: bundled, 1: the cache), each its columns' texts
/// joined by " | ".
std::vector<std::string> rowsOf(const OpenModelDialog& dialog, int group) {
    std::vector<std::string> rows;
    const QTreeWidgetItem* parent = dialog.list()->topLevelItem(group);
    for (int i = 0; i < parent->childCount(); ++i) {
        QStringList texts;
        for (int c = 0; c < dialog.list()->columnCount(); ++c)
            texts << parent->child(i)->text(c);
        rows.push_back(texts.join(QStringLiteral(" | ")).toStdString());
    }
    return rows;
}

std::string row(const std::vector<std::string>& columns) {
    std::string text;
    for (const auto& column : columns)
        text += (text.empty() ? "" : " | ") + column;
    return text;
}

QTreeWidgetItem* rowNamed(const OpenModelDialog& dialog, int group, const QString& name,
                          const QString& revision) {
    const QTreeWidgetItem* parent = dialog.list()->topLevelItem(group);
    for (int i = 0; i < parent->childCount(); ++i)
        if (parent->child(i)->text(OpenModelDialog::Name) == name &&
            parent->child(i)->text(OpenModelDialog::Revision) == revision)
            return parent->child(i);
    return nullptr;
}

std::string configSizeOf(const fs::path& folder) {
    return model::sizeText(fs::file_size(folder / "config.json"));
}

TEST(OpenModelDialog, ListsTheBundledAndTheCachedModelsWithWhyOneDoesNotRun) {
    TempDir dir("attnlab_open_model");
    EnvironmentScope env;
    FakeHubCache cache(dir.path() / "hub");
    env.set("HF_HUB_CACHE", cache.root().string());
    const std::vector<std::string> files = {"config.json", "model.safetensors", "tokenizer.json"};
    cache.addSnapshot("attnlab/tiny-llama", kCommitA, kLlama, files);
    cache.setRef("attnlab/tiny-llama", "main", kCommitA);
    cache.addSnapshot("attnlab/tiny-llama", kCommitB, kLlama, {"config.json"}); // config alone
    cache.setRef("attnlab/tiny-llama", "v1", kCommitB);
    const fs::path mamba = dir.path() / "mamba";
    fs::create_directories(mamba);
    std::ofstream(mamba / "config.json") << R"({"model_type": "mamba", "hidden_size": 8})";
    cache.addSnapshot("state-spaces/mamba-130m", kCommitA, mamba, {"config.json"});

    OpenModelDialog dialog({{QStringLiteral("tiny-llama-induction"),
                             QString::fromStdString(kLlama.string())}});
    // The sizes the files have on disk, in the units `attnlab model --list` prints.
    std::uintmax_t whole = 0;
    for (const auto& file : files)
        whole += fs::file_size(kLlama / file);
    std::uintmax_t folder = 0;
    for (const auto& entry : fs::directory_iterator(kLlama))
        folder += entry.file_size();
    const auto size = [](std::uintmax_t bytes) { return model::sizeText(bytes); };
    const std::string configSize = size(fs::file_size(kLlama / "config.json"));

    const auto bundled = rowsOf(dialog, 0);
    ASSERT_EQ(bundled.size(), 1u);
    EXPECT_EQ(bundled[0], row({"tiny-llama-induction", "", size(folder), "llama", "yes"}));
    const auto cached = rowsOf(dialog, 1);
    ASSERT_EQ(cached.size(), 3u);
    EXPECT_EQ(cached[0], row({"attnlab/tiny-llama", "main", size(whole), "llama", "yes"}));
    EXPECT_EQ(cached[1], row({"attnlab/tiny-llama", "v1", configSize, "llama",
                              "no: no weights in this snapshot (model.safetensors or "
                              "pytorch_model.bin)"}));
    const std::string mambaRevision = kCommitA.substr(0, 12);
    EXPECT_EQ(cached[2].rfind(row({"state-spaces/mamba-130m", mambaRevision, configSizeOf(mamba),
                                   "mamba", "no: model_type 'mamba' is not one AttnLab runs"}),
                              0),
              0u)
        << cached[2];
    EXPECT_TRUE(dialog.cacheNote()->text().contains(QString::fromStdString(cache.root().string())));

    // A model that does not run is listed, greyed, with its whole reason below the list when
    // chosen, but it does not open.
    QTreeWidgetItem* configOnly = rowNamed(dialog, 1, "attnlab/tiny-llama", "v1");
    ASSERT_TRUE(configOnly);
    dialog.list()->setCurrentItem(configOnly);
    EXPECT_FALSE(dialog.openButton()->isEnabled());
    EXPECT_EQ(dialog.detail()->text().toStdString(),
              "AttnLab does not run this model: no weights in this snapshot (model.safetensors "
              "or pytorch_model.bin)");
    EXPECT_NE(configOnly->foreground(OpenModelDialog::Name).color(),
              rowNamed(dialog, 1, "attnlab/tiny-llama", "main")
                  ->foreground(OpenModelDialog::Name)
                  .color());
    emit dialog.list()->itemActivated(configOnly, OpenModelDialog::Name); // a double-click
    QTest::keyClick(dialog.list(), Qt::Key_Return);
    EXPECT_NE(dialog.result(), QDialog::Accepted);
    EXPECT_TRUE(dialog.chosenFolder().isEmpty());

    // The filter keeps the rows whose name or model type holds its text.
    dialog.filter()->setText(QStringLiteral("MAMBA"));
    EXPECT_TRUE(rowNamed(dialog, 1, "attnlab/tiny-llama", "main")->isHidden());
    EXPECT_FALSE(
        rowNamed(dialog, 1, "state-spaces/mamba-130m", QString::fromStdString(mambaRevision))
            ->isHidden());
    EXPECT_FALSE(dialog.openButton()->isEnabled());
    dialog.filter()->clear();

    // Open on the cached snapshot that runs: its folder.
    dialog.list()->setCurrentItem(rowNamed(dialog, 1, "attnlab/tiny-llama", "main"));
    ASSERT_TRUE(dialog.openButton()->isEnabled());
    const fs::path snapshot = cache.repoFolder("attnlab/tiny-llama") / "snapshots" / kCommitA;
    EXPECT_EQ(fs::path(dialog.detail()->text().toStdString()), snapshot);
    QTest::mouseClick(dialog.openButton(), Qt::LeftButton);
    EXPECT_EQ(dialog.result(), QDialog::Accepted);
    EXPECT_EQ(fs::path(dialog.chosenFolder().toStdString()), snapshot);
}

TEST(OpenModelDialog, AModelChosenFromTheCacheOpensTitledByItsHubId) {
    TempDir dir("attnlab_open_model");
    EnvironmentScope env;
    FakeHubCache cache(dir.path() / "hub");
    env.set("HF_HUB_CACHE", cache.root().string());
    cache.addSnapshot("attnlab/tiny-llama", kCommitA, kLlama,
                      {"config.json", "model.safetensors", "tokenizer.json"});
    cache.setRef("attnlab/tiny-llama", "main", kCommitA);

    OpenModelDialog dialog({});
    // The first model that runs is current at the start; Enter opens it.
    ASSERT_TRUE(dialog.list()->currentItem());
    EXPECT_EQ(dialog.list()->currentItem()->text(OpenModelDialog::Name), "attnlab/tiny-llama");
    QTest::keyClick(dialog.list(), Qt::Key_Return);
    ASSERT_EQ(dialog.result(), QDialog::Accepted);

    MainWindow window;
    ModelDocument* models = ModelDocument::of(window.document());
    ASSERT_TRUE(models->openModelNow(dialog.chosenFolder()));
    EXPECT_EQ(models->displayName(), QStringLiteral("attnlab/tiny-llama"));
}

TEST(OpenModelDialog, AnEmptyCacheSaysWhereItLookedAndHowToFillIt) {
    TempDir dir("attnlab_open_model");
    EnvironmentScope env;
    env.set("HF_HUB_CACHE", (dir.path() / "absent").string());
    OpenModelDialog dialog({});
    EXPECT_TRUE(dialog.list()->topLevelItem(1)->isHidden());
    const QString note = dialog.cacheNote()->text();
    EXPECT_TRUE(note.contains(QString::fromStdString((dir.path() / "absent").string())));
    EXPECT_TRUE(note.contains(QStringLiteral("Type a Hub id below to download one")))
        << note.toStdString();
    EXPECT_FALSE(dialog.openButton()->isEnabled());
}

} // namespace
} // namespace attnlab::ui

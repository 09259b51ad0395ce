// Where the window finds its data files: $ATTNLAB_DATA_DIR first, then (for an installed
// program) PREFIX/share/attnlab, then the resources/ of the source tree this build was
// configured from, so the bundled model is found whatever the build folder and the current
// folder are.

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cstdlib>

#include "ui/window/data_folders.h"

namespace attnlab::ui {
namespace {

const QString kSourceResources = QStringLiteral(ATTNLAB_SOURCE_DIR "/resources");

TEST(DataFolders, TheBundledModelIsFoundFromAnyCurrentFolder) {
    QTemporaryDir elsewhere;
    ASSERT_TRUE(elsewhere.isValid());
    const QString before = QDir::currentPath();
    ASSERT_TRUE(QDir::setCurrent(elsewhere.path()));
    const QString config = findDataFile(QStringLiteral("models/tiny-llama-induction/config.json"));
    QDir::setCurrent(before);
    EXPECT_EQ(
        QFileInfo(config).canonicalFilePath(),
        QFileInfo(kSourceResources + QStringLiteral("/models/tiny-llama-induction/config.json"))
            .canonicalFilePath());
}

TEST(DataFolders, TheEnvironmentsFolderComesFirst) {
    QTemporaryDir data;
    ASSERT_TRUE(data.isValid());
    ASSERT_TRUE(QDir(data.path()).mkpath(QStringLiteral("models/tiny-llama-induction")));
    QFile file(data.filePath(QStringLiteral("models/tiny-llama-induction/config.json")));
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.close();
    setenv("ATTNLAB_DATA_DIR", data.path().toLocal8Bit().constData(), 1);
    const QStringList folders = dataFolders();
    const QString found = findDataFile(QStringLiteral("models/tiny-llama-induction/config.json"));
    unsetenv("ATTNLAB_DATA_DIR");
    ASSERT_FALSE(folders.isEmpty());
    EXPECT_EQ(QFileInfo(folders.first()).canonicalFilePath(),
              QFileInfo(data.path()).canonicalFilePath());
    EXPECT_EQ(QFileInfo(found).canonicalFilePath(), QFileInfo(file).canonicalFilePath());
    EXPECT_TRUE(findDataFile(QStringLiteral("models/no-such-model/config.json")).isEmpty());
}

} // namespace
} // namespace attnlab::ui

#include "ui/window/data_folders.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace attnlab::ui {

QStringList dataFolders() {
    QStringList candidates;
    const QString fromEnvironment = qEnvironmentVariable("ATTNLAB_DATA_DIR");
    if (!fromEnvironment.isEmpty()) candidates << fromEnvironment;
    // PREFIX/bin/attnlab -> PREFIX/share/attnlab (cmake --install, a distribution package).
    candidates << QDir(QCoreApplication::applicationDirPath())
                      .filePath(QStringLiteral("../" ATTNLAB_INSTALL_DATA_DIR));
    candidates << QStringLiteral(ATTNLAB_SOURCE_DATA_DIR);
    QStringList folders;
    for (const QString& candidate : candidates) {
        const QFileInfo info(candidate);
        if (info.isDir() && !folders.contains(info.absoluteFilePath()))
            folders << QDir::cleanPath(info.absoluteFilePath());
    }
    return folders;
}

QString findDataFile(const QString& relative) {
    for (const QString& folder : dataFolders()) {
        const QString candidate = QDir(folder).filePath(relative);
        if (QFileInfo::exists(candidate)) return QDir::cleanPath(candidate);
    }
    return {};
}

} // namespace attnlab::ui

#pragma once
// Where AttnLab's data files (the bundled models) are found, in one place: an installed tree's
// share/attnlab beside the program, then the resources/ folder of the source tree this build
// was configured from. Both are known to CMake (data_folders.cpp's compile definitions), so
// the window finds them wherever the build folder is and whatever the current folder.

#include <QString>
#include <QStringList>

namespace attnlab::ui {

/// The data folders, most specific first: $ATTNLAB_DATA_DIR when set (a packager's or a
/// test's override), PREFIX/share/attnlab for a program installed in PREFIX/bin, and the
/// configured source tree's resources/. Only folders that exist are listed.
QStringList dataFolders();

/// The first data folder holding `relative` (a path inside a data folder, e.g.
/// "models/tiny-llama-induction/config.json"), as an absolute path; empty when none does.
QString findDataFile(const QString& relative);

} // namespace attnlab::ui

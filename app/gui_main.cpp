// Placeholder window entry point until the main window lands.
#include <QApplication>
#include <QLabel>

#include "commands.h"

namespace attnlab::app {
int guiMain(int argc, char** argv) {
    QApplication app(argc, argv);
    QLabel label(QObject::tr("AttnLab"));
    label.show();
    return app.exec();
}
} // namespace attnlab::app

// UI tests run without a display: offscreen platform, one QApplication for all tests.
#include <QApplication>
#include <QCoreApplication>
#include <QString>

#include <gtest/gtest.h>

#include <cstdlib>

namespace {

/// A warning that says our code misused Qt or QCustomPlot (an invalid layout factor, a
/// connection to a missing signal, a painter used wrongly) fails the test that caused it; the
/// platform's notes about what the offscreen screen cannot do are left alone.
void failOnMisuse(QtMsgType type, const QMessageLogContext&, const QString& message) {
    // QCustomPlot reports misuse through qDebug too ("QCPLayoutGrid::element(int, int) const
    // Invalid column", "... layouting aborted"): those count as warnings.
    const bool qcp = message.contains(QLatin1String("QCP")) &&
                     (type != QtDebugMsg || message.contains(QLatin1String("Invalid")) ||
                      message.contains(QLatin1String("aborted")));
    const bool warning =
        type == QtWarningMsg || type == QtCriticalMsg || type == QtFatalMsg || qcp;
    const bool misuse = qcp ||
                        message.startsWith(QLatin1String("QObject::")) ||
                        message.startsWith(QLatin1String("QPainter::"));
    if (warning && misuse) ADD_FAILURE() << "Qt warned: " << message.toStdString();
    else if (warning) fprintf(stderr, "%s\n", qPrintable(message));
}

} // namespace

int main(int argc, char** argv) {
    setenv("QT_QPA_PLATFORM", "offscreen", 0);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnLabTests"));
    QCoreApplication::setApplicationName(QStringLiteral("attnlab_ui_tests"));
    qInstallMessageHandler(failOnMisuse);
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

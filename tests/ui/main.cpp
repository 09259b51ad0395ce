// UI tests run without a display: offscreen platform, one QApplication for all tests.
#include <QApplication>
#include <QCoreApplication>

#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
    setenv("QT_QPA_PLATFORM", "offscreen", 0);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnLabTests"));
    QCoreApplication::setApplicationName(QStringLiteral("attnlab_ui_tests"));
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

#include <gtest/gtest.h>
#include <QApplication>
#include <QStandardPaths>

#include "studio_core/format/english_plurals.h"
#include "test_settings_folder.h"

int main(int argc, char** argv) {
    // Test discovery runs the program outside ctest's environment too.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    // Recent files and the theme go to a throwaway place, not the user's.
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    // Plural endings as an English translation would choose them.
    pipewright::gui::EnglishPlurals plurals;
    QCoreApplication::installTranslator(&plurals);
    QApplication::setOrganizationName(QStringLiteral("PipewrightTests"));
    QApplication::setApplicationName(QStringLiteral("gui_tests"));
    const pipewright::gui::test::TestSettingsFolder settings;
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

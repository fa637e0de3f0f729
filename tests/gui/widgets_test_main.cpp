#include <gtest/gtest.h>
#include <QApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "studio_core/format/english_plurals.h"

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
    // ctest runs test programs side by side, and test mode's settings file is
    // one for all of them: a test that clears a setting would clear it under
    // another's feet. Each program keeps its settings in a folder of its own.
    QTemporaryDir settings_dir;
    if (!settings_dir.isValid()) {
        qFatal("cannot make a folder for the tests' settings: %s",
               qPrintable(settings_dir.errorString()));
    }
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir.path());
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

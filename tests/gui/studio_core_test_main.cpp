#include <gtest/gtest.h>
#include <QCoreApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "studio_core/format/english_plurals.h"

// The studio's logic library needs an event loop (signals, the thread pool's
// results, child processes) but no widgets, so no display either.
int main(int argc, char** argv) {
    // Run folders go to a throwaway place, not the user's.
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication app(argc, argv);
    // Plural endings as an English translation would choose them.
    pipewright::gui::EnglishPlurals plurals;
    QCoreApplication::installTranslator(&plurals);
    QCoreApplication::setOrganizationName(QStringLiteral("PipewrightTests"));
    QCoreApplication::setApplicationName(QStringLiteral("studio_core_tests"));
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

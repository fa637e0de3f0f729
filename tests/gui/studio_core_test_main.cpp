#include <gtest/gtest.h>
#include <QCoreApplication>
#include <QStandardPaths>

#include "studio_core/format/english_plurals.h"
#include "test_settings_folder.h"

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
    const pipewright::gui::test::TestSettingsFolder settings;
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

#pragma once

// What the tests that start the real command line share: which program to
// start, and a copy of an example in a folder of the test's own, so that its
// runs/ and profile go there.

#include <gtest/gtest.h>
#include <QDir>
#include <QFile>
#include <QString>
#include <QTemporaryDir>

namespace pipewright::gui {

// The command line this build made; $PIPEWRIGHT_CLI can point elsewhere.
inline QString cli_path() {
    const QString chosen = qEnvironmentVariable("PIPEWRIGHT_CLI");
    return chosen.isEmpty() ? QStringLiteral(PIPEWRIGHT_CLI_PATH) : chosen;
}

// examples/`example` copied into `dir` as `name`; its path (empty on failure,
// with a test failure).
inline QString copy_example(const QTemporaryDir& dir, const char* example, const char* name) {
    const QString path = QDir(dir.path()).filePath(QString::fromUtf8(name));
    const bool copied = QFile::copy(
        QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/") + QString::fromUtf8(example), path);
    EXPECT_TRUE(copied) << example;
    return copied ? path : QString();
}

}  // namespace pipewright::gui

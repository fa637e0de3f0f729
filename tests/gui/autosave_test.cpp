// Autosave and recovery (issue 36 #16): edits reach a recovery file of the
// studio's own a moment after they are made, never the user's file; a
// normal end or a save leaves nothing behind; and a session that ended
// without saving is offered back at the next start.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

#include "document/document_autosave.h"
#include "document/project_document.h"
#include "editor/training_bar.h"
#include "modal_script.h"
#include "pipewright/core/input_file.h"
#include "window/file_controller.h"
#include "window/main_window.h"
#include "window/recovery_prompt.h"

namespace pipewright::gui {
namespace {

QString example() {
    return QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-2gpu-pipelined.json");
}

QByteArray contents(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A window on a writable copy of the example in `dir`.
QString user_file(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("mine.json"));
    EXPECT_TRUE(QFile::copy(example(), path));
    QFile(path).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    return path;
}

// Presses the message box's button of this object name.
ModalScript::Step press(const QString& button, QString* text) {
    return [button, text](QWidget* modal) {
        auto* box = qobject_cast<QMessageBox*>(modal);
        if (box == nullptr) {
            return false;
        }
        *text = box->text();
        box->findChild<QPushButton*>(button)->click();
        return true;
    };
}

TEST(Autosave, AnEditReachesTheRecoveryFileAndNeverTheUsersFile) {
    QTemporaryDir dir;
    const QString path = user_file(dir);
    const QByteArray before = contents(path);
    MainWindow window;
    ASSERT_TRUE(window.openFile(path));
    DocumentAutosave autosave(window.document(), dir.filePath(QStringLiteral("recovery")));
    EXPECT_FALSE(QFile::exists(autosave.recoveryFile()));  // nothing to keep yet

    QSpinBox* box = window.trainingBar()->microbatchesBox();
    box->setValue(box->value() + 2);
    // Written a moment later, not at once (a held-down spin box writes once).
    EXPECT_FALSE(QFile::exists(autosave.recoveryFile()));
    EXPECT_TRUE(QTest::qWaitFor([&] { return QFile::exists(autosave.recoveryFile()); },
                                3 * DocumentAutosave::kDelayMs));
    const auto kept = nlohmann::json::parse(read_text_file(autosave.recoveryFile().toStdString()));
    EXPECT_EQ(kept.at("file"), QFileInfo(path).absoluteFilePath().toStdString());
    EXPECT_EQ(kept.at("project").at("training").at("microbatches"), box->value());
    EXPECT_EQ(contents(path), before);

    // Saved: nothing left to recover.
    ASSERT_TRUE(window.fileController()->saveTo(path));
    EXPECT_FALSE(QFile::exists(autosave.recoveryFile()));
}

TEST(Autosave, ANormalEndLeavesNothingAndACrashLeavesTheEditsToOffer) {
    QTemporaryDir dir;
    const QString path = user_file(dir);
    const QString folder = dir.filePath(QStringLiteral("recovery"));
    QString left;
    {
        MainWindow window;
        ASSERT_TRUE(window.openFile(path));
        DocumentAutosave autosave(window.document(), folder);
        window.trainingBar()->microbatchesBox()->setValue(12);
        autosave.flush();
        ASSERT_TRUE(QFile::exists(autosave.recoveryFile()));
        // This session still runs: its file is not offered.
        EXPECT_TRUE(orphaned_recoveries(folder).empty());
        // A crash leaves the file and no live lock: the copy stands for it.
        left = QDir(folder).filePath(QStringLiteral("session-1-1.json"));
        ASSERT_TRUE(QFile::copy(autosave.recoveryFile(), left));
    }
    // The session that ended normally removed its own file.
    EXPECT_EQ(QDir(folder).entryList({QStringLiteral("session-*.json")}, QDir::Files),
              QStringList{QStringLiteral("session-1-1.json")});
    const auto found = orphaned_recoveries(folder);
    ASSERT_EQ(found.size(), 1U);
    EXPECT_EQ(found.front().filePath, QFileInfo(path).absoluteFilePath());
    EXPECT_EQ(found.front().project.training.microbatches, 12);
}

TEST(Autosave, RecoverRestoresTheEditsModifiedAndDiscardDeletesThem) {
    QTemporaryDir dir;
    const QString path = user_file(dir);
    const QByteArray before = contents(path);
    const QString folder = dir.filePath(QStringLiteral("recovery"));
    const auto leave_a_crashed_session = [&] {
        MainWindow window;
        EXPECT_TRUE(window.openFile(path));
        DocumentAutosave autosave(window.document(), folder);
        window.trainingBar()->microbatchesBox()->setValue(12);
        autosave.flush();
        EXPECT_TRUE(QFile::copy(autosave.recoveryFile(),
                                QDir(folder).filePath(QStringLiteral("session-1-1.json"))));
    };

    leave_a_crashed_session();
    {
        MainWindow window;
        QString text;
        ModalScript script({press(QStringLiteral("recover"), &text)});
        EXPECT_TRUE(offer_recovery(window, folder));
        EXPECT_EQ(script.done(), 1U);
        EXPECT_TRUE(text.contains(QStringLiteral("without saving your changes to")))
            << text.toStdString();
        EXPECT_EQ(window.document()->project().training.microbatches, 12);
        EXPECT_TRUE(window.document()->isModified());
        EXPECT_EQ(window.document()->filePath(), QFileInfo(path).absoluteFilePath());
        EXPECT_EQ(contents(path), before);  // written only when the user saves
        EXPECT_TRUE(orphaned_recoveries(folder).empty());
    }

    leave_a_crashed_session();
    {
        MainWindow window;
        QString text;
        ModalScript script({press(QStringLiteral("discard"), &text)});
        EXPECT_FALSE(offer_recovery(window, folder));
        EXPECT_EQ(script.done(), 1U);
        EXPECT_TRUE(orphaned_recoveries(folder).empty());
    }
    // Nothing to offer: no question at all.
    MainWindow window;
    EXPECT_FALSE(offer_recovery(window, folder));
}

}  // namespace
}  // namespace pipewright::gui

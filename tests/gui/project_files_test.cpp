// Where the studio reads and writes a project: shipped examples and
// read-only files open as untitled copies, Save As starts in the user's
// documents, and a relative schedule CSV still resolves after Save As.
#include <gtest/gtest.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>

#include "document/project_document.h"
#include "editor/training_bar.h"
#include "studio_core/project/asset_paths.h"
#include "window/file_controller.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

QString example() {
    return QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-2gpu-pipelined.json");
}

QByteArray contents(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

TEST(ProjectFiles, AShippedExampleOpensAsAnUntitledCopyThatSaveNeverOverwrites) {
    ASSERT_TRUE(is_shipped_asset(example()));
    const QByteArray shipped = contents(example());
    MainWindow window;
    ASSERT_TRUE(window.openFile(example()));
    EXPECT_TRUE(window.document()->filePath().isEmpty());
    EXPECT_FALSE(window.document()->isModified());  // quitting does not ask
    EXPECT_EQ(QDir(window.document()->baseDir()), QDir(QFileInfo(example()).absolutePath()));
    EXPECT_TRUE(window.statusBar()->currentMessage().contains(QStringLiteral("untitled copy")))
        << window.statusBar()->currentMessage().toStdString();

    window.trainingBar()->microbatchesBox()->setValue(
        window.trainingBar()->microbatchesBox()->value() + 2);
    EXPECT_TRUE(window.document()->isModified());
    QTemporaryDir dir;
    const QString saved = dir.filePath(QStringLiteral("mine.json"));
    ASSERT_TRUE(window.fileController()->saveTo(saved));
    EXPECT_EQ(window.document()->filePath(), QFileInfo(saved).absoluteFilePath());
    EXPECT_EQ(contents(example()), shipped);
}

TEST(ProjectFiles, AWritableProjectOpensAsItsOwnFile) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("p.json"));
    ASSERT_TRUE(QFile::copy(example(), path));
    QFile(path).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    MainWindow window;
    ASSERT_TRUE(window.openFile(path));
    EXPECT_EQ(window.document()->filePath(), QFileInfo(path).absoluteFilePath());
    EXPECT_EQ(QDir(window.document()->baseDir()), QDir(dir.path()));
}

TEST(ProjectFiles, AReadOnlyProjectOpensAsAnUntitledCopy) {
    if (::geteuid() == 0) {
        GTEST_SKIP() << "root may write any file";
    }
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("p.json"));
    ASSERT_TRUE(QFile::copy(example(), path));
    QFile(path).setPermissions(QFileDevice::ReadOwner);
    MainWindow window;
    ASSERT_TRUE(window.openFile(path));
    EXPECT_TRUE(window.document()->filePath().isEmpty());
    EXPECT_TRUE(window.statusBar()->currentMessage().contains(QStringLiteral("read-only")));
}

TEST(ProjectFiles, SaveAsElsewhereKeepsARelativeScheduleCsvPointingAtItsFile) {
    QTemporaryDir root;
    ASSERT_TRUE(QDir(root.path()).mkpath(QStringLiteral("a")));
    ASSERT_TRUE(QDir(root.path()).mkpath(QStringLiteral("b/c")));
    ProjectDocument document;
    QString error;
    ASSERT_TRUE(document.open(example(), &error)) << error.toStdString();
    Project project = document.project();
    project.training.schedule.csv_path = "plans/schedule.csv";
    document.reset(project, root.filePath(QStringLiteral("a/p.json")));
    ASSERT_EQ(QDir(document.baseDir()), QDir(root.filePath(QStringLiteral("a"))));

    ASSERT_TRUE(document.saveAs(root.filePath(QStringLiteral("b/c/p.json")), &error))
        << error.toStdString();
    EXPECT_EQ(document.project().training.schedule.csv_path, "../../a/plans/schedule.csv");
    EXPECT_EQ(QDir(document.baseDir()), QDir(root.filePath(QStringLiteral("b/c"))));
    EXPECT_FALSE(document.isModified());
    // The file on disk says the same.
    ProjectDocument reread;
    ASSERT_TRUE(reread.open(root.filePath(QStringLiteral("b/c/p.json")), &error));
    EXPECT_EQ(reread.project().training.schedule.csv_path, "../../a/plans/schedule.csv");

    // Saving in the same folder leaves the path as written.
    ASSERT_TRUE(document.saveAs(root.filePath(QStringLiteral("b/c/q.json")), &error));
    EXPECT_EQ(document.project().training.schedule.csv_path, "../../a/plans/schedule.csv");
}

}  // namespace
}  // namespace pipewright::gui

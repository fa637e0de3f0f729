#include <gtest/gtest.h>
#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "document/project_document.h"
#include "metrics/comparison_panel.h"
#include "modal_script.h"
#include "studio_core/simulation/simulation_runner.h"
#include "window/export_controller.h"
#include "window/main_window.h"
#include "window/message_bar.h"

namespace pipewright::gui {
namespace {

using ExportView = ExportController::View;

QByteArray read(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// What the first bytes of a file say it is.
bool is_png(const QByteArray& data) {
    return data.startsWith("\x89PNG\r\n\x1a\n");
}
bool is_svg(const QByteArray& data) {
    return data.startsWith("<?xml") && data.contains("<svg") && data.trimmed().endsWith("</svg>");
}
bool is_pdf(const QByteArray& data) {
    return data.startsWith("%PDF-") && data.trimmed().endsWith("%%EOF");
}

class ExportTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(dir.isValid());
        window.resize(1400, 900);
        ASSERT_TRUE(window.openFile(
            QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-2gpu-pipelined.json")));
        window.show();
        QCoreApplication::processEvents();
    }

    void compare() {
        QSignalSpy compared(window.comparisonPanel(), &ComparisonPanel::compared);
        window.comparisonPanel()->compare(window.document()->project(), {});
        ASSERT_TRUE(compared.wait(30000));
    }

    QString path(const QString& name) const { return dir.filePath(name); }

    QTemporaryDir dir;
    MainWindow window;
};

TEST_F(ExportTest, EveryViewIsWrittenInTheFormatItsNameSays) {
    compare();
    struct Case {
        ExportView view;
        ExportFormat format;
        const char* name;
        bool (*check)(const QByteArray&);
    };
    const Case cases[] = {
        {ExportView::timeline, ExportFormat::png, "t.png", is_png},
        {ExportView::timeline, ExportFormat::svg, "t.svg", is_svg},
        {ExportView::timeline, ExportFormat::pdf, "t.pdf", is_pdf},
        {ExportView::metrics, ExportFormat::png, "m.png", is_png},
        {ExportView::metrics, ExportFormat::svg, "m.svg", is_svg},
        {ExportView::metrics, ExportFormat::pdf, "m.pdf", is_pdf},
        {ExportView::comparison, ExportFormat::png, "c.png", is_png},
        {ExportView::comparison, ExportFormat::svg, "c.svg", is_svg},
        {ExportView::comparison, ExportFormat::pdf, "c.pdf", is_pdf},
    };
    for (const Case& c : cases) {
        QString error;
        ASSERT_TRUE(window.exportController()->exportTo(c.view, c.format, path(c.name), &error))
            << c.name << ": " << error.toStdString();
        const QByteArray data = read(path(c.name));
        EXPECT_TRUE(c.check(data)) << c.name << " starts " << data.left(16).toStdString();
    }
    // The comparison's SVG is vectors with its text as text, not one picture.
    const QByteArray svg = read(path("c.svg"));
    EXPECT_TRUE(svg.contains("Iteration time"));
    EXPECT_TRUE(svg.contains("zb-h1"));
    EXPECT_FALSE(svg.contains("<image"));
    // The PNG is twice the charts' size on screen.
    QImage png;
    ASSERT_TRUE(png.load(path("c.png")));
    EXPECT_EQ(png.width(), 2 * window.comparisonPanel()->chartArea()->width());
}

// The schedule in the three forms: Pipewright's lowering, and the two that
// PyTorch's _load_csv reads.
TEST_F(ExportTest, TheScheduleIsWrittenForPyTorchInBothForms) {
    QString error;
    ASSERT_TRUE(window.exportController()->exportTo(ExportView::schedule, ExportFormat::csv,
                                                    path("s.csv"), &error))
        << error.toStdString();
    ASSERT_TRUE(window.exportController()->exportTo(
        ExportView::schedule, ExportFormat::torch_compute_only, path("only.csv"), &error))
        << error.toStdString();
    ASSERT_TRUE(window.exportController()->exportTo(
        ExportView::schedule, ExportFormat::torch_compute_comms, path("comms.csv"), &error))
        << error.toStdString();
    const QByteArray ours = read(path("s.csv"));
    const QByteArray only = read(path("only.csv"));
    const QByteArray comms = read(path("comms.csv"));
    EXPECT_TRUE(ours.contains("0SEND_F0")) << ours.left(80).toStdString();
    EXPECT_FALSE(only.contains("SEND")) << only.left(80).toStdString();
    EXPECT_TRUE(only.startsWith("0F0,")) << only.left(80).toStdString();
    EXPECT_TRUE(comms.contains("0WAIT_SEND_F0")) << comms.left(200).toStdString();
    EXPECT_TRUE(comms.contains("REDUCE_GRAD")) << comms.left(200).toStdString();
    for (const char* name :
         {"exportScheduleTorchComputeOnly.csv", "exportScheduleTorchComputeComms.csv"}) {
        EXPECT_NE(window.findChild<QAction*>(QString::fromLatin1(name)), nullptr) << name;
    }
}

TEST_F(ExportTest, TheComparisonNeedsAComparisonFirst) {
    QString error;
    EXPECT_FALSE(window.exportController()->exportTo(ExportView::comparison, ExportFormat::png,
                                                     path("c.png"), &error));
    EXPECT_TRUE(error.contains(QStringLiteral("compare the schedules first")))
        << error.toStdString();
    EXPECT_FALSE(QFile::exists(path("c.png")));
}

TEST_F(ExportTest, AWrongExtensionIsRefusedAndTheRightNameOffered) {
    auto* action = window.findChild<QAction*>(QStringLiteral("exportTimeline.svg"));
    ASSERT_NE(action, nullptr);
    QString warning;
    QString offered;
    ModalScript script({ModalScript::save_as(path("x.png")), ModalScript::message(&warning),
                        ModalScript::save_as({}, &offered)});
    // The third step accepts what the dialog offers: it selects it again.
    action->trigger();
    EXPECT_EQ(script.done(), 3u);
    EXPECT_TRUE(warning.contains(QStringLiteral("“x.png” names a PNG image")))
        << warning.toStdString();
    EXPECT_TRUE(warning.contains(QStringLiteral("“x.svg”"))) << warning.toStdString();
    EXPECT_EQ(offered, path("x.svg"));
    EXPECT_FALSE(QFile::exists(path("x.png")));
    EXPECT_TRUE(is_svg(read(path("x.svg"))));
}

TEST_F(ExportTest, AMissingExtensionIsAdded) {
    compare();
    auto* action = window.findChild<QAction*>(QStringLiteral("exportComparison.pdf"));
    ASSERT_NE(action, nullptr);
    QString offered;
    ModalScript script({ModalScript::save_as(path("charts"), &offered)});
    action->trigger();
    EXPECT_EQ(script.done(), 1u);
    // Named after the model, in the format's extension.
    EXPECT_TRUE(offered.endsWith(QStringLiteral("-comparison.pdf"))) << offered.toStdString();
    EXPECT_FALSE(QFile::exists(path("charts")));
    EXPECT_TRUE(is_pdf(read(path("charts.pdf"))))
        << QDir(dir.path()).entryList().join(' ').toStdString() << " | "
        << read(path("charts.pdf")).left(20).toStdString();
}

}  // namespace
}  // namespace pipewright::gui

namespace pipewright::gui {
namespace {

// File ▸ Export ▸ Launch Files and the Run tab's button: the files of
// `pipewright launch-files` for the saved project, refused while the
// window holds edits the file does not.
TEST(LaunchFilesExport, WritesTheClusterFilesOfTheSavedProject) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString project = dir.filePath(QStringLiteral("resnet.json"));
    ASSERT_TRUE(QFile::copy(
        QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-4gpu-2x2.json"), project));
    MainWindow window;
    ASSERT_TRUE(window.openFile(project));
    EXPECT_NE(window.findChild<QAction*>(QStringLiteral("exportLaunchFiles")), nullptr);

    const QString folder = dir.filePath(QStringLiteral("resnet-launch"));
    QString error;
    ASSERT_TRUE(window.exportController()->exportLaunchFiles(folder, &error))
        << error.toStdString();
    for (const char* name : {"slurm.sbatch", "pytorchjob.yaml", "trainjob.yaml", "torchrun.sh"}) {
        const QByteArray text = read(QDir(folder).filePath(QString::fromLatin1(name)));
        EXPECT_TRUE(text.contains(QFileInfo(project).absoluteFilePath().toUtf8())) << name;
    }
    // Two replicas of two stages: four ranks, on four GPUs of one node.
    EXPECT_TRUE(read(QDir(folder).filePath(QStringLiteral("slurm.sbatch")))
                    .contains("--ntasks-per-node=4"));
    EXPECT_TRUE(window.messageBar()->text().contains(QStringLiteral("4 ranks")))
        << window.messageBar()->text().toStdString();

    // An edit the file does not hold yet: the files would run the old one.
    Project edited = window.document()->project();
    edited.training.batch_size = 2 * edited.training.batch_size;
    window.document()->edit(QStringLiteral("micro-batches"), edited);
    EXPECT_FALSE(window.exportController()->exportLaunchFiles(dir.filePath(QStringLiteral("again")),
                                                              &error));
    EXPECT_TRUE(error.contains(QStringLiteral("Save the project first"))) << error.toStdString();
    EXPECT_FALSE(QDir(dir.filePath(QStringLiteral("again"))).exists());
}

}  // namespace
}  // namespace pipewright::gui

#include <gtest/gtest.h>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QGraphicsRectItem>
#include <QImage>
#include <QLabel>
#include <QMimeData>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>

#include "document/project_document.h"
#include "editor/model_table_model.h"
#include "editor/problems_panel.h"
#include "editor/training_bar.h"
#include "metrics/metrics_panel.h"
#include "pipewright/core/project_io.h"
#include "qcustomplot.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "topology/topology_scene.h"
#include "topology/topology_view.h"
#include "window/file_controller.h"
#include "window/main_window.h"
#include "window/message_bar.h"
#include "window/screenshot.h"

namespace pipewright::gui {
namespace {

QString example() {
    return QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-2gpu-pipelined.json");
}

class MainWindowTest : public ::testing::Test {
  protected:
    void SetUp() override {
        window.resize(1200, 800);
        window.runner()->setDebounceMs(10);
        ASSERT_TRUE(window.openFile(example()));
        window.show();
        QCoreApplication::processEvents();
    }

    // Waits for the debounced re-simulation that an edit started.
    bool wait_simulation() {
        QSignalSpy spy(window.runner(), &SimulationRunner::finished);
        return spy.wait(10000);
    }

    // Sends a drop of layers [first, last] onto the device box at `path`.
    void drop_on_device(int first, int last, const QString& path) {
        QGraphicsRectItem* device = window.topologyScene()->deviceItem(path);
        ASSERT_NE(device, nullptr);
        TopologyView* view = window.topologyView();
        const QPoint at = view->mapFromScene(device->sceneBoundingRect().center());
        QMimeData mime;
        mime.setData(QString::fromLatin1(kLayersMime),
                     QStringLiteral("%1,%2").arg(first).arg(last).toLatin1());
        // QDropEvents outside a drag session are not delivered by Qt, so the
        // test enters where the view's dropEvent hands over.
        EXPECT_TRUE(view->dropAt(at, &mime));
    }

    MainWindow window;
};

TEST_F(MainWindowTest, OpeningAnExampleSimulatesIt) {
    const auto result = window.runner()->latest();
    ASSERT_TRUE(result && result->ok());
    // One block per simulated action.
    EXPECT_EQ(window.timelinePlot()->blockCount(), result->report->timeline.events.size());
    EXPECT_EQ(window.timelinePlot()->timeline().num_ranks(), 2);
    EXPECT_FALSE(window.metricsPanel()->headline().contains(QStringLiteral("–")));
}

// ResNet-50 in micro-batches of 20 on A100s launches kernels of about 10 µs,
// faster than eager frameworks were measured to issue them: the summary says
// the run is likely host-bound, and its tool tip why. Llama 3.1 8B's are
// long enough.
TEST_F(MainWindowTest, KernelsShorterThanAHostIssuesThemAreSaidToBeHostBound) {
    const QLabel* summary = window.findChild<QLabel*>(QStringLiteral("simulationSummary"));
    ASSERT_NE(summary, nullptr);
    EXPECT_TRUE(summary->text().contains(QStringLiteral("likely host-bound")))
        << summary->text().toStdString();
    EXPECT_TRUE(
        summary->toolTip().contains(QStringLiteral("The kernels of stage 1 (node0/c0/gpu1)")))
        << summary->toolTip().toStdString();
    EXPECT_TRUE(summary->toolTip().contains(QStringLiteral("paced by its host")));
    EXPECT_FALSE(window.runner()->latest()->host_pace.empty());

    ASSERT_TRUE(window.openFile(
        QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/llama3.1-8b-h100-node.json")));
    EXPECT_FALSE(summary->text().contains(QStringLiteral("host-bound")))
        << summary->text().toStdString();
    EXPECT_FALSE(summary->toolTip().contains(QStringLiteral("paced by its host")));
    EXPECT_TRUE(window.runner()->latest()->host_pace.empty());
}

TEST(MetricsPanelTest, TheIterationSaysWhatTheTiedEmbeddingsSumCosts) {
    MetricsPanel panel;
    SimulationReport report;
    report.iteration_time_s = 0.02;
    panel.setReport(report);
    EXPECT_EQ(panel.iterationNote(), QString());
    TiedEmbeddingSync sync;
    sync.embedding_rank = 0;
    sync.head_rank = 3;
    sync.bytes = 77'194'752;
    sync.seconds = 340e-6;
    report.tied_embedding_sync = sync;
    panel.setReport(report);
    EXPECT_EQ(panel.iterationNote(),
              QStringLiteral("Includes 340 µs to sum the tied embedding's and head's gradients "
                             "(73.6 MiB) between ranks 0 and 3 before the optimizer step"));
}

TEST_F(MainWindowTest, ChangingMicrobatchesReSimulates) {
    const auto before = window.runner()->latest();
    ASSERT_EQ(before->report->microbatches, 6);
    const QString headline = window.metricsPanel()->headline();
    window.trainingBar()->microbatchesBox()->setValue(12);
    ASSERT_TRUE(wait_simulation());
    const auto after = window.runner()->latest();
    ASSERT_TRUE(after->ok());
    EXPECT_EQ(after->report->microbatches, 12);
    EXPECT_EQ(window.timelinePlot()->blockCount(), after->report->timeline.events.size());
    EXPECT_GT(window.timelinePlot()->blockCount(), before->report->timeline.events.size());
    EXPECT_NE(window.metricsPanel()->headline(), headline);
}

TEST_F(MainWindowTest, DroppingALayerOnADeviceMovesItAndUndoRestoresTheProject) {
    const Project before = window.document()->project();
    const int layer = before.model.layer_index("layer3.0");
    const double time_before = window.runner()->latest()->report->iteration_time_s;
    drop_on_device(layer, layer, QStringLiteral("node0/c0/gpu0"));
    EXPECT_EQ(window.document()->project().placement[0].layers.back(), "layer3.0");
    ASSERT_TRUE(wait_simulation());
    EXPECT_NE(window.runner()->latest()->report->iteration_time_s, time_before);

    window.document()->undoStack()->undo();
    EXPECT_EQ(window.document()->project(), before);
    window.document()->undoStack()->redo();
    EXPECT_EQ(window.document()->project().placement[0].layers.back(), "layer3.0");
}

TEST_F(MainWindowTest, AnInvalidDropIsRefusedWithAReason) {
    // 1F1B runs one contiguous stage per device.
    window.trainingBar()->scheduleBox()->setCurrentText(QStringLiteral("1f1b"));
    ASSERT_EQ(window.document()->project().training.schedule.name, "1f1b");
    const Project before = window.document()->project();
    const int undo_steps = window.document()->undoStack()->count();
    QSignalSpy refused(&window, &MainWindow::refused);
    drop_on_device(5, 5, QStringLiteral("node0/c0/gpu1"));
    ASSERT_EQ(refused.count(), 1);
    EXPECT_TRUE(window.lastRefusal().contains(QStringLiteral("model order")));
    EXPECT_EQ(window.document()->project(), before);
    EXPECT_EQ(window.document()->undoStack()->count(), undo_steps);
    // Said whole above the views, not clipped beside the status bar's summary.
    MessageBar* bar = window.messageBar();
    EXPECT_FALSE(bar->isHidden());
    EXPECT_EQ(bar->text(), window.lastRefusal());
    EXPECT_EQ(bar->kind(), MessageBar::Kind::problem);
    QTest::keyClick(bar, Qt::Key_Escape);
    EXPECT_TRUE(bar->isHidden());
}

TEST_F(MainWindowTest, ADropThatGivesADeviceTwoStagesUnderGpipeSaysSo) {
    ASSERT_EQ(window.document()->project().training.schedule.name, "gpipe");
    drop_on_device(0, 0, QStringLiteral("node0/c0/gpu1"));
    ASSERT_EQ(window.document()->project().placement.size(), 3U);
    EXPECT_FALSE(window.messageBar()->isHidden());
    EXPECT_EQ(window.messageBar()->kind(), MessageBar::Kind::note);
    EXPECT_TRUE(window.messageBar()->text().contains(QStringLiteral("now holds stages 0 and 2")))
        << window.messageBar()->text().toStdString();
    // The timeline follows the pipeline: gpu1 (stage 0) is the first lane.
    window.simulateNow();
    EXPECT_EQ(window.timelinePlot()->timeline().devices.front(), "node0/c0/gpu1");
}

TEST(MessageBarTest, StaysLongerForLongerTextWithinLimits) {
    EXPECT_EQ(MessageBar::visibleMsFor(QStringLiteral("short")), 8000);
    EXPECT_EQ(MessageBar::visibleMsFor(QString(300, QLatin1Char('x'))), 20000);
    EXPECT_EQ(MessageBar::visibleMsFor(QString(100000, QLatin1Char('x'))), 60000);
}

TEST_F(MainWindowTest, AFileThatDoesNotOpenIsExplainedWithLineAndColumn) {
    QTemporaryDir dir;
    const QString path = QDir(dir.path()).filePath(QStringLiteral("broken.json"));
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write("{\n  \"format\": \"pipewright-project\",\n  \"model\": [ }\n}\n");
    file.close();
    const Project before = window.document()->project();
    EXPECT_FALSE(window.openFile(path));
    EXPECT_EQ(window.document()->project(), before);
    const QString text = window.messageBar()->text();
    EXPECT_FALSE(window.messageBar()->isHidden());
    EXPECT_TRUE(text.contains(QStringLiteral("line 3, column 14: unexpected '}'")))
        << text.toStdString();
    EXPECT_FALSE(text.contains(QStringLiteral("json.exception"))) << text.toStdString();
}

TEST_F(MainWindowTest, NaiveShowsOneMicroBatchAndThePipelinedCountComesBack) {
    TrainingBar* bar = window.trainingBar();
    bar->scheduleBox()->setCurrentIndex(bar->scheduleBox()->findData(QStringLiteral("gpipe")));
    bar->microbatchesBox()->setValue(6);
    ASSERT_EQ(window.document()->project().training.resolved_microbatches(), 6);

    bar->scheduleBox()->setCurrentIndex(bar->scheduleBox()->findData(QStringLiteral("naive")));
    EXPECT_EQ(window.document()->project().training.resolved_microbatches(), 1);
    EXPECT_FALSE(bar->microbatchesBox()->isEnabled());
    EXPECT_EQ(bar->microbatchesBox()->text(), QStringLiteral("1 (whole batch)"));
    EXPECT_TRUE(bar->microbatchesBox()->toolTip().contains(QStringLiteral("Naive")));

    bar->scheduleBox()->setCurrentIndex(bar->scheduleBox()->findData(QStringLiteral("1f1b")));
    EXPECT_EQ(window.document()->project().training.resolved_microbatches(), 6);
    EXPECT_TRUE(bar->microbatchesBox()->isEnabled());
    EXPECT_EQ(bar->microbatchesBox()->text(), QStringLiteral("6 of 20"));
    // Each switch is one undo step, the count with it.
    window.document()->undoStack()->undo();
    EXPECT_EQ(window.document()->project().training.resolved_microbatches(), 1);
}

TEST_F(MainWindowTest, TheMemoryLegendSitsBesideTheCurvesNotOnThem) {
    window.views()->setCurrentIndex(1);
    QCoreApplication::processEvents();
    QCustomPlot* plot = window.metricsPanel()->memoryPlot();
    ASSERT_GT(plot->graphCount(), 0);
    plot->replot();
    ASSERT_TRUE(plot->legend->visible());
    EXPECT_FALSE(plot->legend->outerRect().intersects(plot->axisRect()->outerRect()));
    // The curves keep most of the width, even in a 1200 px window with both docks.
    EXPECT_GT(plot->axisRect()->width(), 2.5 * plot->legend->outerRect().width());
}

TEST_F(MainWindowTest, SaveThenOpenRoundTrips) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("copy.json"));
    window.trainingBar()->microbatchesBox()->setValue(4);
    const Project edited = window.document()->project();
    ASSERT_TRUE(window.fileController()->saveTo(path));
    EXPECT_FALSE(window.document()->isModified());
    MainWindow other;
    ASSERT_TRUE(other.openFile(path));
    EXPECT_EQ(other.document()->project(), edited);
}

TEST(MainWindowProblems, AnInvalidProjectOpensWithItsProblemsListed) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("broken.json"));
    auto loaded = load_project_file(example().toStdString());
    ASSERT_TRUE(loaded.project);
    Project broken = *loaded.project;
    broken.model.layers[1].params["num_features"] = 3;  // conv1 gives 64 channels
    broken.placement[1].device = "node0/c0/gpu7";
    save_project_file(broken, path.toStdString());

    MainWindow window;
    ASSERT_TRUE(window.openFile(path));
    EXPECT_FALSE(window.runner()->latest()->ok());
    ProblemsPanel* problems = window.problemsPanel();
    ASSERT_GE(problems->count(), 2);
    QStringList paths;
    for (int i = 0; i < problems->count(); ++i) {
        paths << problems->model()->index(i, 0).data(Qt::UserRole).toString();
    }
    EXPECT_TRUE(paths.filter(QStringLiteral("model.layers[1]")).size() >= 1)
        << paths.join(' ').toStdString();
    EXPECT_TRUE(paths.filter(QStringLiteral("placement[1]")).size() >= 1);
    EXPECT_EQ(window.timelinePlot()->blockCount(), 0u);

    // Clicking a problem selects the layer it names.
    const int row =
        static_cast<int>(paths.indexOf(paths.filter(QStringLiteral("model.layers[1]")).front()));
    emit problems->clicked(problems->model()->index(row, 0));
    EXPECT_EQ(window.inspector()->selection().kind, Selection::Kind::layer);
    EXPECT_EQ(window.inspector()->selection().layer, 1);
}

TEST(Screenshot, WritesAPngOfTheRequestedSize) {
    QTemporaryDir dir;
    ScreenshotRequest request;
    request.output = dir.filePath(QStringLiteral("shot.png"));
    request.project = example();
    request.size = QSize(1280, 800);
    QString error;
    ASSERT_TRUE(take_screenshot(request, &error)) << error.toStdString();
    const QImage image(request.output);
    EXPECT_EQ(image.size(), QSize(1280, 800));

    QSize size;
    EXPECT_FALSE(parse_size(QStringLiteral("big"), &size, &error));
    request.project = dir.filePath(QStringLiteral("missing.json"));
    EXPECT_FALSE(take_screenshot(request, &error));
}

TEST(Screenshot, CropKeepsThatPartOfTheWindow) {
    QTemporaryDir dir;
    ScreenshotRequest request;
    request.output = dir.filePath(QStringLiteral("whole.png"));
    request.project = example();
    request.size = QSize(1280, 800);
    QString error;
    ASSERT_TRUE(take_screenshot(request, &error)) << error.toStdString();
    const QImage whole(request.output);

    // As docs/make-screenshots.sh crops the concept pictures.
    ASSERT_TRUE(parse_crop(QStringLiteral("600x300+190+440"), &request.crop, &error))
        << error.toStdString();
    EXPECT_EQ(request.crop, QRect(190, 440, 600, 300));
    request.output = dir.filePath(QStringLiteral("part.png"));
    ASSERT_TRUE(take_screenshot(request, &error)) << error.toStdString();
    const QImage part(request.output);
    ASSERT_EQ(part.size(), QSize(600, 300));
    EXPECT_EQ(part.convertToFormat(QImage::Format_RGB32),
              whole.copy(request.crop).convertToFormat(QImage::Format_RGB32));

    // A crop that reaches the window's last row and column fits; one past it does not,
    // and is refused before the project is opened.
    EXPECT_TRUE(crop_fits(QRect(1080, 700, 200, 100), request.size, &error));
    request.crop = QRect(1081, 700, 200, 100);
    request.output = dir.filePath(QStringLiteral("beyond.png"));
    EXPECT_FALSE(take_screenshot(request, &error));
    EXPECT_EQ(error.toStdString(),
              "--crop 200x100+1081+700 goes beyond the 1280x800 window (it reaches 1281 across "
              "and 800 down)");
    EXPECT_FALSE(QFile::exists(request.output));
}

TEST(Screenshot, MalformedCropsAreRefusedWithTheFormWanted) {
    QRect crop;
    QString error;
    for (const char* text : {"", "600x300", "600x300+10", "600x300-10+20", "0x300+0+0", "600x0+0+0",
                             "a600x300+0+0", "600 x 300+0+0", "600x300+0+0+0"}) {
        EXPECT_FALSE(parse_crop(QString::fromLatin1(text), &crop, &error)) << text;
        EXPECT_TRUE(error.startsWith(QStringLiteral("--crop wants WIDTHxHEIGHT+LEFT+TOP")))
            << error.toStdString();
    }
    EXPECT_TRUE(parse_crop(QStringLiteral(" 1x1+0+0 "), &crop, &error));
    EXPECT_EQ(crop, QRect(0, 0, 1, 1));
}

}  // namespace
}  // namespace pipewright::gui

// The Run panel: measured lanes in the timeline, and real runs of the
// `pipewright` command line started from the studio (skipped, with the
// reason, when the backend is not built).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QListView>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "document/project_document.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline_metrics.h"
#include "real_cli.h"
#include "run/run_controller.h"
#include "run/run_panel.h"
#include "studio_core/processes/run_process.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

Timeline lanes(int ranks, double step) {
    Timeline t;
    for (int r = 0; r < ranks; ++r) {
        t.devices.push_back("n/c/d" + std::to_string(r));
        t.events.push_back({r, Action{r, ActionType::forward, 0}, r * step, (r + 1) * step});
        t.events.push_back({r, Action{r, ActionType::backward, 0}, (2 * ranks - r) * step,
                            (2 * ranks - r + 1) * step});
    }
    return t;
}

// The row of a lane, or -1.
int lane_row(const TimelinePlot& plot, int section, int rank) {
    const auto& rows = plot.lanes().rows();
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].kind == LaneRowKind::lane && rows[i].section == section &&
            rows[i].rank == rank) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

// Every measured row lies under every simulated one.
bool measured_under_simulated(const TimelinePlot& plot) {
    double simulated_bottom = 0;
    double measured_top = 1e300;
    for (const LaneRow& row : plot.lanes().rows()) {
        if (row.section == 0) {
            simulated_bottom = std::max(simulated_bottom, row.bottom());
        } else {
            measured_top = std::min(measured_top, row.top);
        }
    }
    return measured_top >= simulated_bottom;
}

TEST(TimelineMeasuredLanes, SitUnderTheSimulatedOnesOnTheSameTimeAxis) {
    TimelinePlot plot;
    plot.resize(800, 400);
    plot.setTimeline(lanes(2, 0.001));
    EXPECT_FALSE(plot.hasMeasured());
    const double simulated_unit = plot.timeUnit();

    // Measured is longer: the axis grows to hold both.
    const Timeline measured = lanes(2, 0.004);
    plot.setMeasuredTimeline(measured, QStringLiteral("mlp-1"));
    EXPECT_TRUE(plot.hasMeasured());
    EXPECT_EQ(plot.measuredBlockCount(), measured.events.size());
    EXPECT_EQ(plot.blockCount(), 4U);
    EXPECT_TRUE(measured_under_simulated(plot));
    ASSERT_GE(lane_row(plot, 1, 1), 0);
    EXPECT_EQ(simulated_unit, 1e-6);
    EXPECT_EQ(plot.timeUnit(), 1e-3);  // the unit suits the longer of the two
    EXPECT_GE(plot.xAxis->range().upper * plot.timeUnit(), measured.makespan_s());
    EXPECT_TRUE(plot.measuredLabel().contains(QStringLiteral("measured")));
    EXPECT_TRUE(plot.measuredLabel().contains(QStringLiteral("mlp-1")));
    int measured_ticks = 0;
    for (const QString& label : plot.laneLabels()) {
        measured_ticks += label.contains(QStringLiteral("measured")) ? 1 : 0;
    }
    EXPECT_EQ(measured_ticks, 2);

    // The tooltip tells which side a block is from.
    plot.replot();
    const QRectF measured_lane = plot.rowRect(lane_row(plot, 1, 0));
    const QPoint in_measured = QPointF(plot.xAxis->coordToPixel(0.002 / plot.timeUnit()),
                                       measured_lane.top() + 0.3 * measured_lane.height())
                                   .toPoint();
    EXPECT_TRUE(plot.tooltipAt(in_measured).contains(QStringLiteral("measured")))
        << plot.tooltipAt(in_measured).toStdString();
    const QRectF simulated_lane = plot.rowRect(lane_row(plot, 0, 0));
    const QPoint in_simulated = QPointF(plot.xAxis->coordToPixel(0.0005 / plot.timeUnit()),
                                        simulated_lane.top() + 0.3 * simulated_lane.height())
                                    .toPoint();
    EXPECT_FALSE(plot.tooltipAt(in_simulated).isEmpty());
    EXPECT_FALSE(plot.tooltipAt(in_simulated).contains(QStringLiteral("measured")));
    // In words, with the code beside and the device.
    const QString words = plot.tooltipAt(in_simulated);
    EXPECT_TRUE(words.contains(QStringLiteral("stage 0, forward of micro-batch 0")))
        << words.toStdString();
    EXPECT_TRUE(words.contains(QStringLiteral("(0F0)"))) << words.toStdString();
    // Where its time goes, from the stage's kernels (not on measured blocks).
    plot.setStageKernels({{QStringLiteral("qkv 60 % · fc1 40 %"), QString(), QString()}});
    EXPECT_TRUE(
        plot.tooltipAt(in_simulated).contains(QStringLiteral("kernels: qkv 60 % · fc1 40 %")))
        << plot.tooltipAt(in_simulated).toStdString();
    EXPECT_FALSE(plot.tooltipAt(in_measured).contains(QStringLiteral("kernels:")));
    EXPECT_TRUE(words.contains(QStringLiteral("n/c/d0"))) << words.toStdString();

    // A re-simulation keeps the measured lanes; clearing removes them.
    plot.setTimeline(lanes(3, 0.001));
    EXPECT_EQ(plot.measuredBlockCount(), measured.events.size());
    EXPECT_TRUE(measured_under_simulated(plot));
    EXPECT_GE(lane_row(plot, 0, 2), 0);
    plot.clearMeasuredTimeline();
    EXPECT_FALSE(plot.hasMeasured());
    EXPECT_TRUE(plot.measuredLabel().isEmpty());
}

// A copy of mlp-cpu.json in a temporary folder, so its runs/ go there.
class RealRunTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(dir.isValid());
        project_path = copy_example(dir, "mlp-cpu.json", "mlp.json");
        ASSERT_FALSE(project_path.isEmpty());
        window.runner()->setDebounceMs(10);
        ASSERT_TRUE(window.openFile(project_path));
        window.runPanel()->setCli({cli_path(), {}});
        window.resize(1200, 800);
        window.show();
    }

    void TearDown() override {
        if (window.runPanel()->isRunning()) {
            QSignalSpy done(window.runPanel()->process(), &RunProcess::cancelled);
            window.runPanel()->cancel();
            done.wait(20000);
        }
    }

    // Waits until the run ends; true when it succeeded.
    bool wait_run(int timeout_ms = 240000) {
        QSignalSpy ok(window.runPanel(), &RunPanel::runSucceeded);
        QSignalSpy failed(window.runPanel(), &RunPanel::runFailed);
        QSignalSpy cancelled(window.runPanel()->process(), &RunProcess::cancelled);
        QElapsedTimer clock;
        clock.start();
        while (ok.isEmpty() && failed.isEmpty() && cancelled.isEmpty() &&
               clock.elapsed() < timeout_ms) {
            QTest::qWait(50);
        }
        return !ok.isEmpty();
    }

    QTemporaryDir dir;
    QString project_path;
    MainWindow window;
};

TEST_F(RealRunTest, AShortCpuRunDrawsItsMeasuredTimelineAndTheComparison) {
    if (!PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "the LibTorch backend is not built (PIPEWRIGHT_BUILD_BACKEND=OFF or no "
                        "LibTorch found), so pipewright run cannot train";
    }
    RunPanel* panel = window.runPanel();
    ASSERT_TRUE(panel->runButton()->isEnabled()) << panel->runButton()->toolTip().toStdString();
    // An unsaved edit runs too: two micro-batches instead of the file's four.
    Project edited = window.document()->project();
    edited.training.microbatches = 2;
    window.document()->edit(QStringLiteral("fewer micro-batches"), edited);
    window.simulateNow();
    panel->setDefaultSteps(3);

    ASSERT_TRUE(window.runController()->startRun());
    EXPECT_FALSE(panel->runButton()->isEnabled());
    EXPECT_TRUE(panel->cancelButton()->isEnabled());
    ASSERT_TRUE(wait_run()) << panel->errorText().toStdString() << "\n"
                            << panel->logText().toStdString();

    EXPECT_EQ(panel->progressBar()->value(), 3);
    EXPECT_EQ(panel->progressBar()->maximum(), 3);
    EXPECT_TRUE(panel->logText().contains(QStringLiteral("step 3/3  loss ")))
        << panel->logText().toStdString();
    EXPECT_TRUE(panel->statusText().startsWith(QStringLiteral("Finished")))
        << panel->statusText().toStdString();

    // The run's folder sits beside the project and holds what was run.
    ASSERT_EQ(panel->pastRuns().size(), 1U);
    const QString run_dir = panel->pastRuns().front().dir;
    EXPECT_TRUE(run_dir.startsWith(QDir(dir.path()).filePath("runs/")));
    const auto ran = load_project_file(QDir(run_dir).filePath("project.json").toStdString());
    ASSERT_TRUE(ran.project.has_value());
    EXPECT_EQ(ran.project->training.microbatches, 2);

    // One measured block per action of the run's timeline.json.
    const Timeline measured =
        load_timeline_file(QDir(run_dir).filePath("timeline.json").toStdString());
    TimelinePlot* plot = window.timelinePlot();
    ASSERT_TRUE(plot->hasMeasured());
    EXPECT_EQ(measured.source, "measured");
    EXPECT_GT(measured.events.size(), 0U);
    EXPECT_EQ(plot->measuredBlockCount(), measured.events.size());
    EXPECT_EQ(plot->blockCount(), window.runner()->latest()->report->timeline.events.size());

    // Iteration time and each device's busy time, simulated vs measured.
    const QAbstractItemModel* table = panel->comparisonTable()->model();
    const auto text = [table](int row, int column) {
        return table->index(row, column).data().toString();
    };
    // Then the median of each kind of action.
    ASSERT_EQ(table->rowCount(),
              1 + measured.num_ranks() + static_cast<int>(action_kind_medians(measured).size()));
    EXPECT_EQ(text(table->rowCount() - 1, 0).left(7), QStringLiteral("Median "));
    EXPECT_EQ(text(0, 0), QStringLiteral("Iteration time"));
    for (int r = 0; r < table->rowCount(); ++r) {
        EXPECT_NE(text(r, 1), QStringLiteral("—"));
        EXPECT_NE(text(r, 2), QStringLiteral("—"));
        EXPECT_TRUE(text(r, 3).endsWith(QStringLiteral("%"))) << text(r, 3).toStdString();
    }

    // Another project hides the run; reopening this one lists it again, and
    // the past run brings its measured lanes back.
    ASSERT_TRUE(window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/mlp-cpu.json")));
    EXPECT_FALSE(plot->hasMeasured());
    ASSERT_TRUE(window.openFile(project_path));
    ASSERT_EQ(panel->pastRuns().size(), 1U);
    QListView* list = panel->pastRunList();
    emit list->activated(list->model()->index(0, 0));
    ASSERT_TRUE(plot->hasMeasured());
    EXPECT_EQ(plot->measuredBlockCount(), measured.events.size());
}

TEST_F(RealRunTest, AFailedRunShowsTheReasonAndTheStudioKeepsWorking) {
    // float16 simulates, but LibTorch cannot train it on CPUs; without the
    // backend the command line says that it was not built.
    Project edited = window.document()->project();
    edited.training.dtype = DType::float16;
    window.document()->edit(QStringLiteral("half precision"), edited);
    window.runPanel()->setDefaultSteps(2);
    ASSERT_TRUE(window.runController()->startRun());
    EXPECT_FALSE(wait_run());
    const QString error = window.runPanel()->errorText();
    const QString expected = PIPEWRIGHT_TEST_HAVE_BACKEND ? QStringLiteral("float16")
                                                          : QStringLiteral("backend was not built");
    EXPECT_TRUE(error.contains(expected)) << error.toStdString();
    EXPECT_EQ(window.runPanel()->statusText(), QStringLiteral("Failed"));
    EXPECT_TRUE(window.runPanel()->runButton()->isEnabled());
    EXPECT_FALSE(window.timelinePlot()->hasMeasured());
    EXPECT_TRUE(window.runPanel()->pastRuns().empty());

    // The window still edits and simulates.
    window.document()->undoStack()->undo();
    window.simulateNow();
    EXPECT_EQ(window.document()->project().training.dtype, DType::float32);
    EXPECT_TRUE(window.runner()->latest()->ok());

    // Another project starts with a clean Run tab: no old log, error, status
    // or step count.
    ASSERT_FALSE(window.runPanel()->logText().isEmpty());
    ASSERT_TRUE(window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/dummy-2gpu.json")));
    EXPECT_TRUE(window.runPanel()->logText().isEmpty());
    EXPECT_TRUE(window.runPanel()->errorText().isEmpty());
    EXPECT_TRUE(window.runPanel()->statusText().isEmpty());
    auto* progress = window.runPanel()->findChild<QProgressBar*>(QStringLiteral("runProgress"));
    ASSERT_NE(progress, nullptr);
    EXPECT_EQ(progress->text(), QStringLiteral("no run yet"));
}

// Choosing GPUs where there are none (or the build has no CUDA) is the
// command line's clear refusal, shown in the panel.
TEST_F(RealRunTest, GpusChosenWhereThereAreNoneAreRefusedInWords) {
    if (!PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "the LibTorch backend is not built";
    }
    auto* devices = window.runPanel()->findChild<QComboBox*>(QStringLiteral("runDeviceCombo"));
    ASSERT_NE(devices, nullptr);
    EXPECT_EQ(window.runPanel()->device(), QStringLiteral("auto"));
    devices->setCurrentIndex(devices->findData(QStringLiteral("cuda")));
    EXPECT_EQ(window.runPanel()->device(), QStringLiteral("cuda"));
    window.runPanel()->setDefaultSteps(2);
    ASSERT_TRUE(window.runController()->startRun());
    const bool succeeded = wait_run();
    if (succeeded) {
        GTEST_SKIP() << "this machine has GPUs and a CUDA build";
    }
    const QString error = window.runPanel()->errorText();
    EXPECT_TRUE(error.contains(QStringLiteral("--device cuda: "))) << error.toStdString();
    EXPECT_TRUE(window.runPanel()->logText().contains(QStringLiteral("--device cuda")))
        << window.runPanel()->logText().toStdString();
    EXPECT_TRUE(window.runPanel()->runButton()->isEnabled());
}

// A port on 127.0.0.1 held by this process for the test's length.
class TakenPort {
  public:
    TakenPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof address;
        auto* raw = reinterpret_cast<sockaddr*>(&address);
        if (fd_ >= 0 && ::bind(fd_, raw, size) == 0 && ::listen(fd_, 1) == 0 &&
            ::getsockname(fd_, raw, &size) == 0) {
            port_ = ntohs(address.sin_port);
        }
    }
    ~TakenPort() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    TakenPort(const TakenPort&) = delete;
    TakenPort& operator=(const TakenPort&) = delete;
    [[nodiscard]] int port() const { return port_; }

  private:
    int fd_ = -1;
    int port_ = 0;
};

TEST_F(RealRunTest, ATakenPortIsReportedBeforeAnyRankStarts) {
    if (!PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "the LibTorch backend is not built, so pipewright run stops before "
                        "binding a port";
    }
    TakenPort taken;
    ASSERT_GT(taken.port(), 0);
    RunProcess process;
    QSignalSpy failed(&process, &RunProcess::failed);
    RunRequest request{cli_path(), project_path, dir.path(), 1, taken.port(), QString()};
    ASSERT_TRUE(process.start(request));
    ASSERT_TRUE(failed.wait(120000));
    const QString message = failed.front().front().toString();
    EXPECT_TRUE(message.contains(QStringLiteral("already in use"))) << message.toStdString();
}

TEST(RunProcessStart, AMissingProgramIsAFailureNotACrash) {
    RunProcess process;
    QSignalSpy failed(&process, &RunProcess::failed);
    RunRequest request{QStringLiteral("/nonexistent/pipewright"),
                       QStringLiteral("p.json"),
                       QDir::tempPath(),
                       std::nullopt,
                       std::nullopt,
                       QString()};
    ASSERT_TRUE(process.start(request));
    ASSERT_TRUE(failed.count() > 0 || failed.wait(10000));
    EXPECT_TRUE(failed.front().front().toString().contains(QStringLiteral("cannot start")));
    EXPECT_FALSE(process.isRunning());
}

bool process_alive(qint64 pid) {
    // A zombie is gone for our purpose: it runs nothing.
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly)) {
        return false;
    }
    const QString text = QString::fromLatin1(stat.readAll());
    return !text.section(QLatin1Char(')'), -1).trimmed().startsWith(QLatin1Char('Z'));
}

TEST_F(RealRunTest, CancelStopsTheLauncherAndEveryRank) {
    if (!PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "the LibTorch backend is not built, so there is no long run to cancel";
    }
    RunPanel* panel = window.runPanel();
    panel->setDefaultSteps(100000);
    QSignalSpy progress(panel->process(), &RunProcess::progress);
    ASSERT_TRUE(window.runController()->startRun());
    ASSERT_TRUE(progress.wait(180000)) << panel->logText().toStdString();
    const qint64 launcher = panel->process()->processId();
    const QString out_dir = panel->process()->request().out_dir;
    // The launcher notes its ranks' process ids in run.log.
    QFile log(QDir(out_dir).filePath("run.log"));
    ASSERT_TRUE(log.open(QIODevice::ReadOnly));
    QList<qint64> ranks;
    static const QRegularExpression pid_re(QStringLiteral("rank \\d+: pid (\\d+)"));
    for (auto it = pid_re.globalMatch(QString::fromUtf8(log.readAll())); it.hasNext();) {
        ranks << it.next().captured(1).toLongLong();
    }
    EXPECT_EQ(ranks.size(), 2);

    QSignalSpy cancelled(panel->process(), &RunProcess::cancelled);
    QTest::mouseClick(panel->cancelButton(), Qt::LeftButton);
    ASSERT_TRUE(cancelled.count() > 0 || cancelled.wait(20000));
    EXPECT_FALSE(panel->isRunning());
    EXPECT_EQ(panel->statusText(), QStringLiteral("Cancelled"));
    EXPECT_FALSE(process_alive(launcher));
    for (qint64 pid : ranks) {
        EXPECT_FALSE(process_alive(pid)) << "rank process " << pid << " outlived the cancel";
    }
    EXPECT_TRUE(panel->runButton()->isEnabled());
    EXPECT_FALSE(window.timelinePlot()->hasMeasured());
}

}  // namespace
}  // namespace pipewright::gui

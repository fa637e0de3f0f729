// Profile this machine and the costs switch on the Run tab: the profile is
// measured by the real command line (skipped, with the reason, when the
// backend is not built), kept beside the project's runs, used at once, and
// follows the project on Save As.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <limits>

#include "document/project_document.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"
#include "real_cli.h"
#include "run/costs_bar.h"
#include "run/profile_controller.h"
#include "run/run_controller.h"
#include "run/run_panel.h"
#include "studio_core/simulation/measured_costs.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "window/file_controller.h"
#include "window/main_window.h"
#include "window/screenshot.h"

namespace pipewright::gui {
namespace {

// A copy of mlp-cpu.json in a temporary folder, so its runs/ go there.
class ProfilePanelTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(dir.isValid());
        project_path = copy_example(dir, "mlp-cpu.json", "mlp.json");
        ASSERT_FALSE(project_path.isEmpty());
        window.runner()->setDebounceMs(10);
    }

    void TearDown() override {
        CostsBar* bar = window.runPanel()->costsBar();
        if (bar->isProfiling()) {
            QSignalSpy done(bar, &CostsBar::profileCancelled);
            bar->cancelProfile();
            done.wait(20000);
        }
    }

    void open() {
        ASSERT_TRUE(window.openFile(project_path));
        window.runPanel()->setCli({cli_path(), {}});
        window.simulateNow();
    }

    // The iteration time of the simulation on screen, once it is settled
    // (NaN when it did not settle within 30 s: the test fails, never hangs).
    double simulated_iteration() {
        QTest::qWait(50);
        QElapsedTimer clock;
        clock.start();
        while (window.runner()->busy() && clock.elapsed() < 30000) {
            QTest::qWait(10);
        }
        EXPECT_FALSE(window.runner()->busy()) << "the simulation did not settle within 30 s";
        if (window.runner()->busy() || !window.runner()->latest() ||
            !window.runner()->latest()->report) {
            return std::numeric_limits<double>::quiet_NaN();
        }
        return window.runner()->latest()->report->iteration_time_s;
    }

    QString profile_file() const { return QDir(dir.path()).filePath("runs/mlp.profile.json"); }

    QTemporaryDir dir;
    QString project_path;
    MainWindow window;
};

TEST_F(ProfilePanelTest, ProfileThisMachineMeasuresKeepsAndUsesTheCosts) {
    if (!PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "the LibTorch backend is not built, so pipewright profile cannot measure";
    }
    open();
    RunPanel* panel = window.runPanel();
    CostsBar* bar = panel->costsBar();
    EXPECT_FALSE(bar->useMeasured());
    EXPECT_TRUE(bar->descriptionText().startsWith(QStringLiteral("No profile")));
    const double analytic = simulated_iteration();
    ASSERT_TRUE(bar->profileButton()->isEnabled()) << bar->profileButton()->toolTip().toStdString();

    QSignalSpy ok(bar, &CostsBar::profileSucceeded);
    QSignalSpy failed(bar, &CostsBar::profileFailed);
    QSignalSpy progress(bar, &CostsBar::profileProgress);
    QTest::mouseClick(bar->profileButton(), Qt::LeftButton);
    ASSERT_TRUE(bar->isProfiling());
    // No run while the profiler times the layers.
    EXPECT_FALSE(panel->runButton()->isEnabled());
    EXPECT_FALSE(bar->profileButton()->isEnabled());
    EXPECT_FALSE(window.runController()->startRun());
    QElapsedTimer clock;
    clock.start();
    while (ok.isEmpty() && failed.isEmpty() && clock.elapsed() < 120000) {
        QTest::qWait(50);
    }
    ASSERT_EQ(ok.size(), 1) << panel->errorText().toStdString() << "\n"
                            << panel->logText().toStdString();
    // 2 warm-up and 10 timed rounds at each of the sizes, then the transfer,
    // read from the profiler's JSON events (--progress json), which the log
    // does not repeat.
    ASSERT_GE(progress.size(), 13);
    const ProfileProgress last = bar->process()->lastProgress();
    EXPECT_EQ(last.round, 12);
    EXPECT_EQ(last.rounds, 12);
    EXPECT_EQ(last.size, last.sizes);
    EXPECT_GT(last.sizes, 1);  // the project's size, and the others a plan may choose
    EXPECT_TRUE(last.collectives);
    EXPECT_FALSE(panel->logText().contains(QStringLiteral("\"event\"")))
        << panel->logText().toStdString();
    EXPECT_TRUE(panel->runButton()->isEnabled());

    // Kept beside the project's runs, with the layout it measured.
    EXPECT_EQ(ok.front().front().toString(), profile_file());
    const Profile kept = load_profile_file(profile_file().toStdString());
    EXPECT_EQ(kept.layers.size(), window.document()->project().model.layers.size());
    EXPECT_EQ(kept.microbatch_size, 16);
    EXPECT_TRUE(QFile::exists(QDir(dir.path()).filePath("runs/mlp.profile.project.json")));

    // Used at once: the simulation is priced with it.
    EXPECT_TRUE(bar->useMeasured());
    EXPECT_EQ(bar->costsCombo()->currentText(), QStringLiteral("Measured profile"));
    EXPECT_TRUE(bar->descriptionText().contains(QStringLiteral("7 of 7 layers")))
        << bar->descriptionText().toStdString();
    const double measured = simulated_iteration();
    ASSERT_NE(window.runner()->latest()->profile, nullptr);
    EXPECT_NE(measured, analytic);

    // Back to the estimate, and the profile again.
    bar->costsCombo()->setCurrentIndex(0);
    EXPECT_DOUBLE_EQ(simulated_iteration(), analytic);
    EXPECT_EQ(window.runner()->latest()->profile, nullptr);
    bar->costsCombo()->setCurrentIndex(1);
    EXPECT_DOUBLE_EQ(simulated_iteration(), measured);
}

TEST_F(ProfilePanelTest, CancelStopsTheProfilerAndKeepsTheCostsAsTheyWere) {
    if (!PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "the LibTorch backend is not built, so there is no profile to cancel";
    }
    open();
    CostsBar* bar = window.runPanel()->costsBar();
    QSignalSpy progress(bar, &CostsBar::profileProgress);
    QSignalSpy cancelled(bar, &CostsBar::profileCancelled);
    ASSERT_TRUE(window.profileController()->startProfile());
    ASSERT_TRUE(progress.wait(60000));
    EXPECT_FALSE(bar->cancelButton()->isHidden());
    QTest::mouseClick(bar->cancelButton(), Qt::LeftButton);
    ASSERT_TRUE(cancelled.wait(20000));
    EXPECT_FALSE(bar->isProfiling());
    EXPECT_FALSE(QFile::exists(profile_file()));
    EXPECT_FALSE(bar->useMeasured());
    EXPECT_TRUE(window.runPanel()->runButton()->isEnabled());
    EXPECT_TRUE(window.runPanel()->statusText().contains(QStringLiteral("cancelled")))
        << window.runPanel()->statusText().toStdString();
}

TEST_F(ProfilePanelTest, AProjectsProfileIsUsedWhenItOpensAndFollowsItOnSaveAs) {
    // A profile made earlier (here written by hand: every layer 2 ms forward).
    ASSERT_TRUE(QDir(dir.path()).mkpath("runs"));
    auto loaded = load_project_file(project_path.toStdString());
    ASSERT_TRUE(loaded.project);
    Profile profile;
    profile.device_kind = "cpu";
    profile.device_name = "CPU, 1 thread";
    profile.microbatch_size = 16;
    for (const auto& layer : loaded.project->model.layers) {
        profile.layers.push_back({layer.name, 2.0, 1.0, 1.0, std::nullopt});
    }
    QFile file(profile_file());
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(profile_to_json(profile).dump()));
    file.close();

    open();
    CostsBar* bar = window.runPanel()->costsBar();
    EXPECT_TRUE(bar->useMeasured());
    simulated_iteration();
    ASSERT_NE(window.runner()->latest()->profile, nullptr);
    EXPECT_NEAR(window.runner()->latest()->report->stages[0].forward_s, 4 * 2e-3, 1e-12);

    // Save As elsewhere: the profile goes with the project's runs.
    QTemporaryDir other;
    const QString moved = QDir(other.path()).filePath("moved.json");
    ASSERT_TRUE(window.fileController()->saveTo(moved));
    EXPECT_TRUE(QFile::exists(QDir(other.path()).filePath("runs/mlp.profile.json")));
    EXPECT_TRUE(bar->useMeasured());
    EXPECT_EQ(bar->measuredCosts()->path, QDir(other.path()).filePath("runs/mlp.profile.json"));

    // The analytic choice survives a save; another project starts from its own.
    bar->setUseMeasured(false);
    ASSERT_TRUE(window.fileController()->saveTo(moved));
    EXPECT_FALSE(bar->useMeasured());
    ASSERT_TRUE(window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/dummy-2gpu.json")));
    EXPECT_FALSE(bar->measuredCosts().has_value());
    EXPECT_FALSE(bar->useMeasured());
    simulated_iteration();
    EXPECT_EQ(window.runner()->latest()->profile, nullptr);
}

TEST_F(ProfilePanelTest, AScreenshotCanProfileFirst) {
    if (!PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "the LibTorch backend is not built, so pipewright profile cannot measure";
    }
    qputenv("PIPEWRIGHT_CLI", cli_path().toUtf8());
    ScreenshotRequest request;
    request.project = project_path;
    request.output = QDir(dir.path()).filePath("profiled.png");
    request.view = QStringLiteral("run");
    request.profile = true;
    QString error;
    ASSERT_TRUE(take_screenshot(request, &error)) << error.toStdString();
    EXPECT_FALSE(QImage(request.output).isNull());
    EXPECT_TRUE(QFile::exists(profile_file()));
}

TEST_F(ProfilePanelTest, TheTimeAxisFitsTheSimulatedOrTheMeasuredIterationAlone) {
    open();
    TimelinePlot* plot = window.timelinePlot();
    const Timeline& simulated = window.runner()->latest()->report->timeline;
    Timeline measured = simulated;
    for (auto& e : measured.events) {  // a run 20 times slower than simulated
        e.start_s *= 20;
        e.end_s *= 20;
    }
    measured.source = "measured";
    plot->setMeasuredTimeline(measured, QStringLiteral("slow-run"));
    const double unit = plot->timeUnit();
    plot->fitToWindow();
    EXPECT_NEAR(plot->xAxis->range().upper * unit, measured.makespan_s() * 1.01,
                measured.makespan_s() * 1e-6);
    plot->fitSectionTime(0);
    EXPECT_NEAR(plot->xAxis->range().upper * unit, simulated.makespan_s() * 1.01,
                simulated.makespan_s() * 1e-6);
    plot->fitSectionTime(1);
    EXPECT_NEAR(plot->xAxis->range().upper * unit, measured.makespan_s() * 1.01,
                measured.makespan_s() * 1e-6);
}

}  // namespace
}  // namespace pipewright::gui

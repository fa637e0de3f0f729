// Simulate ▸ Use Device Calibration: the studio prices its devices with a
// `pipewright calibrate` file, says so, keeps the choice for the next
// session, and refuses a broken file without dropping the one in use.
#include <gtest/gtest.h>

#include <QAction>
#include <QFileInfo>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../cpu_calibration_fixture.h"
#include "pipewright/core/device_calibration.h"
#include "run/profile_controller.h"
#include "studio_core/simulation/simulation_runner.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

// A100-80GB whose float32 GEMMs each took a millisecond: far slower than the
// catalog's model of the example's tiny layers.
QString write_calibration(const QTemporaryDir& dir, const QString& name) {
    DeviceCalibration c;
    c.spec = "A100-80GB";
    c.device_name = "NVIDIA A100-SXM4-80GB";
    c.dtype = DType::float32;
    c.launch_seconds = 4e-6;
    for (std::int64_t m : {8, 64}) {
        for (std::int64_t n : {8, 64}) {
            for (std::int64_t k : {8, 64}) {
                c.gemms.push_back({m, n, k, 1e-3});
            }
        }
    }
    c.copies = {{1 << 30, 1e-3}};
    const QString path = dir.filePath(name);
    std::ofstream(path.toStdString()) << device_calibration_to_json(c).dump(1);
    return path;
}

class DeviceCalibrationStudio : public ::testing::Test {
  protected:
    void SetUp() override {
        QSettings().remove(QStringLiteral("deviceCalibrations"));
        window.runner()->setDebounceMs(10);
        ASSERT_TRUE(
            window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/dummy-2gpu.json")));
    }
    void TearDown() override { QSettings().remove(QStringLiteral("deviceCalibrations")); }

    bool wait_simulation() {
        QSignalSpy spy(window.runner(), &SimulationRunner::finished);
        return spy.wait(10000);
    }
    double iteration() const { return window.runner()->latest()->report->iteration_time_s; }

    QTemporaryDir dir;
    MainWindow window;
};

TEST_F(DeviceCalibrationStudio, ACalibrationPricesTheDevicesAndIsNamed) {
    const double catalog = iteration();
    QAction* forget = window.findChild<QAction*>(QStringLiteral("forgetCalibrationsAction"));
    ASSERT_NE(forget, nullptr);
    EXPECT_FALSE(forget->isEnabled());

    QString error;
    ASSERT_TRUE(window.profileController()->useDeviceCalibrations(
        {write_calibration(dir, "a100.json")}, &error))
        << error.toStdString();
    ASSERT_TRUE(wait_simulation());
    EXPECT_NE(window.runner()->costs().catalog, nullptr);
    EXPECT_GT(iteration(), 10 * catalog);
    EXPECT_TRUE(forget->isEnabled());
    const QLabel* summary = window.findChild<QLabel*>(QStringLiteral("simulationSummary"));
    ASSERT_NE(summary, nullptr);
    EXPECT_TRUE(summary->text().contains(QStringLiteral("calibrated devices")))
        << summary->text().toStdString();
    EXPECT_TRUE(summary->toolTip().contains(
        QStringLiteral("A100-80GB kernels as measured on NVIDIA A100-SXM4-80GB (a100.json)")))
        << summary->toolTip().toStdString();

    forget->trigger();
    ASSERT_TRUE(wait_simulation());
    EXPECT_EQ(window.runner()->costs().catalog, nullptr);
    EXPECT_DOUBLE_EQ(iteration(), catalog);
    EXPECT_FALSE(forget->isEnabled());
}

// The catalog's "cpu" measured on a machine of `cores` cores, one thread.
QString write_cpu_calibration(const QTemporaryDir& dir, const QString& name, int cores) {
    const DeviceCalibration c = cpu_calibration(cores, 1);
    const QString path = dir.filePath(name);
    std::ofstream(path.toStdString()) << device_calibration_to_json(c).dump(1);
    return path;
}

TEST_F(DeviceCalibrationStudio, CpuRanksThatOutnumberTheCalibratedCoresAreSaidToTakeTurns) {
    ASSERT_TRUE(window.openFile(
        QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/mixtral-tiny-e2-cpu.json")));
    const QLabel* summary = window.findChild<QLabel*>(QStringLiteral("simulationSummary"));
    ASSERT_NE(summary, nullptr);
    QString error;
    ASSERT_TRUE(window.profileController()->useDeviceCalibrations(
        {write_cpu_calibration(dir, "many-cores.json", 64)}, &error))
        << error.toStdString();
    ASSERT_TRUE(wait_simulation());
    const double alone = iteration();
    EXPECT_FALSE(summary->toolTip().contains(QStringLiteral("take turns")))
        << summary->toolTip().toStdString();

    ASSERT_TRUE(window.profileController()->useDeviceCalibrations(
        {write_cpu_calibration(dir, "two-cores.json", 2)}, &error))
        << error.toStdString();
    ASSERT_TRUE(wait_simulation());
    EXPECT_GT(iteration(), 1.3 * alone);
    EXPECT_TRUE(summary->toolTip().contains(QStringLiteral(
        "The calibration was measured on a machine of 2 cores, and this layout runs 4 CPU ranks")))
        << summary->toolTip().toStdString();
}

TEST_F(DeviceCalibrationStudio, TheChoiceIsKeptForTheNextSession) {
    QString error;
    ASSERT_TRUE(window.profileController()->useDeviceCalibrations(
        {write_calibration(dir, "a100.json")}, &error));
    MainWindow next;
    EXPECT_EQ(next.profileController()->deviceCalibrations().paths,
              QStringList{QFileInfo(dir.filePath("a100.json")).absoluteFilePath()});
    EXPECT_NE(next.runner()->costs().catalog, nullptr);
}

TEST_F(DeviceCalibrationStudio, ABrokenFileIsRefusedAndTheOneInUseStays) {
    QString error;
    ASSERT_TRUE(window.profileController()->useDeviceCalibrations(
        {write_calibration(dir, "a100.json")}, &error));
    const auto in_use = window.runner()->costs().catalog;

    const QString broken = write_calibration(dir, "broken.json");
    {
        auto j = nlohmann::json::parse(std::ifstream(broken.toStdString()));
        j["gemms"].erase(0);
        std::ofstream(broken.toStdString()) << j.dump();
    }
    EXPECT_FALSE(window.profileController()->useDeviceCalibrations({broken}, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("broken.json: gemms: the shapes must form a grid")))
        << error.toStdString();
    EXPECT_EQ(window.runner()->costs().catalog, in_use);

    // Two calibrations of one device: which one is meant?
    EXPECT_FALSE(window.profileController()->useDeviceCalibrations(
        {write_calibration(dir, "x.json"), write_calibration(dir, "y.json")}, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("both calibrate A100-80GB; give one")))
        << error.toStdString();
}

}  // namespace
}  // namespace pipewright::gui

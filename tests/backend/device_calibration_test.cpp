// `pipewright calibrate`: the kernels it measures, the file it writes, the
// simulation that reads it, and its errors. The GPU test skips without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "execution/compute_device.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/device_calibration.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/sim/device_calibration_fit.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

TEST(Calibrate, RecognisesTheCatalogDeviceFromItsName) {
    using backend::spec_for_device_name;
    EXPECT_EQ(spec_for_device_name("NVIDIA H100 80GB HBM3"), "H100-SXM");
    EXPECT_EQ(spec_for_device_name("NVIDIA H100 PCIe"), "H100-PCIe");
    EXPECT_EQ(spec_for_device_name("NVIDIA A100-SXM4-80GB"), "A100-80GB");
    EXPECT_EQ(spec_for_device_name("NVIDIA A100-SXM4-40GB"), "A100-40GB");
    EXPECT_EQ(spec_for_device_name("NVIDIA H200"), "H200");
    EXPECT_EQ(spec_for_device_name("NVIDIA B200"), "B200");
    EXPECT_EQ(spec_for_device_name("NVIDIA GB200"), "GB200");
    EXPECT_EQ(spec_for_device_name("NVIDIA L40S"), "L40S");
    EXPECT_EQ(spec_for_device_name("NVIDIA L4"), "L4");
    EXPECT_EQ(spec_for_device_name("Tesla T4"), "T4");
    EXPECT_EQ(spec_for_device_name("CPU"), "cpu");
    EXPECT_EQ(spec_for_device_name("NVIDIA GeForce GTX 1080"), std::nullopt);
    for (const auto& name : {"H100-SXM", "H100-PCIe", "A100-80GB", "A100-40GB", "H200", "B200",
                             "GB200", "L40S", "L4", "T4", "cpu"}) {
        EXPECT_NE(DeviceCatalog::builtin().find(name), nullptr) << name;
    }
}

TEST(Calibrate, MeasuresAGridOfGemmsCopiesAndALaunchOnTheCpu) {
    backend::CalibrationOptions o;
    o.device = "cpu";
    o.dims = {256, 8};
    o.copy_bytes = {4096, 1 << 20};
    o.repeats = 3;
    o.collectives = false;
    const DeviceCalibration c = backend::measure_device(o);
    EXPECT_TRUE(c.collectives.empty());
    EXPECT_EQ(c.spec, "cpu");
    EXPECT_EQ(c.device_kind, "cpu");
    EXPECT_EQ(c.dtype, DType::float32);
    EXPECT_GT(c.threads, 0);
    ASSERT_EQ(c.gemms.size(), 8u);
    EXPECT_EQ(c.gemms.front().m, 8);  // the grid is measured in ascending order
    ASSERT_EQ(c.copies.size(), 2u);
    EXPECT_GT(c.launch_seconds, 0);
    for (const GemmSample& g : c.gemms) {
        EXPECT_GT(g.seconds, 0);
    }
    // 256³ is 32,768 times the work of 8³.
    EXPECT_GT(c.gemms.back().seconds, c.gemms.front().seconds);
    // What it writes reads back, and the model takes it.
    EXPECT_EQ(device_calibration_from_json(device_calibration_to_json(c)), c);
    CalibrationFit fit;
    (void)calibrated_device(*DeviceCatalog::builtin().find("cpu"), c, &fit);
    EXPECT_GT(fit.copy_bandwidth_GBps, 0);
    EXPECT_EQ(fit.gemm_shapes, 8u);
}

// Two CPU workers over Gloo, as a run's replicas reduce: each kind Gloo has
// at each size, and the model takes them.
TEST(Calibrate, MeasuresTheCollectivesOfTwoCpuWorkers) {
    backend::CalibrationOptions o;
    o.device = "cpu";
    o.dims = {8};
    o.copy_bytes = {4096};
    o.repeats = 3;
    o.collective_bytes = {4096, 1 << 20};
    const DeviceCalibration c = backend::measure_device(o);
    EXPECT_EQ(c.collective_library, "gloo");
    // All-reduce, all-gather and all-to-all (LibTorch 1.13's Gloo has no
    // reduce-scatter), each at both sizes.
    ASSERT_EQ(c.collectives.size(), 6u);
    for (const CollectiveSample& s : c.collectives) {
        EXPECT_EQ(s.members, 2);
        EXPECT_NE(s.kind, CollectiveKind::reduce_scatter);
        EXPECT_GT(s.seconds, 0);
        EXPECT_TRUE(s.bytes == 4096 || s.bytes == (1 << 20)) << s.bytes;
    }
    EXPECT_EQ(device_calibration_from_json(device_calibration_to_json(c)), c);
    CalibrationFit fit;
    const DeviceSpec d = calibrated_device(*DeviceCatalog::builtin().find("cpu"), c, &fit);
    ASSERT_NE(d.collectives, nullptr);
    EXPECT_EQ(fit.largest_group, 2);
    EXPECT_GT(fit.all_reduce_bus_GBps, 0);
    const auto all_to_all = std::find_if(c.collectives.begin(), c.collectives.end(), [](auto& s) {
        return s.kind == CollectiveKind::all_to_all && s.bytes == (1 << 20);
    });
    ASSERT_NE(all_to_all, c.collectives.end());
    EXPECT_EQ(d.collectives->seconds(CollectiveKind::all_to_all, 2, 1 << 20), all_to_all->seconds);
}

TEST(Calibrate, TheCommandWritesACalibrationThatSimulateUses) {
    const fs::path dir = test::temp_dir("calibrate-cli");
    const fs::path file = dir / "cpu.json";
    const auto calibrated = test::run_cli(
        "calibrate --device cpu --dims 16,128 --repeats 2 --collective-bytes 65536 --out " +
            file.string(),
        dir);
    ASSERT_EQ(calibrated.code, 0) << calibrated.output;
    EXPECT_NE(calibrated.output.find("collectives (Gloo), each member's buffer:"),
              std::string::npos)
        << calibrated.output;
    EXPECT_NE(calibrated.output.find("all-to-all"), std::string::npos) << calibrated.output;
    EXPECT_NE(calibrated.output.find("Calibrated cpu on CPU"), std::string::npos)
        << calibrated.output;
    EXPECT_NE(calibrated.output.find("Wrote " + file.string()), std::string::npos);
    ASSERT_TRUE(fs::exists(file));
    EXPECT_EQ(load_device_calibration_file(file).gemms.size(), 8u);

    const std::string project = (fs::path(PIPEWRIGHT_ASSETS_DIR) / "examples" / "mlp-cpu.json");
    const auto simulated =
        test::run_cli("simulate " + project + " --calibration " + file.string(), dir, "sim");
    ASSERT_EQ(simulated.code, 0) << simulated.output;
    EXPECT_NE(simulated.output.find("cpu kernels as measured on CPU"), std::string::npos)
        << simulated.output;
    EXPECT_NE(simulated.output.find("Gloo collectives of up to 2 CPU workers"), std::string::npos)
        << simulated.output;
    fs::remove_all(dir);
}

TEST(Calibrate, SaysWhyWhenNoGpuCanBeHad) {
    if (backend::visible_gpus() > 0) {
        GTEST_SKIP() << "this machine has GPUs";
    }
    const fs::path dir = test::temp_dir("calibrate-nogpu");
    const auto r = test::run_cli("calibrate --device cuda --out " + (dir / "c.json").string(), dir);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("pipewright: calibrate:"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir / "c.json"));
    fs::remove_all(dir);
}

// On a machine with a GPU (the `device` lent to some sessions): a small grid
// on the GPU, recognised as its catalog device.
TEST(Calibrate, MeasuresTheGpu) {
    if (backend::visible_gpus() == 0) {
        GTEST_SKIP() << "no GPU on this machine";
    }
    backend::CalibrationOptions o;
    o.device = "cuda";
    o.dims = {256, 2048};
    o.copy_bytes = {16 << 20, 256 << 20};
    const DeviceCalibration c = backend::measure_device(o);
    EXPECT_EQ(c.device_kind, "cuda");
    EXPECT_EQ(c.dtype, DType::bfloat16);
    ASSERT_NE(DeviceCatalog::builtin().find(c.spec), nullptr) << c.device_name;
    CalibrationFit fit;
    (void)calibrated_device(*DeviceCatalog::builtin().find(c.spec), c, &fit);
    // A GPU copies at hundreds of GB/s and launches in microseconds.
    EXPECT_GT(fit.copy_bandwidth_GBps, 100);
    EXPECT_LT(c.launch_seconds, 1e-4);
}

}  // namespace
}  // namespace pipewright

// What the kernel cost model learns from a device calibration: the measured
// launch, the copies' bandwidth, and each GEMM's measured/modelled ratio,
// which reaches every layer (and so every simulation) on that device.
#include <gtest/gtest.h>

#include <filesystem>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/device_calibration_fit.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/layer_kernels.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

const DeviceSpec& a100() {
    return *DeviceCatalog::builtin().find("A100-80GB");
}

double modelled(const DeviceSpec& d, double m, double n, double k, DType dtype) {
    return kernel_time(gemm_kernel("g", 1, m, n, k, dtype_bytes(dtype)), d, dtype).seconds;
}

// A calibration whose GEMMs took `factor` × what the catalog's model says,
// whose launch is the catalog's and whose copies reach its bandwidth.
DeviceCalibration measured_as(const DeviceSpec& d, double factor) {
    DeviceCalibration c;
    c.spec = d.name;
    c.dtype = DType::bfloat16;
    c.launch_seconds = d.kernel_overhead_s;
    const std::vector<std::int64_t> dims{256, 1024, 4096, 16384};
    for (auto m : dims) {
        for (auto n : dims) {
            for (auto k : dims) {
                c.gemms.push_back(
                    {m, n, k,
                     factor * modelled(d, static_cast<double>(m), static_cast<double>(n),
                                       static_cast<double>(k), c.dtype)});
            }
        }
    }
    const double bytes = 1 << 30;
    c.copies = {
        {static_cast<std::int64_t>(bytes),
         2 * bytes / (d.memory_bandwidth_GBps * 1e9 * d.memory_efficiency) + d.kernel_overhead_s}};
    return c;
}

TEST(DeviceCalibrationFit, MeasurementsThatMatchTheModelChangeNothing) {
    CalibrationFit fit;
    const DeviceSpec d = calibrated_device(a100(), measured_as(a100(), 1.0), &fit);
    EXPECT_NEAR(d.memory_efficiency, a100().memory_efficiency, 1e-9);
    EXPECT_DOUBLE_EQ(d.kernel_overhead_s, a100().kernel_overhead_s);
    EXPECT_NEAR(fit.gemm_ratio_min, 1.0, 1e-9);
    EXPECT_NEAR(fit.gemm_ratio_max, 1.0, 1e-9);
    // Between grid points and beyond them alike.
    for (double m : {300.0, 2048.0, 50000.0}) {
        EXPECT_NEAR(modelled(d, m, 3000, 777, DType::bfloat16),
                    modelled(a100(), m, 3000, 777, DType::bfloat16), 1e-12);
    }
}

TEST(DeviceCalibrationFit, SlowerGemmsCostWhatTheyMeasured) {
    const DeviceSpec d = calibrated_device(a100(), measured_as(a100(), 1.5));
    for (double m : {256.0, 700.0, 20000.0}) {
        EXPECT_NEAR(modelled(d, m, 4096, 1024, DType::bfloat16),
                    1.5 * modelled(a100(), m, 4096, 1024, DType::bfloat16), 1e-12);
    }
}

TEST(DeviceCalibrationFit, OnlyTheMeasuredDtypeAndSingleGemmsAreCorrected) {
    const DeviceSpec d = calibrated_device(a100(), measured_as(a100(), 2.0));
    EXPECT_DOUBLE_EQ(modelled(d, 1024, 1024, 1024, DType::float32),
                     modelled(a100(), 1024, 1024, 1024, DType::float32));
    const Kernel batched = gemm_kernel("bmm", 32, 2048, 2048, 128, 2);
    EXPECT_DOUBLE_EQ(kernel_time(batched, d, DType::bfloat16).seconds,
                     kernel_time(batched, a100(), DType::bfloat16).seconds);
}

TEST(DeviceCalibrationFit, LaunchAndBandwidthComeFromTheirMeasurements) {
    DeviceCalibration c = measured_as(a100(), 1.0);
    c.launch_seconds = 10e-6;
    // 1 GiB copied (read and written) in 1 ms plus the launch: 2.147 TB/s.
    c.copies = {{1 << 30, 1e-3 + 10e-6}, {1 << 20, 5e-6}};
    CalibrationFit fit;
    const DeviceSpec d = calibrated_device(a100(), c, &fit);
    EXPECT_DOUBLE_EQ(d.kernel_overhead_s, 10e-6);
    EXPECT_NEAR(fit.copy_bandwidth_GBps, 2.0 * (1 << 30) / 1e-3 / 1e9, 1e-6);
    EXPECT_NEAR(d.memory_efficiency, fit.copy_bandwidth_GBps / a100().memory_bandwidth_GBps, 1e-12);
    Kernel stream;
    stream.kind = KernelKind::memory;
    stream.bytes = 1e9;
    EXPECT_NEAR(kernel_time(stream, d, DType::bfloat16).seconds,
                1e9 / (fit.copy_bandwidth_GBps * 1e9) + 10e-6, 1e-12);
}

TEST(DeviceCalibrationFit, ACalibratedCatalogPricesEveryLayerOfAProject) {
    const std::filesystem::path path =
        std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" / "llama3.1-8b-h100-node.json";
    LoadedProject loaded = load_project_file(path);
    ASSERT_TRUE(loaded.project);
    const DeviceSpec& h100 = *DeviceCatalog::builtin().find("H100-SXM");
    const DeviceCatalog slow =
        calibrated_catalog(DeviceCatalog::builtin(), {measured_as(h100, 2.0)});
    const DeviceCatalog same =
        calibrated_catalog(DeviceCatalog::builtin(), {measured_as(h100, 1.0)});
    const auto iteration = [&](const DeviceCatalog* catalog) {
        AnalysisOptions options;
        options.catalog = catalog;
        Diagnostics d;
        const auto analyzed = analyze_project(*loaded.project, options, d);
        EXPECT_TRUE(analyzed) << d.format();
        return simulate_project(*analyzed).iteration_time_s;
    };
    const double catalog = iteration(nullptr);
    EXPECT_NEAR(iteration(&same), catalog, 1e-9 * catalog);
    // Most of a decoder's time is in its GEMMs: twice as slow GEMMs make the
    // iteration much slower, but less than twice (attention, norms and
    // collectives are not GEMMs).
    const double slow_iteration = iteration(&slow);
    EXPECT_GT(slow_iteration, 1.5 * catalog);
    EXPECT_LT(slow_iteration, 2.0 * catalog);
}

TEST(DeviceCalibrationFit, RefusesAnUnknownDeviceAndTwoOfOne) {
    DeviceCalibration unknown = measured_as(a100(), 1.0);
    unknown.spec = "A200";
    try {
        (void)calibrated_catalog(DeviceCatalog::builtin(), {unknown});
        FAIL() << "accepted a calibration of a device the catalog lacks";
    } catch (const InputError& e) {
        EXPECT_NE(e.diagnostics().format().find("\"A200\" is not a device of the catalog"),
                  std::string::npos);
    }
    EXPECT_THROW((void)calibrated_catalog(DeviceCatalog::builtin(),
                                          {measured_as(a100(), 1.0), measured_as(a100(), 2.0)}),
                 InputError);
}

}  // namespace
}  // namespace pipewright

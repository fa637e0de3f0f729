#pragma once

// What the kernel cost model learns from a device calibration
// (core/device_calibration.h): one small kernel's launch cost, the
// bandwidth streaming kernels reach, and how far each measured GEMM lies
// from the model's price for it. No constant is fitted to an end-to-end
// run; every figure comes from a kernel measured on its own.

#include <string>
#include <vector>

#include "pipewright/core/device_calibration.h"
#include "pipewright/core/device_catalog.h"

namespace pipewright {

// What a calibration changed of a catalog device, for reports.
struct CalibrationFit {
    std::string spec;
    std::string device_name;
    DType dtype = DType::float32;
    double kernel_overhead_s = 0;    // the measured launch
    double memory_efficiency = 0;    // measured copy bandwidth over the datasheet's
    double copy_bandwidth_GBps = 0;  // bytes read and written per second
    // Measured over modelled GEMM time at the grid's shapes (before the
    // correction): the median and the extremes.
    double gemm_ratio_median = 1;
    double gemm_ratio_min = 1;
    double gemm_ratio_max = 1;
    double best_gemm_flops = 0;  // the fastest measured GEMM's FLOP/s
    std::size_t gemm_shapes = 0;
    // The collectives measured among the machine's devices: how many, the
    // largest group, and the all-reduce's highest bus bandwidth there
    // (2(d − 1)/d · bytes / time, as nccl-tests report it).
    std::size_t collective_samples = 0;
    int largest_group = 0;
    std::string collective_library;
    double all_reduce_bus_GBps = 0;
};

// "H100-SXM kernels as measured on NVIDIA H100 80GB HBM3 (h100.json): launch
// 4.10 µs, copies at 2.90 TiB/s, bfloat16 GEMMs 0.98–1.31 × the model's
// time; NCCL collectives of up to 8 H100-SXM GPUs, all-reduce bus bandwidth up to
// 231 GB/s", `file` naming where the calibration came from: what the command
// line's Costs line, the studio and Python say of it.
[[nodiscard]] std::string describe_calibration(const CalibrationFit& fit, const std::string& file);

// `device` (a catalog entry of the calibration's spec) as the calibration
// measured it: its kernels pay the measured launch cost, memory-bound
// kernels reach the measured copy bandwidth, and GEMMs of the calibration's
// dtype cost the model's time times the measured/modelled ratio at their
// shape (DeviceSpec::gemm_correction); the groups of one machine take the
// measured collectives' times (DeviceSpec::collectives).
[[nodiscard]] DeviceSpec calibrated_device(const DeviceSpec& device,
                                           const DeviceCalibration& calibration,
                                           CalibrationFit* fit = nullptr);

// `catalog` with each calibration's device replaced by its calibrated form.
// Throws InputError when a calibration names a device the catalog lacks, or
// two calibrate the same device.
[[nodiscard]] DeviceCatalog calibrated_catalog(const DeviceCatalog& catalog,
                                               const std::vector<DeviceCalibration>& calibrations,
                                               std::vector<CalibrationFit>* fits = nullptr);

// The same from calibration files, as `--calibration` and the studio read
// them: throws InputError with every problem located in its file (a field,
// a device the catalog lacks, a device that two files calibrate).
[[nodiscard]] DeviceCatalog catalog_with_calibration_files(
    const DeviceCatalog& catalog, const std::vector<std::string>& paths,
    std::vector<CalibrationFit>* fits = nullptr);

}  // namespace pipewright

#pragma once

// `pipewright calibrate`: kernels of this machine's device measured on their
// own (a grid of GEMMs, streaming copies and a launch), written as the device
// calibration that `simulate --calibration` and `plan --calibration` read for
// every model on that device type (core/device_calibration.h). Torch headers
// stay out of here so that the CLI compiles without them.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/device_calibration.h"

namespace pipewright::backend {

struct CalibrationOptions {
    std::string device = "auto";      // auto (the first GPU when there is one), cpu or cuda
    std::optional<std::string> spec;  // catalog entry; default: recognised from the device
    std::optional<DType> dtype;       // of the GEMMs; default bfloat16 on GPUs, float32 on CPUs
    int threads = 0;                  // CPU: Torch threads; 0: every core
    int repeats = 5;                  // timed samples per kernel; medians kept
    std::vector<std::int64_t> dims;   // the GEMM grid's m, n and k values; empty: the default
    std::vector<std::int64_t> copy_bytes;  // copies to time; empty: the default
    // Collectives among the machine's devices: every visible GPU (groups of
    // 2, 4, 8, … of them) over NCCL, or two CPU workers over Gloo.
    bool collectives = true;
    std::vector<std::int64_t> collective_bytes;  // each member's buffer; empty: the default
    // Told before each measurement ("GEMM 12 of 125: 256 × 1024 × 64").
    std::function<void(const std::string&)> on_progress;
};

// The grid a device is measured at by default: the shapes a transformer's
// GEMMs take, bounded by what the device computes in seconds.
[[nodiscard]] std::vector<std::int64_t> default_gemm_dims(bool gpu);
[[nodiscard]] std::vector<std::int64_t> default_copy_bytes(bool gpu);

// The catalog entry a device of this name is ("NVIDIA H100 80GB HBM3":
// "H100-SXM"); nullopt when none is recognised.
[[nodiscard]] std::optional<std::string> spec_for_device_name(std::string_view name);

// Measures the device. Throws BackendError when the device cannot be had, the
// spec is not recognised (say --spec), or a kernel or collective fails (out
// of memory, a peer that cannot be reached).
[[nodiscard]] DeviceCalibration measure_device(const CalibrationOptions& options);

}  // namespace pipewright::backend

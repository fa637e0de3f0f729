#pragma once

// A device calibration: kernels measured on one type of device by
// `pipewright calibrate` (GEMMs over a grid of shapes, streaming copies and
// the cost of a launch), which the kernel cost model then uses for every
// model on that type (`simulate --calibration`, `plan --calibration`). A
// profile answers for one model; a calibration for the device.
//
// The file holds measurements, not fitted constants: the simulator fits its
// model to them as it reads them (sim/device_calibration_fit.h), so a file
// stays valid when the model improves.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/measured_collectives.h"
#include "pipewright/core/tensor.h"

namespace pipewright {

// C[m×n] = A[m×k]·B[k×n], measured back to back: seconds each.
struct GemmSample {
    std::int64_t m = 0;
    std::int64_t n = 0;
    std::int64_t k = 0;
    double seconds = 0;
    bool operator==(const GemmSample&) const = default;
};

// A copy of `bytes` into another buffer (it reads and writes that many).
struct CopySample {
    std::int64_t bytes = 0;
    double seconds = 0;
    bool operator==(const CopySample&) const = default;
};

struct DeviceCalibration {
    static constexpr const char* kFormat = "pipewright-device-calibration";
    static constexpr int kVersion = 1;

    std::string spec;              // the catalog entry it calibrates: "H100-SXM", "cpu"
    std::string device_kind;       // "cuda" or "cpu"
    std::string device_name;       // what the device calls itself: "NVIDIA H100 80GB HBM3"
    DType dtype = DType::float32;  // of the GEMMs
    // Where it was measured; explains the figures. The model reads a CPU's
    // cores and threads: a run whose ranks need more threads than the cores
    // takes turns on them (core/core_sharing.h).
    std::string host;
    std::string torch_version;
    int cores = 0;    // CPU: hardware threads of the machine; 0: not recorded
    int threads = 0;  // CPU: Torch threads the kernels ran on
    int repeats = 0;  // timed repetitions per kernel (medians kept)
    // One small kernel's cost when launched back to back (what each kernel
    // of a layer pays besides its work).
    double launch_seconds = 0;
    // Every combination of the grid's m, n and k values.
    std::vector<GemmSample> gemms;
    std::vector<CopySample> copies;
    // Collectives among the machine's devices (NCCL between GPUs, Gloo
    // between CPU workers), by kind, group size and bytes; empty: none
    // measured, the links' model prices every group.
    std::vector<CollectiveSample> collectives;
    std::string collective_library;  // "nccl" or "gloo": what measured them

    bool operator==(const DeviceCalibration&) const = default;
};

[[nodiscard]] nlohmann::json device_calibration_to_json(const DeviceCalibration& calibration);
// Throws InputError naming each problem's JSON path: a missing or wrong
// field, a grid that lacks a combination of its values, a repeated shape or
// collective.
[[nodiscard]] DeviceCalibration device_calibration_from_json(const nlohmann::json& j);
[[nodiscard]] DeviceCalibration load_device_calibration_file(const std::filesystem::path& path);

}  // namespace pipewright

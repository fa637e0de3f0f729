#pragma once
// The collectives `pipewright calibrate` measures among this machine's
// devices (profile/device_collectives.cpp).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pipewright/core/measured_collectives.h"
#include "pipewright/core/tensor.h"

namespace pipewright::backend {

struct CollectiveCalibrationOptions {
    std::string device_kind = "cpu";  // "cuda": every visible GPU; "cpu": `members` workers
    int members = 2;                  // CPU workers in the group (threads of this process)
    DType dtype = DType::float32;     // of the buffers
    int repeats = 5;
    std::vector<std::int64_t> bytes;  // each member's buffer; empty: the default
    std::function<void(const std::string&)> on_progress;
};

struct MeasuredDeviceCollectives {
    std::string library;  // "nccl" or "gloo"
    std::vector<CollectiveSample> samples;
};

// Each member's buffer sizes measured by default.
[[nodiscard]] std::vector<std::int64_t> default_collective_bytes(bool gpu);
// The group sizes measured among `devices` GPUs: the powers of two, and all
// of them (2, 4, 8; 2, 3 for three).
[[nodiscard]] std::vector<int> collective_group_sizes(int devices);

// Throws BackendError when a collective fails. A machine with one GPU has no
// group to measure: no samples.
[[nodiscard]] MeasuredDeviceCollectives measure_device_collectives(
    const CollectiveCalibrationOptions& options);

}  // namespace pipewright::backend

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipewright/core/timeline.h"

namespace pipewright {

// Arithmetic over a Timeline, simulated or measured alike: the backend's run
// report and the simulator's summary use the same definitions.
struct DeviceMetrics {
    std::string name;  // device path
    std::string spec;
    int rank = 0;
    double busy_s = 0;  // compute time
    double start_s = 0;
    double end_s = 0;
    double bubble_fraction = 0;  // 1 - busy / iteration time
    std::int64_t peak_memory_bytes = 0;
    std::int64_t memory_capacity_bytes = 0;
    bool fits = true;
};

struct TimelineMetrics {
    double iteration_time_s = 0;
    double bubble_fraction = 0;  // 1 - sum busy / (devices x iteration time)
    std::vector<DeviceMetrics> devices;
};

// Busy time, span and bubble of every rank of a timeline.
[[nodiscard]] TimelineMetrics timeline_metrics(const Timeline& timeline);

}  // namespace pipewright

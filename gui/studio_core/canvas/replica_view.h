#pragma once

#include <map>
#include <string>
#include <vector>

#include "pipewright/core/timeline_metrics.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::gui {

// Where a device stands among the data-parallel replicas.
struct ReplicaRole {
    int replica = 0;
    int rank = 0;  // its place in the pipeline
    // The simulated device whose figures it shares; empty when it was
    // simulated itself.
    std::string mirrors;
};

// Every device of every replica, by path.
[[nodiscard]] std::map<std::string, ReplicaRole> replica_roles(const SimulationReport& report);

// The report's devices, plus one for each device of a replica that was not
// simulated because it runs as another (replica_classes.h), with the
// figures of the device it mirrors: what the canvas shows for every device.
[[nodiscard]] std::vector<DeviceMetrics> every_replica_device(const SimulationReport& report);

// With tensor parallelism, the other devices (in order) of the group each of
// `leaders` leads: the size − 1 devices after it in its container, fewer
// where the container ends. Empty without tensor parallelism.
[[nodiscard]] std::map<std::string, std::vector<std::string>> tensor_group_members(
    const Project& project, const std::vector<std::string>& leaders);

// `devices` plus, with tensor parallelism, each group's other devices with
// the figures of the device that leads it (each holds the same share): the
// T - 1 devices after each listed device in its container.
[[nodiscard]] std::vector<DeviceMetrics> with_tensor_group_members(
    std::vector<DeviceMetrics> devices, const Project& project);

}  // namespace pipewright::gui

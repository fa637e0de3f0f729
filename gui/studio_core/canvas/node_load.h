#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "pipewright/core/project.h"
#include "pipewright/core/timeline_metrics.h"

namespace pipewright::gui {

// What the last simulation says of one device, for the canvas's bars.
struct DeviceLoad {
    std::string path;  // "node/container/device"
    std::string name;  // "device"
    std::string spec;
    // Listed by the simulation: it runs a stage. False for an idle device,
    // and for every device before the first simulation.
    bool simulated = false;
    double load = 0;  // busy share of the iteration, 0..1
    std::int64_t peak_bytes = 0;
    std::int64_t capacity_bytes = 0;
    bool over = false;  // peak above capacity
    // Peak over capacity; 0 when the capacity is not known.
    [[nodiscard]] double memoryFraction() const;
};

// A node collapsed to one box: its devices' load and memory, and the
// figures its header sums them up with.
struct NodeLoad {
    std::string name;
    int containers = 0;
    std::vector<DeviceLoad> devices;  // in topology order
    int simulated = 0;                // devices the simulation listed
    double mean_load = 0;             // over the simulated devices
    double max_memory_fraction = 0;   // the fullest device's peak / capacity
    int over = 0;                     // devices above their memory
    // "8 × A100-80GB", or "4 × A100-80GB, 4 × H100-80GB".
    std::string specs;
};

// The latest simulation's device figures by path, built once for all the
// nodes of a canvas: a canvas of 2,048 nodes would otherwise index its
// 16,384 devices once per node (30 s to open the Llama 405B example).
// Keeps pointers into `metrics`, which must outlive it.
class DeviceMetricsIndex {
  public:
    DeviceMetricsIndex() = default;
    explicit DeviceMetricsIndex(const std::vector<DeviceMetrics>& metrics);
    [[nodiscard]] const DeviceMetrics* find(const std::string& path) const;

  private:
    std::unordered_map<std::string, const DeviceMetrics*> by_path_;
};

// `metrics` comes from the latest simulation (empty before the first);
// matched to the devices by path.
[[nodiscard]] NodeLoad node_load(const Project& project, int node,
                                 const DeviceMetricsIndex& metrics);
[[nodiscard]] NodeLoad node_load(const Project& project, int node,
                                 const std::vector<DeviceMetrics>& metrics);

}  // namespace pipewright::gui

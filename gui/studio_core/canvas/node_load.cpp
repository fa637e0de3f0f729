#include "studio_core/canvas/node_load.h"

#include <algorithm>
#include <utility>

namespace pipewright::gui {

double DeviceLoad::memoryFraction() const {
    return capacity_bytes > 0
               ? static_cast<double>(peak_bytes) / static_cast<double>(capacity_bytes)
               : 0.0;
}

DeviceMetricsIndex::DeviceMetricsIndex(const std::vector<DeviceMetrics>& metrics) {
    by_path_.reserve(metrics.size());
    for (const DeviceMetrics& m : metrics) {
        by_path_.emplace(m.name, &m);
    }
}

const DeviceMetrics* DeviceMetricsIndex::find(const std::string& path) const {
    const auto it = by_path_.find(path);
    return it == by_path_.end() ? nullptr : it->second;
}

NodeLoad node_load(const Project& project, int node, const std::vector<DeviceMetrics>& metrics) {
    return node_load(project, node, DeviceMetricsIndex(metrics));
}

NodeLoad node_load(const Project& project, int node, const DeviceMetricsIndex& metrics) {
    NodeLoad load;
    if (node < 0 || node >= static_cast<int>(project.topology.nodes.size())) {
        return load;
    }
    const Node& n = project.topology.nodes[static_cast<std::size_t>(node)];
    load.name = n.name;
    load.containers = static_cast<int>(n.containers.size());
    // Specs in order of first appearance, as the node lists them.
    std::vector<std::pair<std::string, int>> specs;
    double busy_sum = 0;
    for (const Container& container : n.containers) {
        for (const Device& device : container.devices) {
            DeviceLoad d;
            d.path = n.name + "/" + container.name + "/" + device.name;
            d.name = device.name;
            d.spec = device.spec;
            if (const DeviceMetrics* found = metrics.find(d.path)) {
                const DeviceMetrics& m = *found;
                d.simulated = true;
                d.load = std::clamp(1.0 - m.bubble_fraction, 0.0, 1.0);
                d.peak_bytes = m.peak_memory_bytes;
                d.capacity_bytes = m.memory_capacity_bytes;
                d.over = !m.fits;
                ++load.simulated;
                busy_sum += d.load;
                load.max_memory_fraction = std::max(load.max_memory_fraction, d.memoryFraction());
                load.over += d.over ? 1 : 0;
            }
            auto spec = std::find_if(specs.begin(), specs.end(),
                                     [&](const auto& s) { return s.first == device.spec; });
            if (spec == specs.end()) {
                specs.emplace_back(device.spec, 1);
            } else {
                ++spec->second;
            }
            load.devices.push_back(std::move(d));
        }
    }
    load.mean_load = load.simulated > 0 ? busy_sum / load.simulated : 0.0;
    for (const auto& [spec, count] : specs) {
        load.specs += (load.specs.empty() ? "" : ", ") + std::to_string(count) + " × " + spec;
    }
    return load;
}

}  // namespace pipewright::gui

#include "studio_core/project/topology_summary.h"

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/diagnostics.h"

namespace pipewright::gui {

TopologySummary summarize_topology(const Project& project, int node, int container) {
    TopologySummary s;
    const Topology& topology = project.topology;
    std::map<std::string, int> layers_on;
    for (const StageAssignment& stage : project.placement) {
        layers_on[stage.device] += static_cast<int>(stage.layers.size());
    }
    for (const DeviceLocation& loc : topology.devices()) {
        if (loc.node != node || (container >= 0 && loc.container != container)) {
            continue;
        }
        ++s.devices;
        const Device& device = topology.device_at(loc);
        ++s.specs[device.spec];
        try {
            s.memory_bytes +=
                effective_device(topology, loc, DeviceCatalog::builtin()).spec.memory_bytes;
        } catch (const InputError&) {
            ++s.unknown_specs;
        }
        s.layers += layers_on[loc.path];
    }
    if (node >= 0 && node < static_cast<int>(topology.nodes.size())) {
        s.containers = container >= 0
                           ? 1
                           : static_cast<int>(
                                 topology.nodes[static_cast<std::size_t>(node)].containers.size());
    }
    return s;
}

}  // namespace pipewright::gui

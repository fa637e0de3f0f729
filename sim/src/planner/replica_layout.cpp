// Where the replicas of a data-parallel plan sit: the devices replica 0's
// pipeline is planned on, and the devices every other replica takes.

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "pipewright/sim/planner.h"
#include "planner/replica_layout.h"
#include "planner/tensor_groups.h"

namespace pipewright {

Topology device_subset(const Topology& topology, const std::vector<int>& indices) {
    Topology out = topology;
    out.nodes.clear();
    std::size_t next = 0;  // into indices
    int at = 0;            // topology order
    for (const Node& node : topology.nodes) {
        Node kept{node.name, {}};
        for (const Container& container : node.containers) {
            Container c{container.name, {}};
            for (const Device& device : container.devices) {
                if (next < indices.size() && indices[next] == at) {
                    c.devices.push_back(device);
                    ++next;
                }
                ++at;
            }
            if (!c.devices.empty()) {
                kept.containers.push_back(std::move(c));
            }
        }
        if (!kept.containers.empty()) {
            out.nodes.push_back(std::move(kept));
        }
    }
    const DeviceLookup lookup(out);
    out.link_overrides.clear();
    for (const LinkOverride& o : topology.link_overrides) {
        if (lookup.find(o.device_a) && lookup.find(o.device_b)) {
            out.link_overrides.push_back(o);
        }
    }
    return out;
}

Topology first_devices(const Topology& topology, int devices) {
    std::vector<int> indices(static_cast<std::size_t>(std::max(devices, 0)));
    std::iota(indices.begin(), indices.end(), 0);
    return device_subset(topology, indices);
}

std::vector<int> replica_device_indices(int devices, int replicas, int adjacent, int replica) {
    const int per_replica = devices / replicas;
    const int group_start = replica / adjacent * per_replica * adjacent;
    std::vector<int> out;
    out.reserve(static_cast<std::size_t>(per_replica));
    for (int j = 0; j < per_replica; ++j) {
        out.push_back(group_start + j * adjacent + replica % adjacent);
    }
    return out;
}

namespace planner {

std::vector<int> adjacency_options(const Topology& topology, int replicas, int tensor) {
    std::vector<int> out{1};
    if (replicas <= 1 || topology.nodes.empty()) {
        return out;
    }
    int per_node = 0;  // groups of `tensor` devices in the first node
    for (const Container& c : topology.nodes.front().containers) {
        per_node += static_cast<int>(c.devices.size()) / std::max(1, tensor);
    }
    const int side_by_side = std::gcd(replicas, per_node);
    if (side_by_side > 1) {
        out.push_back(side_by_side);
    }
    return out;
}

std::string layout_words(int replicas, int adjacent) {
    if (replicas <= 1) {
        return "one pipeline";
    }
    if (adjacent <= 1) {
        return "each replica on a run of devices of its own";
    }
    if (adjacent == replicas) {
        return "each stage's replicas on neighbouring devices";
    }
    return "each stage's replicas in groups of " + std::to_string(adjacent) +
           " on neighbouring devices";
}

std::vector<int> replica_group_devices(const TopologyIndex& topology, int replicas, int adjacent,
                                       int tensor, int replica) {
    const std::vector<int>& leaders = topology.leaders(tensor);
    std::vector<int> mine;
    for (const int unit :
         replica_device_indices(static_cast<int>(leaders.size()), replicas, adjacent, replica)) {
        mine.push_back(leaders[static_cast<std::size_t>(unit)]);
    }
    return group_members(mine, tensor);
}

Project spread_over_replicas(const Project& pipeline, const Project& whole,
                             const TopologyIndex& index, int replicas, int adjacent, int tensor) {
    Project layout = pipeline;
    layout.topology = whole.topology;
    layout.training.batch_size = whole.training.batch_size;
    layout.data_parallel = whole.data_parallel;
    layout.data_parallel.size = replicas;
    layout.data_parallel.replicas.clear();
    if (replicas <= 1) {
        return layout;
    }
    const auto& devices = index.devices();
    // Replicas are laid out over the groups (single devices without tensor
    // parallelism), each group named by its first device.
    const std::vector<int>& leaders = index.leaders(tensor);
    const int n = static_cast<int>(leaders.size());
    const std::vector<int> zero = replica_device_indices(n, replicas, adjacent, 0);
    std::unordered_map<int, int> slot;  // replica 0's leaders -> their position
    for (std::size_t j = 0; j < zero.size(); ++j) {
        slot.emplace(leaders[static_cast<std::size_t>(zero[j])], static_cast<int>(j));
    }
    // Pipeline ranks: the placement's devices in order of first appearance.
    std::vector<int> ranks;
    for (const StageAssignment& s : pipeline.placement) {
        const int i = index.find(s.device);
        if (std::find(ranks.begin(), ranks.end(), i) == ranks.end()) {
            ranks.push_back(i);
        }
    }
    // The default layout shifts every replica by the pipeline's span.
    const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
    const int span = *hi - *lo + std::max(1, tensor);
    bool as_default = true;
    for (int r = 1; r < replicas; ++r) {
        const std::vector<int> mine = replica_device_indices(n, replicas, adjacent, r);
        std::vector<std::string> names;
        names.reserve(ranks.size());
        for (const int i : ranks) {
            const int device =
                leaders[static_cast<std::size_t>(mine[static_cast<std::size_t>(slot.at(i))])];
            as_default = as_default && device == i + r * span;
            names.push_back(devices[static_cast<std::size_t>(device)].path);
        }
        layout.data_parallel.replicas.push_back(std::move(names));
    }
    if (as_default) {
        layout.data_parallel.replicas.clear();  // no list needed in the file
    }
    return layout;
}

}  // namespace planner

}  // namespace pipewright

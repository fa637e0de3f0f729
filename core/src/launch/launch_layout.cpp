#include "pipewright/core/launch_layout.h"

#include <functional>
#include <map>

namespace pipewright {
namespace {

std::string plural(int n, const std::string& one, const std::string& many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "12 with 8, 1 with 2": how many nodes hold how many ranks, most first.
std::string uneven_words(const LaunchLayout& l) {
    std::map<int, int, std::greater<>> nodes_with;
    for (const int n : l.ranks_on_node) {
        ++nodes_with[n];
    }
    std::string words;
    for (const auto& [ranks, nodes] : nodes_with) {
        words +=
            (words.empty() ? "" : ", ") + std::to_string(nodes) + " with " + std::to_string(ranks);
    }
    return words;
}

}  // namespace

int run_process_count(const AnalyzedProject& project) {
    return project.world_size() * std::max(1, project.project.tensor_parallel.size);
}

const DeviceLocation& run_process_device(const AnalyzedProject& project, int rank) {
    const int leaders = project.world_size();
    const int slice = rank / leaders;
    const int leader = rank % leaders;
    if (slice == 0 || project.tensor_groups.empty()) {
        return project.world_device(leader);
    }
    return project.tensor_groups.at(static_cast<std::size_t>(project.replica_of(leader)))
        .at(static_cast<std::size_t>(project.pipeline_rank_of(leader)))
        .at(static_cast<std::size_t>(slice));
}

std::string describe(const LaunchLayout& l) {
    if (!l.gpus) {
        const std::string ranks =
            plural(l.world, "CPU rank", "CPU ranks") + " on " + plural(l.nodes, "node", "nodes");
        if (l.nodes == 1) {
            return ranks;
        }
        return ranks + (l.even() ? ", " + std::to_string(l.ranks_per_node) + " on each"
                                 : " (" + uneven_words(l) + ")");
    }
    const std::string ranks =
        plural(l.world, "rank", "ranks") + " on " + plural(l.nodes, "node", "nodes");
    if (l.even()) {
        return ranks + " × " + plural(l.ranks_per_node, "GPU", "GPUs");
    }
    return ranks + " of up to " + plural(l.ranks_per_node, "GPU", "GPUs") + " (" + uneven_words(l) +
           ")";
}

LaunchLayout launch_layout(const AnalyzedProject& project) {
    LaunchLayout l;
    l.world = run_process_count(project);
    // The nodes in the order of their first rank, with their ranks.
    std::vector<int> order;
    std::map<int, int> count;
    for (int r = 0; r < l.world; ++r) {
        const int node = run_process_device(project, r).node;
        if (!count.contains(node)) {
            order.push_back(node);
        }
        ++count[node];
    }
    l.nodes = static_cast<int>(order.size());
    l.ranks_per_node = 0;
    for (const int node : order) {
        l.node_names.push_back(
            project.project.topology.nodes.at(static_cast<std::size_t>(node)).name);
        l.ranks_on_node.push_back(count[node]);
        l.ranks_per_node = std::max(l.ranks_per_node, count[node]);
    }
    // Numbered node by node: ranks 0 to n0 - 1 on the first node, and so on.
    int rank = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        for (int k = 0; k < l.ranks_on_node[i]; ++k, ++rank) {
            if (run_process_device(project, rank).node != order[i]) {
                ++l.ranks_moved;
            }
        }
    }
    // GPU ranks unless every device is a CPU.
    l.gpus = false;
    for (const auto& specs : project.replica_specs) {
        for (const auto& spec : specs) {
            l.gpus = l.gpus || spec.kind != "cpu";
        }
    }
    for (const auto& spec : project.rank_specs) {
        l.gpus = l.gpus || spec.kind != "cpu";
    }
    return l;
}

}  // namespace pipewright

#include "planner/tensor_groups.h"

#include <algorithm>

#include "pipewright/core/analysis.h"

namespace pipewright::planner {

std::vector<int> tensor_leaders(const Topology& topology, int size) {
    std::vector<int> out;
    const int step = std::max(1, size);
    int at = 0;  // topology order
    for (const Node& node : topology.nodes) {
        for (const Container& container : node.containers) {
            const int count = static_cast<int>(container.devices.size());
            for (int k = 0; k + step <= count; k += step) {
                out.push_back(at + k);
            }
            at += count;
        }
    }
    return out;
}

std::vector<int> group_members(const std::vector<int>& leaders, int size) {
    std::vector<int> out;
    out.reserve(leaders.size() * static_cast<std::size_t>(std::max(1, size)));
    for (const int leader : leaders) {
        for (int k = 0; k < std::max(1, size); ++k) {
            out.push_back(leader + k);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<int> tensor_parallel_sizes(const Topology& topology) {
    int largest = 1;
    for (const Node& node : topology.nodes) {
        for (const Container& container : node.containers) {
            largest = std::max(largest, static_cast<int>(container.devices.size()));
        }
    }
    std::vector<int> out;
    for (int t = 1; t <= largest; ++t) {
        if (largest % t == 0) {
            out.push_back(t);
        }
    }
    return out;
}

std::optional<std::string> tensor_split_problem(const Project& project, int size,
                                                bool sequence_parallel,
                                                const DeviceCatalog* catalog) {
    const std::vector<int> leaders = tensor_leaders(project.topology, size);
    if (leaders.empty()) {
        return "no container has " + std::to_string(size) + " devices for a group";
    }
    // The whole model on the first group: what the analysis says of its split.
    Project single = project;
    single.data_parallel = DataParallel{};
    single.tensor_parallel = TensorParallel{size, sequence_parallel};
    StageAssignment all{project.topology.devices()[static_cast<std::size_t>(leaders.front())].path,
                        {}};
    for (const LayerSpec& layer : project.model.layers) {
        all.layers.push_back(layer.name);
    }
    single.placement = {all};
    AnalysisOptions analysis;
    analysis.schedule = "naive";
    analysis.catalog = catalog;
    analysis.replica_alone = true;
    Diagnostics diagnostics;
    if (analyze_project(single, analysis, diagnostics)) {
        return std::nullopt;
    }
    if (diagnostics.items().empty()) {
        return "the model cannot be analysed";
    }
    const Diagnostic& first = diagnostics.items().front();
    return first.path + ": " + first.message;
}

}  // namespace pipewright::planner

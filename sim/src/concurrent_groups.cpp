#include "concurrent_groups.h"

#include <algorithm>

namespace pipewright {

namespace {

// The replica numbers of each group, the one with replica 0 first.
std::vector<std::vector<int>> replica_sets(int replicas, ReplicaGrouping grouping, int n) {
    n = std::clamp(n, 1, std::max(1, replicas));
    std::vector<std::vector<int>> sets;
    if (grouping == ReplicaGrouping::consecutive) {
        for (int first = 0; first < replicas; first += n) {
            auto& set = sets.emplace_back();
            for (int r = first; r < std::min(replicas, first + n); ++r) {
                set.push_back(r);
            }
        }
    } else {
        for (int offset = 0; offset < n; ++offset) {
            auto& set = sets.emplace_back();
            for (int r = offset; r < replicas; r += n) {
                set.push_back(r);
            }
        }
    }
    return sets;
}

}  // namespace

std::size_t tensor_positions(const AnalyzedProject& project, int rank) {
    return project.tensor_groups.empty()
               ? 1
               : project.tensor_groups.front().at(static_cast<std::size_t>(rank)).size();
}

const DeviceLocation& stage_device(const AnalyzedProject& project, int replica, int rank,
                                   std::size_t k) {
    const auto rr = static_cast<std::size_t>(replica);
    const auto rk = static_cast<std::size_t>(rank);
    if (project.tensor_groups.empty()) {
        // The planner prices a lone replica by its ranks alone.
        return project.replicas.empty() ? project.ranks.at(rk) : project.replicas.at(rr).at(rk);
    }
    const auto& group = project.tensor_groups.at(rr).at(rk);
    return group.at(std::min(k, group.size() - 1));
}

std::vector<std::vector<DeviceLocation>> replica_groups(const AnalyzedProject& project,
                                                        const std::vector<int>& ranks,
                                                        ReplicaGrouping grouping, int n) {
    std::vector<std::vector<DeviceLocation>> groups;
    const auto sets = replica_sets(std::max(1, project.data_parallel()), grouping, n);
    for (const int rank : ranks) {
        const std::size_t positions = tensor_positions(project, rank);
        for (const auto& set : sets) {
            for (std::size_t k = 0; k < positions; ++k) {
                auto& members = groups.emplace_back();
                for (int r : set) {
                    members.push_back(stage_device(project, r, rank, k));
                }
            }
        }
    }
    return groups;
}

CollectiveGroup replica_collective_group(const AnalyzedProject& project, int rank,
                                         ReplicaGrouping grouping, int n, const LinkResolver& links,
                                         const LinkSharing& sharing) {
    const auto sets = replica_sets(std::max(1, project.data_parallel()), grouping, n);
    std::vector<DeviceLocation> members;
    for (int r : sets.front()) {
        members.push_back(stage_device(project, r, rank, 0));
    }
    return collective_group(members, links, project.rank_specs.at(static_cast<std::size_t>(rank)),
                            &sharing);
}

CollectiveGroup replica_collective_group(const AnalyzedProject& project, int rank,
                                         ReplicaGrouping grouping, int n,
                                         const LinkResolver& links) {
    const LinkSharing sharing(replica_groups(project, {rank}, grouping, n), links);
    return replica_collective_group(project, rank, grouping, n, links, sharing);
}

}  // namespace pipewright

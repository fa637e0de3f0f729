#pragma once

// The data-parallel planner's device layouts (planner/replica_layout.cpp).

#include <string>
#include <vector>

#include "pipewright/core/project.h"
#include "planner/topology_index.h"

namespace pipewright::planner {

// The counts of each stage's replicas on neighbouring devices (neighbouring
// tensor-parallel groups of `tensor` devices) worth trying for `replicas`
// replicas: 1 (each replica on its own run of devices, so that a pipeline
// stays within a node), and as many as share a node (so that the gradient
// reductions stay within one).
[[nodiscard]] std::vector<int> adjacency_options(const Topology& topology, int replicas,
                                                 int tensor = 1);
[[nodiscard]] std::string layout_words(int replicas, int adjacent);

// The devices (indices in topology order) that replica `replica` of
// `replicas` takes when each stage runs on a tensor-parallel group of
// `tensor` devices: replica_device_indices over the groups (tensor_leaders),
// each group with all its devices.
[[nodiscard]] std::vector<int> replica_group_devices(const TopologyIndex& topology, int replicas,
                                                     int adjacent, int tensor, int replica);

// The whole project: `pipeline` (replica 0's plan, on the devices
// replica_group_devices gives it) run by `replicas` replicas laid out as
// `adjacent` says, with `whole`'s topology (`index`), batch and
// data-parallel settings. No list of replicas in the file where the default
// layout is the same.
[[nodiscard]] Project spread_over_replicas(const Project& pipeline, const Project& whole,
                                           const TopologyIndex& index, int replicas, int adjacent,
                                           int tensor = 1);

}  // namespace pipewright::planner

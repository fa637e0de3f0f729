#pragma once

// The data-parallel planner's device layouts (planner_replica_layout.cpp).

#include <string>
#include <vector>

#include "pipewright/core/project.h"

namespace pipewright::planner {

// The counts of each stage's replicas on neighbouring devices worth trying
// for `replicas` replicas: 1 (each replica on its own run of devices, so
// that a pipeline stays within a node), and as many as share a node (so
// that the gradient reductions stay within one).
[[nodiscard]] std::vector<int> adjacency_options(const Topology& topology, int replicas);
[[nodiscard]] std::string layout_words(int replicas, int adjacent);

// The whole project: `pipeline` (replica 0's plan, on the devices
// replica_device_indices gives it) run by `replicas` replicas laid out as
// `adjacent` says, with `whole`'s topology, batch and data-parallel settings.
// The default layout (no list of replicas in the file) where adjacent is 1.
[[nodiscard]] Project spread_over_replicas(const Project& pipeline, const Project& whole,
                                           int replicas, int adjacent);

}  // namespace pipewright::planner

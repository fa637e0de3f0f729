#pragma once

// Where the planner may put tensor-parallel groups. A stage of a
// tensor-parallel layout runs on its device and the size - 1 devices after
// it in its container (docs/concepts.md#tensor-parallelism), so the planner
// places stages on the groups' first devices only: each container cut into
// whole groups from its first device on.

#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/project.h"

namespace pipewright::planner {

// The first device (index in topology order) of every whole group of `size`
// devices, containers cut from their first device; every device when size
// is 1. A container's last devices that make no whole group are left out.
[[nodiscard]] std::vector<int> tensor_leaders(const Topology& topology, int size);

// The devices of the groups that `leaders` start, ascending.
[[nodiscard]] std::vector<int> group_members(const std::vector<int>& leaders, int size);

// The tensor-parallel sizes worth planning on `topology`: 1 and every size
// from 2 that divides the devices of its largest container.
[[nodiscard]] std::vector<int> tensor_parallel_sizes(const Topology& topology);

// Why the model cannot run with tensor-parallel groups of `size` on this
// topology (a layer that does not split, a dimension the size does not
// divide, no container with that many devices), or nullopt when it can.
[[nodiscard]] std::optional<std::string> tensor_split_problem(const Project& project, int size,
                                                              bool sequence_parallel,
                                                              const DeviceCatalog* catalog);

}  // namespace pipewright::planner

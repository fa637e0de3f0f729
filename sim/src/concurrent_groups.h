#pragma once

#include "pipewright/core/analysis.h"
#include "pipewright/sim/collective_cost.h"

namespace pipewright {

// Which replicas of a stage form one group: blocks of n consecutive
// replicas (the data-parallel ring with n = D; Megatron-LM's expert and
// context groups), or every n-th replica (the holders of the same experts).
enum class ReplicaGrouping { consecutive, strided };

// How many devices run each of `rank`'s stages in a replica (its
// tensor-parallel group; 1 without tensor parallelism).
[[nodiscard]] std::size_t tensor_positions(const AnalyzedProject& project, int rank);
// The device at tensor-parallel position k of `rank` in replica r.
[[nodiscard]] const DeviceLocation& stage_device(const AnalyzedProject& project, int replica,
                                                 int rank, std::size_t k);

// Every group `grouping` makes of the devices of each rank in `ranks`: one
// per block of replicas (or offset) and tensor-parallel position.
[[nodiscard]] std::vector<std::vector<DeviceLocation>> replica_groups(
    const AnalyzedProject& project, const std::vector<int>& ranks, ReplicaGrouping grouping, int n);

// The group of `rank`'s device in replica 0 (the first of its tensor-parallel
// group) and its peers in the replicas `grouping` puts with it. Every other
// such group of the stage (the other blocks, and the groups of the other
// tensor-parallel positions) runs the same collective at the same moment,
// so the group gets its share of the links they cross together.
[[nodiscard]] CollectiveGroup replica_collective_group(const AnalyzedProject& project, int rank,
                                                       ReplicaGrouping grouping, int n,
                                                       const LinkResolver& links);
// The same group sharing its links as `sharing` counts them: the expert-
// and context-parallel exchanges, which every stage runs inside its
// forward and backward, share with the groups of every stage at once.
[[nodiscard]] CollectiveGroup replica_collective_group(const AnalyzedProject& project, int rank,
                                                       ReplicaGrouping grouping, int n,
                                                       const LinkResolver& links,
                                                       const LinkSharing& sharing);

}  // namespace pipewright

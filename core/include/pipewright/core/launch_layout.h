#pragma once

// How a real run of a project spreads over processes and machines: one
// process per device of every replica's pipeline and tensor-parallel group,
// numbered node by node as torchrun, Slurm and `pipewright run --nnodes`
// number them. The launch files (launch_files.h), the run's launcher and
// the simulation's count of ranks per machine all read it from here.

#include <algorithm>
#include <string>
#include <vector>

#include "pipewright/core/analysis.h"

namespace pipewright {

// The processes of a real run: one per device of every replica's pipeline,
// times the devices of each stage's tensor-parallel group (world ranks from
// project.world_size() on are the groups' other members), as `pipewright
// run` starts them.
[[nodiscard]] int run_process_count(const AnalyzedProject& project);

// The device of world rank `rank` of a real run (0 to run_process_count - 1):
// slice k of a tensor-parallel group is k × world_size() ranks after the
// group's first member.
[[nodiscard]] const DeviceLocation& run_process_device(const AnalyzedProject& project, int rank);

// How a run spreads over machines: the placement's nodes and the ranks on
// each, numbered node by node as torchrun, Slurm and `pipewright run
// --nnodes` number them.
struct LaunchLayout {
    int world = 1;                   // processes of the run
    int nodes = 1;                   // machines: the topology's nodes that hold a rank
    int ranks_per_node = 1;          // the most processes on one node (and its GPUs with `gpus`)
    std::vector<int> ranks_on_node;  // processes on each node, in node order
    bool gpus = true;                // GPU ranks (NCCL); false: CPU ranks (Gloo)
    // The topology's names of those nodes, in the order of their first rank.
    std::vector<std::string> node_names;
    // Ranks that numbering node by node puts on another machine than the
    // placement's (tensor-parallel slices, replicas laid out across nodes):
    // the run trains alike, but some transfers cross other links than the
    // plan's.
    int ranks_moved = 0;

    // Every node runs as many ranks.
    [[nodiscard]] bool even() const {
        return std::all_of(ranks_on_node.begin(), ranks_on_node.end(),
                           [&](int n) { return n == ranks_per_node; });
    }
    bool operator==(const LaunchLayout&) const = default;
};

[[nodiscard]] LaunchLayout launch_layout(const AnalyzedProject& project);

// "16 ranks on 2 nodes × 8 GPUs", "98 ranks on 13 nodes of up to 8 GPUs (12
// with 8, 1 with 2)", "2 CPU ranks on 1 node", "4 CPU ranks on 2 nodes, 2 on each".
[[nodiscard]] std::string describe(const LaunchLayout& layout);

}  // namespace pipewright

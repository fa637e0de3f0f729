#pragma once

#include <set>
#include <string>
#include <vector>

namespace pipewright::gui {

// A node, or a container inside a node, holding a contiguous run of ranks.
struct LaneGroup {
    std::string key;   // unique and stable across re-simulations: "node0", "node0/c1"
    std::string name;  // what its header shows: "node0", "c1"
    int depth = 0;     // 0: node, 1: container
    int parent = -1;   // the enclosing group, for a container
    int first_rank = 0;
    int end_rank = 0;  // one past the last rank
    [[nodiscard]] int size() const { return end_rank - first_rank; }
};

// The lanes of a timeline grouped as the cluster is built, nodes ▸ containers
// ▸ devices, read from the device paths ("node0/c0/gpu3"). Lanes keep
// pipeline (rank) order: a group is a run of consecutive ranks, so a node
// whose devices are not consecutive in the pipeline appears once per run.
// Container groups are left out where they would add a header without
// grouping anything: a node's only container, or a container of one device.
class LaneTree {
  public:
    LaneTree() = default;
    explicit LaneTree(const std::vector<std::string>& devices);

    [[nodiscard]] int ranks() const { return static_cast<int>(devices_.size()); }
    [[nodiscard]] const std::vector<LaneGroup>& groups() const { return groups_; }
    // Groups in display order: every group comes before the groups inside it.
    [[nodiscard]] const LaneGroup& group(int index) const;
    [[nodiscard]] const std::string& device(int rank) const;
    // The rank's path below its innermost group: "gpu3", or "c1/gpu0" where
    // the node has several containers and this one has no header of its own;
    // the full path when ungrouped.
    [[nodiscard]] const std::string& laneName(int rank) const;
    // The innermost group holding the rank, or -1.
    [[nodiscard]] int groupOf(int rank) const;
    [[nodiscard]] int nodeCount() const;

  private:
    std::vector<std::string> devices_;
    std::vector<std::string> lane_names_;
    std::vector<int> innermost_;
    std::set<int> single_container_;  // ranks of nodes with one container
    std::vector<LaneGroup> groups_;
};

}  // namespace pipewright::gui

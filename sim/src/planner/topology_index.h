#pragma once

// The whole topology's devices in order, found by path, and where each
// size of tensor-parallel group may start: made once per plan, for the
// layouts the search lays out and resolves (planner/layout_analysis.h,
// planner/replica_layout.h).

#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pipewright/core/topology.h"

namespace pipewright::planner {

class TopologyIndex {
  public:
    explicit TopologyIndex(const Topology& topology);
    // The map holds views into devices_.
    TopologyIndex(const TopologyIndex&) = delete;
    TopologyIndex& operator=(const TopologyIndex&) = delete;

    [[nodiscard]] const std::vector<DeviceLocation>& devices() const { return devices_; }
    // Index in topology order of the device at `path` (the first of
    // duplicates, as DeviceLookup finds it), or -1.
    [[nodiscard]] int find(std::string_view path) const;
    // tensor_leaders(topology, size), computed once per size.
    [[nodiscard]] const std::vector<int>& leaders(int size) const;

  private:
    const Topology& topology_;
    std::vector<DeviceLocation> devices_;
    std::unordered_map<std::string_view, int> by_path_;
    mutable std::map<int, std::vector<int>> leaders_;
};

}  // namespace pipewright::planner

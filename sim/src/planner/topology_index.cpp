#include "planner/topology_index.h"

#include "planner/tensor_groups.h"

namespace pipewright::planner {

TopologyIndex::TopologyIndex(const Topology& topology)
    : topology_(topology), devices_(topology.devices()) {
    by_path_.reserve(devices_.size());
    for (std::size_t i = 0; i < devices_.size(); ++i) {
        by_path_.emplace(devices_[i].path, static_cast<int>(i));
    }
}

int TopologyIndex::find(std::string_view path) const {
    const auto it = by_path_.find(path);
    return it == by_path_.end() ? -1 : it->second;
}

const std::vector<int>& TopologyIndex::leaders(int size) const {
    auto it = leaders_.find(size);
    if (it == leaders_.end()) {
        it = leaders_.emplace(size, tensor_leaders(topology_, size)).first;
    }
    return it->second;
}

}  // namespace pipewright::planner

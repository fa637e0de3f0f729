#include "studio_core/timeline/lane_groups.h"

#include <map>
#include <set>

namespace pipewright::gui {

namespace {

struct PathParts {
    std::string node;       // empty for a path without a node
    std::string container;  // "node/container", empty without one
};

PathParts split(const std::string& path) {
    const auto first = path.find('/');
    if (first == std::string::npos) {
        return {};
    }
    PathParts parts{path.substr(0, first), {}};
    const auto second = path.find('/', first + 1);
    if (second != std::string::npos) {
        parts.container = path.substr(0, second);
    }
    return parts;
}

}  // namespace

LaneTree::LaneTree(const std::vector<std::string>& devices)
    : devices_(devices), innermost_(devices.size(), -1) {
    const int n = ranks();
    std::map<std::string, int> runs;  // how often a node name has started a group
    int r = 0;
    while (r < n) {
        const PathParts parts = split(devices_[static_cast<std::size_t>(r)]);
        int end = r + 1;
        while (end < n && split(devices_[static_cast<std::size_t>(end)]).node == parts.node) {
            ++end;
        }
        if (parts.node.empty()) {
            r = end;  // ungrouped lanes
            continue;
        }
        const int node_index = static_cast<int>(groups_.size());
        const int run = ++runs[parts.node];
        const std::string node_key = run == 1 ? parts.node : parts.node + "#" + std::to_string(run);
        groups_.push_back({node_key, parts.node, 0, -1, r, end});
        for (int i = r; i < end; ++i) {
            innermost_[static_cast<std::size_t>(i)] = node_index;
        }
        // Containers: runs of one container inside this node's run.
        std::vector<LaneGroup> containers;
        for (int c = r; c < end;) {
            const std::string container = split(devices_[static_cast<std::size_t>(c)]).container;
            int c_end = c + 1;
            while (c_end < end &&
                   split(devices_[static_cast<std::size_t>(c_end)]).container == container) {
                ++c_end;
            }
            if (!container.empty()) {
                const std::string key = node_key + container.substr(parts.node.size());
                containers.push_back(
                    {key, container.substr(parts.node.size() + 1), 1, node_index, c, c_end});
            }
            c = c_end;
        }
        const bool only_one = containers.size() == 1 && containers[0].size() == end - r;
        if (only_one) {
            // The container holds the whole node: its name adds nothing to
            // the lanes' names (the tooltip keeps the full path).
            for (int i = r; i < end; ++i) {
                single_container_.insert(i);
            }
        }
        for (const LaneGroup& g : containers) {
            if (only_one || g.size() < 2) {
                continue;
            }
            const int index = static_cast<int>(groups_.size());
            groups_.push_back(g);
            for (int i = g.first_rank; i < g.end_rank; ++i) {
                innermost_[static_cast<std::size_t>(i)] = index;
            }
        }
        r = end;
    }
    lane_names_.reserve(devices_.size());
    for (int i = 0; i < n; ++i) {
        const std::string& path = devices_[static_cast<std::size_t>(i)];
        const int g = innermost_[static_cast<std::size_t>(i)];
        if (g < 0) {
            lane_names_.push_back(path);
            continue;
        }
        // Strip the group's own path: the node name, or node and container.
        const LaneGroup& group = groups_[static_cast<std::size_t>(g)];
        const PathParts parts = split(path);
        const std::size_t prefix = group.depth == 0 && single_container_.count(i) == 0
                                       ? parts.node.size()
                                       : parts.container.size();
        lane_names_.push_back(prefix + 1 < path.size() ? path.substr(prefix + 1) : path);
    }
}

const LaneGroup& LaneTree::group(int index) const {
    return groups_.at(static_cast<std::size_t>(index));
}

const std::string& LaneTree::device(int rank) const {
    return devices_.at(static_cast<std::size_t>(rank));
}

const std::string& LaneTree::laneName(int rank) const {
    return lane_names_.at(static_cast<std::size_t>(rank));
}

int LaneTree::groupOf(int rank) const {
    return innermost_.at(static_cast<std::size_t>(rank));
}

int LaneTree::nodeCount() const {
    int nodes = 0;
    for (const LaneGroup& g : groups_) {
        nodes += g.depth == 0 ? 1 : 0;
    }
    return nodes;
}

}  // namespace pipewright::gui

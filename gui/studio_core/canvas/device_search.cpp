#include "studio_core/canvas/device_search.h"

#include <map>
#include <set>

#include "studio_core/timeline/lane_filter.h"

namespace pipewright::gui {

std::vector<std::string> rank_devices(const Project& project) {
    std::vector<std::string> ranks;
    std::set<std::string> seen;
    for (const StageAssignment& stage : project.placement) {
        if (seen.insert(stage.device).second) {
            ranks.push_back(stage.device);
        }
    }
    return ranks;
}

DeviceMatches find_devices(const Project& project, std::string_view text) {
    const LaneFilter filter = LaneFilter::parse(text);
    DeviceMatches matches;
    matches.error = filter.error();
    if (filter.empty()) {
        return matches;
    }
    std::map<std::string, int> rank_of;
    const std::vector<std::string> ranks = rank_devices(project);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        rank_of.emplace(ranks[r], static_cast<int>(r));
    }
    for (const Node& node : project.topology.nodes) {
        for (const Container& container : node.containers) {
            for (const Device& device : container.devices) {
                const std::string path = node.name + "/" + container.name + "/" + device.name;
                const auto rank = rank_of.find(path);
                if (filter.matches(rank == rank_of.end() ? -1 : rank->second, path)) {
                    matches.paths.push_back(path);
                }
            }
        }
    }
    return matches;
}

}  // namespace pipewright::gui

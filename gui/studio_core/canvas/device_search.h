#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/project.h"

namespace pipewright::gui {

// The devices a search of the cluster canvas finds, in the order the canvas
// draws them (nodes ▸ containers ▸ devices).
struct DeviceMatches {
    std::vector<std::string> paths;
    std::string error;  // terms that were not understood, in words
};

// Finds devices the way the timeline's lane filter picks lanes, so that one
// way of naming devices works in both: terms separated by spaces or commas,
// a device found when any term matches it; digits are a pipeline rank
// ("12"), "8-15" or "96-" a range of ranks, anything else part of the path,
// case ignored ("gpu3", "node1/", "node4/c0/gpu7"). A device that runs no
// stage has no rank and is found by its path only.
[[nodiscard]] DeviceMatches find_devices(const Project& project, std::string_view text);

// The pipeline rank of each device path, in the order the simulator numbers
// them (first appearance in the placement), as the timeline shows them.
[[nodiscard]] std::vector<std::string> rank_devices(const Project& project);

}  // namespace pipewright::gui

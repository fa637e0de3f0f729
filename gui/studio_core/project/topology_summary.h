#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "pipewright/core/project.h"

namespace pipewright::gui {

// What a node or a container holds, for the inspector.
struct TopologySummary {
    int containers = 0;
    int devices = 0;
    std::map<std::string, int> specs;  // device spec -> how many
    std::int64_t memory_bytes = 0;     // sum over devices with a known spec
    int unknown_specs = 0;             // devices whose spec the catalog lacks
    int layers = 0;                    // layers placed on its devices
};

// The node at index `node`, or only its container `container` when >= 0.
// Memory uses each device's overrides (a MIG slice counts as its slice).
[[nodiscard]] TopologySummary summarize_topology(const Project& project, int node,
                                                 int container = -1);

}  // namespace pipewright::gui

#pragma once

#include <string>

#include "studio_core/project/project_edit.h"

// Edits of the cluster above the device level, and of per-pair links. Like
// the other edits they are plain functions on values: the placement and the
// link overrides follow every rename and forget what a removal takes away,
// so a project never points at a device that is gone.
namespace pipewright::gui {

[[nodiscard]] EditResult rename_node(const Project& project, int node, const std::string& name);
[[nodiscard]] EditResult rename_container(const Project& project, int node, int container,
                                          const std::string& name);
[[nodiscard]] Project remove_node(const Project& project, int node);
[[nodiscard]] Project remove_container(const Project& project, int node, int container);

// Index of a node by name, or -1; a container "node/container" as a pair of
// indices, or {-1, -1}.
[[nodiscard]] int find_node(const Project& project, const std::string& name);
[[nodiscard]] std::pair<int, int> find_container(const Project& project, const std::string& path);

// Sets the link between two devices (either order names the same pair),
// replacing the one already there. Refused for unknown or identical devices.
[[nodiscard]] EditResult set_link_override(const Project& project, const std::string& a,
                                           const std::string& b, const LinkSpec& link);
[[nodiscard]] Project remove_link_override(const Project& project, const std::string& a,
                                           const std::string& b);

}  // namespace pipewright::gui

#include "studio_core/project/topology_edit.h"

#include <algorithm>

namespace pipewright::gui {

namespace {

bool valid_name(const std::string& name) {
    return !name.empty() && name.find('/') == std::string::npos;
}

// Rewrites every device path that starts with `old_prefix` + "/" (a node or
// container path) in the placement and the link overrides.
void rename_prefix(Project& project, const std::string& old_prefix, const std::string& new_prefix) {
    auto fix = [&](std::string& path) {
        if (path.rfind(old_prefix + "/", 0) == 0) {
            path = new_prefix + path.substr(old_prefix.size());
        }
    };
    for (auto& stage : project.placement) {
        fix(stage.device);
    }
    for (auto& o : project.topology.link_overrides) {
        fix(o.device_a);
        fix(o.device_b);
    }
}

// Drops stages and link overrides on devices under `prefix` + "/".
void forget_prefix(Project& project, const std::string& prefix) {
    auto under = [&](const std::string& path) { return path.rfind(prefix + "/", 0) == 0; };
    std::erase_if(project.placement, [&](const StageAssignment& s) { return under(s.device); });
    std::erase_if(project.topology.link_overrides,
                  [&](const LinkOverride& o) { return under(o.device_a) || under(o.device_b); });
}

bool same_pair(const LinkOverride& o, const std::string& a, const std::string& b) {
    return (o.device_a == a && o.device_b == b) || (o.device_a == b && o.device_b == a);
}

}  // namespace

int find_node(const Project& project, const std::string& name) {
    const auto& nodes = project.topology.nodes;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        if (nodes[n].name == name) {
            return static_cast<int>(n);
        }
    }
    return -1;
}

std::pair<int, int> find_container(const Project& project, const std::string& path) {
    const auto slash = path.find('/');
    if (slash == std::string::npos) {
        return {-1, -1};
    }
    const int node = find_node(project, path.substr(0, slash));
    if (node < 0) {
        return {-1, -1};
    }
    const auto& containers = project.topology.nodes[static_cast<std::size_t>(node)].containers;
    for (std::size_t c = 0; c < containers.size(); ++c) {
        if (containers[c].name == path.substr(slash + 1)) {
            return {node, static_cast<int>(c)};
        }
    }
    return {-1, -1};
}

EditResult rename_node(const Project& project, int node, const std::string& name) {
    const auto& nodes = project.topology.nodes;
    if (node < 0 || node >= static_cast<int>(nodes.size())) {
        return {std::nullopt, "no such node"};
    }
    if (!valid_name(name)) {
        return {std::nullopt, "a node name is not empty and has no '/'"};
    }
    const int existing = find_node(project, name);
    if (existing >= 0 && existing != node) {
        return {std::nullopt, "another node is already named \"" + name + "\""};
    }
    Project out = project;
    auto& renamed = out.topology.nodes[static_cast<std::size_t>(node)];
    rename_prefix(out, renamed.name, name);
    renamed.name = name;
    return {std::move(out), {}};
}

EditResult rename_container(const Project& project, int node, int container,
                            const std::string& name) {
    const auto& nodes = project.topology.nodes;
    if (node < 0 || node >= static_cast<int>(nodes.size()) || container < 0 ||
        container >= static_cast<int>(nodes[static_cast<std::size_t>(node)].containers.size())) {
        return {std::nullopt, "no such container"};
    }
    if (!valid_name(name)) {
        return {std::nullopt, "a container name is not empty and has no '/'"};
    }
    const Node& n = nodes[static_cast<std::size_t>(node)];
    for (std::size_t c = 0; c < n.containers.size(); ++c) {
        if (n.containers[c].name == name && static_cast<int>(c) != container) {
            return {std::nullopt,
                    "node " + n.name + " already has a container named \"" + name + "\""};
        }
    }
    Project out = project;
    auto& renamed = out.topology.nodes[static_cast<std::size_t>(node)]
                        .containers[static_cast<std::size_t>(container)];
    rename_prefix(out, n.name + "/" + renamed.name, n.name + "/" + name);
    renamed.name = name;
    return {std::move(out), {}};
}

Project remove_node(const Project& project, int node) {
    if (node < 0 || node >= static_cast<int>(project.topology.nodes.size())) {
        return project;
    }
    Project out = project;
    forget_prefix(out, out.topology.nodes[static_cast<std::size_t>(node)].name);
    out.topology.nodes.erase(out.topology.nodes.begin() + node);
    return out;
}

Project remove_container(const Project& project, int node, int container) {
    const auto& nodes = project.topology.nodes;
    if (node < 0 || node >= static_cast<int>(nodes.size()) || container < 0 ||
        container >= static_cast<int>(nodes[static_cast<std::size_t>(node)].containers.size())) {
        return project;
    }
    Project out = project;
    auto& n = out.topology.nodes[static_cast<std::size_t>(node)];
    forget_prefix(out, n.name + "/" + n.containers[static_cast<std::size_t>(container)].name);
    n.containers.erase(n.containers.begin() + container);
    return out;
}

EditResult set_link_override(const Project& project, const std::string& a, const std::string& b,
                             const LinkSpec& link) {
    if (!project.topology.find_device(a) || !project.topology.find_device(b)) {
        return {std::nullopt, "a link override joins two existing devices"};
    }
    if (a == b) {
        return {std::nullopt, "a link joins two different devices"};
    }
    if (link.bandwidth_GBps <= 0) {
        return {std::nullopt, "a link needs a bandwidth above zero"};
    }
    Project out = project;
    auto& overrides = out.topology.link_overrides;
    auto it = std::find_if(overrides.begin(), overrides.end(),
                           [&](const LinkOverride& o) { return same_pair(o, a, b); });
    if (it != overrides.end()) {
        it->link = link;
    } else {
        overrides.push_back({a, b, link});
    }
    return {std::move(out), {}};
}

Project remove_link_override(const Project& project, const std::string& a, const std::string& b) {
    Project out = project;
    std::erase_if(out.topology.link_overrides,
                  [&](const LinkOverride& o) { return same_pair(o, a, b); });
    return out;
}

}  // namespace pipewright::gui

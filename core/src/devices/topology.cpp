#include "pipewright/core/topology.h"

#include "pipewright/core/diagnostics.h"

namespace pipewright {

double LinkSpec::wire_seconds(double bytes) const {
    const double rate = achieved_bytes_per_second();
    return rate > 0 ? bytes / rate : 0;
}

double LinkSpec::transfer_seconds(double bytes) const {
    return latency_us * 1e-6 + wire_seconds(bytes);
}

std::string_view to_string(LinkClass c) {
    switch (c) {
        case LinkClass::same_device:
            return "same device";
        case LinkClass::intra_container:
            return "intra-container";
        case LinkClass::intra_node:
            return "intra-node";
        case LinkClass::inter_node:
            return "inter-node";
        case LinkClass::override_pair:
            return "override";
    }
    return "";
}

std::vector<DeviceLocation> Topology::devices() const {
    std::vector<DeviceLocation> out;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        const auto& node = nodes[n];
        for (std::size_t c = 0; c < node.containers.size(); ++c) {
            const auto& container = node.containers[c];
            for (std::size_t d = 0; d < container.devices.size(); ++d) {
                out.push_back({node.name + "/" + container.name + "/" + container.devices[d].name,
                               static_cast<int>(n), static_cast<int>(c), static_cast<int>(d)});
            }
        }
    }
    return out;
}

std::optional<DeviceLocation> Topology::find_device(std::string_view path) const {
    // Compares the path piece by piece instead of building every device's
    // path (names cannot contain '/').
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        const auto& node = nodes[n];
        if (!path.starts_with(node.name) || path.substr(node.name.size(), 1) != "/") {
            continue;
        }
        const std::string_view rest = path.substr(node.name.size() + 1);
        for (std::size_t c = 0; c < node.containers.size(); ++c) {
            const auto& container = node.containers[c];
            if (!rest.starts_with(container.name) || rest.substr(container.name.size(), 1) != "/") {
                continue;
            }
            const std::string_view device = rest.substr(container.name.size() + 1);
            for (std::size_t d = 0; d < container.devices.size(); ++d) {
                if (container.devices[d].name == device) {
                    return DeviceLocation{std::string(path), static_cast<int>(n),
                                          static_cast<int>(c), static_cast<int>(d)};
                }
            }
        }
    }
    return std::nullopt;
}

const Device& Topology::device_at(const DeviceLocation& loc) const {
    return nodes.at(static_cast<std::size_t>(loc.node))
        .containers.at(static_cast<std::size_t>(loc.container))
        .devices.at(static_cast<std::size_t>(loc.device));
}

namespace {

// The link between two devices given the override that joins them, if any.
ResolvedLink resolve_link(const Topology& t, const DeviceLocation& from, const DeviceLocation& to,
                          const LinkOverride* override_link) {
    if (from.path == to.path) {
        return {LinkClass::same_device, LinkSpec{0, 0}, ""};
    }
    if (override_link != nullptr) {
        return {LinkClass::override_pair, override_link->link, from.path + "->" + to.path};
    }
    const auto& nodes = t.nodes;
    const auto& links = t.links;
    const auto& from_node = nodes.at(static_cast<std::size_t>(from.node));
    const auto& to_node = nodes.at(static_cast<std::size_t>(to.node));
    if (from.node != to.node) {
        // All devices of a node share its network interface.
        return {LinkClass::inter_node, links.inter_node, from_node.name + "->" + to_node.name};
    }
    if (from.container != to.container) {
        const auto& a = from_node.containers.at(static_cast<std::size_t>(from.container));
        const auto& b = to_node.containers.at(static_cast<std::size_t>(to.container));
        return {LinkClass::intra_node, links.intra_node,
                from_node.name + "/" + a.name + "->" + to_node.name + "/" + b.name};
    }
    return {LinkClass::intra_container, links.intra_container, from.path + "->" + to.path};
}

std::string pair_key(std::string_view a, std::string_view b) {
    std::string key;
    key.reserve(a.size() + b.size() + 1);
    key.append(a).push_back('\0');
    key.append(b);
    return key;
}

}  // namespace

ResolvedLink Topology::link_between(const DeviceLocation& from, const DeviceLocation& to) const {
    for (const auto& o : link_overrides) {
        if ((o.device_a == from.path && o.device_b == to.path) ||
            (o.device_a == to.path && o.device_b == from.path)) {
            return resolve_link(*this, from, to, &o);
        }
    }
    return resolve_link(*this, from, to, nullptr);
}

DeviceLookup::DeviceLookup(const Topology& topology) : devices_(topology.devices()) {
    by_path_.reserve(devices_.size());
    for (std::size_t i = 0; i < devices_.size(); ++i) {
        by_path_.emplace(devices_[i].path, i);  // the first of duplicate paths, as a scan finds
    }
}

std::optional<DeviceLocation> DeviceLookup::find(std::string_view path) const {
    const auto it = by_path_.find(path);
    if (it == by_path_.end()) {
        return std::nullopt;
    }
    return devices_[it->second];
}

LinkResolver::LinkResolver(const Topology& topology) : topology_(topology) {
    const auto& overrides = topology.link_overrides;
    for (std::size_t i = 0; i < overrides.size(); ++i) {
        // emplace keeps the first: link_between takes the first override that matches.
        overrides_.emplace(pair_key(overrides[i].device_a, overrides[i].device_b), i);
        overrides_.emplace(pair_key(overrides[i].device_b, overrides[i].device_a), i);
    }
}

bool LinkResolver::overridden(std::string_view a, std::string_view b) const {
    return !overrides_.empty() && overrides_.contains(pair_key(a, b));
}

ResolvedLink LinkResolver::between(const DeviceLocation& from, const DeviceLocation& to) const {
    const LinkOverride* o = nullptr;
    if (!overrides_.empty()) {
        if (const auto it = overrides_.find(pair_key(from.path, to.path)); it != overrides_.end()) {
            o = &topology_.link_overrides[it->second];
        }
    }
    return resolve_link(topology_, from, to, o);
}

EffectiveDevice effective_device(const Topology& topology, const DeviceLocation& loc,
                                 const DeviceCatalog& catalog) {
    const Device& device = topology.device_at(loc);
    const DeviceSpec* spec = catalog.find(device.spec);
    if (spec == nullptr) {
        std::string known;
        for (const auto& name : catalog.names()) {
            known += (known.empty() ? "" : ", ") + name;
        }
        throw InputError(loc.path,
                         "unknown device spec \"" + device.spec + "\" (known: " + known + ")");
    }
    EffectiveDevice out{loc.path, *spec};
    if (device.overrides.peak_tflops) {
        for (auto& [dtype, flops] : out.spec.peak_flops) {
            flops = *device.overrides.peak_tflops * 1e12;
        }
        if (out.spec.peak_flops.empty()) {
            out.spec.peak_flops[DType::float32] = *device.overrides.peak_tflops * 1e12;
        }
        if (out.spec.fp8_flops > 0) {
            out.spec.fp8_flops = *device.overrides.peak_tflops * 1e12;
        }
    }
    if (device.overrides.memory_GiB) {
        out.spec.memory_bytes =
            static_cast<std::int64_t>(*device.overrides.memory_GiB * 1024.0 * 1024.0 * 1024.0);
    }
    return out;
}

}  // namespace pipewright

#include "pipewright/core/topology.h"

#include "pipewright/core/diagnostics.h"

namespace pipewright {

double LinkSpec::transfer_seconds(double bytes) const {
    if (bandwidth_GBps <= 0) {
        return latency_us * 1e-6;
    }
    return latency_us * 1e-6 + bytes / (bandwidth_GBps * 1e9);
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
    for (auto& loc : devices()) {
        if (loc.path == path) {
            return loc;
        }
    }
    return std::nullopt;
}

const Device& Topology::device_at(const DeviceLocation& loc) const {
    return nodes.at(static_cast<std::size_t>(loc.node))
        .containers.at(static_cast<std::size_t>(loc.container))
        .devices.at(static_cast<std::size_t>(loc.device));
}

ResolvedLink Topology::link_between(const DeviceLocation& from, const DeviceLocation& to) const {
    if (from.path == to.path) {
        return {LinkClass::same_device, LinkSpec{0, 0}, ""};
    }
    for (const auto& o : link_overrides) {
        if ((o.device_a == from.path && o.device_b == to.path) ||
            (o.device_a == to.path && o.device_b == from.path)) {
            return {LinkClass::override_pair, o.link, from.path + "->" + to.path};
        }
    }
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
    }
    if (device.overrides.memory_GiB) {
        out.spec.memory_bytes =
            static_cast<std::int64_t>(*device.overrides.memory_GiB * 1024.0 * 1024.0 * 1024.0);
    }
    return out;
}

}  // namespace pipewright

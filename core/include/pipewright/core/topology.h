#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pipewright/core/device_catalog.h"

namespace pipewright {

struct LinkSpec {
    double bandwidth_GBps = 0;  // gigabytes (1e9 bytes) per second
    double latency_us = 0;
    // The fraction of `bandwidth_GBps` that transfers and collectives reach.
    // A datasheet's figure is more than a runtime moves: NCCL's own topology
    // model takes 0.8 of NVLink, 0.75 of PCIe and 0.96 of the network
    // (docs/simulator.md); a measured figure is already what a run sees (1).
    double efficiency = 1;

    // Bytes per second that a transfer reaches; 0 when the link is free.
    [[nodiscard]] double achieved_bytes_per_second() const {
        return bandwidth_GBps * efficiency * 1e9;
    }
    // Seconds that `bytes` occupy the link (0 on a free link).
    [[nodiscard]] double wire_seconds(double bytes) const;
    // Seconds to move `bytes` over this link when it is free: the latency
    // and the wire time.
    [[nodiscard]] double transfer_seconds(double bytes) const;

    bool operator==(const LinkSpec&) const = default;
};

// Where two devices sit relative to each other decides the link between them.
enum class LinkClass { same_device, intra_container, intra_node, inter_node, override_pair };

[[nodiscard]] std::string_view to_string(LinkClass c);

// The efficiencies NCCL's topology model assumes (src/graph/topo.h): 20 of
// an A100's 25 GB/s per NVLink (20.6 of an H100's, 40.1 of a B200's 50),
// 12 of a PCIe Gen3 x16's 16 GB/s, 12 of a 100 Gbit/s NIC's 12.5 GB/s.
inline constexpr double kNvlinkEfficiency = 0.8;
inline constexpr double kPcieEfficiency = 0.75;
inline constexpr double kNetworkEfficiency = 0.96;

// Devices of one container share its fastest link (NVLink in a GPU
// server); containers of a node, the host's PCIe; nodes, the network. A
// class link without an `efficiency` takes its transport's.
struct LinkClasses {
    LinkSpec intra_container{300, 5, kNvlinkEfficiency};
    LinkSpec intra_node{32, 10, kPcieEfficiency};
    LinkSpec inter_node{50, 20, kNetworkEfficiency};

    bool operator==(const LinkClasses&) const = default;
};

// A link measured or known between two particular devices.
struct LinkOverride {
    std::string device_a;  // device paths
    std::string device_b;
    LinkSpec link;

    bool operator==(const LinkOverride&) const = default;
};

// Per-device replacements of catalog figures (a down-clocked or MIG device).
struct DeviceOverrides {
    std::optional<double> peak_tflops;  // replaces the spec's FLOP/s for every dtype
    std::optional<double> memory_GiB;

    bool operator==(const DeviceOverrides&) const = default;
};

struct Device {
    std::string name;
    std::string spec;  // name in the device catalog
    DeviceOverrides overrides;

    bool operator==(const Device&) const = default;
};

struct Container {
    std::string name;
    std::vector<Device> devices;

    bool operator==(const Container&) const = default;
};

struct Node {
    std::string name;
    std::vector<Container> containers;

    bool operator==(const Node&) const = default;
};

// A device located in the tree, with its catalog figures resolved.
struct DeviceLocation {
    std::string path;  // "node0/c0/gpu0"
    int node = 0;
    int container = 0;  // index within the node
    int device = 0;     // index within the container
};

// The link between two devices: its figures, how it was chosen, and the
// identity of the shared resource a transfer occupies (one direction of a
// link carries one transfer at a time).
struct ResolvedLink {
    LinkClass link_class = LinkClass::same_device;
    LinkSpec spec;
    std::string resource;  // e.g. "node0->node1" (inter-node) or "node0/c0/gpu0->node0/c0/gpu1"
};

struct Topology {
    LinkClasses links;
    std::vector<LinkOverride> link_overrides;
    std::vector<Node> nodes;

    // Every device, depth first, in file order.
    [[nodiscard]] std::vector<DeviceLocation> devices() const;
    // One lookup walks the tree; to look up many devices use a DeviceLookup.
    [[nodiscard]] std::optional<DeviceLocation> find_device(std::string_view path) const;
    [[nodiscard]] const Device& device_at(const DeviceLocation& loc) const;
    // Link from device `from` to device `to` (directional resource). Scans
    // the overrides; to resolve many links use a LinkResolver.
    [[nodiscard]] ResolvedLink link_between(const DeviceLocation& from,
                                            const DeviceLocation& to) const;

    bool operator==(const Topology&) const = default;
};

// Every device of a topology by path, for code that looks up many of them:
// a scan per lookup makes a pass over N devices O(N²) (issue 18).
class DeviceLookup {
  public:
    explicit DeviceLookup(const Topology& topology);
    // The map holds views into devices_: a copy would point into the original.
    DeviceLookup(const DeviceLookup&) = delete;
    DeviceLookup& operator=(const DeviceLookup&) = delete;
    DeviceLookup(DeviceLookup&&) = default;
    DeviceLookup& operator=(DeviceLookup&&) = default;

    [[nodiscard]] const std::vector<DeviceLocation>& devices() const { return devices_; }
    [[nodiscard]] std::optional<DeviceLocation> find(std::string_view path) const;

  private:
    std::vector<DeviceLocation> devices_;
    std::unordered_map<std::string_view, std::size_t> by_path_;  // views into devices_
};

// Topology::link_between with the overrides in a hash map, for code that
// resolves the links of many device pairs. Keeps a reference to `topology`.
class LinkResolver {
  public:
    explicit LinkResolver(const Topology& topology);

    [[nodiscard]] ResolvedLink between(const DeviceLocation& from, const DeviceLocation& to) const;
    // Whether a link override joins the two devices (either way round).
    [[nodiscard]] bool overridden(std::string_view a, std::string_view b) const;

  private:
    const Topology& topology_;
    std::unordered_map<std::string, std::size_t> overrides_;  // "a\0b" -> first matching override
};

// Catalog figures of a device with its overrides applied.
struct EffectiveDevice {
    std::string path;
    DeviceSpec spec;  // overrides applied
};

// Throws InputError if the spec is unknown.
[[nodiscard]] EffectiveDevice effective_device(const Topology& topology, const DeviceLocation& loc,
                                               const DeviceCatalog& catalog);

}  // namespace pipewright

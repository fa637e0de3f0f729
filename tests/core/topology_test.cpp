#include "pipewright/core/topology.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/diagnostics.h"

namespace pipewright {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// n0: c0 {g0, g1}, c1 {g0}; n1: c0 {g0, g1}.
Topology sample_topology() {
    Topology t;
    t.links.intra_container = {300, 5};
    t.links.intra_node = {32, 10};
    t.links.inter_node = {50, 20};
    t.nodes = {
        Node{"n0",
             {Container{"c0", {Device{"g0", "A100-80GB", {}}, Device{"g1", "H100-SXM", {}}}},
              Container{"c1", {Device{"g0", "L4", {}}}}}},
        Node{"n1", {Container{"c0", {Device{"g0", "A100-40GB", {}}, Device{"g1", "cpu", {}}}}}},
    };
    return t;
}

DeviceLocation at(const Topology& t, const std::string& path) {
    auto loc = t.find_device(path);
    EXPECT_TRUE(loc.has_value()) << path;
    return loc.value_or(DeviceLocation{});
}

ResolvedLink link(const Topology& t, const std::string& from, const std::string& to) {
    return t.link_between(at(t, from), at(t, to));
}

TEST(Topology, DevicesAreListedDepthFirstInFileOrder) {
    const Topology t = sample_topology();
    const auto devices = t.devices();
    ASSERT_EQ(devices.size(), 5U);
    const std::vector<std::string> paths = {"n0/c0/g0", "n0/c0/g1", "n0/c1/g0", "n1/c0/g0",
                                            "n1/c0/g1"};
    for (std::size_t i = 0; i < devices.size(); ++i) {
        EXPECT_EQ(devices[i].path, paths[i]);
    }
    EXPECT_EQ(devices[2].node, 0);
    EXPECT_EQ(devices[2].container, 1);
    EXPECT_EQ(devices[2].device, 0);
    EXPECT_EQ(devices[4].node, 1);
    EXPECT_EQ(devices[4].container, 0);
    EXPECT_EQ(devices[4].device, 1);
    EXPECT_TRUE(Topology{}.devices().empty());
}

TEST(Topology, FindDeviceByPath) {
    const Topology t = sample_topology();
    const auto loc = t.find_device("n1/c0/g1");
    ASSERT_TRUE(loc.has_value());
    EXPECT_EQ(loc->path, "n1/c0/g1");
    EXPECT_EQ(loc->node, 1);
    EXPECT_EQ(loc->container, 0);
    EXPECT_EQ(loc->device, 1);
    EXPECT_EQ(t.device_at(*loc).spec, "cpu");
    EXPECT_EQ(t.device_at(at(t, "n0/c1/g0")).spec, "L4");
    EXPECT_FALSE(t.find_device("n1/c0/g2").has_value());
    EXPECT_FALSE(t.find_device("n1/c0").has_value());
    EXPECT_FALSE(t.find_device("n1/c0/g1/").has_value());
    EXPECT_FALSE(t.find_device("").has_value());
}

TEST(Topology, SameDeviceNeedsNoTransfer) {
    const Topology t = sample_topology();
    const ResolvedLink l = link(t, "n0/c0/g1", "n0/c0/g1");
    EXPECT_EQ(l.link_class, LinkClass::same_device);
    EXPECT_EQ(l.resource, "");
    EXPECT_EQ(l.spec.transfer_seconds(1e6), 0.0);
}

TEST(Topology, IntraContainerLinkIsPerDevicePairAndDirection) {
    const Topology t = sample_topology();
    const ResolvedLink ab = link(t, "n0/c0/g0", "n0/c0/g1");
    const ResolvedLink ba = link(t, "n0/c0/g1", "n0/c0/g0");
    EXPECT_EQ(ab.link_class, LinkClass::intra_container);
    EXPECT_EQ(ab.spec, (LinkSpec{300, 5}));
    EXPECT_EQ(ab.resource, "n0/c0/g0->n0/c0/g1");
    EXPECT_EQ(ba.link_class, LinkClass::intra_container);
    EXPECT_EQ(ba.resource, "n0/c0/g1->n0/c0/g0");
    EXPECT_NE(ab.resource, ba.resource);
}

TEST(Topology, IntraNodeLinkIsSharedByTheContainer) {
    const Topology t = sample_topology();
    const ResolvedLink a = link(t, "n0/c0/g0", "n0/c1/g0");
    const ResolvedLink b = link(t, "n0/c0/g1", "n0/c1/g0");
    const ResolvedLink back = link(t, "n0/c1/g0", "n0/c0/g0");
    EXPECT_EQ(a.link_class, LinkClass::intra_node);
    EXPECT_EQ(a.spec, (LinkSpec{32, 10}));
    EXPECT_EQ(a.resource, "n0/c0->n0/c1");
    EXPECT_EQ(b.resource, a.resource);
    EXPECT_EQ(back.link_class, LinkClass::intra_node);
    EXPECT_EQ(back.resource, "n0/c1->n0/c0");
}

TEST(Topology, InterNodeLinkIsSharedByTheWholeNode) {
    const Topology t = sample_topology();
    for (const char* from : {"n0/c0/g0", "n0/c0/g1", "n0/c1/g0"}) {
        for (const char* to : {"n1/c0/g0", "n1/c0/g1"}) {
            SCOPED_TRACE(std::string(from) + " -> " + to);
            const ResolvedLink there = link(t, from, to);
            EXPECT_EQ(there.link_class, LinkClass::inter_node);
            EXPECT_EQ(there.spec, (LinkSpec{50, 20}));
            EXPECT_EQ(there.resource, "n0->n1");
            const ResolvedLink back = link(t, to, from);
            EXPECT_EQ(back.link_class, LinkClass::inter_node);
            EXPECT_EQ(back.resource, "n1->n0");
        }
    }
}

TEST(Topology, LinkOverrideAppliesInBothOrders) {
    Topology t = sample_topology();
    t.link_overrides = {LinkOverride{"n0/c0/g0", "n1/c0/g0", {25, 8}}};
    const ResolvedLink there = link(t, "n0/c0/g0", "n1/c0/g0");
    const ResolvedLink back = link(t, "n1/c0/g0", "n0/c0/g0");
    EXPECT_EQ(there.link_class, LinkClass::override_pair);
    EXPECT_EQ(there.spec, (LinkSpec{25, 8}));
    EXPECT_EQ(there.resource, "n0/c0/g0->n1/c0/g0");
    EXPECT_EQ(back.link_class, LinkClass::override_pair);
    EXPECT_EQ(back.spec, (LinkSpec{25, 8}));
    EXPECT_EQ(back.resource, "n1/c0/g0->n0/c0/g0");
    // Other pairs across the same nodes keep the shared network link.
    const ResolvedLink other = link(t, "n0/c0/g1", "n1/c0/g0");
    EXPECT_EQ(other.link_class, LinkClass::inter_node);
    EXPECT_EQ(other.resource, "n0->n1");
}

TEST(Topology, LinkOverrideWinsInsideAContainer) {
    Topology t = sample_topology();
    t.link_overrides = {LinkOverride{"n0/c0/g1", "n0/c0/g0", {900, 1}}};
    const ResolvedLink l = link(t, "n0/c0/g0", "n0/c0/g1");
    EXPECT_EQ(l.link_class, LinkClass::override_pair);
    EXPECT_EQ(l.spec, (LinkSpec{900, 1}));
    EXPECT_EQ(link(t, "n0/c0/g0", "n0/c0/g0").link_class, LinkClass::same_device);
}

TEST(Topology, LinkFiguresComeFromTheTopology) {
    Topology t = sample_topology();
    t.links.intra_node = {7, 70};
    t.links.inter_node = {3, 300};
    EXPECT_EQ(link(t, "n0/c0/g0", "n0/c1/g0").spec, (LinkSpec{7, 70}));
    EXPECT_EQ(link(t, "n0/c0/g0", "n1/c0/g1").spec, (LinkSpec{3, 300}));
}

TEST(Topology, LinkClassDefaultsAndNames) {
    const LinkClasses defaults;
    EXPECT_EQ(defaults.intra_container, (LinkSpec{300, 5, 0.8}));
    EXPECT_EQ(defaults.intra_node, (LinkSpec{32, 10, 0.75}));
    EXPECT_EQ(defaults.inter_node, (LinkSpec{50, 20, 0.96}));
    EXPECT_EQ(to_string(LinkClass::same_device), "same device");
    EXPECT_EQ(to_string(LinkClass::intra_container), "intra-container");
    EXPECT_EQ(to_string(LinkClass::intra_node), "intra-node");
    EXPECT_EQ(to_string(LinkClass::inter_node), "inter-node");
    EXPECT_EQ(to_string(LinkClass::override_pair), "override");
}

TEST(Topology, TransferSecondsIsLatencyPlusBytesOverBandwidth) {
    const LinkSpec l{50, 20};
    EXPECT_DOUBLE_EQ(l.transfer_seconds(0), 20e-6);
    EXPECT_DOUBLE_EQ(l.transfer_seconds(1e9), 20e-6 + 0.02);
    EXPECT_DOUBLE_EQ(l.transfer_seconds(5e6), 20e-6 + 1e-4);
    // GB means 10^9 bytes, not 2^30.
    EXPECT_DOUBLE_EQ((LinkSpec{1, 0}.transfer_seconds(1e9)), 1.0);
    EXPECT_DOUBLE_EQ((LinkSpec{1, 0}.transfer_seconds(kGiB)), kGiB / 1e9);
}

TEST(Topology, AWireRunsAtTheBandwidthItsEfficiencyReaches) {
    const LinkSpec nvlink{300, 5, 0.8};
    EXPECT_DOUBLE_EQ(nvlink.achieved_bytes_per_second(), 240e9);
    EXPECT_DOUBLE_EQ(nvlink.wire_seconds(240e6), 1e-3);
    EXPECT_DOUBLE_EQ(nvlink.transfer_seconds(240e6), 5e-6 + 1e-3);
    // An unknown bandwidth (0) moves bytes for free, whatever the efficiency.
    EXPECT_EQ((LinkSpec{0, 5, 0.5}.wire_seconds(1e9)), 0);
}

TEST(Topology, EffectiveDeviceAppliesOverrides) {
    Topology t = sample_topology();
    {
        // Without overrides: the catalog spec as is.
        const EffectiveDevice plain =
            effective_device(t, at(t, "n0/c0/g1"), DeviceCatalog::builtin());
        EXPECT_EQ(plain.path, "n0/c0/g1");
        ASSERT_NE(DeviceCatalog::builtin().find("H100-SXM"), nullptr);
        EXPECT_EQ(plain.spec, *DeviceCatalog::builtin().find("H100-SXM"));
    }
    Device& d = t.nodes[0].containers[0].devices[0];  // A100-80GB
    d.overrides.peak_tflops = 100.0;
    d.overrides.memory_GiB = 10.0;
    const DeviceCatalog& catalog = DeviceCatalog::builtin();
    const EffectiveDevice e = effective_device(t, at(t, "n0/c0/g0"), catalog);
    EXPECT_EQ(e.spec.name, "A100-80GB");
    EXPECT_EQ(e.spec.memory_bytes, static_cast<std::int64_t>(10 * kGiB));
    for (const DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
        EXPECT_DOUBLE_EQ(e.spec.flops_for(dtype), 100e12);
    }
    EXPECT_EQ(e.spec.memory_bandwidth_GBps, catalog.find("A100-80GB")->memory_bandwidth_GBps);

    // Only the overridden figure changes.
    Topology memory_only = sample_topology();
    memory_only.nodes[0].containers[0].devices[0].overrides.memory_GiB = 2.5;
    const EffectiveDevice m = effective_device(memory_only, at(memory_only, "n0/c0/g0"), catalog);
    EXPECT_EQ(m.spec.memory_bytes, static_cast<std::int64_t>(2.5 * kGiB));
    EXPECT_DOUBLE_EQ(m.spec.flops_for(DType::bfloat16), 312e12);
}

TEST(Topology, EffectiveDeviceWithAnUnknownSpecThrows) {
    Topology t = sample_topology();
    t.nodes[1].containers[0].devices[1].spec = "TPU-v9";
    try {
        (void)effective_device(t, at(t, "n1/c0/g1"), DeviceCatalog::builtin());
        ADD_FAILURE() << "no InputError";
    } catch (const InputError& e) {
        ASSERT_EQ(e.diagnostics().size(), 1U);
        const Diagnostic& d = e.diagnostics().items()[0];
        EXPECT_EQ(d.path, "n1/c0/g1");
        EXPECT_NE(d.message.find("\"TPU-v9\""), std::string::npos) << d.message;
        for (const char* known : {"A100-80GB", "H100-SXM", "cpu"}) {
            EXPECT_NE(d.message.find(known), std::string::npos) << d.message;
        }
    }
}

TEST(Topology, DeviceLookupFindsWhatFindDeviceFinds) {
    const Topology t = sample_topology();
    const DeviceLookup lookup(t);
    ASSERT_EQ(lookup.devices().size(), t.devices().size());
    for (const auto& loc : t.devices()) {
        const auto found = lookup.find(loc.path);
        ASSERT_TRUE(found.has_value()) << loc.path;
        EXPECT_EQ(found->path, loc.path);
        EXPECT_EQ(found->node, loc.node);
        EXPECT_EQ(found->container, loc.container);
        EXPECT_EQ(found->device, loc.device);
    }
    for (const std::string missing :
         {"", "n0", "n0/c0", "n0/c0/g2", "n0/c0/g0/", "n2/c0/g0", "n0/c1/g1", "/n0/c0/g0"}) {
        EXPECT_FALSE(lookup.find(missing).has_value()) << missing;
        EXPECT_FALSE(t.find_device(missing).has_value()) << missing;
    }
}

TEST(Topology, LinkResolverAgreesWithLinkBetweenOnEveryPair) {
    Topology t = sample_topology();
    // The first override of a pair wins, in either order.
    t.link_overrides = {{"n0/c0/g0", "n1/c0/g1", {7, 1}},
                        {"n1/c0/g1", "n0/c0/g0", {8, 2}},
                        {"n0/c1/g0", "n0/c0/g1", {9, 3}}};
    const LinkResolver resolver(t);
    const auto devices = t.devices();
    for (const auto& a : devices) {
        for (const auto& b : devices) {
            const ResolvedLink expected = t.link_between(a, b);
            const ResolvedLink got = resolver.between(a, b);
            EXPECT_EQ(got.link_class, expected.link_class) << a.path << " -> " << b.path;
            EXPECT_EQ(got.spec, expected.spec) << a.path << " -> " << b.path;
            EXPECT_EQ(got.resource, expected.resource) << a.path << " -> " << b.path;
        }
    }
    EXPECT_EQ(resolver.between(at(t, "n1/c0/g1"), at(t, "n0/c0/g0")).spec, (LinkSpec{7, 1}));
    EXPECT_TRUE(resolver.overridden("n0/c0/g1", "n0/c1/g0"));
    EXPECT_FALSE(resolver.overridden("n0/c0/g0", "n0/c0/g1"));
}

}  // namespace
}  // namespace pipewright

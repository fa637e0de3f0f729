#include "pipewright/sim/collective_cost.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/topology.h"

namespace pipewright {
namespace {

// Eight GPUs on one switch: 100 GB/s links of 5 µs that reach 0.8.
CollectiveGroup nccl_group(int members = 8) {
    CollectiveGroup g;
    g.library = CollectiveLibrary::nccl;
    g.members = members;
    g.ring = LinkSpec{100, 5, 0.8};
    return g;
}

// NCCL's launch latencies and protocol factors (docs/simulator.md).
TEST(NcclCollectives, ATinyAllReduceCostsTheLowLatencyProtocolsLaunchAndSteps) {
    const CollectiveTime t = collective_time(CollectiveKind::all_reduce, 8, nccl_group());
    // A tree of depth 3 up and down, LL: 6.8 µs to launch, a fifth of the
    // link's 5 µs per step, half of the 80 GB/s it reaches.
    EXPECT_EQ(t.algorithm, CollectiveAlgorithm::tree);
    EXPECT_EQ(t.protocol, CollectiveProtocol::ll);
    EXPECT_NEAR(t.seconds, 6.8e-6 + 6 * 0.2 * 5e-6 + 2 * 8 / 40e9, 1e-12);
}

TEST(NcclCollectives, ALargeAllReduceRunsTheSimpleRingAtTheBandwidthTheLinkReaches) {
    const double bytes = 4e9;
    const CollectiveTime t = collective_time(CollectiveKind::all_reduce, bytes, nccl_group());
    EXPECT_EQ(t.algorithm, CollectiveAlgorithm::ring);
    EXPECT_EQ(t.protocol, CollectiveProtocol::simple);
    EXPECT_NEAR(t.seconds, 8.4e-6 + 14 * 5e-6 + 2.0 * 7 / 8 * bytes / 80e9, 1e-12);
    // nccl-tests' bus bandwidth: within 1 % of the 80 GB/s reached.
    const double bus_GBps = 2.0 * 7 / 8 * bytes / t.seconds / 1e9;
    EXPECT_GT(bus_GBps, 79.2);
    EXPECT_LT(bus_GBps, 80);
}

// As the size grows the protocol moves from LL to LL128 to Simple, never
// back, and the time never falls.
TEST(NcclCollectives, ProtocolsFollowTheMessageSizeAndTimeGrowsWithIt) {
    const CollectiveGroup g = nccl_group();
    std::vector<CollectiveProtocol> seen;
    double previous = 0;
    for (double bytes = 8; bytes <= 8e9; bytes *= 2) {
        const CollectiveTime t = collective_time(CollectiveKind::all_reduce, bytes, g);
        EXPECT_GE(t.seconds, previous) << bytes;
        previous = t.seconds;
        if (seen.empty() || seen.back() != t.protocol) {
            seen.push_back(t.protocol);
        }
    }
    EXPECT_EQ(seen,
              (std::vector<CollectiveProtocol>{CollectiveProtocol::ll, CollectiveProtocol::ll128,
                                               CollectiveProtocol::simple}));
}

// NCCL is never faster than the plain formula on the link it reaches once
// it has launched, and Gloo is the plain formula (the link as it is).
TEST(NcclCollectives, GlooIsThePlainRingAndNcclPaysItsLaunch) {
    CollectiveGroup gloo = nccl_group();
    gloo.library = CollectiveLibrary::gloo;
    for (double bytes : {1e3, 1e6, 1e9}) {
        const CollectiveTime plain = collective_time(CollectiveKind::reduce_scatter, bytes, gloo);
        EXPECT_EQ(plain.protocol, CollectiveProtocol::simple);
        EXPECT_NEAR(plain.seconds, 7 * 5e-6 + 7.0 / 8 * bytes / 80e9, 1e-12) << bytes;
        const CollectiveTime nccl =
            collective_time(CollectiveKind::reduce_scatter, bytes, nccl_group());
        EXPECT_GT(nccl.seconds, 6.6e-6) << bytes;
    }
}

// A measured ring link was fitted to the plain formula: no protocol, no
// launch, whatever carries it.
TEST(NcclCollectives, AMeasuredRingIsPricedByTheFormulaItWasFittedTo) {
    const CollectiveGroup g = with_measured_ring(nccl_group(), LinkSpec{50, 10});
    const CollectiveTime t = collective_time(CollectiveKind::all_reduce, 1e6, g);
    EXPECT_EQ(t.protocol, CollectiveProtocol::simple);
    EXPECT_NEAR(t.seconds, 2 * (7 * 10e-6 + 7.0 / 8 * 1e6 / 50e9), 1e-12);
}

// Each level of a hierarchical all-reduce runs at the bandwidth its link
// reaches: NVLink's 0.8 inside the nodes, the network's 0.96 between them.
TEST(NcclCollectives, AGroupsLinksReachTheirLevelsEfficiency) {
    Topology t;
    for (int n = 0; n < 2; ++n) {
        Node node{"n" + std::to_string(n), {Container{"c0", {}}}};
        for (int g = 0; g < 4; ++g) {
            node.containers[0].devices.push_back(Device{"g" + std::to_string(g), "A100-80GB", {}});
        }
        t.nodes.push_back(node);
    }
    t.links.inter_node = {25, 10, kNetworkEfficiency};
    const LinkResolver links(t);
    const std::vector<DeviceLocation> members = t.devices();
    const DeviceSpec* a100 = DeviceCatalog::builtin().find("A100-80GB");
    ASSERT_NE(a100, nullptr);
    const CollectiveGroup g = collective_group(members, links, collective_library(*a100));
    EXPECT_EQ(g.library, CollectiveLibrary::nccl);
    EXPECT_DOUBLE_EQ(g.intra.bandwidth_GBps, 300 * kNvlinkEfficiency);
    EXPECT_DOUBLE_EQ(g.inter.bandwidth_GBps, 25 * kNetworkEfficiency);
    EXPECT_DOUBLE_EQ(g.ring.bandwidth_GBps, 25 * kNetworkEfficiency);  // the slowest hop
    EXPECT_EQ(g.nodes, 2);
    EXPECT_EQ(g.per_node, 4);

    const double bytes = 1e9;
    const CollectiveTime two_level = collective_time(CollectiveKind::all_reduce, bytes, g);
    EXPECT_EQ(two_level.algorithm, CollectiveAlgorithm::hierarchical);
    const double within = 2 * (3 * 5e-6 + 3.0 / 4 * bytes / 240e9);
    const double across = 2 * (1 * 10e-6 + 1.0 / 2 * bytes / 24e9);
    EXPECT_NEAR(two_level.seconds, 8.4e-6 + within + across, 1e-12);

    const DeviceSpec* cpu = DeviceCatalog::builtin().find("cpu");
    ASSERT_NE(cpu, nullptr);
    EXPECT_EQ(collective_library(*cpu), CollectiveLibrary::gloo);
}

}  // namespace
}  // namespace pipewright

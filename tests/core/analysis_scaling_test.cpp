// Issue 18: `validate` of 10⁵ devices did not finish in a minute, because
// every stage looked its device up by walking (and copying) every device
// path. With the lookup in a hash map this analysis takes well under a
// second; a scan per stage again would be 10¹⁰ string copies and run into
// the test timeout long before it finished.

#include <gtest/gtest.h>

#include <string>

#include "pipewright/core/analysis.h"

namespace pipewright {
namespace {

// N devices in nodes of 8, one linear layer per device, stage i on device i.
Project wide_project(int devices) {
    Project p;
    p.model.name = "wide";
    p.model.input.shape = {16};
    for (int n = 0; n * 8 < devices; ++n) {
        Node node{"node" + std::to_string(n), {Container{"c0", {}}}};
        for (int g = 0; g < 8 && n * 8 + g < devices; ++g) {
            node.containers[0].devices.push_back(
                Device{"gpu" + std::to_string(g), "A100-80GB", {}});
            const std::string layer = "l" + std::to_string(n * 8 + g);
            p.model.layers.push_back(
                {layer, "linear", {{"in_features", 16}, {"out_features", 16}}, {}, {}});
            p.placement.push_back({node.name + "/c0/gpu" + std::to_string(g), {layer}});
        }
        p.topology.nodes.push_back(std::move(node));
    }
    // An override between the last two devices: looked up by path too.
    p.topology.link_overrides.push_back({p.placement[static_cast<std::size_t>(devices - 2)].device,
                                         p.placement[static_cast<std::size_t>(devices - 1)].device,
                                         LinkSpec{10, 1}});
    p.training.batch_size = 4;
    p.training.microbatches = 1;
    p.training.schedule = ScheduleChoice{"gpipe", ""};
    return p;
}

TEST(AnalysisScaling, HundredThousandDevicesAnalyzeInOnePass) {
    constexpr int kDevices = 100'000;
    Diagnostics d;
    const auto analyzed = analyze_project(wide_project(kDevices), {}, d);
    ASSERT_TRUE(analyzed.has_value()) << d.format();
    EXPECT_EQ(analyzed->num_ranks(), kDevices);
    EXPECT_EQ(analyzed->stages.back().rank, kDevices - 1);
    EXPECT_EQ(analyzed->ranks.back().path, "node12499/c0/gpu7");
}

TEST(AnalysisScaling, AnUnknownDeviceIsStillNamedWithSomeKnownOnes) {
    Project p = wide_project(100);
    p.placement[50].device = "node9/c0/gpu9";
    p.topology.link_overrides[0].device_a = "nowhere/c0/gpu0";
    Diagnostics d;
    EXPECT_FALSE(analyze_project(p, {}, d).has_value());
    EXPECT_TRUE(d.mentions("placement[50].device")) << d.format();
    EXPECT_TRUE(d.mentions("topology.link_overrides[0].between")) << d.format();
    EXPECT_NE(
        d.format().find("no device \"node9/c0/gpu9\" in the topology (devices: node0/c0/gpu0"),
        std::string::npos)
        << d.format();
}

}  // namespace
}  // namespace pipewright

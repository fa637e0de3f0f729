#include "studio_core/canvas/device_search.h"

#include <gtest/gtest.h>

#include "pipewright/core/project_io.h"

namespace pipewright::gui {
namespace {

Project load(const std::string& name) {
    auto loaded = load_project_file(std::string(PIPEWRIGHT_ASSETS_DIR) + "/examples/" + name);
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

using Paths = std::vector<std::string>;

TEST(DeviceSearch, AFullPathFindsThatDeviceAlone) {
    const Project p = load("gpt3-175b-p4d.json");
    EXPECT_EQ(find_devices(p, "node4/c0/gpu7").paths, Paths{"node4/c0/gpu7"});
    // Case is ignored, as in the timeline's lane filter.
    EXPECT_EQ(find_devices(p, "NODE4/C0/GPU7").paths, Paths{"node4/c0/gpu7"});
}

TEST(DeviceSearch, PartOfAPathFindsEveryDeviceThatHasItInTopologyOrder) {
    const Project p = load("seven-layers-two-nodes.json");
    EXPECT_EQ(find_devices(p, "gpu0").paths,
              (Paths{"node0/c0/gpu0", "node1/c0/gpu0", "node1/c1/gpu0"}));
    EXPECT_EQ(find_devices(p, "node1/").paths, (Paths{"node1/c0/gpu0", "node1/c1/gpu0"}));
    // Several terms: a device matching any of them, once.
    EXPECT_EQ(find_devices(p, "c1/ gpu1, node1/c1").paths,
              (Paths{"node0/c0/gpu1", "node1/c1/gpu0"}));
}

TEST(DeviceSearch, DigitsAreAPipelineRank) {
    const Project p = load("seven-layers-two-nodes.json");
    ASSERT_EQ(rank_devices(p),
              (Paths{"node0/c0/gpu0", "node0/c0/gpu1", "node1/c0/gpu0", "node1/c1/gpu0"}));
    EXPECT_EQ(find_devices(p, "2").paths, Paths{"node1/c0/gpu0"});
    EXPECT_EQ(find_devices(p, "1-2").paths, (Paths{"node0/c0/gpu1", "node1/c0/gpu0"}));
    EXPECT_TRUE(find_devices(p, "9").paths.empty());
}

TEST(DeviceSearch, RanksFollowThePlacementNotTheTopology) {
    Project p = load("seven-layers-two-nodes.json");
    std::swap(p.placement[0].device, p.placement[3].device);
    EXPECT_EQ(find_devices(p, "0").paths, Paths{"node1/c1/gpu0"});
    EXPECT_EQ(find_devices(p, "3").paths, Paths{"node0/c0/gpu0"});
}

TEST(DeviceSearch, AnIdleDeviceHasNoRankButIsFoundByName) {
    Project p = load("seven-layers-two-nodes.json");
    p.topology.nodes[1].containers[1].devices.push_back({"spare", "A100-40GB", {}});
    EXPECT_EQ(find_devices(p, "spare").paths, Paths{"node1/c1/spare"});
    EXPECT_EQ(find_devices(p, "4-").paths, Paths{});
}

TEST(DeviceSearch, NothingOrNonsenseFindsNothingAndSaysWhy) {
    const Project p = load("seven-layers-two-nodes.json");
    EXPECT_TRUE(find_devices(p, "").paths.empty());
    EXPECT_TRUE(find_devices(p, "  ").paths.empty());
    EXPECT_TRUE(find_devices(p, "tpu").paths.empty());
    const DeviceMatches backwards = find_devices(p, "3-1");
    EXPECT_TRUE(backwards.paths.empty());
    EXPECT_NE(backwards.error.find("3-1"), std::string::npos) << backwards.error;
}

}  // namespace
}  // namespace pipewright::gui

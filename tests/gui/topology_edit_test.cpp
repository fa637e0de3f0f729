#include "studio_core/project/topology_edit.h"

#include <gtest/gtest.h>

#include "pipewright/core/project_io.h"

namespace pipewright::gui {
namespace {

Project resnet() {
    auto loaded = load_project_file(std::string(PIPEWRIGHT_ASSETS_DIR) +
                                    "/examples/resnet50-2gpu-pipelined.json");
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

constexpr const char* kGpu0 = "node0/c0/gpu0";
constexpr const char* kGpu1 = "node0/c0/gpu1";

TEST(TopologyEdit, RenamingANodeMovesThePlacementAndTheLinks) {
    Project p = resnet();
    p = *set_link_override(p, kGpu0, kGpu1, {100, 3}).project;
    const auto result = rename_node(p, 0, "alpha");
    ASSERT_TRUE(result.project) << result.refusal;
    EXPECT_EQ(result.project->placement[0].device, "alpha/c0/gpu0");
    EXPECT_EQ(result.project->topology.link_overrides[0].device_b, "alpha/c0/gpu1");
    EXPECT_TRUE(result.project->topology.find_device("alpha/c0/gpu1"));
}

TEST(TopologyEdit, RenamingAContainerMovesThePlacement) {
    const auto result = rename_container(resnet(), 0, 0, "box");
    ASSERT_TRUE(result.project) << result.refusal;
    EXPECT_EQ(result.project->placement[1].device, "node0/box/gpu1");
}

TEST(TopologyEdit, BadNamesAreRefused) {
    Project p = resnet();
    p = add_node(p);
    EXPECT_FALSE(rename_node(p, 1, "node0").project);
    EXPECT_FALSE(rename_node(p, 1, "a/b").project);
    EXPECT_FALSE(rename_container(p, 0, 0, "").project);
    EXPECT_FALSE(rename_node(p, 7, "x").project);
}

TEST(TopologyEdit, RemovingAContainerForgetsItsStages) {
    Project p = resnet();
    p = add_node(p);
    p = add_container(p, 1);
    p = add_device(p, 1, 0, "A100-40GB");
    const std::string other = "node1/c0/gpu0";
    p = *set_link_override(p, kGpu0, other, {10, 1}).project;
    const Project removed = remove_container(p, 0, 0);
    EXPECT_TRUE(removed.placement.empty());
    EXPECT_TRUE(removed.topology.link_overrides.empty());
    EXPECT_TRUE(removed.topology.nodes[0].containers.empty());
    const Project gone = remove_node(p, 1);
    EXPECT_EQ(gone.topology.nodes.size(), 1u);
    EXPECT_TRUE(gone.topology.link_overrides.empty());
    EXPECT_EQ(gone.placement, p.placement);
}

TEST(TopologyEdit, ALinkOverrideIsOnePerPairInEitherOrder) {
    const Project p = resnet();
    Project a = *set_link_override(p, kGpu0, kGpu1, {100, 3}).project;
    a = *set_link_override(a, kGpu1, kGpu0, {50, 4}).project;
    ASSERT_EQ(a.topology.link_overrides.size(), 1u);
    EXPECT_EQ(a.topology.link_overrides[0].link, (LinkSpec{50, 4}));
    const auto l0 = *a.topology.find_device(kGpu0);
    const auto l1 = *a.topology.find_device(kGpu1);
    EXPECT_EQ(a.topology.link_between(l0, l1).link_class, LinkClass::override_pair);
    EXPECT_EQ(remove_link_override(a, kGpu1, kGpu0), p);
    EXPECT_FALSE(set_link_override(p, kGpu0, kGpu0, {1, 1}).project);
    EXPECT_FALSE(set_link_override(p, kGpu0, "node9/c0/gpu0", {1, 1}).project);
    EXPECT_FALSE(set_link_override(p, kGpu0, kGpu1, {0, 1}).project);
}

TEST(TopologyEdit, FindsNodesAndContainersByName) {
    const Project p = resnet();
    EXPECT_EQ(find_node(p, "node0"), 0);
    EXPECT_EQ(find_node(p, "nodeX"), -1);
    EXPECT_EQ(find_container(p, "node0/c0"), std::make_pair(0, 0));
    EXPECT_EQ(find_container(p, "node0/c9"), std::make_pair(-1, -1));
}

}  // namespace
}  // namespace pipewright::gui

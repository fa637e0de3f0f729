// Groups that run the same collective at once share the links they cross:
// a node's network interface carries every data-parallel ring of the
// node's tensor-parallel devices, not one of them alone.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/topology.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/simulation.h"
#include "sim_test_support.h"

namespace pipewright {
namespace {

using nlohmann::json;

constexpr double kNetworkGBps = 40;
constexpr double kLatencyUs = 10;

// `nodes` nodes of one container of `per_node` GPUs; NVLink inside, a
// network link between nodes, both as measured (efficiency 1).
Topology cluster(int nodes, int per_node) {
    Topology t;
    for (int n = 0; n < nodes; ++n) {
        Node node{"node" + std::to_string(n), {Container{"c0", {}}}};
        for (int g = 0; g < per_node; ++g) {
            node.containers[0].devices.push_back(
                Device{"gpu" + std::to_string(g), "A100-80GB", {}});
        }
        t.nodes.push_back(node);
    }
    t.links.intra_container = {300, 5, 1};
    t.links.inter_node = {kNetworkGBps, kLatencyUs, 1};
    return t;
}

// The device of GPU `g` on node `n`.
DeviceLocation at(const Topology& t, int n, int g) {
    for (const DeviceLocation& d : t.devices()) {
        if (d.node == n && d.device == g) {
            return d;
        }
    }
    throw std::logic_error("no such device");
}

TEST(LinkSharing, RingsThatCrossOneNodeLinkEachGetTheirShare) {
    const Topology t = cluster(2, 4);
    const LinkResolver links(t);
    // One ring per GPU position, each from node 0 to node 1 and back: four
    // rings through the same network interface.
    std::vector<std::vector<DeviceLocation>> rings;
    for (int g = 0; g < 4; ++g) {
        rings.push_back({at(t, 0, g), at(t, 1, g)});
    }
    const LinkSharing sharing(rings, links);
    EXPECT_EQ(sharing.groups_over(links.between(at(t, 0, 0), at(t, 1, 0)).resource), 4);
    EXPECT_EQ(sharing.groups_over(links.between(at(t, 1, 0), at(t, 0, 0)).resource), 4);
    const CollectiveGroup shared =
        collective_group(rings.front(), links, CollectiveLibrary::nccl, &sharing);
    EXPECT_DOUBLE_EQ(shared.ring.bandwidth_GBps, kNetworkGBps / 4);
    EXPECT_DOUBLE_EQ(shared.ring.latency_us, kLatencyUs);  // waits no longer per step
    // Alone, a ring has the whole link.
    const CollectiveGroup alone = collective_group(rings.front(), links, CollectiveLibrary::nccl);
    EXPECT_DOUBLE_EQ(alone.ring.bandwidth_GBps, kNetworkGBps);

    // Pairs inside a node have their own NVLink: nothing is shared.
    std::vector<std::vector<DeviceLocation>> pairs{{at(t, 0, 0), at(t, 0, 1)},
                                                   {at(t, 0, 2), at(t, 0, 3)}};
    const LinkSharing inside(pairs, links);
    EXPECT_DOUBLE_EQ(collective_group(pairs.front(), links, CollectiveLibrary::nccl, &inside)
                         .ring.bandwidth_GBps,
                     300);
}

TEST(LinkSharing, AHierarchicalGroupSharesTheLinkBetweenNodesToo) {
    const Topology t = cluster(2, 4);
    const LinkResolver links(t);
    // Two groups of two GPUs a node: the hierarchical algorithm's step
    // between the nodes runs for both at once.
    std::vector<std::vector<DeviceLocation>> groups{
        {at(t, 0, 0), at(t, 0, 1), at(t, 1, 0), at(t, 1, 1)},
        {at(t, 0, 2), at(t, 0, 3), at(t, 1, 2), at(t, 1, 3)}};
    const LinkSharing sharing(groups, links);
    const CollectiveGroup g =
        collective_group(groups.front(), links, CollectiveLibrary::nccl, &sharing);
    EXPECT_EQ(g.per_node, 2);
    EXPECT_DOUBLE_EQ(g.inter.bandwidth_GBps, kNetworkGBps / 2);
    EXPECT_DOUBLE_EQ(g.intra.bandwidth_GBps, 300);
    EXPECT_DOUBLE_EQ(g.ring.bandwidth_GBps, kNetworkGBps / 2);
}

// Two nodes of one container of `per_node` GPUs of `spec`, as a project's
// topology.nodes.
json two_nodes_json(int per_node, const std::string& spec) {
    json nodes = json::array();
    for (int n = 0; n < 2; ++n) {
        json gpus = json::array();
        for (int g = 0; g < per_node; ++g) {
            gpus.push_back({{"name", "gpu" + std::to_string(g)}, {"spec", spec}});
        }
        nodes.push_back({{"name", "node" + std::to_string(n)},
                         {"containers", json::array({{{"name", "c0"}, {"devices", gpus}}})}});
    }
    return nodes;
}

// The topology of `nodes`: NVLink inside them, the network between, both
// as measured.
json two_node_topology(const json& nodes) {
    return {{"links",
             {{"intra_container", {{"bandwidth_GBps", 300}, {"latency_us", 5}, {"efficiency", 1}}},
              {"inter_node",
               {{"bandwidth_GBps", kNetworkGBps}, {"latency_us", kLatencyUs}, {"efficiency", 1}}}}},
            {"nodes", nodes}};
}

// Two linear layers (a column- and a row-parallel half) in one stage on
// node0's first GPU, tensor parallel over `tensor` GPUs, and 2 replicas:
// the second on node 1, so each stage's rings cross the network.
json two_node_project(int tensor) {
    json layers = json::array();
    for (int i = 0; i < 2; ++i) {
        layers.push_back(
            {{"name", "fc" + std::to_string(i)},
             {"type", "linear"},
             {"in_features", 1024},
             {"out_features", 1024},
             {"cost",
              {{"forward_ms", 1.0}, {"backward_input_ms", 1.0}, {"backward_weight_ms", 1.0}}}});
    }
    const json nodes = two_nodes_json(4, "A100-80GB");
    return {{"format", "pipewright-project"},
            {"version", 1},
            {"model",
             {{"name", "two-linear"},
              {"input", {{"shape", {1024}}, {"dtype", "float32"}}},
              {"loss", "mse"},
              {"layers", layers}}},
            {"topology", two_node_topology(nodes)},
            {"placement", json::array({{{"device", "node0/c0/gpu0"}, {"layers", {"fc0", "fc1"}}}})},
            {"training",
             {{"batch_size", 16},
              {"microbatches", 4},
              {"schedule", "1f1b"},
              {"optimizer", {{"type", "adam"}}}}},
            {"tensor_parallel", {{"size", tensor}}},
            {"data_parallel",
             {{"size", 2},
              {"replicas", json::array({json::array({"node1/c0/gpu0"})})},
              {"overlap_gradient_sync", false}}}};
}

TEST(LinkSharing, EachTensorParallelDevicesRingGetsItsShareOfTheNodesNetwork) {
    for (const int tensor : {1, 2, 4}) {
        Diagnostics d;
        const auto project = project_from_json(two_node_project(tensor), d);
        ASSERT_TRUE(project) << d.format();
        const auto analyzed = analyze_project(*project, {}, d);
        ASSERT_TRUE(analyzed) << d.format();
        ASSERT_EQ(analyzed->replicas.size(), 2U);
        ASSERT_EQ(analyzed->replicas[1][0].path, "node1/c0/gpu0") << tensor;
        const SimulationReport r = simulate_project(*analyzed);
        ASSERT_EQ(r.collectives.size(), 1U);
        const double bytes = r.collectives[0].gradient_bytes;
        // The stage's `tensor` devices all-reduce their shards at once,
        // each in a ring of 2 through node 0's and node 1's one network
        // link: a share of 1 / tensor of it each.
        const LinkSpec share{kNetworkGBps / tensor, kLatencyUs, 1};
        const double ring = testing::nccl_seconds(false, 2, bytes, share);
        const double tree = testing::nccl_seconds(true, 2, 2 * bytes, share);
        EXPECT_NEAR(r.collectives[0].reduce_s, std::min(ring, tree), 1e-12) << tensor;
    }
}

// Two mixture-of-experts blocks, each a stage, on gpu0 and gpu1 of node 0,
// two replicas (the second on node 1) splitting the experts: each stage's
// expert group crosses the nodes. `stages` 1 puts both blocks on gpu0.
json two_stage_moe(int stages) {
    json layers = json::array();
    for (int i = 0; i < 2; ++i) {
        layers.push_back({{"name", "block" + std::to_string(i)},
                          {"type", "transformer_block"},
                          {"hidden", 256},
                          {"heads", 4},
                          {"experts", 4},
                          {"top_k", 2},
                          {"flash_attention", true}});
    }
    const json nodes = two_nodes_json(2, "H100-SXM");
    json placement =
        stages == 2
            ? json::array({{{"device", "node0/c0/gpu0"}, {"layers", {"block0"}}},
                           {{"device", "node0/c0/gpu1"}, {"layers", {"block1"}}}})
            : json::array({{{"device", "node0/c0/gpu0"}, {"layers", {"block0", "block1"}}}});
    json replica = stages == 2 ? json::array({"node1/c0/gpu0", "node1/c0/gpu1"})
                               : json::array({"node1/c0/gpu0"});
    return {{"format", "pipewright-project"},
            {"version", 1},
            {"model",
             {{"name", "moe"},
              {"input", {{"shape", {1024, 256}}, {"dtype", "float32"}}},
              {"loss", "mse"},
              {"layers", layers}}},
            {"topology", two_node_topology(nodes)},
            {"placement", placement},
            {"training",
             {{"batch_size", 8},
              {"microbatches", 4},
              {"schedule", stages == 2 ? "1f1b" : "gpipe"},
              {"dtype", "bfloat16"}}},
            {"data_parallel", {{"size", 2}, {"replicas", json::array({replica})}}},
            {"expert_parallel", {{"size", 2}}}};
}

// Every stage dispatches and combines inside its forward and backward, so
// the expert groups of the two stages on node 0 cross its network at once.
TEST(LinkSharing, ExpertGroupsOfStagesOnOneNodeShareItsNetwork) {
    const auto all_to_all_s = [](int stages) {
        Diagnostics d;
        const auto project = project_from_json(two_stage_moe(stages), d);
        EXPECT_TRUE(project) << d.format();
        const auto analyzed = analyze_project(*project, {}, d);
        EXPECT_TRUE(analyzed) << d.format();
        return stage_costs(*analyzed, {}).front().expert_forward_s;
    };
    const double alone = all_to_all_s(1) / 2;  // gpu0 runs both blocks' all-to-alls
    const double shared = all_to_all_s(2);
    // Per block: four launches of latency, and bytes over the link; with two
    // groups on it, the bytes take twice as long.
    const double bytes_alone = alone - 2 * (8.4e-6 + kLatencyUs * 1e-6);
    EXPECT_GT(bytes_alone, 0);
    EXPECT_NEAR(shared - alone, bytes_alone, 1e-9);
}

}  // namespace
}  // namespace pipewright

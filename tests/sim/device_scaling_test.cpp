// Issue 18: memory and time grew with the square of the device count (a link
// for every pair of ranks, a scan of all devices per stage). These tests
// count what is built for a 10,000-device pipeline instead of timing it: a
// quadratic structure there would be 10⁸ entries and fail by its size.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/project_io.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

// As bench/make_wide_project.py: one linear layer per device, devices in
// nodes of `per_node` (one container each), stage i on device i.
nlohmann::json wide_project(int devices, int per_node, int microbatches) {
    nlohmann::json nodes = nlohmann::json::array();
    nlohmann::json placement = nlohmann::json::array();
    nlohmann::json layers = nlohmann::json::array();
    for (int n = 0; n * per_node < devices; ++n) {
        nlohmann::json gpus = nlohmann::json::array();
        for (int g = 0; g < per_node && n * per_node + g < devices; ++g) {
            const std::string layer = "l" + std::to_string(n * per_node + g);
            gpus.push_back({{"name", "gpu" + std::to_string(g)}, {"spec", "A100-80GB"}});
            placement.push_back(
                {{"device", "node" + std::to_string(n) + "/c0/gpu" + std::to_string(g)},
                 {"layers", {layer}}});
            layers.push_back(
                {{"name", layer}, {"type", "linear"}, {"in_features", 64}, {"out_features", 64}});
        }
        nodes.push_back({{"name", "node" + std::to_string(n)},
                         {"containers", {{{"name", "c0"}, {"devices", gpus}}}}});
    }
    return {{"format", "pipewright-project"},
            {"version", 1},
            {"model",
             {{"name", "wide"},
              {"input", {{"shape", {64}}, {"dtype", "float32"}}},
              {"loss", "mse"},
              {"layers", layers}}},
            {"topology", {{"nodes", nodes}}},
            {"placement", placement},
            {"training",
             {{"batch_size", 4 * microbatches},
              {"microbatches", microbatches},
              {"schedule", "gpipe"},
              {"optimizer", {{"type", "sgd"}, {"lr", 0.001}}}}}};
}

AnalyzedProject analyzed(const nlohmann::json& j) {
    LoadedProject loaded = parse_project_text(j.dump());
    EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics.format();
    Diagnostics d;
    auto out = analyze_project(*loaded.project, {}, d);
    EXPECT_TRUE(d.empty()) << d.format();
    return *out;
}

TEST(DeviceScaling, TenThousandDevicesGetALinkPerNeighbourNotPerPair) {
    constexpr int kDevices = 10'000;
    const AnalyzedProject project = analyzed(wide_project(kDevices, 8, 4));
    ASSERT_EQ(project.num_ranks(), kDevices);
    SimulationInput input;
    describe_links(project, {}, input);
    // Each stage sends to the next and back: 2 (N - 1) pairs. Within a node
    // each pair has its own link; between nodes a direction is shared, but
    // here only neighbouring devices of neighbouring nodes talk.
    EXPECT_EQ(input.link_index.size(), std::size_t{2} * (kDevices - 1));
    EXPECT_EQ(input.links.size(), std::size_t{2} * (kDevices - 1));
    EXPECT_EQ(input.link_index.find(0, 2), -1);  // not neighbours: no link
    EXPECT_GE(input.link_index.find(7, 8), 0);   // node0/gpu7 -> node1/gpu0

    const SimulationReport report = simulate_project(project);
    EXPECT_EQ(report.devices.size(), std::size_t{kDevices});
    EXPECT_EQ(report.links.size(), std::size_t{2} * (kDevices - 1));
    for (const auto& link : report.links) {
        EXPECT_EQ(link.transfers, 4) << link.name;  // one per micro-batch
    }
}

TEST(DeviceScaling, LinksAreListedInTheOrderOfTheirFirstRankPair) {
    // Ranks 0 and 2 on node0, 1 on node1, 3 on node2: the pipeline zigzags
    // between the nodes. The listing keeps the order it had when every rank
    // pair was resolved: by the first (from, to) pair over all pairs.
    nlohmann::json j = wide_project(4, 1, 2);
    auto& nodes = j["topology"]["nodes"];
    nodes[0]["containers"][0]["devices"].push_back({{"name", "gpu1"}, {"spec", "A100-80GB"}});
    nodes.erase(3);
    j["placement"][2]["device"] = "node0/c0/gpu1";
    j["placement"][3]["device"] = "node2/c0/gpu0";
    const AnalyzedProject project = analyzed(j);
    SimulationInput input;
    describe_links(project, {}, input);
    std::vector<std::string> names;
    for (const auto& link : input.links) {
        names.push_back(link.name);
    }
    // Pairs (0,1) node0->node1, (0,3) node0->node2, (1,0) node1->node0,
    // (3,0) node2->node0: the shared links come at their groups' first ranks,
    // not at the first pair that uses them ((2,3) and (3,2)).
    EXPECT_EQ(names,
              (std::vector<std::string>{"node0->node1 (inter-node)", "node0->node2 (inter-node)",
                                        "node1->node0 (inter-node)", "node2->node0 (inter-node)"}));
}

TEST(DeviceScaling, AnOverrideTakesAPairOffTheSharedLink) {
    nlohmann::json j = wide_project(4, 2, 2);  // node0: ranks 0, 1; node1: ranks 2, 3
    j["topology"]["link_overrides"] = {{{"between", {"node0/c0/gpu1", "node1/c0/gpu0"}},
                                        {"bandwidth_GBps", 1},
                                        {"latency_us", 1}}};
    const AnalyzedProject project = analyzed(j);
    SimulationInput input;
    describe_links(project, {}, input);
    const int across = input.link_index.find(1, 2);
    ASSERT_GE(across, 0);
    EXPECT_EQ(input.links[static_cast<std::size_t>(across)].name,
              "node0/c0/gpu1->node1/c0/gpu0 (override)");
    EXPECT_DOUBLE_EQ(input.links[static_cast<std::size_t>(across)].spec.bandwidth_GBps, 1);
}

}  // namespace
}  // namespace pipewright

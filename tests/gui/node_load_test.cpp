#include "studio_core/canvas/node_load.h"

#include <gtest/gtest.h>

#include "pipewright/core/project_io.h"
#include "studio_core/simulation/simulation_runner.h"

namespace pipewright::gui {
namespace {

Project seven_layers() {
    auto loaded = load_project_file(std::string(PIPEWRIGHT_ASSETS_DIR) +
                                    "/examples/seven-layers-two-nodes.json");
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

DeviceMetrics metric(const std::string& path, double bubble, std::int64_t peak,
                     std::int64_t capacity) {
    DeviceMetrics m;
    m.name = path;
    m.bubble_fraction = bubble;
    m.peak_memory_bytes = peak;
    m.memory_capacity_bytes = capacity;
    m.fits = peak <= capacity;
    return m;
}

TEST(NodeLoad, SumsUpItsDevicesFromTheSimulationsMetrics) {
    const Project p = seven_layers();
    const std::vector<DeviceMetrics> metrics = {
        metric("node0/c0/gpu0", 0.25, 10, 40),  // not node1's
        metric("node1/c0/gpu0", 0.40, 30, 40),
        metric("node1/c1/gpu0", 0.80, 50, 40),
    };
    const NodeLoad load = node_load(p, 1, metrics);
    EXPECT_EQ(load.name, "node1");
    EXPECT_EQ(load.containers, 2);
    ASSERT_EQ(load.devices.size(), 2u);
    EXPECT_EQ(load.devices[0].path, "node1/c0/gpu0");
    EXPECT_EQ(load.devices[1].path, "node1/c1/gpu0");
    EXPECT_DOUBLE_EQ(load.devices[0].load, 0.60);
    EXPECT_DOUBLE_EQ(load.devices[1].load, 0.20);
    EXPECT_DOUBLE_EQ(load.devices[0].memoryFraction(), 0.75);
    EXPECT_FALSE(load.devices[0].over);
    EXPECT_TRUE(load.devices[1].over);
    EXPECT_EQ(load.simulated, 2);
    EXPECT_DOUBLE_EQ(load.mean_load, 0.40);
    EXPECT_DOUBLE_EQ(load.max_memory_fraction, 1.25);
    EXPECT_EQ(load.over, 1);
    EXPECT_EQ(load.specs, "2 × A100-40GB");
}

TEST(NodeLoad, ADeviceTheSimulationDidNotListIsIdleAndLeftOutOfTheFigures) {
    Project p = seven_layers();
    p.topology.nodes[0].containers[0].devices.push_back({"spare", "H100-80GB", {}});
    const NodeLoad load = node_load(p, 0, {metric("node0/c0/gpu0", 0.5, 10, 40)});
    ASSERT_EQ(load.devices.size(), 3u);
    EXPECT_TRUE(load.devices[0].simulated);
    EXPECT_FALSE(load.devices[1].simulated);
    EXPECT_FALSE(load.devices[2].simulated);
    EXPECT_EQ(load.simulated, 1);
    EXPECT_DOUBLE_EQ(load.mean_load, 0.5);
    EXPECT_EQ(load.specs, "2 × A100-40GB, 1 × H100-80GB");
}

TEST(NodeLoad, BeforeTheFirstSimulationNothingIsKnown) {
    const NodeLoad load = node_load(seven_layers(), 0, std::vector<DeviceMetrics>{});
    EXPECT_EQ(load.devices.size(), 2u);
    EXPECT_EQ(load.simulated, 0);
    EXPECT_EQ(load.mean_load, 0);
    EXPECT_EQ(node_load(seven_layers(), 5, std::vector<DeviceMetrics>{}).devices.size(), 0u);
}

TEST(NodeLoad, LoadIsTheBusyShareOfARealSimulation) {
    const Project p = seven_layers();
    const SimulationResult result = simulate_now(p, ".");
    ASSERT_TRUE(result.report);
    const auto& metrics = result.report->devices;
    const NodeLoad load = node_load(p, 0, metrics);
    for (const DeviceLoad& d : load.devices) {
        const auto m = std::find_if(metrics.begin(), metrics.end(),
                                    [&](const DeviceMetrics& x) { return x.name == d.path; });
        ASSERT_NE(m, metrics.end());
        EXPECT_NEAR(d.load, m->busy_s / result.report->iteration_time_s, 1e-9);
        EXPECT_GT(d.load, 0);
        EXPECT_LT(d.load, 1);
        EXPECT_EQ(d.peak_bytes, m->peak_memory_bytes);
    }
}

}  // namespace
}  // namespace pipewright::gui

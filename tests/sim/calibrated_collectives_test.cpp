// Collectives a device calibration measured among one machine's devices
// price the groups that lie inside such a machine: tensor-parallel
// all-reduces, data-parallel reductions; groups that leave it keep the
// links' model.
#include <gtest/gtest.h>

#include <filesystem>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/device_calibration_fit.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

constexpr std::int64_t kLargest = std::int64_t{16} << 30;

// A calibration of `spec` whose collectives of every kind take `seconds`
// at every size up to 16 GiB among 2, 4 and 8 devices (a flat time keeps
// the arithmetic of the tests exact); no GEMM correction.
DeviceCalibration with_collectives(const std::string& spec, double seconds) {
    const DeviceSpec& d = *DeviceCatalog::builtin().find(spec);
    DeviceCalibration c;
    c.spec = spec;
    c.dtype = DType::bfloat16;
    c.launch_seconds = d.kernel_overhead_s;
    c.gemms = {{1024, 1024, 1024, 1e-4}};
    c.copies = {{1 << 30, 2.0 * (1 << 30) / (d.memory_bandwidth_GBps * 1e9 * d.memory_efficiency) +
                              d.kernel_overhead_s}};
    for (const CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                      CollectiveKind::all_gather, CollectiveKind::all_to_all}) {
        for (const int members : {2, 4, 8}) {
            for (const std::int64_t bytes : {std::int64_t{1} << 20, kLargest}) {
                c.collectives.push_back({kind, members, bytes, seconds});
            }
        }
    }
    c.collective_library = "nccl";
    return c;
}

Topology two_nodes_of_four(const std::string& spec) {
    Topology t;
    for (int n = 0; n < 2; ++n) {
        Node node{"node" + std::to_string(n), {}};
        Container c{"c0", {}};
        for (int g = 0; g < 4; ++g) {
            c.devices.push_back({"gpu" + std::to_string(g), spec, {}});
        }
        node.containers.push_back(c);
        t.nodes.push_back(node);
    }
    return t;
}

std::vector<DeviceLocation> devices(std::initializer_list<std::pair<int, int>> node_device) {
    std::vector<DeviceLocation> out;
    for (const auto& [n, g] : node_device) {
        out.push_back({"node" + std::to_string(n) + "/c0/gpu" + std::to_string(g), n, 0, g});
    }
    return out;
}

TEST(CalibratedCollectives, AGroupInsideOneMachineTakesTheMeasuredTime) {
    const DeviceSpec d = calibrated_device(*DeviceCatalog::builtin().find("A100-80GB"),
                                           with_collectives("A100-80GB", 3e-3));
    const Topology t = two_nodes_of_four("A100-80GB");
    const LinkResolver links(t);
    const CollectiveGroup inside =
        collective_group(devices({{0, 0}, {0, 1}, {0, 2}, {0, 3}}), links, d);
    const CollectiveTime time = collective_time(CollectiveKind::all_reduce, 64 << 20, inside);
    EXPECT_EQ(time.algorithm, CollectiveAlgorithm::measured);
    EXPECT_DOUBLE_EQ(time.seconds, 3e-3);
    // Three members: the group of four's time, scaled by the ring's share.
    const CollectiveGroup three = collective_group(devices({{0, 0}, {0, 1}, {0, 2}}), links, d);
    EXPECT_DOUBLE_EQ(collective_time(CollectiveKind::all_gather, 64 << 20, three).seconds,
                     3e-3 * (2.0 / 3) / (3.0 / 4));
}

TEST(CalibratedCollectives, GroupsThatLeaveTheMachineOrOutgrowItKeepTheModel) {
    const DeviceSpec& catalog = *DeviceCatalog::builtin().find("A100-80GB");
    const DeviceSpec d = calibrated_device(catalog, with_collectives("A100-80GB", 3e-3));
    const Topology t = two_nodes_of_four("A100-80GB");
    const LinkResolver links(t);
    const auto across = devices({{0, 0}, {1, 0}});
    const CollectiveTime modelled = collective_time(CollectiveKind::all_reduce, 64 << 20,
                                                    collective_group(across, links, catalog));
    const CollectiveTime calibrated =
        collective_time(CollectiveKind::all_reduce, 64 << 20, collective_group(across, links, d));
    EXPECT_NE(calibrated.algorithm, CollectiveAlgorithm::measured);
    EXPECT_DOUBLE_EQ(calibrated.seconds, modelled.seconds);

    // Measured among 2 only: a group of 4 inside the machine is larger.
    DeviceCalibration pairs = with_collectives("A100-80GB", 3e-3);
    std::erase_if(pairs.collectives, [](const CollectiveSample& s) { return s.members > 2; });
    const DeviceSpec two = calibrated_device(catalog, pairs);
    const auto four = devices({{0, 0}, {0, 1}, {0, 2}, {0, 3}});
    EXPECT_DOUBLE_EQ(
        collective_time(CollectiveKind::all_reduce, 64 << 20, collective_group(four, links, two))
            .seconds,
        collective_time(CollectiveKind::all_reduce, 64 << 20,
                        collective_group(four, links, catalog))
            .seconds);
    // A profile's measured transport comes first: it measured the run's own.
    const CollectiveGroup profiled =
        with_measured_ring(collective_group(four, links, d), LinkSpec{10, 20});
    EXPECT_NE(collective_time(CollectiveKind::all_reduce, 64 << 20, profiled).algorithm,
              CollectiveAlgorithm::measured);
}

std::optional<AnalyzedProject> analyzed_example(const std::string& name,
                                                const DeviceCatalog* catalog) {
    const LoadedProject loaded =
        load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" / name);
    EXPECT_TRUE(loaded.project);
    AnalysisOptions options;
    options.catalog = catalog;
    Diagnostics d;
    auto analyzed = analyze_project(*loaded.project, options, d);
    EXPECT_TRUE(analyzed) << d.format();
    return analyzed;
}

TEST(CalibratedCollectives, PriceATensorParallelStagesAllReduces) {
    // Llama 3.1 8B on one H100 node, tensor-parallel groups of 2.
    const auto stage_tensor_s = [](double seconds) {
        const DeviceCatalog catalog =
            calibrated_catalog(DeviceCatalog::builtin(), {with_collectives("H100-SXM", seconds)});
        const auto p = analyzed_example("llama3.1-8b-h100-node.json", &catalog);
        const SimulationReport r = simulate_project(*p, {}, Recording::summary);
        return std::pair{r.stages[1].tensor_forward_s, r.stages[1].tensor_backward_s};
    };
    const auto [forward_1, backward_1] = stage_tensor_s(1e-4);
    const auto [forward_2, backward_2] = stage_tensor_s(2e-4);
    // Each of the stage's collectives takes the measured time: twice as
    // slow collectives, twice the stage's total.
    EXPECT_GT(forward_1, 0);
    EXPECT_NEAR(forward_2, 2 * forward_1, 1e-12);
    EXPECT_NEAR(backward_2, 2 * backward_1, 1e-12);
    // A whole number of collectives of 0.1 ms each.
    EXPECT_NEAR(forward_1 / 1e-4, std::round(forward_1 / 1e-4), 1e-6);
}

TEST(CalibratedCollectives, PriceTheReplicasReductionsAndSaySo) {
    // ResNet-50 on 4 A100s of one container, 2 replicas under ZeRO-1.
    const DeviceCatalog catalog =
        calibrated_catalog(DeviceCatalog::builtin(), {with_collectives("A100-40GB", 5e-3)});
    const auto p = analyzed_example("resnet50-4gpu-2x2.json", &catalog);
    const SimulationReport r = simulate_project(*p, {}, Recording::summary);
    ASSERT_FALSE(r.collectives.empty());
    for (const StageCollectiveCost& c : r.collectives) {
        EXPECT_EQ(c.algorithm, CollectiveAlgorithm::measured);
        EXPECT_EQ(c.kind, CollectiveKind::reduce_scatter);
        EXPECT_DOUBLE_EQ(c.reduce_s, 5e-3);
        EXPECT_DOUBLE_EQ(c.gather_s, 5e-3);
    }
    CalibrationFit fit;
    (void)calibrated_device(*DeviceCatalog::builtin().find("A100-40GB"),
                            with_collectives("A100-40GB", 5e-3), &fit);
    EXPECT_EQ(fit.largest_group, 8);
    EXPECT_NE(describe_calibration(fit, "a100.json")
                  .find("; NCCL collectives of up to 8 A100-40GB GPUs, all-reduce bus bandwidth "
                        "up to "),
              std::string::npos)
        << describe_calibration(fit, "a100.json");
}

}  // namespace
}  // namespace pipewright

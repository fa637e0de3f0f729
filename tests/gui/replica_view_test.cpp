#include "studio_core/canvas/replica_view.h"

#include <gtest/gtest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "pipewright/core/project_io.h"

namespace pipewright::gui {
namespace {

SimulationReport simulate_example(const std::function<void(nlohmann::json&)>& edit = {}) {
    auto j = nlohmann::json::parse(
        read_text_file(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-4gpu-2x2.json"));
    if (edit) {
        edit(j);
    }
    Diagnostics d;
    const auto project = project_from_json(j, d);
    EXPECT_TRUE(project) << d.format();
    const auto analyzed = analyze_project(*project, {}, d);
    EXPECT_TRUE(analyzed) << d.format();
    return simulate_project(*analyzed, {}, Recording::summary);
}

TEST(ReplicaView, MirroredReplicasShowTheFiguresOfTheDeviceTheyMirror) {
    const SimulationReport report = simulate_example();
    ASSERT_EQ(report.devices.size(), 2U);
    const auto roles = replica_roles(report);
    ASSERT_EQ(roles.size(), 4U);
    EXPECT_EQ(roles.at("node0/c0/gpu0").replica, 0);
    EXPECT_TRUE(roles.at("node0/c0/gpu0").mirrors.empty());
    EXPECT_EQ(roles.at("node0/c0/gpu3").replica, 1);
    EXPECT_EQ(roles.at("node0/c0/gpu3").rank, 1);
    EXPECT_EQ(roles.at("node0/c0/gpu3").mirrors, "node0/c0/gpu1");

    const auto all = every_replica_device(report);
    ASSERT_EQ(all.size(), 4U);
    EXPECT_EQ(all[3].name, "node0/c0/gpu3");
    EXPECT_EQ(all[3].peak_memory_bytes, report.devices[1].peak_memory_bytes);
    EXPECT_EQ(all[3].busy_s, report.devices[1].busy_s);
}

TEST(ReplicaView, AReplicaSimulatedOnItsOwnMirrorsNoOne) {
    const SimulationReport report = simulate_example([](nlohmann::json& j) {
        j["topology"]["nodes"][0]["containers"][0]["devices"][3]["peak_tflops"] = 2;
    });
    ASSERT_EQ(report.devices.size(), 4U);  // both replicas simulated
    const auto roles = replica_roles(report);
    EXPECT_TRUE(roles.at("node0/c0/gpu3").mirrors.empty());
    EXPECT_EQ(every_replica_device(report).size(), 4U);
}

TEST(ReplicaView, WithoutDataParallelismEveryDeviceIsReplicaZero) {
    const SimulationReport report =
        simulate_example([](nlohmann::json& j) { j.erase("data_parallel"); });
    const auto roles = replica_roles(report);
    ASSERT_EQ(roles.size(), 2U);
    EXPECT_EQ(roles.at("node0/c0/gpu1").replica, 0);
    EXPECT_EQ(every_replica_device(report).size(), 2U);
}

}  // namespace
}  // namespace pipewright::gui

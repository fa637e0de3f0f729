// The data-parallel planner: where it lays the replicas, and pipelines that
// fit only with ZeRO's shards.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/layout_comparison.h"
#include "pipewright/sim/planner.h"

namespace pipewright {
namespace {

using nlohmann::json;

std::string node_of(const std::string& device) {
    return device.substr(0, device.find('/'));
}

// `layers` linear layers of `features` × `features` with fixed costs, on
// `nodes` nodes of 4 A100-80GB (`capacity_GiB` overrides their memory), joined
// within a node by fast links and across nodes by a slow one.
json cluster_project(int layers, int features, int nodes, double inter_node_GBps,
                     double capacity_GiB = 0, int batch = 64) {
    json model_layers = json::array();
    for (int i = 0; i < layers; ++i) {
        model_layers.push_back(
            {{"name", "fc" + std::to_string(i)},
             {"type", "linear"},
             {"in_features", features},
             {"out_features", features},
             {"cost",
              {{"forward_ms", 2.0}, {"backward_input_ms", 2.0}, {"backward_weight_ms", 2.0}}}});
    }
    json node_list = json::array();
    for (int n = 0; n < nodes; ++n) {
        json gpus = json::array();
        for (int g = 0; g < 4; ++g) {
            json gpu = {{"name", "gpu" + std::to_string(g)}, {"spec", "A100-80GB"}};
            if (capacity_GiB > 0) {
                gpu["memory_GiB"] = capacity_GiB;
            }
            gpus.push_back(gpu);
        }
        node_list.push_back({{"name", "node" + std::to_string(n)},
                             {"containers", json::array({{{"name", "c0"}, {"devices", gpus}}})}});
    }
    // Input placement: the layers in equal runs over node0's devices.
    json placement = json::array();
    for (int g = 0; g < std::min(layers, 4); ++g) {
        json names = json::array();
        for (int i = g * layers / 4; i < (g + 1) * layers / 4; ++i) {
            names.push_back("fc" + std::to_string(i));
        }
        placement.push_back({{"device", "node0/c0/gpu" + std::to_string(g)}, {"layers", names}});
    }
    return {{"format", "pipewright-project"},
            {"version", 1},
            {"model",
             {{"name", "linear-stack"},
              {"input", {{"shape", {features}}, {"dtype", "float32"}}},
              {"loss", "mse"},
              {"layers", model_layers}}},
            {"topology",
             {{"links",
               {{"intra_container", {{"bandwidth_GBps", 300}, {"latency_us", 5}}},
                {"intra_node", {{"bandwidth_GBps", 300}, {"latency_us", 5}}},
                {"inter_node", {{"bandwidth_GBps", inter_node_GBps}, {"latency_us", 20}}}}},
              {"nodes", node_list}}},
            {"placement", placement},
            {"training",
             {{"batch_size", batch},
              {"microbatches", 8},
              {"schedule", "1f1b"},
              {"optimizer", {{"type", "adam"}}}}}};
}

Project parse(const json& j) {
    Diagnostics d;
    auto p = project_from_json(j, d);
    EXPECT_TRUE(p) << d.format();
    return *p;
}

TEST(ReplicaLayout, EveryReplicaTakesItsOwnDevicesAndTogetherTheyTakeAll) {
    for (const int devices : {8, 12, 16}) {
        for (const int replicas : {1, 2, 4}) {
            for (const int adjacent : {1, 2, 4}) {
                if (devices % replicas != 0 || replicas % adjacent != 0) {
                    continue;
                }
                std::multiset<int> used;
                for (int r = 0; r < replicas; ++r) {
                    const auto mine = replica_device_indices(devices, replicas, adjacent, r);
                    ASSERT_EQ(static_cast<int>(mine.size()), devices / replicas);
                    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
                    used.insert(mine.begin(), mine.end());
                    // The replicas of one group sit side by side, one device apart.
                    const auto first = replica_device_indices(devices, replicas, adjacent,
                                                              r / adjacent * adjacent);
                    for (std::size_t j = 0; j < mine.size(); ++j) {
                        EXPECT_EQ(mine[j], first[j] + r % adjacent);
                    }
                }
                EXPECT_EQ(static_cast<int>(used.size()), devices);
                for (int i = 0; i < devices; ++i) {
                    EXPECT_EQ(used.count(i), 1U) << devices << " " << replicas << " " << adjacent;
                }
            }
        }
    }
}

TEST(ReplicaLayout, ASubsetKeepsTheNodesAndContainersOfItsDevices) {
    const Project p = parse(cluster_project(4, 64, 2, 1));
    const Topology sub = device_subset(p.topology, {0, 2, 4, 6});
    const auto devices = sub.devices();
    ASSERT_EQ(devices.size(), 4U);
    EXPECT_EQ(devices[0].path, "node0/c0/gpu0");
    EXPECT_EQ(devices[1].path, "node0/c0/gpu2");
    EXPECT_EQ(devices[2].path, "node1/c0/gpu0");
    EXPECT_EQ(devices[3].path, "node1/c0/gpu2");
}

// Gradients of 64 MiB a stage and activations of 32 KiB a micro-batch, with
// nodes joined at 1 GB/s: each stage's replicas belong in one node, the
// pipeline across the nodes, not the other way round.
TEST(DataParallelPlanner, KeepsEachStagesReductionWithinANodeWhenGradientsDominate) {
    const Project project = parse(cluster_project(8, 4096, 2, 1.0));
    PlanOptions options;
    options.data_parallel = 2;
    const PlanResult r = plan_pipeline(project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    ASSERT_EQ(r.data_parallel.size(), 1U);
    EXPECT_EQ(r.data_parallel[0].adjacent, 2);
    EXPECT_NE(r.data_parallel_choice.find("neighbouring devices"), std::string::npos)
        << r.data_parallel_choice;
    ASSERT_TRUE(r.plan.report.has_value());
    const auto& groups = r.plan.report->replica_devices;
    ASSERT_EQ(groups.size(), 2U);
    for (std::size_t rank = 0; rank < groups[0].size(); ++rank) {
        EXPECT_EQ(node_of(groups[0][rank]), node_of(groups[1][rank])) << groups[1][rank];
    }
    // The input lays replica 1 on node1 (the default layout): every stage
    // reduces across the slow link.
    ASSERT_TRUE(r.input.report.has_value()) << r.input.reason;
    EXPECT_LT(r.plan.report->iteration_time_s, r.input.report->iteration_time_s / 2);
    // The applied project, reloaded, simulates to the plan.
    Diagnostics d;
    auto reloaded = project_from_json(project_to_json(r.project), d);
    ASSERT_TRUE(reloaded) << d.format();
    const auto analyzed = analyze_project(*reloaded, {}, d);
    ASSERT_TRUE(analyzed) << d.format();
    EXPECT_NEAR(simulate_project(*analyzed, {}, Recording::summary).iteration_time_s,
                r.plan.report->iteration_time_s, 1e-12);
}

// 4 layers of 4096 × 4096 with Adam hold 16 bytes a parameter: 268 MB a
// layer. On devices of 0.23 GiB (247 MB) no layer fits alone, so no pipeline
// of one replica fits however many stages it has; sharding the optimizer
// state across 2 replicas brings a layer to 201 MB.
TEST(DataParallelPlanner, FindsAPipelineThatFitsOnlyWithZero) {
    const Project project = parse(cluster_project(4, 4096, 2, 100.0, 0.23));
    PlanOptions options;
    options.data_parallel = 2;
    const PlanResult r = plan_pipeline(project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    const DataParallelOption& o = r.data_parallel.at(0);
    EXPECT_GE(r.project.data_parallel.zero_stage, 1);
    EXPECT_EQ(o.zero_stage, r.project.data_parallel.zero_stage);
    EXPECT_FALSE(o.by_zero_stage[0].has_value()) << "fits without ZeRO after all";
    EXPECT_TRUE(r.plan.report->all_fit);
    EXPECT_LE(o.peak_memory_bytes, o.memory_capacity_bytes);
    EXPECT_NE(r.data_parallel_choice.find("ZeRO-0 does not fit"), std::string::npos)
        << r.data_parallel_choice;
    // Without replicas nothing fits, and the plan says so.
    options.data_parallel = 1;
    const PlanResult alone = plan_pipeline(project, options);
    EXPECT_FALSE(alone.feasible);
}

// Micro-batches of 4,096 samples of 1,024 floats keep 16 MiB a layer until
// their backward, against 16 MB of weights and state a layer: checkpointing is
// turned off where everything fits without it, and on (the project has it
// off) where only that fits.
TEST(DataParallelPlanner, TurnsCheckpointingOnWhenOnlyThatFits) {
    PlanOptions options;
    options.data_parallel = 2;
    options.microbatches = 8;
    // GPipe holds every micro-batch: 8 × 2 layers' stash without
    // checkpointing, 8 stage inputs and one recomputed micro-batch with it.
    options.schedule = "gpipe";
    // With room to spare, recomputing the forward only costs time.
    Project roomy = parse(cluster_project(8, 1024, 2, 100.0, 0, 65536));
    roomy.training.recompute = Recompute::full;
    const PlanResult fast = plan_pipeline(roomy, options);
    ASSERT_TRUE(fast.feasible) << fast.why_nothing_fits;
    EXPECT_FALSE(fast.project.training.full_recompute());
    EXPECT_NE(fast.data_parallel_choice.find("without the project's activation checkpointing"),
              std::string::npos)
        << fast.data_parallel_choice;
    // The same layout with checkpointing needs less.
    const double without = fast.data_parallel.at(0).peak_memory_bytes;
    Project recomputed = fast.project;
    recomputed.training.recompute = Recompute::full;
    Diagnostics d;
    const auto analyzed = analyze_project(recomputed, {}, d);
    ASSERT_TRUE(analyzed) << d.format();
    double with = 0;
    for (const DeviceMetrics& m : simulate_project(*analyzed, {}, Recording::summary).devices) {
        with = std::max(with, static_cast<double>(m.peak_memory_bytes));
    }
    ASSERT_LT(with, 0.8 * without);

    // Devices between the two: only checkpointing fits.
    const double capacity_GiB = (with + without) / 2 / (1 << 30);
    Project tight = parse(cluster_project(8, 1024, 2, 100.0, capacity_GiB, 65536));
    tight.training.recompute = Recompute::none;
    const PlanResult r = plan_pipeline(tight, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    EXPECT_TRUE(r.data_parallel.at(0).activation_checkpointing);
    EXPECT_TRUE(r.project.training.full_recompute());
    EXPECT_TRUE(r.plan.report->all_fit);
    EXPECT_NE(r.data_parallel_choice.find("with activation checkpointing"), std::string::npos)
        << r.data_parallel_choice;
}

// GPT-3 on 104 A100s of 40 GB: a replica of fewer than 98 stages holds more
// than a GPU's memory at every ZeRO stage, since its gradients add up whole
// until their one reduction (ZeRO-2 shards them only after it) and a
// ZeRO-3 stage gathers its weights while it runs. The plan keeps one
// pipeline and says why each count of replicas does not fit.
TEST(DataParallelPlanner, TheGpt3ExampleOn104GpusFitsOnlyAsOnePipeline) {
    const auto file =
        std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" / "gpt3-175b-p4d.json";
    auto loaded = load_project_file(file);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    PlanOptions options;
    options.data_parallel = 0;  // search
    const PlanResult r = plan_pipeline(*loaded.project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    const DataParallelOption* one = nullptr;
    for (const DataParallelOption& o : r.data_parallel) {
        one = o.replicas == 1 ? &o : one;
    }
    ASSERT_NE(one, nullptr);
    ASSERT_TRUE(one->iteration_s.has_value());
    EXPECT_EQ(r.project.data_parallel.size, 1);
    EXPECT_NEAR(r.plan.report->iteration_time_s, *one->iteration_s, 1e-9);
    EXPECT_TRUE(r.plan.report->all_fit);
    for (const DataParallelOption& o : r.data_parallel) {
        if (o.replicas > 1) {
            EXPECT_FALSE(o.iteration_s.has_value()) << o.replicas;
        }
    }
    EXPECT_NE(r.data_parallel_choice.find("no pipeline of 52 devices fits a replica's share of "
                                          "the batch, even with ZeRO-3"),
              std::string::npos)
        << r.data_parallel_choice;
}

TEST(LayoutComparison, EachCountOfReplicasBesideTheLayoutAsSet) {
    const Project project = parse(cluster_project(8, 4096, 2, 1.0));
    const LayoutComparison c = compare_replica_layouts(project, {});
    // As set, then 1, 2, 4 and 8 replicas (8 devices, batch 64).
    ASSERT_EQ(c.rows.size(), 5U);
    ASSERT_EQ(c.layouts.size(), c.rows.size());
    EXPECT_TRUE(c.rows[0].baseline);
    EXPECT_EQ(c.rows[0].label, "as set: 1 × 4 stages");
    EXPECT_FALSE(c.layouts[0].has_value());
    ASSERT_TRUE(c.rows[0].report.has_value());
    const double as_set = c.rows[0].report->iteration_time_s;
    for (std::size_t i = 1; i < c.rows.size(); ++i) {
        const ComparisonRow& row = c.rows[i];
        SCOPED_TRACE(row.label);
        ASSERT_TRUE(row.report.has_value()) << row.reason;
        ASSERT_TRUE(c.layouts[i].has_value());
        EXPECT_NEAR(row.gain_percent, (as_set / row.report->iteration_time_s - 1) * 100, 1e-9);
        // Each layout is a project that simulates to its row.
        Diagnostics d;
        const auto analyzed = analyze_project(*c.layouts[i], {}, d);
        ASSERT_TRUE(analyzed) << d.format();
        EXPECT_NEAR(simulate_project(*analyzed, {}, Recording::summary).iteration_time_s,
                    row.report->iteration_time_s, 1e-12);
    }
    EXPECT_FALSE(c.choice.empty());
}

// A project as set that does not run (1F1B with fewer micro-batches than
// stages): the gains are over one pipeline rather than over nothing.
TEST(LayoutComparison, GainsAreOverOnePipelineWhenTheLayoutAsSetDoesNotRun) {
    json j = cluster_project(8, 4096, 2, 1.0);
    j["training"]["microbatches"] = 2;
    const LayoutComparison c = compare_replica_layouts(parse(j), {});
    ASSERT_GE(c.rows.size(), 2U);
    EXPECT_FALSE(c.rows[0].report.has_value());
    EXPECT_FALSE(c.rows[0].baseline);
    EXPECT_NE(c.rows[0].reason.find("micro-batches"), std::string::npos) << c.rows[0].reason;
    EXPECT_EQ(c.baseline, "one pipeline");
    ASSERT_TRUE(c.rows[1].baseline);
    ASSERT_TRUE(c.rows[1].report.has_value());
    const double one = c.rows[1].report->iteration_time_s;
    for (std::size_t i = 2; i < c.rows.size(); ++i) {
        ASSERT_TRUE(c.rows[i].report.has_value()) << c.rows[i].label;
        EXPECT_NEAR(c.rows[i].gain_percent, (one / c.rows[i].report->iteration_time_s - 1) * 100,
                    1e-9);
    }
}

}  // namespace
}  // namespace pipewright

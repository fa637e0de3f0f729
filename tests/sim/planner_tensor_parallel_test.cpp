// The planner in three dimensions: stages on tensor-parallel groups, the
// search over group sizes and replica counts, and the floor that leaves
// slow layouts unplanned.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/planner.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

using nlohmann::json;

struct GptShape {
    int blocks = 8;
    int hidden = 1024;
    int heads = 16;
    int sequence = 512;
    int nodes = 2;
    int gpus_per_node = 8;
    double memory_GiB = 80;
    int batch = 32;
};

// A GPT (embedding, blocks, final norm, head) in bf16 on nodes of A100s,
// NVLink within a node and a slower network between nodes, placed whole on
// node0/c0/gpu0.
Project gpt(const GptShape& shape) {
    json layers = json::array();
    layers.push_back({{"name", "embed"},
                      {"type", "embedding"},
                      {"num_embeddings", 32000},
                      {"embedding_dim", shape.hidden}});
    for (int b = 0; b < shape.blocks; ++b) {
        layers.push_back({{"name", "block" + std::to_string(b)},
                          {"type", "transformer_block"},
                          {"hidden", shape.hidden},
                          {"heads", shape.heads}});
    }
    layers.push_back({{"name", "ln_f"}, {"type", "layernorm"}, {"features", shape.hidden}});
    layers.push_back({{"name", "head"},
                      {"type", "linear"},
                      {"in_features", shape.hidden},
                      {"out_features", 32000},
                      {"bias", false}});
    json names = json::array();
    for (const auto& l : layers) {
        names.push_back(l["name"]);
    }
    json nodes = json::array();
    for (int n = 0; n < shape.nodes; ++n) {
        json gpus = json::array();
        for (int g = 0; g < shape.gpus_per_node; ++g) {
            gpus.push_back({{"name", "gpu" + std::to_string(g)},
                            {"spec", "A100-80GB"},
                            {"memory_GiB", shape.memory_GiB}});
        }
        nodes.push_back({{"name", "node" + std::to_string(n)},
                         {"containers", json::array({{{"name", "c0"}, {"devices", gpus}}})}});
    }
    const json j = {{"format", "pipewright-project"},
                    {"version", 1},
                    {"model",
                     {{"name", "gpt"},
                      {"input", {{"shape", {shape.sequence}}, {"dtype", "int64"}}},
                      {"loss", "cross_entropy"},
                      {"layers", layers}}},
                    {"topology",
                     {{"links",
                       {{"intra_container", {{"bandwidth_GBps", 300}, {"latency_us", 5}}},
                        {"intra_node", {{"bandwidth_GBps", 300}, {"latency_us", 5}}},
                        {"inter_node", {{"bandwidth_GBps", 25}, {"latency_us", 20}}}}},
                      {"nodes", nodes}}},
                    {"placement", json::array({{{"device", "node0/c0/gpu0"}, {"layers", names}}})},
                    {"training",
                     {{"batch_size", shape.batch},
                      {"microbatch_size", 1},
                      {"schedule", "1f1b"},
                      {"dtype", "bfloat16"},
                      {"optimizer", {{"type", "adamw"}}}}}};
    Diagnostics d;
    auto p = project_from_json(j, d);
    EXPECT_TRUE(p) << d.format();
    return *p;
}

// The index of a device within its container.
int position_in_container(const Project& project, const std::string& path) {
    for (const DeviceLocation& loc : project.topology.devices()) {
        if (loc.path == path) {
            return loc.device;
        }
    }
    ADD_FAILURE() << "no device " << path;
    return -1;
}

TEST(TensorParallelPlan, StagesSitOnTheFirstDeviceOfTheirGroups) {
    const Project project = gpt({});
    PlanOptions options;
    options.tensor_parallel = 4;
    const PlanResult r = plan_pipeline(project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    EXPECT_EQ(r.project.tensor_parallel.size, 4);
    ASSERT_FALSE(r.plan.stages.empty());
    for (const PlannedStage& s : r.plan.stages) {
        EXPECT_EQ(position_in_container(project, s.device) % 4, 0) << s.device;
    }
    // The planned project is one the analysis takes as it is, and its
    // report is that of the groups.
    Diagnostics d;
    const auto analyzed = analyze_project(r.project, {}, d);
    ASSERT_TRUE(analyzed) << d.format();
    const SimulationReport report = simulate_project(*analyzed);
    EXPECT_NEAR(report.iteration_time_s, r.plan.report->iteration_time_s, 1e-9);
    for (const auto& group : report.tensor_groups) {
        EXPECT_EQ(group.size(), 4U);
    }
}

// The search over every group size and replica count on gpt({}), planned
// once for the tests that look at it.
const PlanResult& every_layout_searched() {
    static const PlanResult result = [] {
        PlanOptions options;
        options.tensor_parallel = 0;
        options.data_parallel = 0;
        return plan_pipeline(gpt({}), options);
    }();
    return result;
}

TEST(TensorParallelPlan, TheSearchKeepsTheFastestLayoutOfEverySizeAndCount) {
    const PlanResult& r = every_layout_searched();
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    std::set<int> sizes;
    bool chosen_listed = false;
    for (const DataParallelOption& o : r.data_parallel) {
        sizes.insert(o.tensor_parallel);
        if (o.iteration_s) {
            EXPECT_GE(*o.iteration_s, r.plan.report->iteration_time_s * (1 - 1e-9))
                << o.tensor_parallel << " × " << o.replicas;
            chosen_listed = chosen_listed || (o.replicas == r.project.data_parallel.size &&
                                              o.tensor_parallel == r.project.tensor_parallel.size &&
                                              *o.iteration_s == r.plan.report->iteration_time_s);
            // Every layout it lists is one the analysis takes, its groups
            // each on devices of their own.
            ASSERT_TRUE(o.project);
            Diagnostics d;
            const auto analyzed = analyze_project(*o.project, {}, d);
            ASSERT_TRUE(analyzed) << d.format();
            std::set<std::string> used;
            std::size_t members = 0;
            for (const auto& replica : analyzed->tensor_groups) {
                for (const auto& group : replica) {
                    for (const DeviceLocation& loc : group) {
                        used.insert(loc.path);
                        ++members;
                    }
                }
            }
            EXPECT_EQ(used.size(), members);
        }
        if (o.floor_s) {
            EXPECT_GE(*o.floor_s, r.plan.report->iteration_time_s);
        }
    }
    EXPECT_TRUE(chosen_listed);
    EXPECT_EQ(sizes, (std::set<int>{1, 2, 4, 8}));
}

// The search analyses the topology once and resolves every layout on
// device indices: what it says of each layout is what the full analysis of
// that layout's project and the simulator say of it.
TEST(TensorParallelPlan, TheTopologyIsAnalysedOncePerSearch) {
    const PlanResult& r = every_layout_searched();
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    EXPECT_EQ(r.statistics.topology_analyses, 1);
    std::set<std::pair<int, int>> judged;  // (size, replicas)
    for (const DataParallelOption& o : r.data_parallel) {
        if (!o.iteration_s) {
            continue;
        }
        SCOPED_TRACE(std::to_string(o.tensor_parallel) + " × " + std::to_string(o.replicas));
        judged.emplace(o.tensor_parallel, o.replicas);
        ASSERT_TRUE(o.project && o.report);
        Diagnostics d;
        const auto analyzed = analyze_project(*o.project, {}, d);
        ASSERT_TRUE(analyzed) << d.format();
        const SimulationReport full = simulate_project(*analyzed, {}, Recording::summary);
        EXPECT_EQ(full.iteration_time_s, o.report->iteration_time_s);
        ASSERT_EQ(full.devices.size(), o.report->devices.size());
        for (std::size_t k = 0; k < full.devices.size(); ++k) {
            EXPECT_EQ(full.devices[k].peak_memory_bytes, o.report->devices[k].peak_memory_bytes);
        }
    }
    // Replicas and groups both: layouts the analysis resolves in full.
    EXPECT_GE(judged.size(), 4U);
    EXPECT_TRUE(std::any_of(judged.begin(), judged.end(),
                            [](const auto& j) { return j.first > 1 && j.second > 1; }));
}

TEST(TensorParallelPlan, ALayoutLeftUnplannedIsNoFasterThanItsFloor) {
    // Large enough that one pipeline of single devices is far from the best.
    GptShape shape;
    shape.nodes = 4;
    shape.batch = 64;
    const Project project = gpt(shape);
    PlanOptions options;
    options.tensor_parallel = 0;
    options.data_parallel = 0;
    const PlanResult r = plan_pipeline(project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    ASSERT_GT(r.statistics.bounded, 0);
    int checked = 0;
    for (const DataParallelOption& o : r.data_parallel) {
        if (!o.floor_s || checked == 3) {
            continue;
        }
        PlanOptions alone;
        alone.tensor_parallel = o.tensor_parallel;
        alone.data_parallel = o.replicas;
        const PlanResult planned = plan_pipeline(project, alone);
        if (planned.feasible) {
            EXPECT_GE(planned.plan.report->iteration_time_s, *o.floor_s * (1 - 1e-9))
                << o.tensor_parallel << " × " << o.replicas;
            ++checked;
        }
    }
    EXPECT_GT(checked, 0);
}

TEST(TensorParallelPlan, WhereOneDeviceCannotHoldALayerTheGroupsDo) {
    // The embedding's weights and Adam state (16 bytes a parameter, 65M
    // parameters) take about 1 GiB: on 0.8 GiB devices it fits only split
    // over a group.
    GptShape shape;
    shape.hidden = 2048;
    shape.heads = 16;
    shape.blocks = 4;
    shape.nodes = 1;
    shape.memory_GiB = 0.8;
    shape.batch = 8;
    shape.sequence = 128;
    const Project project = gpt(shape);
    PlanOptions options;
    options.tensor_parallel = 0;
    options.data_parallel = 1;
    const PlanResult r = plan_pipeline(project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    EXPECT_GT(r.project.tensor_parallel.size, 1);
    for (const DataParallelOption& o : r.data_parallel) {
        if (o.tensor_parallel == 1) {
            EXPECT_FALSE(o.iteration_s);
        }
    }
}

TEST(TensorParallelPlan, ASizeTheModelCannotSplitIsLeftOutAndSaysWhy) {
    GptShape shape;
    shape.hidden = 768;
    shape.heads = 12;  // 8 does not divide the heads
    shape.nodes = 1;
    const Project project = gpt(shape);
    PlanOptions search;
    search.tensor_parallel = 0;
    const PlanResult r = plan_pipeline(project, search);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    ASSERT_EQ(r.tensor_parallel_skipped.size(), 1U);
    EXPECT_EQ(r.tensor_parallel_skipped.front().rfind("8: model.layers[1]", 0), 0U)
        << r.tensor_parallel_skipped.front();
    EXPECT_NE(r.tensor_parallel_skipped.front().find("heads"), std::string::npos);
    EXPECT_NE(r.data_parallel_choice.find("tensor parallelism not planned: 8:"), std::string::npos)
        << r.data_parallel_choice;

    PlanOptions fixed;
    fixed.tensor_parallel = 8;
    try {
        (void)plan_pipeline(project, fixed);
        ADD_FAILURE() << "planned 12 heads over 8 devices";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("heads"), std::string::npos) << e.what();
    }
}

TEST(TensorParallelPlan, MoreReplicasThanGroupsAreRefusedInWords) {
    const Project project = gpt({});  // 16 devices: 2 groups of 8
    PlanOptions options;
    options.tensor_parallel = 8;
    options.data_parallel = 4;
    try {
        (void)plan_pipeline(project, options);
        ADD_FAILURE() << "planned 4 replicas on 2 groups";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("4 replicas of tensor-parallel groups of 8 devices "
                                             "need 4 groups; the topology has 2"),
                  std::string::npos)
            << e.what();
    }
}

TEST(TensorParallelPlan, TheGpt3ExampleOn1024GpusIsPlannedAsMegatronLaysItOut) {
    const auto path =
        std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples/gpt3-175b-a100-1024.json";
    LoadedProject loaded = load_project_file(path);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    PlanOptions options;
    options.tensor_parallel = 0;
    options.data_parallel = 0;
    const PlanResult r = plan_pipeline(*loaded.project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    // Narayanan et al. 2021 train it with groups of 8 (one node each), the
    // rest of the cluster in pipelines and replicas. The plan keeps groups
    // inside a node too (4 and 8 tie within a percent under the kernel cost
    // model), uses the whole cluster, and their 16 replicas of 8 stages come
    // within 5 % of it.
    const int t = r.project.tensor_parallel.size;
    EXPECT_TRUE(t == 4 || t == 8) << r.data_parallel_choice;
    std::set<std::string> devices;
    for (const PlannedStage& s : r.plan.stages) {
        devices.insert(s.device);
    }
    EXPECT_EQ(static_cast<std::size_t>(r.project.data_parallel.size) * devices.size() *
                  static_cast<std::size_t>(t),
              1024U);
    bool megatron = false;
    for (const DataParallelOption& o : r.data_parallel) {
        if (o.tensor_parallel == 8 && o.replicas == 16) {
            ASSERT_TRUE(o.iteration_s) << o.reason;
            EXPECT_LE(*o.iteration_s, r.plan.report->iteration_time_s * 1.05);
            megatron = true;
        }
    }
    EXPECT_TRUE(megatron);
}

}  // namespace
}  // namespace pipewright

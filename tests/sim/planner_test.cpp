#include "pipewright/sim/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>
#include <random>
#include <stop_token>

#include "pipewright/core/project_io.h"
#include "planner_test_support.h"

namespace pipewright {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples";

Project example(const std::string& file) {
    auto loaded = load_project_file(kExamples / file);
    EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics.format();
    return *loaded.project;
}

using testing::layer_names;
using testing::simulate;

// ---- the shipped examples -------------------------------------------------------

TEST(Planner, PlansEachReplicaAndLetsTheWholeLayoutChooseZero) {
    const Project project = example("resnet50-4gpu-2x2.json");
    ASSERT_EQ(project.data_parallel.size, 2);
    const PlanResult r = plan_pipeline(project, PlanOptions{});
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    EXPECT_EQ(r.project.data_parallel.size, 2);
    ASSERT_EQ(r.data_parallel.size(), 1U);  // the project's count, fixed
    EXPECT_EQ(r.data_parallel[0].replicas, 2);
    ASSERT_TRUE(r.plan.report && r.input.report);
    EXPECT_EQ(r.plan.report->data_parallel, 2);
    EXPECT_LE(r.plan.report->iteration_time_s, r.input.report->iteration_time_s * (1 + 1e-9));
    // Replica 0's pipeline stays on the first two devices; replica 1 follows.
    for (const PlannedStage& s : r.plan.stages) {
        EXPECT_TRUE(s.device == "node0/c0/gpu0" || s.device == "node0/c0/gpu1") << s.device;
    }
    EXPECT_NE(r.data_parallel_choice.find("2 replicas of a"), std::string::npos)
        << r.data_parallel_choice;
    // The applied project simulates to the plan's figures.
    Diagnostics d;
    const auto analyzed = analyze_project(r.project, {}, d);
    ASSERT_TRUE(analyzed) << d.format();
    EXPECT_NEAR(simulate_project(*analyzed, {}, Recording::summary).iteration_time_s,
                r.plan.report->iteration_time_s, 1e-12);
}

TEST(Planner, SearchesEveryReplicaCountThatDividesTheDevicesAndTheBatch) {
    Project project = example("resnet50-4gpu-2x2.json");
    project.data_parallel = DataParallel{};
    PlanOptions options;
    options.data_parallel = 0;  // search
    const PlanResult r = plan_pipeline(project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    ASSERT_EQ(r.data_parallel.size(), 3U);  // 1, 2 and 4 replicas
    double fastest = std::numeric_limits<double>::infinity();
    for (const DataParallelOption& o : r.data_parallel) {
        EXPECT_EQ(4 % o.replicas, 0);
        if (o.iteration_s) {
            fastest = std::min(fastest, *o.iteration_s);
        }
    }
    EXPECT_DOUBLE_EQ(r.plan.report->iteration_time_s, fastest);
    // ResNet-50's pipeline bubbles cost more than its small gradients: more
    // replicas of shorter pipelines win on four GPUs.
    EXPECT_GT(r.project.data_parallel.size, 1);
}

TEST(Planner, AReplicaCountThatDoesNotFitIsAClearError) {
    const Project project = example("resnet50-4gpu-2x2.json");
    PlanOptions options;
    options.data_parallel = 8;
    try {
        (void)plan_pipeline(project, options);
        FAIL() << "planned 8 replicas on 4 devices";
    } catch (const InputError& e) {
        EXPECT_NE(e.diagnostics().format().find("--data-parallel"), std::string::npos);
        EXPECT_NE(e.diagnostics().format().find("the topology has 4"), std::string::npos);
    }
}

TEST(Planner, NeverSlowerThanTheInputOnTheShippedExamples) {
    for (const auto& entry : std::filesystem::directory_iterator(kExamples)) {
        if (entry.path().extension() != ".json") {
            continue;
        }
        SCOPED_TRACE(entry.path().filename().string());
        const Project project = example(entry.path().filename().string());
        PlanOptions options;
        options.base_dir = kExamples;
        const PlanResult r = plan_pipeline(project, options);
        ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
        ASSERT_TRUE(r.input.report.has_value()) << r.input.reason;
        EXPECT_LE(r.plan.report->iteration_time_s, r.input.report->iteration_time_s);
        EXPECT_TRUE(r.plan.report->all_fit);
        // The applied project is valid and simulates to the same figures.
        const auto text = project_to_json(r.project).dump();
        auto reloaded = parse_project_text(text);
        ASSERT_TRUE(reloaded.project.has_value());
        EXPECT_TRUE(reloaded.diagnostics.empty()) << reloaded.diagnostics.format();
        EXPECT_NEAR(simulate(*reloaded.project).iteration_time_s, r.plan.report->iteration_time_s,
                    1e-9);
    }
}

TEST(Planner, MovesTheResNetCutTowardBalanceAndIsFaster) {
    const Project project = example("resnet50-2gpu-pipelined.json");
    // Plain plan searches the V and looped placements too (four stages on
    // the two GPUs), and keeps the fastest of everything it simulated.
    const PlanResult best = plan_pipeline(project, {});
    ASSERT_TRUE(best.feasible);
    bool looped = false;
    for (const ScheduleConsidered& s : best.schedules) {
        if (s.iteration_s) {
            EXPECT_LE(best.plan.report->iteration_time_s, *s.iteration_s + 1e-12) << s.schedule;
        }
        looped = looped || s.schedule == "zbv" || s.schedule == "interleaved-1f1b";
    }
    EXPECT_TRUE(looped);
    // Among flat plans (one schedule held), the cut moves toward balance.
    PlanOptions flat;
    flat.schedule = "zb-h2";
    const PlanResult r = plan_pipeline(project, flat);
    ASSERT_TRUE(r.feasible);
    ASSERT_EQ(r.plan.stages.size(), 2u);
    EXPECT_LE(best.plan.report->iteration_time_s, r.plan.report->iteration_time_s);
    const int input_cut = 10;  // layer2.3 ends the first stage of the example
    EXPECT_EQ(project.placement[0].layers.back(), "layer2.3");
    EXPECT_NE(r.plan.stages[0].last_layer, input_cut);
    EXPECT_LT(r.plan.report->iteration_time_s, r.input.report->iteration_time_s * 0.95);

    // With the schedule and micro-batches held fixed, the split alone is better balanced.
    const auto busy_gap = [](const SimulationReport& s) {
        return std::abs(s.devices[0].busy_s - s.devices[1].busy_s);
    };
    Project input_split = project;
    input_split.training.schedule = {r.plan.schedule, ""};
    input_split.training.microbatches = r.plan.microbatches;
    input_split.training.microbatch_size.reset();
    const SimulationReport same_settings = simulate(input_split);
    EXPECT_LT(busy_gap(*r.plan.report), busy_gap(same_settings));
    EXPECT_LT(r.plan.report->iteration_time_s, same_settings.iteration_time_s);
}

Project resnet_on_4_gpus() {
    Project p = example("resnet50-2gpu-pipelined.json");
    auto& devices = p.topology.nodes[0].containers[0].devices;
    devices.push_back({"gpu2", "A100-40GB", {}});
    devices.push_back({"gpu3", "A100-40GB", {}});
    p = with_placement(p, uniform_split(p), "gpipe", 6);
    return p;
}

TEST(Planner, BeatsUniformAndParameterBalancedSplitsOnResNetOn4Gpus) {
    const Project project = resnet_on_4_gpus();
    const PlanResult r = plan_pipeline(project, {});
    ASSERT_TRUE(r.feasible);
    // Flat splits run the plan's schedule, or its flat form when the plan
    // loops the devices.
    const std::string flat = r.plan.schedule == "interleaved-1f1b" ? std::string("1f1b")
                             : r.plan.schedule == "interleaved-zb" || r.plan.schedule == "zbv"
                                 ? std::string("zb-h1")
                                 : r.plan.schedule;
    const auto time_of = [&](const std::vector<PlannedStage>& split) {
        return simulate(with_placement(project, split, flat, r.plan.microbatches)).iteration_time_s;
    };
    const double plan = r.plan.report->iteration_time_s;
    EXPECT_LT(plan, time_of(uniform_split(project)));
    EXPECT_LT(plan, time_of(parameter_balanced_split(project)));
    // ResNet's parameters sit in the last blocks, its compute is spread out:
    // balancing parameters piles the early, compute-heavy layers on one stage.
    const auto balanced = parameter_balanced_split(project);
    EXPECT_GT(balanced[0].last_layer - balanced[0].first_layer,
              balanced[3].last_layer - balanced[3].first_layer);
}

// ---- stopping ----------------------------------------------------------------

TEST(Planner, ReportsProgressAfterEachSimulation) {
    const Project project = resnet_on_4_gpus();
    PlanOptions options;
    std::vector<int> seen;
    options.on_progress = [&](const PlanStatistics& s) { seen.push_back(s.simulations); };
    const PlanResult r = plan_pipeline(project, options);
    ASSERT_TRUE(r.feasible);
    ASSERT_GT(seen.size(), 2u);
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_GE(seen.front(), 1);  // the input is simulated first
    EXPECT_LE(seen.back(), r.statistics.simulations);
}

TEST(Planner, StopsBeforeSearchingWhenAlreadyCancelled) {
    std::stop_source source;
    source.request_stop();
    PlanOptions options;
    options.stop = source.get_token();
    int progress = 0;
    options.on_progress = [&](const PlanStatistics&) { ++progress; };
    EXPECT_THROW(static_cast<void>(plan_pipeline(resnet_on_4_gpus(), options)), PlanCancelled);
    EXPECT_EQ(progress, 0);
}

TEST(Planner, StopsAtTheNextSimulationOnceCancelled) {
    std::stop_source source;
    PlanOptions options;
    options.stop = source.get_token();
    int progress = 0;
    options.on_progress = [&](const PlanStatistics&) {
        ++progress;
        source.request_stop();
    };
    EXPECT_THROW(static_cast<void>(plan_pipeline(resnet_on_4_gpus(), options)), PlanCancelled);
    // Uncancelled, this plan reports progress several times (above).
    EXPECT_EQ(progress, 1);
}

// `plan` on Ctrl-C: a search over data × tensor layouts asked to stop once
// it has planned a layout returns the best so far, the layouts it did not
// reach marked as such; before any, it is cancelled as before.
TEST(Planner, AStoppedLayoutSearchReturnsTheBestSoFarWhenAsked) {
    const Project project = example("gpt3-175b-a100-1024.json");
    std::stop_source source;
    PlanOptions options;
    options.data_parallel = 0;    // auto
    options.tensor_parallel = 0;  // auto
    options.stop = source.get_token();
    options.best_so_far_on_stop = true;
    options.on_progress = [&](const PlanStatistics& s) {
        if (s.simulations >= 600) {  // past the first layouts (of about 2,000)
            source.request_stop();
        }
    };
    const PlanResult r = plan_pipeline(project, options);
    ASSERT_TRUE(r.interrupted);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    EXPECT_TRUE(std::any_of(r.data_parallel.begin(), r.data_parallel.end(), [](const auto& o) {
        return o.reason == "not planned: the search was stopped";
    }));
    // Not asked for, the stop is a cancellation.
    std::stop_source again;
    options.stop = again.get_token();
    options.best_so_far_on_stop = false;
    options.on_progress = [&](const PlanStatistics& s) {
        if (s.simulations >= 150) {
            again.request_stop();
        }
    };
    EXPECT_THROW(static_cast<void>(plan_pipeline(project, options)), PlanCancelled);
}

// ---- choices -----------------------------------------------------------------

TEST(Planner, HonoursAFixedScheduleAndMicroBatchCount) {
    const Project project = example("resnet50-2gpu-pipelined.json");
    PlanOptions options;
    options.schedule = "1f1b";
    options.microbatches = 8;
    const PlanResult r = plan_pipeline(project, options);
    ASSERT_TRUE(r.feasible);
    EXPECT_EQ(r.plan.schedule, "1f1b");
    EXPECT_EQ(r.plan.microbatches, 8);
    EXPECT_EQ(r.project.training.schedule.name, "1f1b");
    EXPECT_EQ(r.project.training.microbatches, 8);
    EXPECT_EQ(r.input.schedule, "1f1b");
    EXPECT_EQ(r.input.microbatches, 8);
}

TEST(Planner, RejectsOptionsItCannotHonour) {
    const Project project = example("resnet50-2gpu-pipelined.json");
    PlanOptions options;
    options.microbatches = 7;  // 120 is not a multiple of 7
    EXPECT_THROW((void)plan_pipeline(project, options), InputError);
    options.microbatches.reset();
    options.schedule = "no-such-schedule";
    EXPECT_THROW((void)plan_pipeline(project, options), InputError);
}

TEST(Planner, UsesFewerDevicesWhenThatIsTheOnlyWayToFit) {
    // 1F1B with 2 micro-batches: a first stage of 2 holds 2 micro-batches of
    // the first layer's 10 GiB; alone on one device the model holds only one.
    Project p = example("dummy-2gpu.json");
    p.model.layers[0].activation_bytes = std::int64_t{10} << 30;
    for (auto& d : p.topology.nodes[0].containers[0].devices) {
        d.overrides.memory_GiB = 15;
    }
    PlanOptions options;
    options.schedule = "1f1b";
    options.microbatches = 2;
    const PlanResult r = plan_pipeline(p, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    EXPECT_EQ(r.plan.stages.size(), 1u);
    EXPECT_TRUE(r.plan.report->all_fit);
    EXPECT_FALSE(r.input.report->all_fit);
}

TEST(Planner, PutsTheFastDeviceWhereTheHeavyLayersAre) {
    // Six devices (beyond exhaustive search): three slow in node0, three fast
    // in node1; the model is heavy at its start.
    Project p = example("dummy-2gpu.json");
    p.topology.nodes.clear();
    for (int n = 0; n < 2; ++n) {
        Node node{"node" + std::to_string(n), {{"c0", {}}}};
        for (int d = 0; d < 3; ++d) {
            Device device{"gpu" + std::to_string(d), "A100-80GB", {}};
            device.overrides.peak_tflops = n == 0 ? 2.0 : 20.0;
            node.containers[0].devices.push_back(device);
        }
        p.topology.nodes.push_back(std::move(node));
    }
    p.model.layers.clear();
    std::int64_t width = 4096;
    p.model.input.shape = {width};
    for (int l = 0; l < 12; ++l) {
        const std::int64_t out = l < 6 ? 4096 : 256;
        p.model.layers.push_back({"fc" + std::to_string(l),
                                  "linear",
                                  {{"in_features", width}, {"out_features", out}},
                                  {},
                                  {}});
        width = out;
    }
    p.placement = {{"node0/c0/gpu0", layer_names(p)}};
    const PlanResult r = plan_pipeline(p, {});
    ASSERT_TRUE(r.feasible);
    EXPECT_EQ(r.plan.stages.front().device.rfind("node1/", 0), 0u) << r.plan.stages.front().device;
    // It stays inside a node before crossing to the next.
    int crossings = 0;
    for (std::size_t k = 1; k < r.plan.stages.size(); ++k) {
        crossings +=
            r.plan.stages[k].device.substr(0, 5) != r.plan.stages[k - 1].device.substr(0, 5);
    }
    EXPECT_LE(crossings, 1);
}

// 16 equal 4096-wide linear layers on 4 GPUs of one container, with only 4
// micro-batches: 1F1B keeps a bubble of 3/7, which looping the devices (v
// stages on each) divides by v.
Project deep_model_few_microbatches() {
    Project p = example("dummy-2gpu.json");
    auto& devices = p.topology.nodes[0].containers[0].devices;
    devices.resize(2);
    devices.push_back({"gpu2", devices[0].spec, {}});
    devices.push_back({"gpu3", devices[0].spec, {}});
    p.model.layers.clear();
    p.model.input.shape = {4096};
    for (int l = 0; l < 16; ++l) {
        p.model.layers.push_back({"fc" + std::to_string(l),
                                  "linear",
                                  {{"in_features", 4096}, {"out_features", 4096}},
                                  {},
                                  {}});
    }
    p.training.batch_size = 4096;
    return with_placement(p, uniform_split(p), "1f1b", 4);
}

void expect_looped(const PlanOutcome& plan, int devices) {
    ASSERT_EQ(plan.stages.size() % static_cast<std::size_t>(devices), 0u);
    ASSERT_GE(plan.stages.size(), static_cast<std::size_t>(2 * devices));
    for (std::size_t k = 0; k < plan.stages.size(); ++k) {
        EXPECT_EQ(plan.stages[k].device, plan.stages[k % static_cast<std::size_t>(devices)].device)
            << "stage " << k;
    }
}

PlanResult plan_with(const Project& project, std::optional<std::string> schedule) {
    PlanOptions options;
    options.microbatches = 4;
    options.schedule = std::move(schedule);
    return plan_pipeline(project, options);
}

TEST(Planner, PlansInterleavedOneFOneBAsALoopedPlacement) {
    const Project project = deep_model_few_microbatches();
    const PlanResult looped = plan_with(project, "interleaved-1f1b");
    ASSERT_TRUE(looped.feasible) << looped.why_nothing_fits;
    EXPECT_EQ(looped.plan.schedule, "interleaved-1f1b");
    expect_looped(looped.plan, 4);
    EXPECT_TRUE(looped.plan.report->all_fit);
    // The project --apply writes simulates to the reported figures.
    EXPECT_DOUBLE_EQ(simulate(looped.project).iteration_time_s,
                     looped.plan.report->iteration_time_s);
    // Looping shortens 1F1B's bubble: faster than the best flat 1F1B plan.
    const PlanResult flat = plan_with(project, "1f1b");
    ASSERT_TRUE(flat.feasible);
    EXPECT_EQ(flat.plan.stages.size(), 4u);
    EXPECT_LT(looped.plan.report->iteration_time_s, flat.plan.report->iteration_time_s);
    EXPECT_LT(looped.plan.report->bubble_fraction, flat.plan.report->bubble_fraction);
    // Left free, the planner considers looped placements with the others and
    // picks the fastest of all.
    const PlanResult free = plan_with(project, std::nullopt);
    ASSERT_TRUE(free.feasible);
    for (const auto* fixed : {&looped, &flat}) {
        EXPECT_LE(free.plan.report->iteration_time_s, fixed->plan.report->iteration_time_s);
    }
    // best_split is the one-stage-per-device building block.
    EXPECT_THROW((void)best_split(project, {}, 4, "interleaved-1f1b"), InputError);
}

TEST(Planner, SaysWhyInterleavingCannotBePlanned) {
    // A batch of one sample: one micro-batch, not a multiple of any device count.
    Project project = deep_model_few_microbatches();
    project.training.batch_size = 1;
    project = with_placement(project, uniform_split(project), "gpipe", 1);
    PlanOptions options;
    options.schedule = "interleaved-1f1b";
    try {
        (void)plan_pipeline(project, options);
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("multiple of a device count"), std::string::npos)
            << e.what();
    }
}

TEST(Planner, ExplainsWhenNothingFits) {
    Project p = example("resnet50-2gpu-pipelined.json");
    // About 300 MB of weights, gradients and momentum on 2 x 100 MiB.
    for (auto& d : p.topology.nodes[0].containers[0].devices) {
        d.overrides.memory_GiB = 100.0 / 1024;
    }
    const PlanResult r = plan_pipeline(p, {});
    EXPECT_FALSE(r.feasible);
    const std::string& why = r.why_nothing_fits;
    EXPECT_NE(why.find("nothing fits in memory"), std::string::npos) << why;
    EXPECT_NE(why.find("which has 100 MiB"), std::string::npos) << why;
    EXPECT_NE(why.find("weights, gradients and optimizer state"), std::string::npos) << why;
    EXPECT_NE(why.find("more devices"), std::string::npos) << why;
    EXPECT_NE(why.find("the cluster has 2"), std::string::npos) << why;
    EXPECT_NE(why.find("activation checkpointing"), std::string::npos) << why;
    EXPECT_TRUE(r.plan.stages.empty());
}

TEST(Planner, SaysWhenOneLayerIsTooLargeForAnyDevice) {
    Project p = example("resnet50-2gpu-pipelined.json");
    for (auto& d : p.topology.nodes[0].containers[0].devices) {
        d.overrides.memory_GiB = 10.0 / 1024;
    }
    const PlanResult r = plan_pipeline(p, {});
    EXPECT_FALSE(r.feasible);
    EXPECT_NE(r.why_nothing_fits.find("alone needs"), std::string::npos) << r.why_nothing_fits;
    EXPECT_EQ(r.why_nothing_fits.find("more devices"), std::string::npos) << r.why_nothing_fits;
}

TEST(Planner, ProfiledCostsMoveTheSplit) {
    const Project project = example("dummy-2gpu.json");
    Profile profile;
    profile.device_kind = "cuda";
    profile.microbatch_size = 8;
    // net0 very slow, the others cheap: the best 2-stage split isolates net0.
    profile.layers = {{"net0", 50, 50, 50, {}, {}, {}},
                      {"relu", 0.01, 0.01, 0, {}, {}, {}},
                      {"net1", 1, 1, 1, {}, {}, {}}};
    PlanOptions options;
    options.costs.profile = &profile;
    const SplitResult split = best_split(project, options, 4, "gpipe", 2);
    ASSERT_TRUE(split.feasible);
    EXPECT_EQ(split.first_layer, (std::vector<int>{0, 1}));
    profile.layers = {{"net0", 0.01, 0.01, 0.01, {}, {}, {}},
                      {"relu", 0.01, 0.01, 0, {}, {}, {}},
                      {"net1", 50, 50, 50, {}, {}, {}}};
    const SplitResult other = best_split(project, options, 4, "gpipe", 2);
    EXPECT_EQ(other.first_layer, (std::vector<int>{0, 2}));
}

}  // namespace
}  // namespace pipewright

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "pipewright/core/project_io.h"
#include "pipewright/core/recomputation_units.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/schedule_comparison.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples";

AnalyzedProject analyzed_example(const std::string& file, AnalysisOptions options = {}) {
    auto loaded = load_project_file(kExamples / file);
    EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics.format();
    Diagnostics d;
    options.base_dir = kExamples;
    auto analyzed = analyze_project(*loaded.project, options, d);
    EXPECT_TRUE(d.empty()) << d.format();
    return *analyzed;
}

TEST(Simulation, EveryShippedExampleSimulatesAndFits) {
    for (const auto& entry : std::filesystem::directory_iterator(kExamples)) {
        if (entry.path().extension() != ".json") {
            continue;
        }
        SCOPED_TRACE(entry.path().filename().string());
        auto project = analyzed_example(entry.path().filename().string());
        auto report = simulate_project(project);
        EXPECT_GT(report.iteration_time_s, 0);
        EXPECT_GT(report.throughput_samples_per_s, 0);
        EXPECT_GE(report.bubble_fraction, 0);
        EXPECT_LT(report.bubble_fraction, 1);
        EXPECT_TRUE(report.all_fit);
        EXPECT_EQ(report.devices.size(), static_cast<std::size_t>(project.num_ranks()));
        EXPECT_EQ(report.timeline.memory.size(), report.devices.size());
        EXPECT_NEAR(report.throughput_samples_per_s * report.iteration_time_s, report.batch_size,
                    1e-6 * report.batch_size);
    }
}

TEST(Simulation, PipelinedResNetBeatsNaiveModelParallelism) {
    auto naive = simulate_project(analyzed_example("resnet50-2gpu-naive.json"));
    auto pipelined = simulate_project(analyzed_example("resnet50-2gpu-pipelined.json"));
    EXPECT_EQ(naive.microbatches, 1);
    EXPECT_EQ(pipelined.microbatches, 6);
    EXPECT_EQ(pipelined.microbatch_size, 20);
    // Six micro-batches of 20 launch six times the kernels, each smaller
    // (docs/validation.md compares the ratio with the seed article's).
    EXPECT_LT(pipelined.iteration_time_s, naive.iteration_time_s * 0.9);
    // Naive model parallelism leaves each device idle about half the time.
    EXPECT_NEAR(naive.bubble_fraction, 0.5, 0.05);
}

TEST(Simulation, CostOverridesReplaceTheAnalyticEstimate) {
    auto project = analyzed_example("dummy-2gpu.json");
    for (auto& layer : project.project.model.layers) {
        layer.cost = CostOverride{1.0, 2.0, 0.0};  // ms per micro-batch
    }
    auto report = simulate_project(project);
    ASSERT_EQ(report.stages.size(), 2u);
    EXPECT_DOUBLE_EQ(report.stages[0].forward_s, 2e-3);  // net0 + relu
    EXPECT_DOUBLE_EQ(report.stages[1].forward_s, 1e-3);
    EXPECT_DOUBLE_EQ(report.stages[0].backward_s(), 4e-3);
}

TEST(Simulation, ProfileReplacesAnalyticCostsAndLinks) {
    auto project = analyzed_example("mlp-cpu.json");
    Profile profile;
    profile.microbatch_size = project.microbatch_size * 2;  // scaled down by half
    for (const auto& layer : project.project.model.layers) {
        profile.layers.push_back(
            {layer.name, 4.0, 2.0, 2.0, std::nullopt, std::nullopt, std::nullopt});
    }
    profile.transfer = LinkSpec{1.0, 100.0};
    CostModelOptions options;
    options.profile = &profile;
    auto report = simulate_project(project, options);
    const auto& first = project.stages.front();
    const int layers = first.last_layer - first.first_layer + 1;
    EXPECT_NEAR(report.stages[0].forward_s, layers * 2.0e-3, 1e-12);
    ASSERT_FALSE(report.links.empty());
    bool used = false;
    for (const auto& link : report.links) {
        if (link.transfers > 0) {
            used = true;
            EXPECT_NEAR(link.busy_s, link.bytes / 1e9, 1e-12);
        }
    }
    EXPECT_TRUE(used);
}

TEST(Simulation, ProfileRoundTripsThroughJson) {
    Profile p;
    p.device_kind = "cpu";
    p.device_name = "x86_64";
    p.microbatch_size = 8;
    p.layers = {{"a", 1.5, 0.5, 0.25, 2.0, 0.125, 1024},
                {"b", 0.1, 0.2, 0.0, std::nullopt, std::nullopt, std::nullopt}};
    p.transfer = LinkSpec{2.5, 40};
    EXPECT_EQ(profile_from_json(profile_to_json(p)), p);
    auto bad = profile_to_json(p);
    bad["layers"][1]["forward_ms"] = -1;
    try {
        (void)profile_from_json(bad);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_TRUE(e.diagnostics().mentions("layers[1].forward_ms")) << e.what();
    }
}

void expect_same_figures(const SimulationReport& a, const SimulationReport& b) {
    // Exact comparisons: the summary must not drift by a rounding either.
    EXPECT_EQ(a.schedule, b.schedule);
    EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
    EXPECT_EQ(a.throughput_samples_per_s, b.throughput_samples_per_s);
    EXPECT_EQ(a.bubble_fraction, b.bubble_fraction);
    EXPECT_EQ(a.all_fit, b.all_fit);
    ASSERT_EQ(a.devices.size(), b.devices.size());
    for (std::size_t r = 0; r < a.devices.size(); ++r) {
        SCOPED_TRACE("rank " + std::to_string(r));
        EXPECT_EQ(a.devices[r].name, b.devices[r].name);
        EXPECT_EQ(a.devices[r].busy_s, b.devices[r].busy_s);
        EXPECT_EQ(a.devices[r].start_s, b.devices[r].start_s);
        EXPECT_EQ(a.devices[r].end_s, b.devices[r].end_s);
        EXPECT_EQ(a.devices[r].bubble_fraction, b.devices[r].bubble_fraction);
        EXPECT_EQ(a.devices[r].peak_memory_bytes, b.devices[r].peak_memory_bytes);
    }
    ASSERT_EQ(a.links.size(), b.links.size());
    for (std::size_t l = 0; l < a.links.size(); ++l) {
        EXPECT_EQ(a.links[l].busy_s, b.links[l].busy_s);
        EXPECT_EQ(a.links[l].transfers, b.links[l].transfers);
    }
}

TEST(Simulation, SummaryOnlyGivesTheFiguresOfTheRecordedTimeline) {
    std::set<std::string> schedules_compared;
    // The shipped examples and the documentation's (which have the V).
    std::vector<std::filesystem::path> files;
    for (const auto& folder :
         {kExamples, kExamples.parent_path().parent_path() / "docs" / "examples"}) {
        for (const auto& entry : std::filesystem::directory_iterator(folder)) {
            if (entry.path().extension() == ".json") {
                files.push_back(entry.path());
            }
        }
    }
    for (const auto& path : files) {
        const std::string file = path.filename().string();
        for (const auto& info : schedule_catalog()) {
            AnalysisOptions options;
            options.schedule = info.name;
            options.base_dir = path.parent_path();
            auto loaded = load_project_file(path);
            Diagnostics d;
            auto project = analyze_project(*loaded.project, options, d);
            if (!project) {
                continue;  // this placement cannot run this schedule
            }
            SCOPED_TRACE(file + " with " + info.name);
            const auto full = simulate_project(*project, {}, Recording::timeline);
            const auto summary = simulate_project(*project, {}, Recording::summary);
            expect_same_figures(summary, full);
            EXPECT_EQ(full.timeline.events.size(), project->schedule.action_count());
            EXPECT_TRUE(summary.timeline.events.empty());
            EXPECT_TRUE(summary.timeline.memory.empty());
            EXPECT_EQ(summary.timeline.devices, full.timeline.devices);
            schedules_compared.insert(info.name);
        }
    }
    EXPECT_EQ(schedules_compared.size(), schedule_catalog().size());
}

TEST(Simulation, SummaryOnlyCountsTheOptimizerStepsOfAProfile) {
    auto project = analyzed_example("mlp-cpu.json");
    Profile profile;
    profile.microbatch_size = project.microbatch_size;
    for (const auto& layer : project.project.model.layers) {
        profile.layers.push_back({layer.name, 4.0, 2.0, 2.0, std::nullopt, std::nullopt, 30.0});
    }
    CostModelOptions options;
    options.profile = &profile;
    const auto full = simulate_project(project, options, Recording::timeline);
    const auto summary = simulate_project(project, options, Recording::summary);
    // The steps end the iteration after the last action.
    EXPECT_GT(full.iteration_time_s, full.timeline.makespan_s());
    expect_same_figures(summary, full);
}

TEST(Simulation, InterNodeTransfersShareTheNodeLink) {
    auto project = analyzed_example("seven-layers-two-nodes.json");
    auto report = simulate_project(project);
    int inter_node_links = 0;
    for (const auto& link : report.links) {
        if (link.name.find("inter-node") != std::string::npos && link.transfers > 0) {
            ++inter_node_links;
        }
    }
    // One direction each way between node0 and node1.
    EXPECT_EQ(inter_node_links, 2);
}

double start_of(const Timeline& t, const std::string& action, bool end = false) {
    for (const TimelineEvent& e : t.events) {
        if (to_string(e.action) == action) {
            return end ? e.end_s : e.start_s;
        }
    }
    throw std::runtime_error("no event " + action);
}

// Gloo between CPU workers of one machine moves a message in the sending
// thread: the sender's next forward waits for its send. Between GPUs it
// does not.
TEST(Simulation, CpuWorkersOfOneMachineWaitForTheirSendsAndGpusDoNot) {
    for (const char* example : {"mlp-cpu.json", "dummy-2gpu.json"}) {
        SCOPED_TRACE(example);
        auto project = analyzed_example(example);
        const bool cpu = project.rank_specs.at(0).kind == "cpu";
        ASSERT_EQ(cpu, std::string(example) == "mlp-cpu.json");
        const Timeline t = simulate_project(project).timeline;
        const double sent = start_of(t, "0SEND_F0", true);
        const double forward_ended = start_of(t, "0F0", true);
        ASSERT_GT(sent, forward_ended);
        EXPECT_DOUBLE_EQ(start_of(t, "0F1"), cpu ? sent : forward_ended);
    }
}

// A profile's ready receive is Gloo's between two processes of one machine:
// it prices the receives of CPU workers there, not those between GPUs.
TEST(Simulation, AProfilesReadyReceivePricesCpuWorkersReceivesOnly) {
    Profile profile;
    profile.transfer = LinkSpec{2.0, 30.0};
    profile.ready_receive_us = 25;
    CostModelOptions options;
    options.profile = &profile;
    for (const char* example : {"mlp-cpu.json", "dummy-2gpu.json"}) {
        SCOPED_TRACE(example);
        auto project = analyzed_example(example);
        const bool cpu = project.rank_specs.at(0).kind == "cpu";
        SimulationInput input;
        describe_links(project, options, input);
        ASSERT_FALSE(input.links.empty());
        for (const SimLink& link : input.links) {
            EXPECT_DOUBLE_EQ(link.receive_s, cpu ? 25e-6 : 0.0) << link.name;
        }
        describe_links(project, {}, input);
        for (const SimLink& link : input.links) {
            EXPECT_DOUBLE_EQ(link.receive_s, 0.0) << "no profile: " << link.name;
        }
    }
}

TEST(Simulation, MemoryOverCapacityIsFlagged) {
    auto project = analyzed_example("dummy-2gpu.json");
    project.rank_specs[1].memory_bytes = 100;  // far too small
    auto report = simulate_project(project);
    EXPECT_TRUE(report.devices[0].fits);
    EXPECT_FALSE(report.devices[1].fits);
    EXPECT_FALSE(report.all_fit);
}

TEST(Simulation, ActivationCheckpointingTradesMemoryForTime) {
    auto plain = analyzed_example("transformer-interleaved-4gpu.json");
    auto checkpointed = plain;
    checkpointed.project.training.recompute = Recompute::full;
    auto a = simulate_project(plain);
    auto b = simulate_project(checkpointed);
    EXPECT_GT(b.iteration_time_s, a.iteration_time_s);
    for (std::size_t r = 0; r < a.devices.size(); ++r) {
        EXPECT_LT(b.devices[r].peak_memory_bytes, a.devices[r].peak_memory_bytes);
    }
}

// Under full recomputation a stage keeps its input per micro-batch, and its
// backward holds the micro-batch's activations of the whole stage again: with
// GPipe, whose first backward starts with every micro-batch in flight, the
// peak above the static memory is m inputs and one micro-batch's stash,
// where without recomputation it is m stashes.
// Full recomputation keeps each unit's input (a block, or the layers between
// blocks), and a whole backward rebuilds one unit at a time (Megatron-LM's
// per-layer recomputation); a split backward's I rebuilds the whole stage,
// whose graph W needs.
TEST(Simulation, FullRecomputationKeepsEachUnitsInputAndRebuildsOneUnitAtATime) {
    auto plain = analyzed_example("resnet50-2gpu-pipelined.json");
    ASSERT_EQ(plain.project.training.schedule.name, "gpipe");
    auto checkpointed = plain;
    checkpointed.project.training.recompute = Recompute::full;
    const StageCost kept = stage_costs(plain, {}).at(0);
    const StageCost recomputed = stage_costs(checkpointed, {}).at(0);
    const auto& stage = plain.stages.at(0);
    const DeviceSpec& device = plain.rank_specs.at(static_cast<std::size_t>(stage.rank));
    // The stem, each bottleneck, the head: units of their own.
    const std::vector<int> units =
        recomputation_units(plain.project.model.layers, stage.first_layer, stage.last_layer);
    ASSERT_GE(units.size(), 3U);
    double inputs = kept.input_bytes;  // the images
    double largest = 0;
    for (std::size_t u = 0; u < units.size(); ++u) {
        if (u > 0) {
            inputs += layer_cost(plain, units[u] - 1, device, {}).output_bytes;
        }
        const int end = u + 1 < units.size() ? units[u + 1] : stage.last_layer + 1;
        double stash = 0;
        for (int l = units[u]; l < end; ++l) {
            stash += layer_cost(plain, l, device, {}).stash_bytes;
        }
        largest = std::max(largest, stash);
    }
    ASSERT_LT(largest, kept.stash_bytes / 2);
    EXPECT_DOUBLE_EQ(recomputed.stash_bytes, inputs);
    EXPECT_LT(recomputed.stash_bytes, kept.stash_bytes);
    EXPECT_DOUBLE_EQ(recomputed.transient_backward_bytes, largest);
    EXPECT_DOUBLE_EQ(recomputed.transient_backward_input_bytes, kept.stash_bytes);

    const double m = plain.microbatches;
    ASSERT_GE(m, 2);
    const auto a = simulate_project(plain).devices.at(0).peak_memory_bytes;
    const auto b = simulate_project(checkpointed).devices.at(0).peak_memory_bytes;
    // Both peaks stand on the same static memory.
    EXPECT_NEAR(static_cast<double>(a - b), m * kept.stash_bytes - (m * inputs + largest), 2.0);
}

// zb-auto builds its lists within what each device has left: on the GPT-3
// example, where ZB-H1 and ZB-H2 overflow most GPUs, every GPU fits.
TEST(Simulation, ZeroBubbleAutoKeepsEveryDeviceWithinItsMemory) {
    AnalysisOptions options;
    for (const char* schedule : {"zb-h1", "zb-h2", "zb-auto"}) {
        SCOPED_TRACE(schedule);
        options.schedule = schedule;
        const auto report = simulate_project(analyzed_example("gpt3-175b-p4d.json", options), {},
                                             Recording::summary);
        EXPECT_EQ(report.all_fit, std::string(schedule) == "zb-auto");
    }
    // Where memory is plenty, it is at least as fast as both.
    options.schedule = "zb-auto";
    const double automatic =
        simulate_project(analyzed_example("mlp-cpu.json", options)).iteration_time_s;
    for (const char* schedule : {"zb-h1", "zb-h2"}) {
        options.schedule = schedule;
        EXPECT_LT(automatic,
                  simulate_project(analyzed_example("mlp-cpu.json", options)).iteration_time_s)
            << schedule;
    }
}

// GPT-3 does not fit on one A100 (2.55 TiB): gains over it read
// "+84215.1 %". They are over the slowest schedule that fits instead.
TEST(ScheduleComparison, WhenOneDeviceCannotHoldTheModelGainsAreOverTheSlowestThatFits) {
    auto loaded = load_project_file(kExamples / "gpt3-175b-p4d.json");
    const auto rows = compare_schedules(*loaded.project, {}, {});
    ASSERT_TRUE(rows[0].report.has_value());
    EXPECT_FALSE(rows[0].report->all_fit);
    EXPECT_FALSE(rows[0].baseline);
    const ComparisonRow* reference = nullptr;
    for (const auto& row : rows) {
        if (row.baseline) {
            EXPECT_EQ(reference, nullptr) << "one reference";
            reference = &row;
        }
    }
    ASSERT_NE(reference, nullptr);
    ASSERT_TRUE(reference->report && reference->report->all_fit);
    for (const auto& row : rows) {
        if (row.report && row.report->all_fit) {
            EXPECT_LE(row.report->iteration_time_s, reference->report->iteration_time_s)
                << row.label << " is slower than the reference";
            EXPECT_NEAR(
                row.gain_percent,
                (reference->report->iteration_time_s / row.report->iteration_time_s - 1) * 100,
                1e-9)
                << row.label;
        }
    }
}

// A layout whose groups span replicas (experts, context) is compared with
// the whole model on one device, which drops those groups as it drops the
// replicas: the baseline runs, so the gains mean something.
TEST(ScheduleComparison, AGroupedLayoutsBaselineIsTheWholeModelOnOneDevice) {
    auto loaded = load_project_file(kExamples / "llama3.1-8b-h100-128k.json");
    ASSERT_TRUE(loaded.project);
    const Project single = single_device_project(*loaded.project, "H100-SXM");
    EXPECT_EQ(single.context_parallel, ContextParallel{});
    EXPECT_EQ(single.expert_parallel, ExpertParallel{});
    const auto rows = compare_schedules(*loaded.project, {}, {});
    ASSERT_FALSE(rows.empty());
    ASSERT_TRUE(rows.front().report.has_value()) << rows.front().reason;
    EXPECT_TRUE(has_gains(rows));
    // Without a baseline that ran, there are no gains to speak of.
    std::vector<ComparisonRow> none = rows;
    none.front().report.reset();
    for (ComparisonRow& row : none) {
        row.baseline = &row == &none.front();
    }
    EXPECT_FALSE(has_gains(none));
}

TEST(ScheduleComparison, ListsEverySchedulePlusTheBaseline) {
    auto loaded = load_project_file(kExamples / "resnet50-2gpu-pipelined.json");
    auto rows = compare_schedules(*loaded.project, {}, {});
    ASSERT_EQ(rows.size(), schedule_catalog().size() + 1);
    EXPECT_TRUE(rows[0].baseline);
    ASSERT_TRUE(rows[0].report.has_value());
    EXPECT_EQ(rows[0].report->devices.size(), 1u);
    for (const auto& row : rows) {
        if (row.label == "interleaved-1f1b" || row.label == "interleaved-zb" ||
            row.label == "zbv" || row.label == "dualpipev") {
            EXPECT_FALSE(row.report.has_value());
            EXPECT_NE(row.reason.find("stages"), std::string::npos) << row.reason;
        } else {
            ASSERT_TRUE(row.report.has_value()) << row.label << ": " << row.reason;
        }
    }
    auto find = [&](const std::string& label) -> const ComparisonRow& {
        for (const auto& r : rows) {
            if (r.label == label) {
                return r;
            }
        }
        throw std::runtime_error("missing " + label);
    };
    EXPECT_GT(find("gpipe").gain_percent, 15);
    EXPECT_LT(find("naive").gain_percent, 0.5);  // naive is no faster than one device
    const double base = rows[0].report->iteration_time_s;
    EXPECT_NEAR(find("gpipe").gain_percent,
                (base / find("gpipe").report->iteration_time_s - 1) * 100, 1e-9);
}

}  // namespace
}  // namespace pipewright

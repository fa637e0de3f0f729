#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "commands.h"
#include "pipewright/core/zero_bubble_auto.h"
#include "run_handoff.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
const fs::path kExamples = fs::path(PIPEWRIGHT_ASSETS_DIR) / "examples";

using cli::RunArgs;
using cli::schedule_cost_arguments;
using testing::example;
using testing::run_cli;
using testing::TempDir;
using Result = testing::CliResult;

nlohmann::json read_json(const fs::path& p) {
    std::ifstream in(p);
    return nlohmann::json::parse(in);
}

TEST(Cli, SimulatePrintsASummaryWithAPerDeviceTable) {
    auto r = run_cli({"simulate", example("resnet50-2gpu-pipelined.json")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("gpipe · 6 micro-batches of 20 · batch 120"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("samples/s"), std::string::npos);
    EXPECT_NE(r.out.find("node0/c0/gpu0"), std::string::npos);
    EXPECT_NE(r.out.find("node0/c0/gpu1"), std::string::npos);
    // Nothing on standard error but the host's pace (the test after this one).
    EXPECT_TRUE(r.err.starts_with("pipewright: warning: the kernels of stage 1")) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(Cli, SimulateJsonHasTheDocumentedFields) {
    auto r = run_cli({"simulate", example("dummy-2gpu.json"), "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"schedule", "microbatches", "batch_size", "iteration_time_s",
                            "throughput_samples_per_s", "bubble_fraction", "devices"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    ASSERT_EQ(j["devices"].size(), 2u);
    for (const char* key : {"name", "busy_s", "start_s", "end_s", "bubble_fraction",
                            "peak_memory_bytes", "memory_capacity_bytes", "fits"}) {
        EXPECT_TRUE(j["devices"][0].contains(key)) << key;
    }
    EXPECT_EQ(j["schedule"], "gpipe");
    EXPECT_EQ(j["microbatches"], 4);
    EXPECT_EQ(j["devices"][1]["name"], "node0/c0/gpu1");
}

// Where the time goes: every stage's kernels in JSON, the busiest stage's
// as a table with --kernels.
TEST(Cli, SimulateSaysWhereEachStagesTimeGoes) {
    auto r = run_cli({"simulate", example("dummy-2gpu.json"), "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["stages"].size(), 2U);
    const auto& stage = j["stages"][1];
    EXPECT_EQ(stage["device"], "node0/c0/gpu1");
    EXPECT_EQ(stage["first_layer"], 2);
    const auto& forward = stage["kernels"]["forward"];
    ASSERT_FALSE(forward.empty());
    double seconds = 0;
    for (const auto& k : forward) {
        for (const char* key : {"name", "kind", "launches", "seconds", "flops", "bytes"}) {
            EXPECT_TRUE(k.contains(key)) << key;
        }
        seconds += k["seconds"].get<double>();
    }
    EXPECT_NEAR(seconds, stage["forward_s"].get<double>(), 1e-12);
    EXPECT_EQ(forward[0]["name"], "linear");

    r = run_cli({"simulate", example("gpt3-175b-p4d.json"), "--kernels"});
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* text : {"Where the time goes: stage", "forward:", "input gradient:",
                             "weight gradient:", "qkv", "attention scores", "TFLOP/s", "compute",
                             "recomputing the forward (activation checkpointing)"}) {
        EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
    }
}

// What each stage holds, in JSON: on the GPT-3 example (full recomputation,
// one block a stage) a block keeps its input, 2·s·b·h bytes, per micro-batch
// and rebuilds its activations during a backward, s·b·h·(34 + 5·a·s/h)
// bytes (Korthikanti et al. 2022, without tensor parallelism).
TEST(Cli, SimulateSaysWhatEachStageHolds) {
    const auto r = run_cli({"simulate", example("gpt3-175b-p4d.json"), "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& stage = j["stages"][1];
    ASSERT_EQ(stage["first_layer"], 1);
    ASSERT_EQ(stage["last_layer"], 1);
    const double s = 2048, b = 1, h = 12288, a = 96;
    EXPECT_DOUBLE_EQ(stage["stash_bytes"].get<double>(), 2 * s * b * h);
    EXPECT_DOUBLE_EQ(stage["transient_backward_bytes"].get<double>(),
                     s * b * h * (34 + 5 * a * s / h));
    EXPECT_DOUBLE_EQ(stage["transient_backward_input_bytes"].get<double>(),
                     stage["transient_backward_bytes"].get<double>());
    EXPECT_DOUBLE_EQ(stage["transient_forward_bytes"].get<double>(), 0);
    EXPECT_GT(stage["weight_stash_bytes"].get<double>(), 0);
}

// Kernels shorter than an eager framework's host issues them: simulate warns
// on standard error, and the figures stay on standard output as they were.
TEST(Cli, SimulateWarnsWhereTheHostLikelySetsThePace) {
    const std::string warning = "pipewright: warning: the kernels of stage 1 (node0/c0/gpu1) take ";
    auto r = run_cli({"simulate", example("resnet50-2gpu-pipelined.json")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find(warning), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("likely paced by its host"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("paced by its host"), std::string::npos);
    // Every schedule runs the same kernels: comparing them warns once.
    r = run_cli({"simulate", example("resnet50-2gpu-pipelined.json"), "--compare-schedules"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(r.err.starts_with(warning)) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    // The flat model prices no kernels, and Llama 3.1 8B's are long.
    r = run_cli({"simulate", example("resnet50-2gpu-pipelined.json"), "--efficiency", "0.5"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("paced by its host"), std::string::npos) << r.err;
    r = run_cli({"simulate", example("llama3.1-8b-h100-node.json")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("paced by its host"), std::string::npos) << r.err;

    // --json says it too, with the pace of the stage with the shortest kernels.
    for (const auto& [file, bound] : {std::pair{"resnet50-2gpu-pipelined.json", true},
                                      std::pair{"llama3.1-8b-h100-node.json", false}}) {
        r = run_cli({"simulate", example(file), "--json"});
        ASSERT_EQ(r.code, 0) << r.err;
        const auto pace = nlohmann::json::parse(r.out).at("kernel_pace");
        EXPECT_EQ(pace.at("likely_host_bound"), bound) << file;
        EXPECT_EQ(pace.at("seconds_per_kernel").get<double>() < 55e-6, bound) << file;
        EXPECT_GT(pace.at("launches").get<int>(), 0);
    }
}

TEST(Cli, OptionsOverrideTheProjectSettings) {
    auto r = run_cli({"simulate", example("dummy-2gpu.json"), "--json", "--schedule", "1f1b",
                      "--microbatches", "8", "--batch-size", "64"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["schedule"], "1f1b");
    EXPECT_EQ(j["microbatches"], 8);
    EXPECT_EQ(j["batch_size"], 64);
}

TEST(Cli, WritesTraceTimelineAndCsvThatReadBack) {
    TempDir dir;
    auto r = run_cli({"simulate", example("seven-layers-two-nodes.json"), "--trace",
                      (dir / "trace.json").string(), "--timeline", (dir / "timeline.json").string(),
                      "--export-csv", (dir / "schedule.csv").string(), "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto trace = read_json(dir / "trace.json");
    ASSERT_TRUE(trace.contains("traceEvents"));
    EXPECT_GT(trace["traceEvents"].size(), 10u);
    auto timeline = read_json(dir / "timeline.json");
    EXPECT_EQ(timeline["format"], "pipewright-timeline");
    // The exported schedule simulated from CSV gives the same iteration.
    auto from_csv = run_cli({"simulate", example("seven-layers-two-nodes.json"), "--json",
                             "--schedule-csv", (dir / "schedule.csv").string()});
    ASSERT_EQ(from_csv.code, 0) << from_csv.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(from_csv.out)["iteration_time_s"].get<double>(),
                     nlohmann::json::parse(r.out)["iteration_time_s"].get<double>());
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(Cli, WritesTheSchedulesForTorchsLoadCsv) {
    TempDir dir;
    const std::string project = example("seven-layers-two-nodes.json");
    auto plain = run_cli({"simulate", project, "--json"});
    ASSERT_EQ(plain.code, 0) << plain.err;
    const double simulated = nlohmann::json::parse(plain.out)["iteration_time_s"].get<double>();
    for (const char* format : {"compute-only", "compute-comms"}) {
        SCOPED_TRACE(format);
        const fs::path csv = dir / (std::string(format) + ".csv");
        auto r =
            run_cli({"simulate", project, "--export-csv", csv.string(), "--csv-format", format});
        ASSERT_EQ(r.code, 0) << r.err;
        const bool only = std::string(format) == "compute-only";
        EXPECT_NE(r.out.find(only ? "format=\"compute_only\"" : "format=\"compute_comms\""),
                  std::string::npos)
            << r.out;
        const std::string text = read_text(csv);
        EXPECT_EQ(text.find("SEND_F") == std::string::npos, only) << text;
        EXPECT_EQ(text.find("WAIT_SEND_F") == std::string::npos, only) << text;
        // Both read back to what was simulated: the compute-only one is
        // lowered again, and the receives torch posts early wait where the
        // data is used, as in torch's runtime.
        auto back = run_cli({"simulate", project, "--json", "--schedule-csv", csv.string()});
        ASSERT_EQ(back.code, 0) << back.err;
        EXPECT_DOUBLE_EQ(nlohmann::json::parse(back.out)["iteration_time_s"].get<double>(),
                         simulated);
    }
    auto unknown = run_cli({"simulate", project, "--export-csv", (dir / "x.csv").string(),
                            "--csv-format", "compute_only"});
    EXPECT_NE(unknown.code, 0);
    EXPECT_NE(unknown.err.find("expected pipewright, compute-only or compute-comms"),
              std::string::npos)
        << unknown.err;
    auto alone = run_cli({"simulate", project, "--csv-format", "compute-only"});
    EXPECT_NE(alone.code, 0);
    EXPECT_NE(alone.err.find("--export-csv"), std::string::npos) << alone.err;
}

// zb-auto is built for the project's costs: the lists exported are the ones
// simulated (they read back to the same time), and a run hands the same
// costs to its processes.
TEST(Cli, ZeroBubbleAutoIsBuiltForTheProjectsCosts) {
    TempDir dir;
    const std::string project = example("resnet50-2gpu-pipelined.json");
    auto sim = run_cli({"simulate", project, "--schedule", "zb-auto", "--json"});
    ASSERT_EQ(sim.code, 0) << sim.err;
    const double simulated = nlohmann::json::parse(sim.out)["iteration_time_s"].get<double>();
    auto h1 = run_cli({"simulate", project, "--schedule", "zb-h1", "--json"});
    ASSERT_EQ(h1.code, 0) << h1.err;
    EXPECT_LE(simulated,
              nlohmann::json::parse(h1.out)["iteration_time_s"].get<double>() * (1 + 1e-12));
    const fs::path csv = dir / "zb-auto.csv";
    auto exported =
        run_cli({"simulate", project, "--schedule", "zb-auto", "--export-csv", csv.string()});
    ASSERT_EQ(exported.code, 0) << exported.err;
    auto back = run_cli({"simulate", project, "--json", "--schedule-csv", csv.string()});
    ASSERT_EQ(back.code, 0) << back.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(back.out)["iteration_time_s"].get<double>(), simulated);

    RunArgs run;
    run.project = project;
    run.schedule = "zb-auto";
    const auto args = schedule_cost_arguments(run);
    ASSERT_EQ(args.size(), 2U);
    EXPECT_EQ(args[0], "--schedule-costs");
    const AutoScheduleCosts costs = auto_costs_from_text(args[1]);
    EXPECT_EQ(costs.stages.size(), 2U);
    EXPECT_EQ(auto_costs_text(costs), args[1]);  // exact both ways
    EXPECT_GT(costs.stages[0].forward_s, 0);
    run.schedule = "zb-h1";
    EXPECT_TRUE(schedule_cost_arguments(run).empty());
    run.schedule = "zb-auto";
    run.schedule_csv = csv.string();
    EXPECT_TRUE(schedule_cost_arguments(run).empty());
}

TEST(Cli, InvalidProjectExitsOneAndNamesEveryProblem) {
    TempDir dir;
    auto j = read_json(kExamples / "dummy-2gpu.json");
    j["model"]["layers"][2]["in_features"] = 7;
    j["placement"][1]["device"] = "node0/c0/gpu9";
    j["training"]["microbatches"] = 5;
    std::ofstream(dir / "bad.json") << j.dump(2);
    auto r = run_cli({"simulate", (dir / "bad.json").string()});
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(r.out.empty());
    EXPECT_NE(r.err.find("model.layers[2]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("placement[1].device"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("training.microbatches"), std::string::npos) << r.err;
}

TEST(Cli, ScheduleConstraintIsExplained) {
    auto r = run_cli({"simulate", example("seven-layers-two-nodes.json"), "--microbatches", "2"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("training.schedule: 1f1b"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("4 stages, 2 micro-batches"), std::string::npos) << r.err;
    auto r2 = run_cli({"simulate", example("seven-layers-two-nodes.json"), "--microbatches", "3"});
    EXPECT_EQ(r2.code, 1);
    EXPECT_NE(r2.err.find("--microbatches: batch 64 does not split into 3"), std::string::npos)
        << r2.err;
}

TEST(Cli, MissingFileAndBrokenJsonAreReportedNotCrashed) {
    auto missing = run_cli({"simulate", "/nonexistent/project.json"});
    EXPECT_EQ(missing.code, 1);
    EXPECT_NE(missing.err.find("/nonexistent/project.json"), std::string::npos) << missing.err;
    TempDir dir;
    std::ofstream(dir / "broken.json")
        << "{\"format\": \"pipewright-project\",\n \"version\": 1,,}";
    auto broken = run_cli({"validate", (dir / "broken.json").string()});
    EXPECT_EQ(broken.code, 1);
    EXPECT_NE(broken.err.find("line 2"), std::string::npos) << broken.err;
}

TEST(Cli, UsageErrorsExitTwo) {
    EXPECT_EQ(run_cli({}).code, 2);
    const auto unknown = run_cli({"frobnicate"});
    EXPECT_EQ(unknown.code, 2);
    EXPECT_NE(unknown.err.find("unknown command \"frobnicate\"; the commands are simulate, plan"),
              std::string::npos)
        << unknown.err;
    EXPECT_EQ(unknown.err.find("worker"), std::string::npos) << "the hidden command is listed";
    // An empty path names no file: a usage error, said as such.
    for (const char* option : {"--trace", "--timeline", "--export-csv"}) {
        const auto empty = run_cli({"simulate", example("dummy-2gpu.json"), option, ""});
        EXPECT_EQ(empty.code, 2) << option;
        EXPECT_NE(empty.err.find("got an empty path"), std::string::npos) << empty.err;
    }
    // Tensor-parallel sizes out of range read alike, whichever side they fall.
    const auto zero = run_cli({"simulate", example("dummy-2gpu.json"), "--tensor-parallel", "0"});
    const auto huge =
        run_cli({"simulate", example("dummy-2gpu.json"), "--tensor-parallel", "1025"});
    EXPECT_EQ(zero.code, 2);
    EXPECT_EQ(huge.code, 2);
    EXPECT_NE(zero.err.find("must be at least 1, got 0"), std::string::npos) << zero.err;
    EXPECT_NE(huge.err.find("must be at most 1024, got 1025"), std::string::npos) << huge.err;
    EXPECT_EQ(run_cli({"simulate"}).code, 2);
    EXPECT_EQ(run_cli({"simulate", example("dummy-2gpu.json"), "--microbatches", "zero"}).code, 2);
    EXPECT_EQ(run_cli({"simulate", example("dummy-2gpu.json"), "--schedule", "gpipe",
                       "--schedule-csv", "x.csv"})
                  .code,
              2);
}

TEST(Cli, HelpAndVersionWorkEverywhere) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"--help"}, {"simulate", "--help"}, {"validate", "--help"}, {"schedules", "--help"}}) {
        auto r = run_cli(args);
        EXPECT_EQ(r.code, 0) << args.back();
        EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
    }
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"--version"}, {"simulate", "--version"}}) {
        auto r = run_cli(args);
        EXPECT_EQ(r.code, 0);
        EXPECT_EQ(r.out.rfind("pipewright ", 0), 0u) << r.out;
    }
}

// Whether a line of `text` starts with `prefix`.
bool has_line_starting(const std::string& text, const std::string& prefix) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(prefix, 0) == 0) {
            return true;
        }
    }
    return false;
}

TEST(Cli, ValidateAcceptsEveryExample) {
    int examples = 0;
    for (const auto& entry : fs::directory_iterator(kExamples)) {
        ++examples;
        auto r = run_cli({"validate", entry.path().string()});
        EXPECT_EQ(r.code, 0) << entry.path() << ": " << r.err;
        // "PATH: valid. …", never "invalid".
        EXPECT_EQ(r.out.rfind(entry.path().string() + ": valid.", 0), 0u) << r.out;
    }
    // The folder holds the shipped examples: an empty one tests nothing.
    EXPECT_GE(examples, 10);
}

TEST(Cli, ValidateJsonListsProblemsWithPaths) {
    TempDir dir;
    auto j = read_json(kExamples / "dummy-2gpu.json");
    j["model"]["layers"][1]["type"] = "lstm";
    std::ofstream(dir / "bad.json") << j.dump();
    auto r = run_cli({"validate", (dir / "bad.json").string(), "--json"});
    EXPECT_EQ(r.code, 1);
    auto out = nlohmann::json::parse(r.out);
    EXPECT_FALSE(out["valid"].get<bool>());
    ASSERT_FALSE(out["problems"].empty());
    EXPECT_EQ(out["problems"][0]["path"].get<std::string>().rfind("model.layers[1]", 0), 0u);
}

TEST(Cli, CompareSchedulesPrintsEveryScheduleAndTheBaseline) {
    auto r = run_cli({"simulate", example("resnet50-2gpu-pipelined.json"), "--compare-schedules"});
    ASSERT_EQ(r.code, 0) << r.err;
    // Each schedule has its row: a line that starts with its name and a
    // space ("1f1b" inside "interleaved-1f1b" does not count).
    for (const char* name :
         {"single device", "naive", "gpipe", "looped-bfs", "1f1b", "interleaved-1f1b", "zb-h1",
          "zb-h2", "interleaved-zb", "zbv", "dualpipev", "zb-auto"}) {
        EXPECT_TRUE(has_line_starting(r.out, std::string(name) + " ")) << name << "\n" << r.out;
    }
    EXPECT_NE(r.out.find("baseline"), std::string::npos);
    auto json = run_cli(
        {"simulate", example("resnet50-2gpu-pipelined.json"), "--compare-schedules", "--json"});
    ASSERT_EQ(json.code, 0);
    auto rows = nlohmann::json::parse(json.out);
    EXPECT_EQ(rows.size(), 12u);
    EXPECT_TRUE(rows[0]["baseline"].get<bool>());
}

// ZB-H2's and ZB-V's parallelograms leave a ramp in one iteration, and none
// back to back once the optimizer step is validated after the fact, as the
// zero-bubble paper does: the steady state says so, where it differs.
TEST(Cli, ZeroBubbleSchedulesShowTheirSteadyState) {
    const std::string docs = std::string(PIPEWRIGHT_ASSETS_DIR) + "/../docs/examples/";
    auto r = run_cli({"simulate", docs + "four-stages-zb-h2.json", "-m", "16", "-b", "16"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("Iteration   51.0 ms"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Steady      48.0 ms an iteration back to back"), std::string::npos)
        << r.out;
    r = run_cli({"simulate", docs + "four-stages-zbv.json", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    // The layers' given costs, and the optimizer's step (tens of µs) after the last.
    EXPECT_NEAR(j["steady_state_iteration_s"].get<double>(), 0.024, 1e-4);
    EXPECT_NEAR(j["iteration_time_s"].get<double>(), 0.0255, 1e-4);
    EXPECT_GT(j["iteration_time_s"].get<double>(), 0.0255);
    // 1F1B's first device spans the whole iteration: nothing to add.
    r = run_cli({"simulate", docs + "four-stages-1f1b.json"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find("Steady"), std::string::npos) << r.out;
}

TEST(Cli, ListsSchedulesDevicesAndLayers) {
    auto schedules = run_cli({"schedules"});
    ASSERT_EQ(schedules.code, 0);
    for (const char* name : {"naive", "gpipe", "looped-bfs", "1f1b", "interleaved-1f1b", "zb-h1",
                             "zb-h2", "interleaved-zb", "zbv", "dualpipev", "zb-auto"}) {
        EXPECT_TRUE(has_line_starting(schedules.out, std::string(name) + " ")) << name << "\n"
                                                                               << schedules.out;
    }
    auto devices = nlohmann::json::parse(run_cli({"devices", "--json"}).out);
    EXPECT_GE(devices.size(), 9u);
    // With the figures the kernel model prices with, as the catalog names them.
    const auto h100 = std::find_if(devices.begin(), devices.end(),
                                   [](const nlohmann::json& d) { return d["name"] == "H100-SXM"; });
    ASSERT_NE(h100, devices.end());
    EXPECT_EQ((*h100)["sm_count"], 132);
    EXPECT_DOUBLE_EQ((*h100)["matmul_efficiency"].get<double>(), 0.803);
    EXPECT_DOUBLE_EQ((*h100)["peak_tflops"]["float8"].get<double>(), 1979);
    EXPECT_DOUBLE_EQ((*h100)["attention_efficiency"]["flash3"]["forward"].get<double>(), 0.62);
    EXPECT_DOUBLE_EQ((*h100)["kernel_overhead_us"].get<double>(), 3);
    EXPECT_DOUBLE_EQ((*h100)["gemm_overhead_us"].get<double>(), 5);
    EXPECT_TRUE((*h100)["fp8_transposed_copies"].get<bool>());
    EXPECT_TRUE((*h100)["tma_multicast"].get<bool>());
    // A device that measured no GEMM prices them at the launch.
    const auto a100 = std::find_if(devices.begin(), devices.end(), [](const nlohmann::json& d) {
        return d["name"] == "A100-80GB";
    });
    ASSERT_NE(a100, devices.end());
    EXPECT_DOUBLE_EQ((*a100)["gemm_overhead_us"].get<double>(), 3);
    auto layers = nlohmann::json::parse(run_cli({"layers", "--json"}).out);
    EXPECT_EQ(layers.size(), 14u);
}

TEST(Cli, UnwritableOutputIsAnErrorNotACrash) {
    auto r =
        run_cli({"simulate", example("dummy-2gpu.json"), "--trace", "/nonexistent/dir/t.json"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("cannot write the trace"), std::string::npos) << r.err;
}

// The installed program itself, end to end.
TEST(CliProgram, RunsAsAProcess) {
    const std::string command =
        std::string(PIPEWRIGHT_CLI_PATH) + " simulate " + example("mlp-cpu.json") + " --json 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string output;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) {
        output.append(buffer, n);
    }
    const int status = ::pclose(pipe);
    EXPECT_EQ(WEXITSTATUS(status), 0) << output;
    EXPECT_EQ(nlohmann::json::parse(output)["devices"].size(), 2u);
}

}  // namespace
}  // namespace pipewright

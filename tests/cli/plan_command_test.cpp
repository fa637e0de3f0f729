#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "commands.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
const fs::path kExamples = fs::path(PIPEWRIGHT_ASSETS_DIR) / "examples";

using testing::example;
using testing::run_cli;
using testing::TempDir;
using Result = testing::CliResult;

TEST(PlanCommand, PrintsThePlacementAndTheComparison) {
    auto r = run_cli({"plan", example("resnet50-2gpu-pipelined.json")});
    ASSERT_EQ(r.code, 0) << r.err;
    // One warning, as simulate gives it: ResNet-50's kernels in micro-batches
    // of 20 are shorter than an eager framework's host issues them.
    EXPECT_TRUE(r.err.starts_with("pipewright: warning: the planned layout: the kernels of stage "))
        << r.err;
    EXPECT_NE(r.err.find("paced by its host"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    for (const char* text :
         {"Chosen", "Iteration", "samples/s", "node0/c0/gpu0", "node0/c0/gpu1", "conv1 … ", "… fc",
          "plan", "input", "uniform", "plan gain", "over the input placement", "--apply"}) {
        EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
    }
    // Each stage row shows its device's peak memory against its capacity.
    EXPECT_NE(r.out.find("39.0 GiB  yes"), std::string::npos) << r.out;
}

// A plan of a model with flash attention says which kernel priced it; a
// model without says nothing of it.
TEST(PlanCommand, TheCostsLineNamesTheAttentionKernel) {
    auto r = run_cli({"plan", example("llama3.1-8b-h100-node.json")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("\nCosts       flash attention: FlashAttention-2 at 34 % / 33 % of "
                         "H100-SXM's peak (forward / backward)\n"),
              std::string::npos)
        << r.out;
    auto plain = run_cli({"plan", example("resnet50-2gpu-pipelined.json")});
    ASSERT_EQ(plain.code, 0) << plain.err;
    EXPECT_EQ(plain.out.find("Costs"), std::string::npos) << plain.out;
}

TEST(PlanCommand, JsonHasThePlanAndTheSameFiguresForTheComparisons) {
    auto r = run_cli({"plan", example("resnet50-2gpu-pipelined.json"), "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    for (const char* key :
         {"placement", "schedule", "microbatches", "iteration_time_s", "throughput_samples_per_s",
          "bubble_fraction", "devices", "baseline", "uniform"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_TRUE(j["feasible"].get<bool>());
    // Contiguous stages from the first layer to the last (on this model a V
    // of four stages over the two devices wins: issue 32).
    const auto& stages = j["placement"];
    ASSERT_GE(stages.size(), 2u);
    EXPECT_EQ(stages.front()["layers"][0], "conv1");
    EXPECT_EQ(stages.back()["layers"].back(), "fc");
    for (std::size_t k = 1; k < stages.size(); ++k) {
        EXPECT_EQ(stages[k - 1]["last_layer"].get<int>() + 1, stages[k]["first_layer"].get<int>());
    }
    for (const char* other : {"baseline", "uniform"}) {
        const auto& o = j[other];
        for (const char* key :
             {"placement", "schedule", "microbatches", "iteration_time_s",
              "throughput_samples_per_s", "bubble_fraction", "devices", "gain_percent"}) {
            EXPECT_TRUE(o.contains(key)) << other << "." << key;
        }
        EXPECT_LE(j["iteration_time_s"].get<double>(), o["iteration_time_s"].get<double>());
    }
    EXPECT_EQ(j["baseline"]["schedule"], "gpipe");
    EXPECT_EQ(j["baseline"]["microbatches"], 6);
    for (const auto& d : j["devices"]) {
        EXPECT_LE(d["peak_memory_bytes"].get<std::int64_t>(),
                  d["memory_capacity_bytes"].get<std::int64_t>());
    }
}

TEST(PlanCommand, ApplyWritesAProjectThatValidatesAndSimulatesAsPredicted) {
    TempDir dir;
    const auto out = (dir / "planned.json").string();
    auto plan =
        run_cli({"plan", example("resnet50-2gpu-pipelined.json"), "--json", "--apply", out});
    ASSERT_EQ(plan.code, 0) << plan.err;
    ASSERT_TRUE(fs::exists(out));
    auto validate = run_cli({"validate", out});
    EXPECT_EQ(validate.code, 0) << validate.err;
    auto simulate = run_cli({"simulate", out, "--json"});
    ASSERT_EQ(simulate.code, 0) << simulate.err;
    const auto p = nlohmann::json::parse(plan.out);
    const auto s = nlohmann::json::parse(simulate.out);
    EXPECT_DOUBLE_EQ(s["iteration_time_s"].get<double>(), p["iteration_time_s"].get<double>());
    EXPECT_EQ(s["schedule"], p["schedule"]);
    EXPECT_EQ(s["microbatches"], p["microbatches"]);
    // Everything but the placement and the training choices is kept.
    const auto original = load_project_file(example("resnet50-2gpu-pipelined.json"));
    const auto planned = load_project_file(out);
    EXPECT_EQ(planned.project->model, original.project->model);
    EXPECT_EQ(planned.project->topology, original.project->topology);
    EXPECT_EQ(planned.project->training.optimizer, original.project->training.optimizer);
}

TEST(PlanCommand, HonoursScheduleAndMicroBatches) {
    auto r = run_cli({"plan", example("resnet50-2gpu-pipelined.json"), "--json", "--schedule",
                      "1f1b", "-m", "12"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["schedule"], "1f1b");
    EXPECT_EQ(j["microbatches"], 12);
    EXPECT_EQ(j["baseline"]["schedule"], "1f1b");
}

TEST(PlanCommand, NothingFitsExitsOneAndSaysWhatWould) {
    auto loaded = load_project_file(example("resnet50-2gpu-pipelined.json"));
    for (auto& d : loaded.project->topology.nodes[0].containers[0].devices) {
        d.overrides.memory_GiB = 0.1;
    }
    TempDir dir;
    const auto path = (dir / "tight.json").string();
    save_project_file(*loaded.project, path);
    const auto applied = (dir / "never.json").string();
    auto r = run_cli({"plan", path, "--apply", applied});
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("nothing fits in memory"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("more devices"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(applied));
}

// An input over capacity is no layout a user could run, nor a uniform split
// over capacity: the gain over each says so.
TEST(PlanCommand, AGainOverAnInputThatDoesNotFitSaysSo) {
    auto loaded = load_project_file(example("resnet50-2gpu-pipelined.json"));
    // The input's first stage peaks at 3.4 GiB; a balanced split needs 1.7.
    for (auto& d : loaded.project->topology.nodes[0].containers[0].devices) {
        d.overrides.memory_GiB = 2.5;
    }
    TempDir dir;
    const auto path = (dir / "tight.json").string();
    save_project_file(*loaded.project, path);
    auto r = run_cli({"plan", path});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("over the input placement (which does not fit)"), std::string::npos)
        << r.out;
    // The uniform split (here the input's own) is no baseline either.
    EXPECT_NE(r.out.find("over a uniform split (which does not fit either)"), std::string::npos)
        << r.out;
    r = run_cli({"plan", example("resnet50-2gpu-pipelined.json")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find("which does not fit"), std::string::npos) << r.out;
}

// gpt-oss-120b's 117 B parameters do not fit 16 H100s in any layout: each
// replica count says why, one device a replica in the singular.
TEST(PlanCommand, WhyNothingFitsNamesEachReplicaCount) {
    TempDir dir;
    const auto project = (dir / "oss.json").string();
    const auto preset =
        (std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "models" / "gpt-oss-120b.json").string();
    ASSERT_EQ(
        run_cli({"import", preset, "--devices", "8", "--nodes", "2", "-b", "64", "--out", project})
            .code,
        0);
    const auto r = run_cli({"plan", project, "--data-parallel", "auto"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("2 replicas: no pipeline of 8 devices fits a replica's share of the "
                         "batch, even with ZeRO-3"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("16 replicas: no pipeline of 1 device fits"), std::string::npos) << r.err;
}

// The planner recomputes every block of a stage or none: a plan that
// replaces a project's training.recompute_blocks says so, and what it
// writes validates. simulate --kernels names the blocks it recomputes.
TEST(PlanCommand, APlanSaysItDropsTheRecomputedBlocks) {
    auto loaded = load_project_file(example("resnet50-2gpu-pipelined.json"));
    loaded.project->training.recompute = Recompute::full;
    loaded.project->training.recompute_blocks = 4;
    TempDir dir;
    const auto path = (dir / "partial.json").string();
    save_project_file(*loaded.project, path);

    // --json gives the forward run again, which the full recomputation of
    // the same project exceeds.
    const auto recompute_s = [](const std::string& file) {
        auto r = run_cli({"simulate", file, "--json"});
        EXPECT_EQ(r.code, 0) << r.err;
        return nlohmann::json::parse(r.out)["stages"][0]["recompute_s"].get<double>();
    };
    const double partial_s = recompute_s(path);
    EXPECT_GT(partial_s, 0);
    auto every = *loaded.project;
    every.training.recompute_blocks.reset();
    const auto every_path = (dir / "every.json").string();
    save_project_file(every, every_path);
    EXPECT_LT(partial_s, recompute_s(every_path));

    auto kernels = run_cli({"simulate", path, "--kernels"});
    ASSERT_EQ(kernels.code, 0) << kernels.err;
    EXPECT_NE(kernels.out.find(" recomputing the forward of the stage's first 4 blocks "
                               "(activation checkpointing)"),
              std::string::npos)
        << kernels.out;

    // Every layer on the first GPU: the planner's own split beats it; kept
    // recomputing every unit, the plan says it dropped the project's blocks.
    StageAssignment all = loaded.project->placement.front();
    all.layers.clear();
    for (const auto& layer : loaded.project->model.layers) {
        all.layers.push_back(layer.name);
    }
    loaded.project->placement = {all};
    const auto one = (dir / "one-device.json").string();
    save_project_file(*loaded.project, one);
    const auto applied = (dir / "planned.json").string();
    auto r = run_cli({"plan", one, "--recompute-every-block", "--apply", applied});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(": the planner prices recomputation per stage, not "
                         "training.recompute_blocks (4)\n"),
              std::string::npos)
        << r.out;
    auto validate = run_cli({"validate", applied});
    EXPECT_EQ(validate.code, 0) << validate.err;
    auto planned = load_project_file(applied);
    ASSERT_TRUE(planned.project.has_value());
    EXPECT_FALSE(planned.project->training.recompute_blocks.has_value());
}

// Llama 3.1 8B on eight H100s held to 28 GiB
// each recomputes every block to fit; the plan then keeps its layout,
// recomputes the fewest blocks at the start of each stage that fit, is
// faster for it, and writes a project that simulates as it said.
TEST(PlanCommand, TheFewestRecomputedBlocksThatFit) {
    auto loaded = load_project_file(example("llama3.1-8b-h100-node.json"));
    loaded.project->training.recompute = Recompute::full;
    for (auto& d : loaded.project->topology.nodes[0].containers[0].devices) {
        d.overrides.memory_GiB = 28;
    }
    TempDir dir;
    const auto path = (dir / "tight.json").string();
    save_project_file(*loaded.project, path);
    auto every = run_cli({"plan", path, "--json", "--recompute-every-block"});
    ASSERT_EQ(every.code, 0) << every.err;
    const auto whole = nlohmann::json::parse(every.out);
    EXPECT_FALSE(whole.contains("recomputation"));

    const auto applied = (dir / "planned.json").string();
    auto fewest = run_cli({"plan", path, "--json", "--apply", applied});
    ASSERT_EQ(fewest.code, 0) << fewest.err;
    const auto narrowed = nlohmann::json::parse(fewest.out);
    ASSERT_TRUE(narrowed.contains("recomputation")) << fewest.out;
    EXPECT_TRUE(narrowed["recomputation"].get<std::string>().starts_with("the first "))
        << narrowed["recomputation"];
    EXPECT_LT(narrowed["iteration_time_s"].get<double>(), whole["iteration_time_s"].get<double>());

    auto planned = load_project_file(applied);
    ASSERT_TRUE(planned.project.has_value());
    ASSERT_TRUE(planned.project->training.recompute_blocks.has_value());
    EXPECT_TRUE(planned.project->training.full_recompute());
    auto simulated = run_cli({"simulate", applied, "--json"});
    ASSERT_EQ(simulated.code, 0) << simulated.err;
    const auto report = nlohmann::json::parse(simulated.out);
    EXPECT_TRUE(report["all_fit"].get<bool>());
    EXPECT_NEAR(report["iteration_time_s"].get<double>(),
                narrowed["iteration_time_s"].get<double>(), 1e-9);
    // One block fewer does not fit: the plan's is the fewest.
    planned.project->training.recompute_blocks = *planned.project->training.recompute_blocks - 1;
    if (*planned.project->training.recompute_blocks == 0) {
        planned.project->training.recompute = Recompute::none;
        planned.project->training.recompute_blocks.reset();
    }
    const auto fewer = (dir / "fewer.json").string();
    save_project_file(*planned.project, fewer);
    auto tighter = run_cli({"simulate", fewer, "--json"});
    ASSERT_EQ(tighter.code, 0) << tighter.err;
    EXPECT_FALSE(nlohmann::json::parse(tighter.out)["all_fit"].get<bool>());
}

TEST(PlanCommand, BadInputAndUsage) {
    auto unknown = run_cli({"plan", example("dummy-2gpu.json"), "--schedule", "fast"});
    EXPECT_EQ(unknown.code, 1);
    EXPECT_NE(unknown.err.find("--schedule: unknown schedule \"fast\""), std::string::npos)
        << unknown.err;
    // Two devices and two layers leave no room for two stages per device.
    auto interleaved =
        run_cli({"plan", example("dummy-2gpu.json"), "--schedule", "interleaved-1f1b"});
    EXPECT_EQ(interleaved.code, 1) << interleaved.out;
    EXPECT_NE(interleaved.err.find("the model has 3 layers"), std::string::npos) << interleaved.err;
    auto divisor = run_cli({"plan", example("dummy-2gpu.json"), "-m", "5"});
    EXPECT_EQ(divisor.code, 1);
    EXPECT_NE(divisor.err.find("--microbatches"), std::string::npos) << divisor.err;
    auto missing = run_cli({"plan", "/no/such/project.json"});
    EXPECT_EQ(missing.code, 1);
    EXPECT_FALSE(missing.err.empty());
    EXPECT_EQ(run_cli({"plan"}).code, 2);
    EXPECT_EQ(run_cli({"plan", example("dummy-2gpu.json"), "-m", "0"}).code, 2);
    EXPECT_EQ(run_cli({"plan", example("dummy-2gpu.json"), "--bogus"}).code, 2);
}

TEST(PlanCommand, UsesAMeasuredProfile) {
    Profile profile;
    profile.device_kind = "cuda";
    profile.device_name = "test";
    profile.microbatch_size = 8;
    // net1 dominates: the plan must give it a device of its own.
    profile.layers = {{"net0", 0.01, 0.01, 0.01, {}, {}, {}},
                      {"relu", 0.01, 0.01, 0, {}, {}, {}},
                      {"net1", 40, 40, 40, {}, {}, {}}};
    TempDir dir;
    const auto path = (dir / "profile.json").string();
    {
        std::ofstream f(path);
        f << profile_to_json(profile).dump();
    }
    auto r = run_cli({"plan", example("dummy-2gpu.json"), "--profile", path, "--json", "--schedule",
                      "gpipe", "-m", "4"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    // One device is as fast as two when net1 is the whole cost.
    const auto& last = j["placement"].back();
    EXPECT_EQ(last["layers"].back(), "net1");
    EXPECT_GT(j["baseline"]["iteration_time_s"].get<double>(), 0.3);
    EXPECT_LE(j["iteration_time_s"].get<double>(), j["baseline"]["iteration_time_s"].get<double>());
}

// A plan that splits the batch into micro-batches the profile never measured
// says so: its figures are extrapolated.
TEST(PlanCommand, WarnsWhenThePlansMicroBatchesWereNotMeasured) {
    Profile profile;
    profile.device_kind = "cpu";
    profile.microbatch_size = 8;
    profile.layers = {{"net0", 0.1, 0.1, 0.1, {}, {}, {}},
                      {"relu", 0.01, 0.01, 0, {}, {}, {}},
                      {"net1", 0.1, 0.1, 0.1, {}, {}, {}}};
    TempDir dir;
    const auto path = (dir / "profile.json").string();
    {
        std::ofstream f(path);
        f << profile_to_json(profile).dump();
    }
    auto r = run_cli({"plan", example("dummy-2gpu.json"), "--profile", path, "-m", "32"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: the planned layout: the profile measured micro-batches of 8 "
                         "samples, and this layout runs 1"),
              std::string::npos)
        << r.err;
    // At the measured size, nothing to say.
    r = run_cli({"plan", example("dummy-2gpu.json"), "--profile", path, "-m", "4"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("the planned layout"), std::string::npos) << r.err;
    // simulate warns about the project's own size.
    r = run_cli({"simulate", example("dummy-2gpu.json"), "--profile", path, "-m", "16"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("this layout runs 2: its layer times are extrapolated down"),
              std::string::npos)
        << r.err;
}

TEST(PlanCommand, PlansEveryShippedExample) {
    for (const auto& entry : fs::directory_iterator(kExamples)) {
        if (entry.path().extension() != ".json") {
            continue;
        }
        auto r = run_cli({"plan", entry.path().string(), "--json"});
        ASSERT_EQ(r.code, 0) << entry.path() << "\n" << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_LE(j["iteration_time_s"].get<double>(),
                  j["baseline"]["iteration_time_s"].get<double>())
            << entry.path();
    }
}

TEST(PlanCommand, DataParallelAutoTriesEveryReplicaCountAndSaysWhy) {
    const auto r = run_cli({"plan", example("resnet50-4gpu-2x2.json"), "--data-parallel", "auto"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("Replicas    "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("replicas  stages"), std::string::npos) << r.out;
    const auto j =
        run_cli({"plan", example("resnet50-4gpu-2x2.json"), "--data-parallel", "auto", "--json"});
    ASSERT_EQ(j.code, 0) << j.err;
    const auto plan = nlohmann::json::parse(j.out);
    EXPECT_EQ(plan["data_parallel"]["options"].size(), 3U);
    EXPECT_FALSE(plan["data_parallel"]["choice"].get<std::string>().empty());

    const auto bad = run_cli({"plan", example("resnet50-4gpu-2x2.json"), "--data-parallel", "x"});
    EXPECT_EQ(bad.code, 2) << bad.err;
}

}  // namespace
}  // namespace pipewright

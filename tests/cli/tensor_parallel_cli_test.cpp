// `simulate --tensor-parallel`: each stage split over its group, in words and
// as JSON; what plan and the checks say of it.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace pipewright {
namespace {

using testing::example;
using testing::run_cli;
using testing::TempDir;

// The small GPT example on 8 GPUs in two stages (gpu0 and gpu4), so that
// each stage can take a tensor-parallel group of up to 4.
std::string two_stage_gpt(const TempDir& dir, int tensor_parallel) {
    std::ifstream in(example("transformer-interleaved-4gpu.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    auto& devices = j["topology"]["nodes"][0]["containers"][0]["devices"];
    for (int g = 4; g < 8; ++g) {
        devices.push_back({{"name", "gpu" + std::to_string(g)}, {"spec", "A100-80GB"}});
    }
    nlohmann::json first = nlohmann::json::array();
    nlohmann::json second = nlohmann::json::array();
    for (std::size_t i = 0; i < j["model"]["layers"].size(); ++i) {
        (i < 5 ? first : second).push_back(j["model"]["layers"][i]["name"]);
    }
    j["placement"] = {{{"device", "node0/c0/gpu0"}, {"layers", first}},
                      {{"device", "node0/c0/gpu4"}, {"layers", second}}};
    j["training"]["schedule"] = "1f1b";
    if (tensor_parallel > 1) {
        j["tensor_parallel"] = {{"size", tensor_parallel}};
    }
    const auto path = dir / "gpt.json";
    std::ofstream(path) << j.dump(2);
    return path.string();
}

TEST(TensorParallelCli, SimulateSplitsEachStageOverItsGroupAndSaysSo) {
    const TempDir dir;
    const std::string file = two_stage_gpt(dir, 1);
    const auto whole = run_cli({"simulate", file, "--json"});
    ASSERT_EQ(whole.code, 0) << whole.err;
    const auto r = run_cli({"simulate", file, "--tensor-parallel", "4"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("Tensor      4 devices a stage · sequence parallelism off"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("node0/c0/gpu4 … gpu7"), std::string::npos) << r.out;
    const auto j =
        run_cli({"simulate", file, "--tensor-parallel", "4", "--sequence-parallel", "--json"});
    ASSERT_EQ(j.code, 0) << j.err;
    const auto split = nlohmann::json::parse(j.out);
    EXPECT_EQ(split["tensor_parallel"]["size"], 4);
    EXPECT_TRUE(split["tensor_parallel"]["sequence_parallel"].get<bool>());
    EXPECT_GT(split["tensor_parallel"]["stages"][0]["forward_s"].get<double>(), 0);
    // A quarter of each block on each GPU: faster than one GPU a stage.
    EXPECT_LT(split["iteration_time_s"].get<double>(),
              nlohmann::json::parse(whole.out)["iteration_time_s"].get<double>());
}

TEST(TensorParallelCli, PlanKeepsTheProjectsGroupsAndSearchesSizesWhenAsked) {
    const TempDir dir;
    const std::string file = two_stage_gpt(dir, 2);
    // The project's size: stages on the first device of groups of 2.
    const auto fixed = run_cli({"plan", file, "--json"});
    ASSERT_EQ(fixed.code, 0) << fixed.err;
    const auto plan = nlohmann::json::parse(fixed.out);
    for (const auto& stage : plan["placement"]) {
        const std::string device = stage["device"];
        EXPECT_EQ((device.back() - '0') % 2, 0) << device;
    }
    // Every size, in the table with the sequence-parallel mark.
    const auto search = run_cli(
        {"plan", file, "--tensor-parallel", "auto", "--sequence-parallel", "--data-parallel", "1"});
    ASSERT_EQ(search.code, 0) << search.err;
    EXPECT_NE(search.out.find("tensor  replicas  stages"), std::string::npos) << search.out;
    EXPECT_NE(search.out.find("4 + SP"), std::string::npos) << search.out;
    EXPECT_NE(search.out.find("best without tensor parallelism"), std::string::npos) << search.out;
    const auto j = run_cli({"plan", file, "--tensor-parallel", "auto", "--json"});
    ASSERT_EQ(j.code, 0) << j.err;
    const auto options = nlohmann::json::parse(j.out)["data_parallel"]["options"];
    ASSERT_GE(options.size(), 4U);
    EXPECT_EQ(options[0]["tensor_parallel"], 1);
    EXPECT_TRUE(options.back().contains("sequence_parallel"));
}

TEST(TensorParallelCli, CompareSchedulesMeasuresAgainstTheWholeModelOnOneDevice) {
    const TempDir dir;
    const std::string file = two_stage_gpt(dir, 4);
    const auto r = run_cli({"simulate", file, "--compare-schedules", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto rows = nlohmann::json::parse(r.out);
    ASSERT_FALSE(rows.empty());
    // The baseline is one device running every layer whole, not a group
    // that the one device cannot hold.
    EXPECT_TRUE(rows[0]["baseline"].get<bool>());
    EXPECT_TRUE(rows[0]["applicable"].get<bool>()) << rows[0].dump();
    EXPECT_EQ(rows[0]["tensor_parallel"]["size"], 1) << rows[0].dump();
}

TEST(TensorParallelCli, AnAppliedSearchIsAProjectThatSimulatesAsPlanned) {
    const TempDir dir;
    const std::string file = two_stage_gpt(dir, 1);
    const std::string out = (dir / "planned.json").string();
    const auto plan = run_cli({"plan", file, "--tensor-parallel", "4", "--data-parallel", "auto",
                               "--json", "--apply", out});
    ASSERT_EQ(plan.code, 0) << plan.err;
    const auto planned = nlohmann::json::parse(plan.out);
    std::ifstream in(out);
    const auto written = nlohmann::json::parse(in);
    EXPECT_EQ(written["tensor_parallel"]["size"], 4) << written.dump();
    const auto simulated = run_cli({"simulate", out, "--json"});
    ASSERT_EQ(simulated.code, 0) << simulated.err;
    EXPECT_NEAR(nlohmann::json::parse(simulated.out)["iteration_time_s"].get<double>(),
                planned["iteration_time_s"].get<double>(), 1e-9);
}

TEST(TensorParallelCli, CompareLayoutsNamesEachStagesGroup) {
    const TempDir dir;
    const std::string file = two_stage_gpt(dir, 4);
    const auto r = run_cli({"simulate", file, "--compare-layouts"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("as set: 1 × 2 groups of 4"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("each stage on a tensor-parallel group of 4 devices"), std::string::npos)
        << r.out;
}

TEST(TensorParallelCli, SizesThatCannotBeAreSaidInWords) {
    const TempDir dir;
    const std::string file = two_stage_gpt(dir, 2);
    const auto plan = run_cli({"plan", file, "--tensor-parallel", "3"});
    EXPECT_EQ(plan.code, 1);
    EXPECT_NE(plan.err.find("tensor_parallel.size 3 does not divide heads = 16 of \"block0\"; "
                            "use a size that divides it, or make it 18\n"),
              std::string::npos)
        << plan.err;
    const auto too_many = run_cli({"simulate", file, "--tensor-parallel", "16"});
    EXPECT_EQ(too_many.code, 1);
    EXPECT_NE(too_many.err.find("--tensor-parallel"), std::string::npos) << too_many.err;
    const auto word = run_cli({"plan", file, "--tensor-parallel", "many"});
    EXPECT_EQ(word.code, 2);
    // Sequence parallelism without a tensor-parallel group: said, not
    // accepted in silence.
    const auto alone = run_cli({"simulate", example("mlp-cpu.json"), "--sequence-parallel"});
    EXPECT_EQ(alone.code, 2);
    EXPECT_NE(alone.err.find("--sequence-parallel splits the sequence over each stage's "
                             "tensor-parallel group, and this layout has none"),
              std::string::npos)
        << alone.err;
}

}  // namespace
}  // namespace pipewright

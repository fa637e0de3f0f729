// `simulate --data-parallel`: the replicas, the straggler and each stage's
// gradient reduction, in words and as JSON.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "data_parallel_format.h"
#include "pipewright/core/project_io.h"

namespace pipewright {
namespace {

using testing::example;
using testing::run_cli;
using testing::TempDir;

TEST(DataParallelCli, NumberRangesJoinRuns) {
    EXPECT_EQ(cli::number_ranges({1, 2, 3, 5}), "1–3, 5");
    EXPECT_EQ(cli::number_ranges({1, 2, 7}), "1, 2, 7");
    EXPECT_EQ(cli::number_ranges({4}), "4");
    EXPECT_EQ(cli::number_ranges({}), "");
}

TEST(DataParallelCli, TheReportNamesTheReplicasAndEachStagesReduction) {
    const auto r = run_cli({"simulate", example("resnet50-4gpu-2x2.json")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("batch 240 (120 per replica)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2 × this pipeline · ZeRO-1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("replica 0 simulated; replica 1 runs alike"), std::string::npos) << r.out;
    // ZeRO-1: each replica needs only its shard of the averaged gradients,
    // and gathers the updated weights after the step.
    EXPECT_NE(r.out.find("ring reduce-scatter"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(after the step)"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("Straggler"), std::string::npos) << r.out;
}

TEST(DataParallelCli, TheOptionReplacesTheProjectsSizeAndTheJsonCarriesIt) {
    const auto one =
        run_cli({"simulate", example("resnet50-4gpu-2x2.json"), "--json", "--data-parallel", "1"});
    ASSERT_EQ(one.code, 0) << one.err;
    const auto j1 = nlohmann::json::parse(one.out);
    EXPECT_EQ(j1["data_parallel"]["size"], 1);
    EXPECT_TRUE(j1["data_parallel"]["collectives"].empty());
    // The file's micro-batch size stays; the count follows each replica's share.
    EXPECT_EQ(j1["microbatch_size"], 20);
    EXPECT_EQ(j1["microbatches"], 12);

    const auto two = run_cli({"simulate", example("resnet50-4gpu-2x2.json"), "--json"});
    ASSERT_EQ(two.code, 0) << two.err;
    const auto j2 = nlohmann::json::parse(two.out);
    EXPECT_EQ(j2["data_parallel"]["size"], 2);
    EXPECT_EQ(j2["data_parallel"]["zero_stage"], 1);
    ASSERT_EQ(j2["data_parallel"]["collectives"].size(), 2U);
    EXPECT_GT(j2["data_parallel"]["collectives"][1]["reduce_s"].get<double>(), 0);
    EXPECT_EQ(j2["microbatch_size"], 20);
    EXPECT_EQ(j2["microbatches"], 6);
    // Two replicas each on half the batch: nearly twice the samples per second.
    EXPECT_GT(j2["throughput_samples_per_s"].get<double>(),
              1.5 * j1["throughput_samples_per_s"].get<double>());

    const auto three =
        run_cli({"simulate", example("resnet50-4gpu-2x2.json"), "--data-parallel", "3"});
    EXPECT_EQ(three.code, 1);
    EXPECT_NE(three.err.find("--data-parallel"), std::string::npos) << three.err;
    EXPECT_NE(three.err.find("the topology has 4"), std::string::npos) << three.err;
}

TEST(DataParallelCli, AReplicaOnSlowerDevicesIsNamedTheStraggler) {
    TempDir dir;
    auto j = nlohmann::json::parse(read_text_file(example("resnet50-4gpu-2x2.json")));
    j["topology"]["nodes"][0]["containers"][0]["devices"][3]["peak_tflops"] = 2;
    std::ofstream(dir / "slow.json") << j.dump(2);
    const auto r = run_cli({"simulate", (dir / "slow.json").string()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("replica 1 simulated"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Straggler   replica 1 (from node0/c0/gpu2)"), std::string::npos) << r.out;
    // Both replicas' lanes are listed.
    EXPECT_NE(r.out.find("node0/c0/gpu3"), std::string::npos) << r.out;
}

// What the studio's Compare D × p layouts shows: the layout as set, then
// every count of replicas planned, with gains over the layout as set.
TEST(DataParallelCli, CompareLayoutsPlansEveryCountBesideTheLayoutAsSet) {
    const auto r = run_cli({"simulate", example("resnet50-4gpu-2x2.json"), "--compare-layouts"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("as set: 2 × 2 stages · ZeRO-1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("baseline"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("4 × 1 stage"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Gains are over the layout as set."), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Fastest: "), std::string::npos) << r.out;

    const auto j =
        run_cli({"simulate", example("resnet50-4gpu-2x2.json"), "--compare-layouts", "--json"});
    ASSERT_EQ(j.code, 0) << j.err;
    const auto parsed = nlohmann::json::parse(j.out);
    ASSERT_EQ(parsed["layouts"].size(), 4U);  // as set, 1, 2 and 4 replicas
    EXPECT_TRUE(parsed["layouts"][0]["baseline"].get<bool>());
    const double as_set = parsed["layouts"][0]["iteration_time_s"];
    for (std::size_t i = 1; i < 4; ++i) {
        const auto& row = parsed["layouts"][i];
        EXPECT_NEAR(row["gain_percent"].get<double>(),
                    (as_set / row["iteration_time_s"].get<double>() - 1) * 100, 1e-9);
        EXPECT_FALSE(row["detail"].get<std::string>().empty());
    }
}

TEST(DataParallelCli, CompareLayoutsRefusesWhatItCannotHonour) {
    const auto both = run_cli({"simulate", example("resnet50-4gpu-2x2.json"), "--compare-layouts",
                               "--compare-schedules"});
    EXPECT_EQ(both.code, 2);
    EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
    const auto fixed = run_cli({"simulate", example("resnet50-4gpu-2x2.json"), "--compare-layouts",
                                "--data-parallel", "2"});
    EXPECT_EQ(fixed.code, 2);
    EXPECT_NE(fixed.err.find("drop --data-parallel"), std::string::npos) << fixed.err;
}

}  // namespace
}  // namespace pipewright

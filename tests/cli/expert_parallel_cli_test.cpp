// A mixture of experts from the command line: a Mixtral-style config
// imported, laid out over replicas, and simulated with its experts split
// over them (`simulate --expert-parallel`); what plan says of it (what
// `run` says: tests/backend/launcher_test.cpp).

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace pipewright {
namespace {

using nlohmann::json;
using testing::run_cli;
using testing::TempDir;

// A small Mixtral: 4 blocks of 4 experts, 2 a token, on 4 GPUs in 2
// replicas of a 2-stage pipeline.
std::string small_mixtral(const TempDir& dir) {
    const json config = {{"architectures", {"MixtralForCausalLM"}},
                         {"hidden_size", 256},
                         {"intermediate_size", 512},
                         {"num_attention_heads", 4},
                         {"num_key_value_heads", 2},
                         {"num_hidden_layers", 4},
                         {"num_local_experts", 4},
                         {"num_experts_per_tok", 2},
                         {"vocab_size", 1000},
                         {"max_position_embeddings", 128},
                         {"hidden_act", "silu"}};
    const auto config_path = (dir / "config.json").string();
    std::ofstream(config_path) << config.dump(2);
    const auto imported = (dir / "mixtral.json").string();
    auto r = run_cli({"import", config_path, "--devices", "4", "-b", "16", "--out", imported});
    EXPECT_EQ(r.code, 0) << r.err;
    const auto laid_out = (dir / "mixtral-d2.json").string();
    r = run_cli({"plan", imported, "--data-parallel", "2", "--apply", laid_out});
    EXPECT_EQ(r.code, 0) << r.err;
    return laid_out;
}

TEST(ExpertParallelCli, SimulateSplitsTheExpertsOverTheReplicas) {
    TempDir dir;
    const std::string project = small_mixtral(dir);
    auto r = run_cli({"simulate", project, "--expert-parallel", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("Experts     split over 2 replicas"), std::string::npos) << r.out;
    // Where the time goes names the all-to-alls beside the kernels.
    r = run_cli({"simulate", project, "--expert-parallel", "2", "--kernels"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("in the experts' all-to-alls (expert parallelism)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("expert fc1"), std::string::npos) << r.out;

    r = run_cli({"simulate", project, "--expert-parallel", "2", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json split = json::parse(r.out);
    r = run_cli({"simulate", project, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json whole = json::parse(r.out);
    EXPECT_EQ(split.at("expert_parallel").at("size"), 2);
    const json& stages = split.at("expert_parallel").at("stages");
    const json& before = whole.at("expert_parallel").at("stages");
    double experts = 0;
    for (std::size_t s = 0; s < stages.size(); ++s) {
        EXPECT_GT(stages[s].at("forward_s").get<double>(), 0);
        EXPECT_EQ(before[s].at("forward_s").get<double>(), 0);
        // Half of each stage's experts stay on its device.
        EXPECT_EQ(stages[s].at("expert_parameters").get<double>(),
                  before[s].at("expert_parameters").get<double>() / 2);
        experts += before[s].at("expert_parameters").get<double>();
    }
    // 4 blocks of 4 experts of 3 × 256 × 512.
    EXPECT_EQ(experts, 4 * 4 * 3 * 256 * 512);
    EXPECT_LT(split.at("devices").at(0).at("peak_memory_bytes").get<double>(),
              whole.at("devices").at(0).at("peak_memory_bytes").get<double>());
}

// The trace shows each forward's and backward's all-to-alls as slices
// nested in it, as many as there are forwards and backwards of stages with
// experts; without expert parallelism there are none.
TEST(ExpertParallelCli, TheTraceNamesTheAllToAllsInsideEachForwardAndBackward) {
    TempDir dir;
    const std::string project = small_mixtral(dir);
    const auto count = [&](const std::vector<std::string>& extra) {
        const auto trace = (dir / "trace.json").string();
        std::vector<std::string> args{"simulate", project, "--trace", trace};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_cli(args);
        EXPECT_EQ(r.code, 0) << r.err;
        std::ifstream in(trace);
        const json t = json::parse(in);
        int slices = 0, passes = 0;
        for (const auto& e : t.at("traceEvents")) {
            const std::string cat = e.value("cat", "");
            slices += cat == "inner_wait" && e.at("name") == "EP_ALL_TO_ALL" ? 1 : 0;
            passes += cat == "forward" || cat == "backward" || cat == "backward_input" ? 1 : 0;
        }
        return std::pair{slices, passes};
    };
    const auto [split, passes] = count({"--expert-parallel", "2"});
    EXPECT_GT(split, 0);
    EXPECT_EQ(split, passes);  // every stage holds blocks with experts
    EXPECT_EQ(count({}).first, 0);
}

TEST(ExpertParallelCli, WhatCannotBeDoneYetIsSaidInWords) {
    TempDir dir;
    const std::string project = small_mixtral(dir);
    auto r = run_cli({"simulate", project, "--expert-parallel", "3"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("do not split evenly over --expert-parallel 3"), std::string::npos)
        << r.err;
}

// --compare-layouts keeps the experts split as asked: only counts of
// replicas that 2 divides are laid out, each saying so.
TEST(ExpertParallelCli, CompareLayoutsKeepsTheExpertSplit) {
    TempDir dir;
    const std::string project = small_mixtral(dir);
    const auto r =
        run_cli({"simulate", project, "--expert-parallel", "2", "--compare-layouts", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json c = json::parse(r.out);
    int laid_out = 0;
    for (const json& row : c.at("layouts")) {
        if (row.value("applicable", false) && !row.at("baseline").get<bool>()) {
            EXPECT_NE(row.at("detail").get<std::string>().find("(experts over 2)"),
                      std::string::npos)
                << row.dump();
            ++laid_out;
        }
    }
    EXPECT_GE(laid_out, 1) << r.out;
}

TEST(ExpertParallelCli, PlanKeepsTheProjectsExpertParallelSize) {
    TempDir dir;
    json j = json::parse(std::ifstream(small_mixtral(dir)));
    j["expert_parallel"] = {{"size", 2}};
    const auto with_experts = (dir / "ep2.json").string();
    std::ofstream(with_experts) << j.dump(2);
    const auto planned = (dir / "planned.json").string();
    auto r = run_cli({"plan", with_experts, "--apply", planned});
    ASSERT_EQ(r.code, 0) << r.err;
    const json out = json::parse(std::ifstream(planned));
    EXPECT_EQ(out.at("expert_parallel").at("size"), 2);
    EXPECT_EQ(out.at("data_parallel").at("size").get<int>() % 2, 0);
    r = run_cli({"simulate", with_experts, "--compare-layouts"});
    EXPECT_EQ(r.code, 0) << r.err;
}

}  // namespace
}  // namespace pipewright

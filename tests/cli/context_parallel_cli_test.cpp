// Context parallelism from the command line: the 128K-token example
// simulated with its sequences split over replicas (`simulate
// --context-parallel`, `--context-exchange`), as text and as JSON.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace pipewright {
namespace {

using nlohmann::json;
using testing::example;
using testing::run_cli;

const std::string kExample = example("llama3.1-8b-h100-128k.json");

// Split over two replicas a rank keeps half the tokens; whole, the first
// stage fills an H100 to within 2 GiB, less than NCCL's buffers may take.
TEST(ContextParallelCli, SplittingTheLongSequenceHalvesWhatARankKeeps) {
    const auto split = run_cli({"simulate", kExample, "--json"});
    ASSERT_EQ(split.code, 0) << split.err;
    const json s = json::parse(split.out);
    EXPECT_TRUE(s.at("all_fit").get<bool>());
    EXPECT_EQ(s.at("context_parallel").at("size"), 2);
    EXPECT_EQ(s.at("context_parallel").at("exchange"), "ring");
    EXPECT_GT(s.at("context_parallel").at("stages").at(0).at("kv_bytes").get<double>(), 0);
    const auto whole = run_cli({"simulate", kExample, "--context-parallel", "1", "--json"});
    ASSERT_EQ(whole.code, 0) << whole.err;
    const json w = json::parse(whole.out);
    const json& first = w.at("devices").at(0);
    EXPECT_LT(first.at("memory_capacity_bytes").get<double>() -
                  first.at("peak_memory_bytes").get<double>(),
              2.0 * (1 << 30));
    // Which the report says beside "every device fits".
    const auto text = run_cli({"simulate", kExample, "--context-parallel", "1"});
    EXPECT_NE(text.out.find("Memory      every device fits; node0/c0/gpu0 has "), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find(" to spare, less than NCCL's buffers and the allocator's "
                            "fragmentation may take (not counted)"),
              std::string::npos)
        << text.out;
    // Half the tokens a rank: well under the whole sequence's activations.
    EXPECT_LT(s.at("devices").at(0).at("peak_memory_bytes").get<double>(),
              0.6 * w.at("devices").at(0).at("peak_memory_bytes").get<double>());
}

// The planner counts what the memory model counts: without the split, the
// layout it finds leaves a GPU less than NCCL's buffers, and `plan` says so.
TEST(ContextParallelCli, APlanPackedToWithinNcclsBuffersSaysSo) {
    const auto r =
        run_cli({"plan", kExample, "--context-parallel", "1", "--data-parallel", "auto"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto at = r.out.find("\nMemory      node");
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" to spare, less than NCCL's buffers", at), std::string::npos) << r.out;
    // With the split it has room.
    const auto split = run_cli({"plan", kExample});
    ASSERT_EQ(split.code, 0) << split.err;
    EXPECT_EQ(split.out.find("\nMemory      "), std::string::npos) << split.out;
}

// --memory-margin keeps that much free on every GPU: the whole sequence no
// longer fits, and a plan made with it keeps the room when simulated
// without it (no GPU is then named as tight).
TEST(ContextParallelCli, AMemoryMarginKeepsRoomOnEveryGpu) {
    const auto whole = run_cli(
        {"simulate", kExample, "--context-parallel", "1", "--memory-margin", "2", "--json"});
    ASSERT_EQ(whole.code, 0) << whole.err;
    const json w = json::parse(whole.out);
    EXPECT_FALSE(w.at("all_fit").get<bool>());
    EXPECT_NEAR(w.at("devices").at(0).at("memory_capacity_bytes").get<double>(),
                (78.6 - 2) * (1 << 30), 1.0);
    const auto text =
        run_cli({"simulate", kExample, "--context-parallel", "1", "--memory-margin", "2"});
    EXPECT_NE(text.out.find("Memory      1 device over capacity (2.00 GiB kept free on each GPU)"),
              std::string::npos)
        << text.out;

    testing::TempDir dir;
    const auto planned = (dir / "planned.json").string();
    const auto plan = run_cli({"plan", kExample, "--context-parallel", "1", "--data-parallel",
                               "auto", "--memory-margin", "2", "--apply", planned});
    ASSERT_EQ(plan.code, 0) << plan.err;
    EXPECT_NE(plan.out.find("Memory      every GPU keeps 2.00 GiB free (--memory-margin)"),
              std::string::npos)
        << plan.out;
    const auto check = run_cli({"simulate", planned, "--json"});
    ASSERT_EQ(check.code, 0) << check.err;
    for (const json& d : json::parse(check.out).at("devices")) {
        EXPECT_GE(
            d.at("memory_capacity_bytes").get<double>() - d.at("peak_memory_bytes").get<double>(),
            2.0 * (1 << 30))
            << d.dump();
    }
    EXPECT_EQ(run_cli({"simulate", kExample, "--memory-margin", "-1"}).code, 2);
}

TEST(ContextParallelCli, TheReportSaysHowKeysAndValuesAreExchanged) {
    const auto ring = run_cli({"simulate", kExample});
    ASSERT_EQ(ring.code, 0) << ring.err;
    EXPECT_NE(ring.out.find("Context     every sequence split over 2 replicas"), std::string::npos)
        << ring.out;
    EXPECT_NE(ring.out.find("2 to a sequence (context parallelism)"), std::string::npos);
    const auto gathered =
        run_cli({"simulate", kExample, "--context-exchange", "all-gather", "--kernels"});
    ASSERT_EQ(gathered.code, 0) << gathered.err;
    EXPECT_NE(gathered.out.find("by all-gather before attention"), std::string::npos)
        << gathered.out;
    EXPECT_NE(gathered.out.find("waiting for keys and values (context parallelism)"),
              std::string::npos)
        << gathered.out;
}

TEST(ContextParallelCli, WhatCannotBeDoneIsSaidInWords) {
    auto r = run_cli({"simulate", kExample, "--context-parallel", "4"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("--context-parallel: 4 must divide the 2 data-parallel replicas"),
              std::string::npos)
        << r.err;
    r = run_cli({"simulate", kExample, "--context-parallel", "3"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("131072 tokens does not cut into 6 equal chunks"), std::string::npos)
        << r.err;
    r = run_cli({"simulate", kExample, "--context-exchange", "broadcast"});
    EXPECT_EQ(r.code, 2) << r.err;
}

// --compare-layouts keeps every sequence split as the project asks: only
// counts of replicas that 2 divides, each saying so.
TEST(ContextParallelCli, CompareLayoutsKeepsTheContextSplit) {
    const auto r = run_cli({"simulate", kExample, "--compare-layouts"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("(2 to a sequence)"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\n1 replica"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace pipewright

#include "pipewright/core/data_parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic_matchers.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_generators.h"
#include "project_fixtures.h"

namespace pipewright {
namespace {

using nlohmann::json;
using testing::dummy_json;
using testing::has_diagnostic;
using testing::parse_ok;

// The dummy's 2-stage pipeline on node0/c0/gpu0 and gpu1, in a cluster of
// two nodes with four devices each.
json two_node_json() {
    json j = dummy_json();
    json devices = json::array();
    for (int g = 0; g < 4; ++g) {
        devices.push_back({{"name", "gpu" + std::to_string(g)}, {"spec", "A100-80GB"}});
    }
    j["topology"]["nodes"] = json::array();
    for (int n = 0; n < 2; ++n) {
        j["topology"]["nodes"].push_back(
            {{"name", "node" + std::to_string(n)},
             {"containers", json::array({{{"name", "c0"}, {"devices", devices}}})}});
    }
    return j;
}

std::optional<AnalyzedProject> analyze(const json& j, Diagnostics& d,
                                       const AnalysisOptions& options = {}) {
    return analyze_project(parse_ok(j), options, d);
}

std::vector<std::string> paths(const std::vector<DeviceLocation>& devices) {
    std::vector<std::string> out;
    for (const auto& d : devices) {
        out.push_back(d.path);
    }
    return out;
}

TEST(DataParallelFile, AbsentMeansOneReplicaAndTheFileStaysAsItWas) {
    const Project p = parse_ok(dummy_json());
    EXPECT_EQ(p.data_parallel, DataParallel{});
    EXPECT_FALSE(project_to_json(p).contains("data_parallel"));
}

TEST(DataParallelFile, RoundTripsEveryField) {
    json j = two_node_json();
    j["data_parallel"] = {
        {"size", 2},
        {"zero_stage", 3},
        {"overlap_gradient_sync", false},
        {"bucket_MiB", 40},
        {"replicas", json::array({json::array({"node1/c0/gpu0", "node1/c0/gpu1"})})}};
    const Project p = parse_ok(j);
    EXPECT_EQ(p.data_parallel.size, 2);
    EXPECT_EQ(p.data_parallel.zero_stage, 3);
    EXPECT_FALSE(p.data_parallel.overlap_gradient_sync);
    EXPECT_DOUBLE_EQ(p.data_parallel.bucket_MiB, 40);
    EXPECT_EQ(p.data_parallel.replicas,
              (std::vector<std::vector<std::string>>{{"node1/c0/gpu0", "node1/c0/gpu1"}}));
    EXPECT_EQ(parse_ok(project_to_json(p)), p);
}

TEST(DataParallelFile, BadFieldsAreNamed) {
    json j = two_node_json();
    j["data_parallel"] = {{"size", 0}, {"zero_stage", 4}, {"bucket_MiB", 0}, {"shards", 2}};
    const Diagnostics d = testing::diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "data_parallel.size", {"at least 1"}));
    EXPECT_TRUE(has_diagnostic(d, "data_parallel.zero_stage", {"3"}));
    EXPECT_TRUE(has_diagnostic(d, "data_parallel.bucket_MiB"));
    EXPECT_TRUE(has_diagnostic(d, "data_parallel.shards"));
}

TEST(DataParallelLayout, OneReplicaIsThePipelineItself) {
    Diagnostics d;
    const auto a = analyze(two_node_json(), d);
    ASSERT_TRUE(a) << d.format();
    ASSERT_EQ(a->data_parallel(), 1);
    EXPECT_EQ(paths(a->replicas[0]), paths(a->ranks));
    EXPECT_FALSE(a->schedule.has_collectives());
}

TEST(DataParallelLayout, ByDefaultEachReplicaTakesTheNextDevicesInTopologyOrder) {
    Diagnostics d;
    AnalysisOptions o;
    o.data_parallel = 4;
    const auto a = analyze(two_node_json(), d, o);
    ASSERT_TRUE(a) << d.format();
    ASSERT_EQ(a->data_parallel(), 4);
    EXPECT_EQ(paths(a->replicas[1]), (std::vector<std::string>{"node0/c0/gpu2", "node0/c0/gpu3"}));
    EXPECT_EQ(paths(a->replicas[2]), (std::vector<std::string>{"node1/c0/gpu0", "node1/c0/gpu1"}));
    EXPECT_EQ(paths(a->replicas[3]), (std::vector<std::string>{"node1/c0/gpu2", "node1/c0/gpu3"}));
    EXPECT_EQ(a->replica_specs[3][1].name, "A100-80GB");
    EXPECT_EQ(a->project.data_parallel.size, 4);
}

TEST(DataParallelLayout, APipelineOverBothNodesIsRepeatedAtTheSamePositions) {
    json j = two_node_json();
    j["placement"][1]["device"] = "node1/c0/gpu0";  // spans 5 devices: node0/gpu0 .. node1/gpu0
    Diagnostics d;
    AnalysisOptions o;
    o.data_parallel = 2;
    EXPECT_FALSE(analyze(j, d, o));
    EXPECT_TRUE(has_diagnostic(
        d, "--data-parallel",
        {"spans 5 devices", "need 10", "the topology has 8", "data_parallel.replicas"}));
}

TEST(DataParallelLayout, ListedReplicasAreCheckedDeviceByDevice) {
    json j = two_node_json();
    j["data_parallel"] = {
        {"size", 3},
        {"replicas", json::array({json::array({"node1/c0/gpu0", "node1/c0/gpu9"}),
                                  json::array({"node1/c0/gpu1", "node0/c0/gpu0"})})}};
    Diagnostics d;
    EXPECT_FALSE(analyze(j, d));
    EXPECT_TRUE(has_diagnostic(d, "data_parallel.replicas[0][1]", {"no device \"node1/c0/gpu9\""}));
    EXPECT_TRUE(has_diagnostic(d, "data_parallel.replicas[1][1]",
                               {"used twice", "the placement (rank 0)"}));

    j["data_parallel"]["replicas"] = json::array(
        {json::array({"node1/c0/gpu0"}), json::array({"node1/c0/gpu1", "node1/c0/gpu2"})});
    d = Diagnostics{};
    EXPECT_FALSE(analyze(j, d));
    EXPECT_TRUE(has_diagnostic(d, "data_parallel.replicas[0]", {"lists 1 devices", "2 ranks"}));

    Diagnostics count;
    AnalysisOptions o;
    o.data_parallel = 2;
    EXPECT_FALSE(analyze(j, count, o));
    EXPECT_TRUE(has_diagnostic(count, "--data-parallel", {"1 more", "lists 2"}));
}

TEST(DataParallelLayout, TheGlobalBatchIsSplitAcrossReplicas) {
    json j = two_node_json();  // batch 32 in 4 micro-batches
    j["data_parallel"] = {{"size", 2}};
    Diagnostics d;
    const auto a = analyze(j, d);
    ASSERT_TRUE(a) << d.format();
    EXPECT_EQ(a->microbatches, 4);
    EXPECT_EQ(a->microbatch_size, 4);  // 16 samples per replica
    EXPECT_EQ(a->project.training.batch_size, 32);

    j["training"]["batch_size"] = 30;
    j["data_parallel"]["size"] = 4;
    d = Diagnostics{};
    EXPECT_FALSE(analyze(j, d));
    EXPECT_TRUE(has_diagnostic(d, "training.batch_size", {"30", "4 data-parallel replicas"}));

    j["training"]["batch_size"] = 8;  // 2 samples per replica, 4 micro-batches
    d = Diagnostics{};
    EXPECT_FALSE(analyze(j, d));
    EXPECT_TRUE(has_diagnostic(d, "training.microbatches", {"each replica's share"}));
}

TEST(DataParallelSchedule, ReplicasReduceEveryStagesGradientsAfterItsLastBackward) {
    json j = two_node_json();
    j["data_parallel"] = {{"size", 2}};
    Diagnostics d;
    const auto a = analyze(j, d);
    ASSERT_TRUE(a) << d.format();
    const Schedule& s = a->schedule;
    EXPECT_TRUE(check_schedule(s).empty()) << check_schedule(s).format();
    for (std::size_t r = 0; r < s.ranks.size(); ++r) {
        const auto& list = s.ranks[r];
        const auto reduce = std::find(list.begin(), list.end(),
                                      Action{static_cast<int>(r), ActionType::reduce_grad, 0});
        ASSERT_NE(reduce, list.end());
        // Overlapped: right after the last backward, before its send.
        EXPECT_EQ(*(reduce - 1), (Action{static_cast<int>(r), ActionType::backward, 3}));
    }
}

TEST(DataParallelSchedule, WithoutOverlapTheReductionsEndTheRanksList) {
    const Schedule base = add_communication(generate_schedule("interleaved-1f1b", {0, 1, 0, 1}, 4));
    const Schedule s = add_collectives(base, {false, false});
    EXPECT_TRUE(check_schedule(s).empty()) << check_schedule(s).format();
    for (const auto& list : s.ranks) {
        ASSERT_GE(list.size(), 2U);
        EXPECT_EQ(list[list.size() - 1].type, ActionType::reduce_grad);
        EXPECT_EQ(list[list.size() - 2].type, ActionType::reduce_grad);
    }
    EXPECT_EQ(add_collectives(s, {true, true}), s);  // already there: unchanged
}

TEST(DataParallelSchedule, ZeroThreeGathersEachStageFirstAndFreesItAfterItsLastCompute) {
    const Schedule base = add_communication(generate_schedule("zb-h1", {0, 1}, 4));
    const Schedule s = add_collectives(base, {true, true});
    EXPECT_TRUE(check_schedule(s).empty()) << check_schedule(s).format();
    for (std::size_t r = 0; r < s.ranks.size(); ++r) {
        const auto& list = s.ranks[r];
        EXPECT_EQ(list.front(), (Action{static_cast<int>(r), ActionType::unshard, 0}));
        const auto last_w = std::find(list.rbegin(), list.rend(),
                                      Action{static_cast<int>(r), ActionType::backward_weight, 3});
        ASSERT_NE(last_w, list.rend());
        // W of the last micro-batch, then REDUCE_GRAD, then RESHARD.
        EXPECT_EQ((last_w.base())->type, ActionType::reduce_grad);
        EXPECT_EQ((last_w.base() + 1)->type, ActionType::reshard);
    }
}

TEST(DataParallelSchedule, TheCheckerFindsMisplacedAndMissingCollectives) {
    Schedule s =
        add_collectives(add_communication(generate_schedule("gpipe", {0, 1}, 2)), {true, true});
    // Move rank 0's REDUCE_GRAD to the front and drop rank 1's RESHARD.
    auto& r0 = s.ranks[0];
    const auto reduce = std::find(r0.begin(), r0.end(), Action{0, ActionType::reduce_grad, 0});
    r0.erase(reduce);
    r0.insert(r0.begin() + 1, Action{0, ActionType::reduce_grad, 0});
    auto& r1 = s.ranks[1];
    r1.erase(std::find(r1.begin(), r1.end(), Action{1, ActionType::reshard, 0}));
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_diagnostic(d, "schedule.rank[0][1]",
                               {"0REDUCE_GRAD comes before the stage's last backward"}));
    EXPECT_TRUE(has_diagnostic(d, "schedule", {"1RESHARD is missing", "pairs"}));

    Schedule no_reduce =
        add_collectives(add_communication(generate_schedule("gpipe", {0, 1}, 2)), {false, true});
    auto& last = no_reduce.ranks[1];
    last.erase(std::find(last.begin(), last.end(), Action{1, ActionType::reduce_grad, 0}));
    EXPECT_TRUE(has_diagnostic(check_schedule(no_reduce), "schedule",
                               {"1REDUCE_GRAD is missing", "never averages its gradients"}));
}

}  // namespace
}  // namespace pipewright

// Data parallelism in the simulator: the collectives' times against their
// formulas, the overlap with the backward, stragglers and ZeRO's memory.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/project_io.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/simulation.h"
#include "sim_test_support.h"

namespace pipewright {
namespace {

using nlohmann::json;

constexpr double kBandwidthGBps = 100;
constexpr double kLatencyUs = 10;
// The projects' GPUs share a container: NVLink's efficiency applies.
constexpr LinkSpec kNvlink{kBandwidthGBps, kLatencyUs, kNvlinkEfficiency};
constexpr int kFeatures = 1024;
// A linear layer's weight and bias, in float32.
constexpr double kStageBytes = (kFeatures * kFeatures + kFeatures) * 4.0;

// Two linear layers, one per stage, with fixed costs, on one container of
// `devices` devices joined by uniform links; the pipeline on gpu0 and gpu1.
json project_json(int devices, int replicas) {
    json layers = json::array();
    for (int i = 0; i < 2; ++i) {
        layers.push_back(
            {{"name", "fc" + std::to_string(i)},
             {"type", "linear"},
             {"in_features", kFeatures},
             {"out_features", kFeatures},
             {"cost",
              {{"forward_ms", 1.0}, {"backward_input_ms", 1.0}, {"backward_weight_ms", 1.0}}}});
    }
    json gpus = json::array();
    for (int g = 0; g < devices; ++g) {
        gpus.push_back({{"name", "gpu" + std::to_string(g)}, {"spec", "A100-80GB"}});
    }
    const json link = {{"bandwidth_GBps", kBandwidthGBps}, {"latency_us", kLatencyUs}};
    return {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "two-linear"},
          {"input", {{"shape", {kFeatures}}, {"dtype", "float32"}}},
          {"loss", "mse"},
          {"layers", layers}}},
        {"topology",
         {{"links", {{"intra_container", link}, {"intra_node", link}, {"inter_node", link}}},
          {"nodes",
           json::array({{{"name", "node0"},
                         {"containers", json::array({{{"name", "c0"}, {"devices", gpus}}})}}})}}},
        {"placement", json::array({{{"device", "node0/c0/gpu0"}, {"layers", {"fc0"}}},
                                   {{"device", "node0/c0/gpu1"}, {"layers", {"fc1"}}}})},
        {"training",
         {{"batch_size", 8 * replicas},
          {"microbatches", 4},
          {"schedule", "1f1b"},
          {"optimizer", {{"type", "adam"}}}}},
        {"data_parallel", {{"size", replicas}, {"overlap_gradient_sync", false}}}};
}

SimulationReport simulate(const json& j) {
    Diagnostics d;
    auto project = project_from_json(j, d);
    EXPECT_TRUE(project) << d.format();
    auto analyzed = analyze_project(*project, {}, d);
    EXPECT_TRUE(analyzed) << d.format();
    return simulate_project(*analyzed);
}

std::optional<TimelineEvent> event(const SimulationReport& r, int rank, Action a) {
    for (const TimelineEvent& e : r.timeline.events) {
        if (e.rank == rank && e.action == a) {
            return e;
        }
    }
    return std::nullopt;
}

double seconds(double steps, double bytes) {
    return steps * kLatencyUs * 1e-6 + bytes / (kBandwidthGBps * 1e9);
}

TEST(CollectiveCost, RingTreeAndHierarchicalFollowTheirFormulas) {
    CollectiveGroup g;
    g.members = 8;
    g.ring = {kBandwidthGBps, kLatencyUs};
    const double n = 1e9;
    const auto ring = collective_time(CollectiveKind::all_reduce, n, g);
    EXPECT_EQ(ring.algorithm, CollectiveAlgorithm::ring);
    EXPECT_NEAR(ring.seconds, 2 * seconds(7, 7 * n / 8), 1e-12);
    EXPECT_NEAR(collective_time(CollectiveKind::reduce_scatter, n, g).seconds,
                seconds(7, 7 * n / 8), 1e-12);
    // A few bytes among many members: latency decides, and the tree wins.
    g.members = 64;
    const auto tiny = collective_time(CollectiveKind::all_reduce, 64, g);
    EXPECT_EQ(tiny.algorithm, CollectiveAlgorithm::tree);
    EXPECT_NEAR(tiny.seconds, seconds(2 * 6, 2 * 64), 1e-12);
    // 4 nodes of 8 on fast node links and a slow network: reduce within the
    // nodes first.
    g.members = 32;
    g.ring = {10, 20};
    g.nodes = 4;
    g.per_node = 8;
    g.intra = {300, 5};
    g.inter = {10, 20};
    const auto two_level = collective_time(CollectiveKind::all_reduce, n, g);
    EXPECT_EQ(two_level.algorithm, CollectiveAlgorithm::hierarchical);
    const double within = 2 * (7 * 5e-6 + 7.0 / 8 * n / 300e9);
    const double across = 2 * (3 * 20e-6 + 3.0 / 4 * n / 10e9);
    EXPECT_NEAR(two_level.seconds, within + across, 1e-12);
    EXPECT_EQ(collective_time(CollectiveKind::all_reduce, n, CollectiveGroup{}).seconds, 0);
}

TEST(DataParallelSimulation, OneReplicaGivesTodaysResultsExactly) {
    json plain = project_json(2, 1);
    plain.erase("data_parallel");
    json one = project_json(2, 1);
    one["data_parallel"]["zero_stage"] = 1;
    const SimulationReport a = simulate(plain);
    const SimulationReport b = simulate(one);
    EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
    EXPECT_EQ(a.timeline.events, b.timeline.events);
    EXPECT_EQ(a.devices[0].peak_memory_bytes, b.devices[0].peak_memory_bytes);
    EXPECT_TRUE(b.collectives.empty());
    ASSERT_EQ(b.replicas.size(), 1U);
    EXPECT_TRUE(b.replicas[0].mirrored_by.empty());
}

TEST(DataParallelSimulation, GradientReductionTakesTheRingFormulaAfterTheBackward) {
    const SimulationReport one = simulate(project_json(8, 1));
    const SimulationReport four = simulate(project_json(8, 4));
    EXPECT_EQ(four.data_parallel, 4);
    ASSERT_EQ(four.replicas.size(), 1U);  // symmetric: one replica simulated
    EXPECT_EQ(four.replicas[0].mirrored_by, (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(four.devices.size(), 2U);
    // 2(D-1) steps of a quarter of the gradients each, or a tree of depth
    // 2 up and down, by NCCL's fastest protocol over NVLink's 0.8.
    const double ring = testing::nccl_seconds(false, 2 * 3, 2 * 3 * kStageBytes / 4, kNvlink);
    const double tree = testing::nccl_seconds(true, 2 * 2, 2 * kStageBytes, kNvlink);
    ASSERT_EQ(four.collectives.size(), 2U);
    EXPECT_NEAR(four.collectives[0].reduce_s, std::min(ring, tree), 1e-12);
    for (int stage = 0; stage < 2; ++stage) {
        const auto reduce = event(four, stage, {stage, ActionType::reduce_grad, 0});
        ASSERT_TRUE(reduce) << stage;
        EXPECT_NEAR(reduce->end_s - reduce->start_s, std::min(ring, tree), 1e-12);
        EXPECT_DOUBLE_EQ(reduce->bytes, kStageBytes);
        const auto last_w = event(four, stage, {stage, ActionType::backward, 3});
        ASSERT_TRUE(last_w);
        EXPECT_GE(reduce->start_s, last_w->end_s);
    }
    // Stage 0 ends the iteration: its last backward comes last.
    const auto reduce0 = event(four, 0, {0, ActionType::reduce_grad, 0});
    EXPECT_NEAR(four.iteration_time_s, one.iteration_time_s + (reduce0->end_s - reduce0->start_s),
                1e-9);
    // Each replica pipelines a quarter of the global batch in the same time.
    EXPECT_EQ(four.microbatch_size, one.microbatch_size);
    EXPECT_GT(four.throughput_samples_per_s, 3.5 * one.throughput_samples_per_s);
}

TEST(DataParallelSimulation, OverlappedBucketsHideBehindTheLastBackward) {
    json j = project_json(8, 4);
    const SimulationReport after = simulate(j);
    j["data_parallel"]["overlap_gradient_sync"] = true;
    j["data_parallel"]["bucket_MiB"] = 1;
    const SimulationReport overlapped = simulate(j);
    ASSERT_EQ(overlapped.collectives.size(), 2U);
    EXPECT_EQ(overlapped.collectives[0].buckets, 5);  // 4.0 MiB in buckets of 1 MiB
    const auto reduce = event(overlapped, 0, {0, ActionType::reduce_grad, 0});
    const auto last_b = event(overlapped, 0, {0, ActionType::backward, 3});
    ASSERT_TRUE(reduce && last_b);
    EXPECT_LT(reduce->start_s, last_b->end_s);  // the first bucket goes during the backward
    EXPECT_LT(overlapped.iteration_time_s, after.iteration_time_s);
    // What it cannot hide: at least the last bucket after the backward.
    EXPECT_GE(reduce->end_s, last_b->end_s + overlapped.collectives[0].reduce_s / 5 * 0.99);
}

TEST(DataParallelSimulation, ASlowerReplicaStretchesEveryonesIteration) {
    const SimulationReport even = simulate(project_json(8, 2));
    json j = project_json(8, 2);
    // Replica 1 runs on gpu2 and gpu3; make gpu3 slow (cost overrides are
    // per layer, so slow its link instead: its activations take longer).
    j["topology"]["link_overrides"] = json::array({{{"between", {"node0/c0/gpu2", "node0/c0/gpu3"}},
                                                    {"bandwidth_GBps", 0.01},
                                                    {"latency_us", 1000}}});
    const SimulationReport uneven = simulate(j);
    ASSERT_EQ(uneven.replicas.size(), 2U);
    EXPECT_EQ(uneven.replicas[1].replica, 1);
    EXPECT_GT(uneven.replicas[1].alone_s, uneven.replicas[0].alone_s);
    EXPECT_EQ(uneven.devices.size(), 4U);  // both replicas' lanes
    EXPECT_EQ(uneven.timeline.devices[2], "node0/c0/gpu2");
    // Replica 0 waits at each reduction for replica 1.
    EXPECT_GT(uneven.iteration_time_s, even.iteration_time_s);
    for (int stage = 0; stage < 2; ++stage) {
        const auto mine = event(uneven, stage, {stage, ActionType::reduce_grad, 0});
        const auto theirs = event(uneven, 2 + stage, {stage, ActionType::reduce_grad, 0});
        ASSERT_TRUE(mine && theirs);
        EXPECT_NEAR(mine->end_s, theirs->end_s, 1e-12);
    }
    EXPECT_NEAR(uneven.iteration_time_s, uneven.replicas[1].alone_s, 1e-9);
}

TEST(DataParallelSimulation, ZeroOneReduceScattersThenGathersTheWeightsAfterTheStep) {
    json j = project_json(8, 4);
    const SimulationReport plain = simulate(j);
    j["data_parallel"]["zero_stage"] = 1;
    const SimulationReport sharded = simulate(j);
    ASSERT_EQ(sharded.collectives.size(), 2U);
    const StageCollectiveCost& c = sharded.collectives[0];
    EXPECT_EQ(c.kind, CollectiveKind::reduce_scatter);
    const double half = testing::nccl_seconds(false, 3, 3 * kStageBytes / 4, kNvlink);
    EXPECT_NEAR(c.reduce_s, half, 1e-12);
    EXPECT_NEAR(c.gather_s, half, 1e-12);
    // On a ring, reduce-scatter and all-gather move what one all-reduce
    // does; NCCL launches twice.
    EXPECT_EQ(plain.collectives[0].algorithm, CollectiveAlgorithm::ring);
    EXPECT_NEAR(sharded.iteration_time_s - plain.iteration_time_s,
                2 * half - plain.collectives[0].reduce_s, 1e-9);
    EXPECT_GT(2 * half, plain.collectives[0].reduce_s);
}

TEST(DataParallelSimulation, ZeroShardsTheStaticMemoryAndThreeGathersTheWeights) {
    json j = project_json(8, 4);
    std::vector<std::int64_t> peaks;
    std::vector<std::int64_t> after;  // once the iteration is over
    for (int zero = 0; zero <= 3; ++zero) {
        j["data_parallel"]["zero_stage"] = zero;
        const SimulationReport r = simulate(j);
        peaks.push_back(r.devices[0].peak_memory_bytes);
        ASSERT_FALSE(r.timeline.memory.at(0).empty());
        after.push_back(r.timeline.memory[0].back().bytes);
    }
    const auto weights = static_cast<std::int64_t>(kStageBytes);
    // Adam keeps 8 bytes per parameter: a quarter of them with ZeRO-1.
    EXPECT_EQ(peaks[0] - peaks[1], 2 * weights - 2 * weights / 4);
    // ZeRO-2 reduces the gradients once, after the last backward: the four
    // micro-batches' add up whole until then, at the peak too, and only the
    // replica's quarter stays after.
    EXPECT_EQ(peaks[2], peaks[1]);
    EXPECT_EQ(after[1] - after[2], weights - weights / 4);
    // ZeRO-3 keeps a quarter of the weights but gathers the rest while it computes.
    EXPECT_EQ(peaks[3], peaks[2]);
    EXPECT_EQ(after[2] - after[3], weights - weights / 4);

    const SimulationReport three = simulate(j);
    const auto unshard = event(three, 0, {0, ActionType::unshard, 0});
    const auto first_f = event(three, 0, {0, ActionType::forward, 0});
    ASSERT_TRUE(unshard && first_f);
    EXPECT_DOUBLE_EQ(unshard->start_s, 0);
    EXPECT_NEAR(unshard->end_s, testing::nccl_seconds(false, 3, 3 * kStageBytes / 4, kNvlink),
                1e-12);
    EXPECT_DOUBLE_EQ(first_f->start_s, unshard->end_s);
    EXPECT_EQ(three.collectives[0].kind, CollectiveKind::reduce_scatter);
    EXPECT_TRUE(event(three, 0, {0, ActionType::reshard, 0}));

    // With one micro-batch its gradients become whole as its activations go,
    // and ZeRO-2 lowers the peak.
    j["training"]["microbatches"] = 1;
    j["training"]["schedule"] = "gpipe";
    j["data_parallel"]["zero_stage"] = 1;
    const std::int64_t alone1 = simulate(j).devices[0].peak_memory_bytes;
    j["data_parallel"]["zero_stage"] = 2;
    const std::int64_t alone2 = simulate(j).devices[0].peak_memory_bytes;
    EXPECT_GT(alone1 - alone2, 0);
    EXPECT_LE(alone1 - alone2, weights - weights / 4);
}

// The peak the simulation keeps as it goes (what `simulate` reports) equals
// the highest point of the memory curve read back from the timeline, with
// the whole gradients of ZeRO-2/3 held until a reduction that may end while
// the rank computes on.
TEST(DataParallelSimulation, TheReportedPeakIsTheTopOfTheMemoryCurveUnderZero) {
    const std::vector<std::pair<std::string, int>> schedules{
        {"gpipe", 1}, {"gpipe", 4}, {"1f1b", 4}, {"zb-h1", 4}};
    for (const auto& [schedule, microbatches] : schedules) {
        for (const bool overlap : {false, true}) {
            for (const int zero : {2, 3}) {
                SCOPED_TRACE(schedule + " of " + std::to_string(microbatches) +
                             (overlap ? ", overlapped" : "") + ", ZeRO-" + std::to_string(zero));
                json j = project_json(8, 4);
                j["training"]["microbatches"] = microbatches;
                // Activations larger than the gradients, so that the peak
                // comes during a backward.
                j["training"]["batch_size"] = 4 * 4096;
                // A backward that holds more than its stash: the rebuilt stage.
                j["training"]["activation_checkpointing"] = true;
                j["training"]["schedule"] = schedule;
                j["data_parallel"]["zero_stage"] = zero;
                j["data_parallel"]["overlap_gradient_sync"] = overlap;
                j["data_parallel"]["bucket_MiB"] = 1;
                Diagnostics d;
                const auto analyzed = analyze_project(*project_from_json(j, d), {}, d);
                ASSERT_TRUE(analyzed) << d.format();
                const SimulationReport r = simulate_project(*analyzed, {}, Recording::timeline);
                ASSERT_EQ(r.timeline.memory.size(), r.devices.size());
                for (std::size_t rank = 0; rank < r.devices.size(); ++rank) {
                    std::int64_t curve_peak = 0;
                    for (const MemorySample& m : r.timeline.memory[rank]) {
                        curve_peak = std::max(curve_peak, m.bytes);
                    }
                    EXPECT_EQ(r.devices[rank].peak_memory_bytes, curve_peak) << rank;
                }
            }
        }
    }
}

// training.gradient_dtype "float32" beside bfloat16 weights (Megatron-LM's
// fp32 main gradients): each device holds 4 bytes of gradient a parameter
// instead of 2 (whole until the reduction under ZeRO-2 too), and the
// replicas reduce twice the bytes.
TEST(DataParallelSimulation, Float32GradientsTakeTwiceTheMemoryAndTheBytesOfBfloat16Ones) {
    json j = project_json(8, 4);
    j["training"]["dtype"] = "bfloat16";
    const double parameters = kStageBytes / 4;  // of one stage
    for (int zero : {0, 2}) {
        SCOPED_TRACE(zero);
        j["data_parallel"]["zero_stage"] = zero;
        json wide = j;
        wide["training"]["gradient_dtype"] = "float32";
        const SimulationReport half = simulate(j);
        const SimulationReport full = simulate(wide);
        EXPECT_NEAR(static_cast<double>(full.devices[0].peak_memory_bytes -
                                        half.devices[0].peak_memory_bytes),
                    2 * parameters, 2.0);
        const auto a = event(half, 0, {0, ActionType::reduce_grad, 0});
        const auto b = event(full, 0, {0, ActionType::reduce_grad, 0});
        ASSERT_TRUE(a && b);
        EXPECT_DOUBLE_EQ(a->bytes, 2 * parameters);
        EXPECT_DOUBLE_EQ(b->bytes, 4 * parameters);
        EXPECT_GT(b->end_s - b->start_s, a->end_s - a->start_s);
    }
}

}  // namespace
}  // namespace pipewright

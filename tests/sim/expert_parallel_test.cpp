// Expert parallelism in the cost model and the simulator: each replica
// holds 1/E of the routed experts, every mixture-of-experts block pays an
// all-to-all to dispatch its tokens and one to combine them (forward and
// backward) over the expert group's links, and the experts' gradients
// average over the replicas that hold the same experts.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "analyzed_json.h"
#include "decoder_project_json.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/planner.h"
#include "pipewright/sim/simulation.h"
#include "sim_test_support.h"

namespace pipewright {
namespace {

using nlohmann::json;

constexpr int kSequence = 256;
constexpr int kHidden = 1024;
constexpr int kExperts = 8;
constexpr int kTopK = 2;
constexpr int kExpertWidth = 2048;
constexpr double kBandwidthGBps = 200;
constexpr double kLatencyUs = 5;

// A small Mixtral-like model on one node of 8 GPUs: stage 0 (embedding and
// a mixture-of-experts block) on gpu0, stage 1 (a second block, the norm
// and the head) on gpu1, in 4 data-parallel replicas.
json moe_json(int expert_parallel) {
    testing::DecoderProject p;
    p.block = {{"type", "transformer_block"},
               {"hidden", kHidden},
               {"heads", 16},
               {"kv_heads", 4},
               {"experts", kExperts},
               {"top_k", kTopK},
               {"expert_ffn_hidden", kExpertWidth},
               {"activation", "swiglu"},
               {"norm", "rmsnorm"},
               {"bias", false},
               {"qkv_bias", false},
               {"rotary", true}};
    p.sequence = kSequence;
    p.hidden = kHidden;
    p.final_norm = "rmsnorm";
    p.link = {{"bandwidth_GBps", kBandwidthGBps}, {"latency_us", kLatencyUs}, {"efficiency", 1.0}};
    p.training = {{"batch_size", 4 * 8},
                  {"microbatches", 8},
                  {"schedule", "1f1b"},
                  {"dtype", "bfloat16"},
                  {"optimizer", {{"type", "adam"}}}};
    json j = testing::decoder_project_json(p);
    j["data_parallel"] = {{"size", 4}, {"overlap_gradient_sync", false}};
    if (expert_parallel > 1) {
        j["expert_parallel"] = {{"size", expert_parallel}};
    }
    return j;
}

AnalyzedProject analyze(const json& j) {
    return testing::analyzed_json(j);
}

std::string problems(const json& j, const AnalysisOptions& options = {}) {
    Diagnostics d;
    const auto p = project_from_json(j, d);
    if (!p) {
        return d.format();
    }
    (void)analyze_project(*p, options, d);
    return d.format();
}

// One expert: SwiGLU's gate, up and down matrices.
constexpr double kExpertParameters = 3.0 * kHidden * kExpertWidth;

TEST(ExpertParallel, EachReplicaHoldsItsShareOfTheExperts) {
    const AnalyzedProject whole = analyze(moe_json(1));
    const AnalyzedProject split = analyze(moe_json(4));
    const auto one = stage_costs(whole, {});
    const auto four = stage_costs(split, {});
    for (std::size_t s = 0; s < 2; ++s) {
        SCOPED_TRACE("stage " + std::to_string(s));
        EXPECT_EQ(one[s].expert_parameters, kExperts * kExpertParameters);
        EXPECT_EQ(four[s].expert_parameters, kExperts * kExpertParameters / 4);
        EXPECT_EQ(one[s].parameters - four[s].parameters, kExperts * kExpertParameters * 3 / 4);
        EXPECT_EQ(one[s].expert_forward_s, 0);
    }
    // Weights, gradients and Adam's state of the experts no longer held.
    const auto before = static_bytes_per_rank(whole, one);
    const auto after = static_bytes_per_rank(split, four);
    const double per_parameter = 2 + 2 + 4 + 8;  // bf16 weight and gradient, fp32 master, Adam
    EXPECT_EQ(before[0] - after[0], kExperts * kExpertParameters * 3 / 4 * per_parameter);
}

TEST(ExpertParallel, EveryBlockDispatchesAndCombinesOverTheExpertGroup) {
    const AnalyzedProject p = analyze(moe_json(4));
    const auto stages = stage_costs(p, {});
    // gpu0, gpu2, gpu4 and gpu6 (or wherever the replicas are): one node,
    // its links as given; the micro-batch is 1 sequence.
    CollectiveGroup group;
    group.members = 4;
    group.library = CollectiveLibrary::nccl;
    group.ring = LinkSpec{kBandwidthGBps, kLatencyUs};
    const double bytes = 1.0 * kSequence * kTopK * kHidden * 2;
    const double all_to_all = collective_time(CollectiveKind::all_to_all, bytes, group).seconds;
    // Three of four shares of the tokens leave each member, over 3 steps.
    EXPECT_NEAR(all_to_all, 8.4e-6 + 3 * kLatencyUs * 1e-6 + 0.75 * bytes / (kBandwidthGBps * 1e9),
                1e-12);
    for (const StageCost& s : stages) {
        EXPECT_NEAR(s.expert_forward_s, 2 * all_to_all, 1e-12);
        EXPECT_NEAR(s.expert_backward_s, 2 * all_to_all, 1e-12);
    }
    // The simulation reports them, and the forward includes them.
    const SimulationReport r = simulate_project(p);
    EXPECT_EQ(r.expert_parallel.size, 4);
    EXPECT_GT(r.stages[0].forward_s, r.stages[0].expert_forward_s);
}

TEST(ExpertParallel, AllToAllAcrossNodesSharesEachNodesLink) {
    CollectiveGroup g;
    g.members = 8;
    g.library = CollectiveLibrary::nccl;
    g.ring = LinkSpec{25, 10};
    g.nodes = 2;
    g.per_node = 4;
    g.intra = LinkSpec{300, 2};
    g.inter = LinkSpec{25, 10};
    const double bytes = 64e6;
    // Half of each member's bytes leave the node, and its 4 members share
    // the node's link: 4 × 32 MB over 25 GB/s.
    const double across = 1 * 10e-6 + 4 * bytes * 0.5 / 25e9;
    EXPECT_NEAR(collective_time(CollectiveKind::all_to_all, bytes, g).seconds, 8.4e-6 + across,
                1e-12);
    EXPECT_EQ(collective_time(CollectiveKind::all_to_all, bytes, g).algorithm,
              CollectiveAlgorithm::hierarchical);
}

TEST(ExpertParallel, ExpertGradientsAverageOverTheReplicasHoldingThem) {
    // With E = 4 of 4 replicas no other replica holds a device's experts:
    // only the rest of the stage is all-reduced, a bandwidth-bound ring
    // over the same 4 replicas as before.
    const AnalyzedProject dense_and_experts = analyze(moe_json(1));
    const auto stages = stage_costs(dense_and_experts, {});
    const SimulationReport whole = simulate_project(dense_and_experts);
    const SimulationReport split = simulate_project(analyze(moe_json(4)));
    ASSERT_EQ(split.collectives.size(), 2U);
    for (std::size_t s = 0; s < 2; ++s) {
        const double rest =
            static_cast<double>(stages[s].parameters - stages[s].expert_parameters) /
            static_cast<double>(stages[s].parameters);
        EXPECT_NEAR(split.collectives[s].reduce_s / whole.collectives[s].reduce_s, rest, 0.02);
    }
}

// DualPipeV runs a forward of one chunk and a backward of the other as one
// overlapped pair (OVERLAP_F_B): each one's all-to-alls hide under the
// other's compute. 1F1B has no such pairs.
TEST(ExpertParallel, DualPipeVHidesEachChunksAllToAllsUnderTheOthersCompute) {
    StageCost cost = testing::equal_cost(1.0, 1.0, 0.5);
    cost.expert_forward_s = 0.4;
    cost.expert_backward_s = 0.4;
    const StageCost compute_only = testing::equal_cost(0.6, 0.6, 0.5);
    const auto iteration = [](const testing::Pipeline& p) {
        return timeline_metrics(simulate_schedule(p.input).timeline).iteration_time_s;
    };
    for (const std::string name : {"dualpipev", "1f1b"}) {
        SCOPED_TRACE(name);
        const int stages = name == "dualpipev" ? 8 : 4;
        auto p = testing::make_pipeline(name, stages, 4, 16, cost);
        const double overlapped = iteration(p);
        // The same lists with every pair taken apart: F, then B.
        int pairs = 0;
        for (auto& actions : p.schedule.ranks) {
            for (Action& a : actions) {
                pairs += a.overlaps_next ? 1 : 0;
                a.overlaps_next = false;
            }
        }
        const double serial = iteration(p);
        const double floor = iteration(testing::make_pipeline(name, stages, 4, 16, compute_only));
        if (name == "1f1b") {
            EXPECT_EQ(pairs, 0);
            EXPECT_EQ(overlapped, serial);
            continue;
        }
        ASSERT_GT(pairs, 0);
        // Each pair saves min(0.4, 0.6) twice: 0.8 of its 2.0, in the steady
        // state that most of the iteration is.
        EXPECT_LT(overlapped, serial - 0.25 * (serial - floor)) << serial << " " << floor;
        EXPECT_GE(overlapped, floor);
    }
}

TEST(ExpertParallel, ItsSizeIsSavedAndRead) {
    Diagnostics d;
    const auto p = project_from_json(moe_json(2), d);
    ASSERT_TRUE(p) << d.format();
    EXPECT_EQ(p->expert_parallel.size, 2);
    const auto again = project_from_json(project_to_json(*p), d);
    ASSERT_TRUE(again) << d.format();
    EXPECT_EQ(*again, *p);
    EXPECT_FALSE(project_to_json(*project_from_json(moe_json(1), d)).contains("expert_parallel"));
}

TEST(ExpertParallel, ALayoutThatCannotSplitTheExpertsIsRefused) {
    EXPECT_NE(problems(moe_json(3))
                  .find("model.layers[1].experts: the 8 experts of block0 do not "
                        "split evenly over expert_parallel.size 3 ranks"),
              std::string::npos)
        << problems(moe_json(3));
    AnalysisOptions options;
    options.expert_parallel = 8;
    EXPECT_NE(problems(moe_json(1), options)
                  .find("--expert-parallel: 8 must divide the 4 data-parallel replicas"),
              std::string::npos)
        << problems(moe_json(1), options);
}

TEST(ExpertParallel, ZeroThreeGathersTheExpertsOnlyFromTheirHolders) {
    // E = 4 of 4 replicas: no other replica holds a device's experts, so
    // ZeRO-3 gathers only the rest of the stage's weights.
    json j = moe_json(4);
    j["data_parallel"]["zero_stage"] = 3;
    const SimulationReport r = simulate_project(analyze(j));
    ASSERT_EQ(r.stages.size(), 2U);
    for (const StageCost& s : r.stages) {
        ASSERT_GT(s.expert_parameters, 0);
        const double dense = static_cast<double>(s.parameters - s.expert_parameters);
        EXPECT_DOUBLE_EQ(s.gathered_bytes, dense * 2 * 3 / 4);  // bf16, all but its own quarter
    }
}

TEST(ExpertParallel, ThePlannerSearchesTheSizesThatSplitTheExperts) {
    Diagnostics d;
    const auto project = project_from_json(moe_json(1), d);
    ASSERT_TRUE(project) << d.format();
    PlanOptions options;
    options.expert_parallel = 0;  // search, with the project's 4 replicas
    const PlanResult r = plan_pipeline(*project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    std::vector<int> sizes;
    for (const DataParallelOption& o : r.data_parallel) {
        EXPECT_EQ(o.replicas, 4);
        sizes.push_back(o.expert_parallel);
    }
    // Divisors of the 8 experts that the 4 replicas can hold.
    EXPECT_EQ(sizes, (std::vector<int>{1, 2, 4}));
    Diagnostics again;
    const auto analyzed = analyze_project(r.project, {}, again);
    ASSERT_TRUE(analyzed) << again.format();
    EXPECT_NEAR(simulate_project(*analyzed).iteration_time_s, r.plan.report->iteration_time_s,
                1e-9);
    // Splitting the experts saves each replica memory: the planner's own
    // estimate of a replica counts 1/E of them.
    const auto by_size = [&r](int e) {
        for (const DataParallelOption& o : r.data_parallel) {
            if (o.expert_parallel == e) {
                return o.peak_memory_bytes;
            }
        }
        return 0.0;
    };
    EXPECT_LT(by_size(4), by_size(1));
}

TEST(ExpertParallel, ThePlannerTriesOneSizeForADenseModel) {
    json dense = moe_json(1);
    for (json& layer : dense["model"]["layers"]) {
        layer.erase("experts");
        layer.erase("top_k");
        layer.erase("expert_ffn_hidden");
    }
    Diagnostics d;
    const auto project = project_from_json(dense, d);
    ASSERT_TRUE(project) << d.format();
    PlanOptions options;
    options.expert_parallel = 0;
    const PlanResult r = plan_pipeline(*project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    for (const DataParallelOption& o : r.data_parallel) {
        EXPECT_EQ(o.expert_parallel, 1);
    }
    ASSERT_EQ(r.expert_parallel_skipped.size(), 1U);
    EXPECT_NE(r.data_parallel_choice.find("expert parallelism not planned: all but 1: the model "
                                          "has no experts"),
              std::string::npos)
        << r.data_parallel_choice;
}

}  // namespace
}  // namespace pipewright

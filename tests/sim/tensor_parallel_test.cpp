// Tensor parallelism in the analysis and the simulator: Megatron-LM's split
// of each layer, the activations of a transformer block as Korthikanti et al.
// 2022 count them (to the byte), the group's all-reduces over its links, and
// what cannot be split.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "decoder_project_json.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/planner.h"
#include "pipewright/sim/simulation.h"
#include "sim_test_support.h"

namespace pipewright {
namespace {

using nlohmann::json;

constexpr int kSequence = 512;
constexpr int kHidden = 1024;
constexpr int kHeads = 16;
constexpr int kMicrobatchSize = 2;
constexpr double kBandwidthGBps = 300;
constexpr double kLatencyUs = 5;

// A small GPT (embedding, two blocks with Megatron-LM's dropouts, a final
// norm and the head) in bf16 on one container of 8 GPUs: stage 0 on gpu0,
// stage 1 on gpu4.
json gpt_json(int tensor_parallel, bool sequence_parallel = false) {
    testing::DecoderProject p;
    p.block = {
        {"type", "transformer_block"}, {"hidden", kHidden},    {"heads", kHeads}, {"mlp_ratio", 4},
        {"attention_dropout", 0.1},    {"hidden_dropout", 0.1}};
    p.sequence = kSequence;
    p.hidden = kHidden;
    p.device_spec = "A100-80GB";
    p.link = {{"bandwidth_GBps", kBandwidthGBps}, {"latency_us", kLatencyUs}};
    p.second_stage_device = "node0/c0/gpu4";
    p.training = {{"batch_size", 4 * kMicrobatchSize},
                  {"microbatches", 4},
                  {"schedule", "1f1b"},
                  {"dtype", "bfloat16"},
                  {"optimizer", {{"type", "adam"}}}};
    json j = testing::decoder_project_json(p);
    if (tensor_parallel > 1) {
        j["tensor_parallel"] = {{"size", tensor_parallel},
                                {"sequence_parallel", sequence_parallel}};
    }
    return j;
}

Project parse(const json& j) {
    Diagnostics d;
    auto p = project_from_json(j, d);
    EXPECT_TRUE(p) << d.format();
    return *p;
}

AnalyzedProject analyze(const json& j) {
    Diagnostics d;
    auto a = analyze_project(parse(j), {}, d);
    EXPECT_TRUE(a) << d.format();
    return *a;
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

// Korthikanti et al. 2022, bytes of one block's activations for a
// micro-batch of b sequences at 2 bytes an element.
double korthikanti(int t, bool sequence_parallel) {
    const double s = kSequence;
    const double h = kHidden;
    const double a = kHeads;
    const double b = kMicrobatchSize;
    if (t == 1) {
        return s * b * h * (34 + 5 * a * s / h);
    }
    if (sequence_parallel) {
        return s * b * h * (34.0 / t + 5 * a * s / (h * t));
    }
    return s * b * h * (10 + 24.0 / t + 5 * a * s / (h * t));
}

TEST(TensorParallel, ABlocksActivationsAreKorthikantisToTheByte) {
    for (const int t : {1, 2, 4}) {
        for (const bool sp : {false, true}) {
            if (t == 1 && sp) {
                continue;
            }
            SCOPED_TRACE("t = " + std::to_string(t) + (sp ? ", sequence parallel" : ""));
            const AnalyzedProject p = analyze(gpt_json(t, sp));
            const LayerCost c = layer_cost(p, 1, p.rank_specs[0], {});
            EXPECT_NEAR(c.stash_bytes, korthikanti(t, sp), 1e-6 * korthikanti(t, sp));
        }
    }
}

TEST(TensorParallel, EachDeviceHoldsItsShareOfTheWeightsAndTheWork) {
    const AnalyzedProject one = analyze(gpt_json(1));
    const AnalyzedProject four = analyze(gpt_json(4));
    ASSERT_EQ(four.tensor_shares.size(), 5U);
    // A block's matrices split four ways; its norms and two biases stay whole.
    const double h = kHidden;
    const double whole = 12 * h * h + 13 * h;  // parameters of a block
    EXPECT_DOUBLE_EQ(four.tensor_shares[1].parameters, ((12 * h * h + 7 * h) / 4 + 6 * h) / whole);
    EXPECT_DOUBLE_EQ(four.tensor_shares[1].compute, 0.25);
    // The embedding splits its vocabulary; the final norm stays whole; the
    // head, with no linear after it and before the cross-entropy, is
    // column-parallel with its output left split over the vocabulary (the
    // loss's three all-reduces are its forward's).
    EXPECT_DOUBLE_EQ(four.tensor_shares[0].parameters, 0.25);
    EXPECT_DOUBLE_EQ(four.tensor_shares[3].compute, 1.0);
    EXPECT_EQ(four.tensor_shares[4].split, TensorSplit::vocabulary_output);
    EXPECT_EQ(four.tensor_shares[4].forward_reductions, 3);
    const auto s1 = stage_costs(one, {});
    const auto s4 = stage_costs(four, {});
    for (std::size_t s = 0; s < 2; ++s) {
        EXPECT_LT(s4[s].parameters, s1[s].parameters / 3);
        EXPECT_GT(s4[s].parameters, s1[s].parameters / 4);
    }
}

// An MLP's two linears pair up, column- then row-parallel, with the GELU
// between split; a third linear with no partner is column-parallel with its
// output gathered.
TEST(TensorParallel, ConsecutiveLinearsPairUpAsMegatronSplitsAnMlp) {
    json j = gpt_json(2);
    j["model"]["input"] = {{"shape", {kSequence, kHidden}}, {"dtype", "float32"}};
    j["model"]["loss"] = "mse";
    j["model"]["layers"] = {
        {{"name", "fc1"}, {"type", "linear"}, {"in_features", kHidden}, {"out_features", 4096}},
        {{"name", "act"}, {"type", "gelu"}},
        {{"name", "fc2"}, {"type", "linear"}, {"in_features", 4096}, {"out_features", kHidden}},
        {{"name", "out"}, {"type", "linear"}, {"in_features", kHidden}, {"out_features", 256}}};
    j["placement"] = {{{"device", "node0/c0/gpu0"}, {"layers", {"fc1", "act", "fc2", "out"}}}};
    const AnalyzedProject p = analyze(j);
    ASSERT_EQ(p.tensor_shares.size(), 4U);
    const TensorShare& fc1 = p.tensor_shares[0];
    EXPECT_EQ(fc1.stash, 1.0);  // its input is whole on every device
    EXPECT_EQ(fc1.forward_reductions, 0);
    EXPECT_EQ(fc1.backward_reductions, 1);
    EXPECT_DOUBLE_EQ(fc1.backward_elements, double(kSequence) * kHidden);
    EXPECT_EQ(p.tensor_shares[1].stash, 0.5);
    const TensorShare& fc2 = p.tensor_shares[2];
    EXPECT_EQ(fc2.stash, 0.5);
    EXPECT_EQ(fc2.forward_reductions, 1);
    EXPECT_DOUBLE_EQ(fc2.forward_elements, double(kSequence) * kHidden);
    EXPECT_EQ(fc2.backward_reductions, 0);
    // fc2's bias stays whole on each device.
    const double w = 4096.0 * kHidden;
    EXPECT_DOUBLE_EQ(fc2.parameters, (w / 2 + kHidden) / (w + kHidden));
    const TensorShare& out = p.tensor_shares[3];
    EXPECT_EQ(out.forward_reductions, 1);
    EXPECT_DOUBLE_EQ(out.forward_elements, double(kSequence) * 256 / 2);
}

// Two all-reduces of s·b·h bf16 elements per block in each direction, each
// the faster of the ring (2(t−1)α + 2(t−1)/t · bytes/B) and the tree over the
// group's links.
TEST(TensorParallel, TheGroupsAllReducesTakeTheCollectiveFormulas) {
    const int t = 4;
    const AnalyzedProject p = analyze(gpt_json(t));
    const auto stages = stage_costs(p, {});
    const double bytes = 2.0 * kSequence * kMicrobatchSize * kHidden;
    // By NCCL's fastest protocol over NVLink's 0.8 (the group shares a
    // container).
    const LinkSpec nvlink{kBandwidthGBps, kLatencyUs, kNvlinkEfficiency};
    const double ring_s =
        testing::nccl_seconds(false, 2 * (t - 1), 2.0 * (t - 1) / t * bytes, nvlink);
    // A tree pays 2⌈log₂t⌉ latencies and moves twice the bytes; the faster wins.
    const double tree_s = testing::nccl_seconds(true, 2 * 2, 2 * bytes, nvlink);
    const double ring = std::min(ring_s, tree_s);
    // Stage 0: the embedding's output, then block0's two.
    EXPECT_NEAR(stages[0].tensor_forward_s, 3 * ring, 1e-12);
    EXPECT_NEAR(stages[0].tensor_backward_s, 2 * ring, 1e-12);
    // Without tensor parallelism there are none, and the time is as before.
    const auto whole = stage_costs(analyze(gpt_json(1)), {});
    EXPECT_EQ(whole[0].tensor_forward_s, 0);
    EXPECT_LT(stages[0].forward_s, whole[0].forward_s);
    // The simulated report carries them and each stage's group.
    const SimulationReport r = simulate_project(p, {}, Recording::summary);
    ASSERT_EQ(r.tensor_groups.size(), 2U);
    EXPECT_EQ(r.tensor_groups[1].front(), "node0/c0/gpu4");
    EXPECT_EQ(r.tensor_groups[1].back(), "node0/c0/gpu7");
    EXPECT_NEAR(r.stages[0].tensor_forward_s, 3 * ring, 1e-12);
}

// The bytes of each forward send of rank 0, and what each link carried.
std::pair<std::vector<double>, std::vector<LinkUsage>> forward_sends(const json& j) {
    const SimulationReport r = simulate_project(analyze(j), {}, Recording::timeline);
    std::vector<double> sends;
    for (const TimelineEvent& e : r.timeline.events) {
        if (e.rank == 0 && e.action.type == ActionType::send_forward) {
            sends.push_back(e.bytes);
        }
    }
    return {sends, r.links};
}

// Under sequence parallelism each member of a group sends its counterpart
// its slice of the sequence (Megatron-LM's [s/t, b, h]), as real runs do.
// Inside a node each member has its own NVLink; a node's network carries the
// whole group's slices at once, the whole activation, as it carried the
// whole activation without sequence parallelism before.
TEST(TensorParallel, SequenceParallelStagesSendTheirSliceOfTheSequence) {
    const double whole = 2.0 * kSequence * kMicrobatchSize * kHidden;  // bf16
    const int t = 4;
    const auto [plain_sends, plain_links] = forward_sends(gpt_json(t));
    const auto [sliced_sends, sliced_links] = forward_sends(gpt_json(t, true));
    EXPECT_EQ(plain_sends, std::vector<double>(4, whole));
    EXPECT_EQ(sliced_sends, std::vector<double>(4, whole / t));
    ASSERT_EQ(plain_links.size(), 2U);  // gpu0 -> gpu4 and back, in one container
    ASSERT_EQ(sliced_links.size(), 2U);
    EXPECT_DOUBLE_EQ(plain_links[0].bytes, 4 * whole);
    EXPECT_DOUBLE_EQ(sliced_links[0].bytes, 4 * whole / t);
    EXPECT_LT(sliced_links[0].busy_s, plain_links[0].busy_s / 2);

    // The second stage on another node: its network carries the group's.
    const auto two_nodes = [](json j) {
        json node1 = j["topology"]["nodes"][0];
        node1["name"] = "node1";
        j["topology"]["nodes"].push_back(node1);
        j["placement"][1]["device"] = "node1/c0/gpu0";
        return j;
    };
    const auto [apart_sends, apart_links] = forward_sends(two_nodes(gpt_json(t, true)));
    EXPECT_EQ(apart_sends, std::vector<double>(4, whole / t));
    ASSERT_EQ(apart_links.size(), 2U);
    EXPECT_DOUBLE_EQ(apart_links[0].bytes, 4 * whole);
    // At the network's 0.96 of its bandwidth.
    EXPECT_NEAR(apart_links[0].busy_s, 4 * whole / (kBandwidthGBps * 1e9 * 0.96), 1e-12);

    // With recomputation a stage keeps what crossed: its slice.
    json checkpointed = gpt_json(t, true);
    checkpointed["training"]["activation_checkpointing"] = true;
    const auto stages = stage_costs(analyze(checkpointed), {});
    EXPECT_DOUBLE_EQ(stages[1].input_bytes * stages[1].input_share, whole / t);
    EXPECT_DOUBLE_EQ(stages[0].output_share, 1.0 / t);
}

// The planner's split prices a send as the simulator does: one member's
// slice over a path of its own, the group's slices over a node's network.
// The link between the stages is so slow that the send bounds the split.
TEST(TensorParallel, ThePlannerPricesASliceOfTheSequenceAsTheSimulatorSendsIt) {
    const double whole = 2.0 * kSequence * kMicrobatchSize * kHidden;  // bf16
    const int t = 4;
    const double GBps = 1e-3;
    json inside_node = gpt_json(t, true);
    inside_node["topology"]["link_overrides"] = {{{"between", {"node0/c0/gpu0", "node0/c0/gpu4"}},
                                                  {"bandwidth_GBps", GBps},
                                                  {"latency_us", 0}}};
    const SplitResult inside = best_split(parse(inside_node), {}, 4, "1f1b", 2);
    ASSERT_TRUE(inside.feasible);
    const double member_s = whole / t / (GBps * 1e9);
    EXPECT_NEAR(inside.bottleneck_s, member_s, 0.01 * member_s);

    // Two nodes of four GPUs: each group fills one, and the node's network
    // carries the group's slices, the whole activation.
    json apart = gpt_json(t, true);
    apart["topology"]["links"]["inter_node"]["bandwidth_GBps"] = GBps;
    json& gpus = apart["topology"]["nodes"][0]["containers"][0]["devices"];
    gpus.erase(gpus.begin() + 4, gpus.end());
    json node1 = apart["topology"]["nodes"][0];
    node1["name"] = "node1";
    apart["topology"]["nodes"].push_back(node1);
    apart["placement"][1]["device"] = "node1/c0/gpu0";
    const SplitResult across = best_split(parse(apart), {}, 4, "1f1b", 2);
    ASSERT_TRUE(across.feasible);
    const double group_s = whole / (GBps * 1e9 * 0.96);
    EXPECT_NEAR(across.bottleneck_s, group_s, 0.01 * group_s);
}

// Megatron-LM's vocabulary-parallel cross-entropy: the head keeps its
// output split, and the loss all-reduces three values per token (the
// maximum, the sum of the exponentials, the target's logit) instead of the
// logits being gathered; its backward all-reduces the input gradient as any
// column-parallel linear does.
TEST(TensorParallel, TheHeadBeforeCrossEntropyKeepsItsLogitsSplit) {
    const int t = 4;
    const AnalyzedProject p = analyze(gpt_json(t));
    const TensorShare& head = p.tensor_shares.back();
    EXPECT_EQ(head.split, TensorSplit::vocabulary_output);
    EXPECT_DOUBLE_EQ(head.compute, 1.0 / t);
    EXPECT_DOUBLE_EQ(head.parameters, 1.0 / t);
    EXPECT_EQ(head.forward_reductions, 3);
    EXPECT_DOUBLE_EQ(head.forward_elements, kSequence);  // one value per token
    EXPECT_EQ(head.backward_reductions, 1);
    EXPECT_DOUBLE_EQ(head.backward_elements, double(kSequence) * kHidden);
    // Stage 1's forward: block1's two all-reduces and the loss's three small
    // ones, against block1's two and the gathered logits of an MSE model.
    const LinkSpec nvlink{kBandwidthGBps, kLatencyUs, kNvlinkEfficiency};
    const auto all_reduce_s = [&](double bytes) {
        return std::min(
            testing::nccl_seconds(false, 2 * (t - 1), 2.0 * (t - 1) / t * bytes, nvlink),
            testing::nccl_seconds(true, 2 * 2, 2 * bytes, nvlink));
    };
    const double block = 2.0 * kSequence * kMicrobatchSize * kHidden;
    const double per_token = 2.0 * kSequence * kMicrobatchSize;
    const auto stages = stage_costs(p, {});
    EXPECT_NEAR(stages[1].tensor_forward_s, 2 * all_reduce_s(block) + 3 * all_reduce_s(per_token),
                1e-12);
    EXPECT_NEAR(stages[1].tensor_backward_s, 2 * all_reduce_s(block) + all_reduce_s(block), 1e-12);
    json mse = gpt_json(t);
    mse["model"]["loss"] = "mse";
    const AnalyzedProject gathered = analyze(mse);
    EXPECT_EQ(gathered.tensor_shares.back().split, TensorSplit::column);
    EXPECT_EQ(gathered.tensor_shares.back().forward_reductions, 1);
    EXPECT_GT(stage_costs(gathered, {})[1].tensor_forward_s, 2 * stages[1].tensor_forward_s);
}

TEST(TensorParallel, WhatCannotSplitIsNamed) {
    // Two groups of eight need 16 devices; the cluster has 8: said once, as
    // the cause, not as a stage to move.
    EXPECT_EQ(problems(gpt_json(8)),
              "tensor_parallel.size: 2 stage devices with groups of 8 need 16 devices, but the "
              "topology has 8; use a tensor-parallel size of at most 4, or place the stages on "
              "fewer devices (pipewright plan --tensor-parallel 8 does it)");
    // Enough devices, but four from gpu6 on do not fit in a container of eight.
    json late = gpt_json(4);
    late["placement"][1]["device"] = "node0/c0/gpu6";
    EXPECT_NE(problems(late).find("rank 1 (node0/c0/gpu6) leads a tensor-parallel group "
                                  "of 4 devices, but its container has only 2"),
              std::string::npos)
        << problems(late);
    // 16 heads do not split three ways.
    AnalysisOptions three;
    three.tensor_parallel = 3;
    EXPECT_NE(problems(gpt_json(1), three).find("does not divide heads = 16"), std::string::npos)
        << problems(gpt_json(1), three);
    // A convolution does not split at all.
    json conv = gpt_json(2);
    conv["model"]["input"] = {{"shape", {3, 32, 32}}, {"dtype", "float32"}};
    conv["model"]["layers"] = {{{"name", "conv"},
                                {"type", "conv2d"},
                                {"in_channels", 3},
                                {"out_channels", 8},
                                {"kernel_size", 3}}};
    conv["placement"] = {{{"device", "node0/c0/gpu0"}, {"layers", {"conv"}}}};
    conv["model"]["loss"] = "mse";
    EXPECT_NE(problems(conv).find("model.layers[0]: conv2d layers cannot be split"),
              std::string::npos)
        << problems(conv);
    // The planner names it too.
    try {
        (void)plan_pipeline(parse(conv), {});
        ADD_FAILURE() << "planned a convolution over groups of 2";
    } catch (const InputError& e) {
        EXPECT_NE(e.diagnostics().format().find("conv2d layers cannot be split"), std::string::npos)
            << e.diagnostics().format();
    }
}

TEST(TensorParallel, GroupsAndReplicasTakeDistinctDevices) {
    // Two replicas of a 2-stage pipeline, each stage on 2 devices: 8 GPUs.
    json j = gpt_json(2);
    j["placement"][1]["device"] = "node0/c0/gpu2";
    j["data_parallel"] = {{"size", 2}};
    const AnalyzedProject p = analyze(j);
    ASSERT_EQ(p.tensor_groups.size(), 2U);
    EXPECT_EQ(p.tensor_groups[1][0].front().path, "node0/c0/gpu4");
    EXPECT_EQ(p.tensor_groups[1][1].back().path, "node0/c0/gpu7");
    // A stage placed inside another's group is refused.
    json overlap = gpt_json(2);
    overlap["placement"][1]["device"] = "node0/c0/gpu1";
    EXPECT_NE(problems(overlap).find("device node0/c0/gpu1 would be in"), std::string::npos)
        << problems(overlap);
}

TEST(TensorParallel, TheFileKeepsItAndAPlainFileStaysAsItWas) {
    const Project p = parse(gpt_json(4, true));
    EXPECT_EQ(p.tensor_parallel.size, 4);
    EXPECT_TRUE(p.tensor_parallel.sequence_parallel);
    Diagnostics d;
    EXPECT_EQ(*project_from_json(project_to_json(p), d), p);
    EXPECT_FALSE(project_to_json(parse(gpt_json(1))).contains("tensor_parallel"));
    json bad = gpt_json(1);
    bad["tensor_parallel"] = {{"size", 0}};
    EXPECT_NE(problems(bad).find("tensor_parallel.size"), std::string::npos) << problems(bad);
}

}  // namespace
}  // namespace pipewright

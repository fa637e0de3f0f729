// Context parallelism in the cost model and the simulator: the ranks of a
// context-parallel group each run 1/C of every sequence (its activations,
// its FLOPs, its boundary transfers), attention's queries meet every key,
// and the keys and values travel between the ranks, around a ring beside
// the attention or gathered before it.

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

namespace pipewright {
namespace {

using nlohmann::json;

constexpr int kSequence = 8192;
constexpr int kHidden = 2048;
constexpr int kHeads = 16;
constexpr int kKvHeads = 4;
constexpr int kHeadDim = kHidden / kHeads;

// A small Llama-like model on one node of 8 GPUs: stage 0 (the embedding
// and a block) on gpu0, stage 1 (a second block, the norm and the head) on
// gpu1, in 4 data-parallel replicas, `context` of which share a sequence.
json llama_json(int context, const std::string& exchange = "ring", double bandwidth_GBps = 200,
                double latency_us = 5) {
    testing::DecoderProject p;
    p.block = {{"type", "transformer_block"},
               {"hidden", kHidden},
               {"heads", kHeads},
               {"kv_heads", kKvHeads},
               {"ffn_hidden", 5632},
               {"activation", "swiglu"},
               {"norm", "rmsnorm"},
               {"bias", false},
               {"qkv_bias", false},
               {"rotary", true}};
    p.sequence = kSequence;
    p.hidden = kHidden;
    p.final_norm = "rmsnorm";
    p.link = {{"bandwidth_GBps", bandwidth_GBps}, {"latency_us", latency_us}, {"efficiency", 1.0}};
    p.training = {{"batch_size", 8},
                  {"microbatches", 2},
                  {"schedule", "1f1b"},
                  {"dtype", "bfloat16"},
                  {"optimizer", {{"type", "adam"}}}};
    json j = testing::decoder_project_json(p);
    j["data_parallel"] = {{"size", 4}, {"overlap_gradient_sync", false}};
    if (context > 1) {
        j["context_parallel"] = {{"size", context}, {"exchange", exchange}};
    }
    return j;
}

AnalyzedProject analyze(const json& j, const AnalysisOptions& options = {}) {
    return testing::analyzed_json(j, options);
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

double sum_flops(const std::vector<Kernel>& kernels) {
    double f = 0;
    for (const Kernel& k : kernels) {
        f += k.flops;
    }
    return f;
}

TEST(ContextParallel, TheBatchSplitsOverTheGroupsNotTheReplicas) {
    // 4 replicas, 2 to a sequence: 2 groups of 4 samples each, in 2
    // micro-batches of 2 samples; without context parallelism 4 replicas
    // of 2 samples.
    const AnalyzedProject whole = analyze(llama_json(1));
    const AnalyzedProject split = analyze(llama_json(2));
    EXPECT_EQ(whole.microbatch_size, 1);
    EXPECT_EQ(split.microbatch_size, 2);
    EXPECT_EQ(split.data_parallel(), 4);
    EXPECT_EQ(split.world_size(), whole.world_size());
}

TEST(ContextParallel, EachRankHoldsItsShareOfEverySequencesActivations) {
    // Same micro-batch (1 sample) either way: 4 replicas of 8 samples, or
    // with C = 4 one group of 4 replicas and 8 micro-batches of 1.
    json one = llama_json(1);
    one["training"]["microbatches"] = 2;
    json four = llama_json(4);
    four["training"]["microbatches"] = 8;
    const AnalyzedProject a = analyze(one);
    const AnalyzedProject b = analyze(four);
    ASSERT_EQ(a.microbatch_size, b.microbatch_size);
    const auto whole = stage_costs(a, {});
    const auto quarter = stage_costs(b, {});
    for (std::size_t s = 0; s < 2; ++s) {
        SCOPED_TRACE("stage " + std::to_string(s));
        EXPECT_NEAR(quarter[s].stash_bytes, whole[s].stash_bytes / 4, 1e-6 * whole[s].stash_bytes);
        EXPECT_NEAR(quarter[s].weight_stash_bytes, whole[s].weight_stash_bytes / 4,
                    1e-6 * whole[s].stash_bytes);
        EXPECT_NEAR(quarter[s].input_bytes, whole[s].input_bytes / 4, 1e-9);
        EXPECT_NEAR(quarter[s].output_bytes, whole[s].output_bytes / 4, 1e-9);
        // The weights are every rank's: context parallelism splits no matrix.
        EXPECT_EQ(quarter[s].parameters, whole[s].parameters);
        EXPECT_LT(quarter[s].forward_s, whole[s].forward_s / 2);
    }
    // The whole peak falls: weights stay, activations shrink.
    const SimulationReport ra = simulate_project(a);
    const SimulationReport rb = simulate_project(b);
    EXPECT_LT(rb.devices[0].peak_memory_bytes, ra.devices[0].peak_memory_bytes);
}

TEST(ContextParallel, ABlocksKernelsDoItsShareOfTheFlops) {
    json four = llama_json(4);
    four["training"]["microbatches"] = 8;
    const AnalyzedProject p = analyze(four);
    const int block = 1;
    const LayerKernels k = project_layer_kernels(p, block);
    const LayerAnalysis& a = p.layers[block];
    const double mb = p.microbatch_size;
    EXPECT_NEAR(sum_flops(k.forward) * 4, a.forward_flops * mb, 1e-6 * a.forward_flops);
    EXPECT_NEAR(sum_flops(k.backward_input) * 4, a.backward_input_flops * mb,
                1e-6 * a.backward_input_flops);
    EXPECT_NEAR(sum_flops(k.backward_weight) * 4, a.backward_weight_flops * mb,
                1e-6 * a.backward_weight_flops);
    // Attention: this rank's quarter of the queries against every key,
    // unfused or flash.
    const auto scores = [](const LayerKernels& kernels) -> const Kernel* {
        for (const Kernel& kernel : kernels.forward) {
            if (kernel.name == "attention scores" || kernel.kind == KernelKind::attention) {
                return &kernel;
            }
        }
        return nullptr;
    };
    const Kernel* unfused = scores(k);
    ASSERT_NE(unfused, nullptr);
    EXPECT_EQ(unfused->m, kSequence / 4);
    EXPECT_EQ(unfused->n, kSequence);
    json flash = four;
    flash["model"]["layers"][1]["flash_attention"] = true;
    const AnalyzedProject f = analyze(flash);
    const LayerKernels fk = project_layer_kernels(f, block);
    const Kernel* fused = scores(fk);
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->kind, KernelKind::attention);
    EXPECT_EQ(fused->m, kSequence / 4);
    EXPECT_EQ(fused->n, kSequence);
    EXPECT_NEAR(sum_flops(fk.forward) * 4, f.layers[block].forward_flops * f.microbatch_size,
                1e-6 * f.layers[block].forward_flops);
}

TEST(ContextParallel, AnAllGatherCollectsEveryRanksKeysAndValues) {
    const AnalyzedProject p = analyze(llama_json(2, "all_gather"));
    const auto stages = stage_costs(p, {});
    // Each rank's keys and values: 2 samples × 4,096 tokens × 4 heads of
    // 128, twice (K and V), in bf16.
    const double kv = 2.0 * kSequence / 2 * 2 * kKvHeads * kHeadDim * 2;
    CollectiveGroup group;
    group.members = 2;
    group.library = CollectiveLibrary::nccl;
    group.ring = LinkSpec{200, 5};
    const double gather = collective_time(CollectiveKind::all_gather, 2 * kv, group).seconds;
    const double scatter = collective_time(CollectiveKind::reduce_scatter, 2 * kv, group).seconds;
    for (std::size_t s = 0; s < 2; ++s) {
        SCOPED_TRACE("stage " + std::to_string(s));
        EXPECT_NEAR(stages[s].context_kv_bytes, kv, 1e-6);
        EXPECT_NEAR(stages[s].context_forward_s, gather, 1e-12);
        EXPECT_NEAR(stages[s].context_backward_s, gather + scatter, 1e-12);
    }
}

// While a layer's attention runs, the exchange's keys and values sit beside
// the stash: an all-gather holds the other C − 1 chunks (backward: those
// again and the whole sequence's dK and dV), a ring the next chunk (and,
// backward, the dK and dV passed along with it).
TEST(ContextParallel, TheExchangedKeysAndValuesAreHeldWhileAttentionRuns) {
    // One layer's, C = 4: the batch of 8 in one group, 2 micro-batches of 4
    // samples, a quarter of each sequence here.
    const double kv = 4.0 * kSequence / 4 * 2 * kKvHeads * kHeadDim * 2;
    const AnalyzedProject gathered = analyze(llama_json(4, "all_gather"));
    const AnalyzedProject ring = analyze(llama_json(4, "ring"));
    const auto g = stage_costs(gathered, {});
    const auto r = stage_costs(ring, {});
    EXPECT_NEAR(g[0].transient_forward_bytes, 3 * kv, 1e-6);
    EXPECT_NEAR(g[0].transient_backward_bytes, 7 * kv, 1e-6);
    EXPECT_NEAR(r[0].transient_forward_bytes, kv, 1e-6);
    EXPECT_NEAR(r[0].transient_backward_bytes, 3 * kv, 1e-6);
    EXPECT_EQ(g[0].stash_bytes, r[0].stash_bytes);
    EXPECT_EQ(stage_costs(analyze(llama_json(1)), {})[0].transient_backward_bytes, 0);
    // The peak comes inside a backward, holding the stash and its transient.
    const SimulationReport sg = simulate_project(gathered);
    const SimulationReport sr = simulate_project(ring);
    EXPECT_NEAR(
        static_cast<double>(sg.devices[0].peak_memory_bytes - sr.devices[0].peak_memory_bytes),
        4 * kv, 1);
}

TEST(ContextParallel, ARingHidesItsStepsBehindTheAttentionOfTheChunkInHand) {
    // Over a slow link the ring waits for what the attention cannot hide:
    // the all-gather's time less (C − 1)/C of the attention.
    const AnalyzedProject ring = analyze(llama_json(4, "ring", 2, 50));
    const AnalyzedProject gathered = analyze(llama_json(4, "all_gather", 2, 50));
    const auto r = stage_costs(ring, {});
    const auto g = stage_costs(gathered, {});
    const DeviceSpec& device = ring.rank_specs[0];
    const LayerCost block = layer_cost(ring, 1, device, {});
    ASSERT_GT(block.attention_forward_s, 0);
    ASSERT_GT(block.attention_backward_s, block.attention_forward_s);
    EXPECT_GT(r[0].context_forward_s, 0);
    EXPECT_NEAR(r[0].context_forward_s, g[0].context_forward_s - block.attention_forward_s * 3 / 4,
                1e-12);
    // Over NVLink the attention of an 8K sequence hides it all.
    const auto fast = stage_costs(analyze(llama_json(4, "ring", 450, 2)), {});
    EXPECT_EQ(fast[0].context_forward_s, 0);
    EXPECT_EQ(fast[0].context_backward_s, 0);
    EXPECT_GT(fast[0].context_kv_bytes, 0);
    // The stage's forward includes what it waits for.
    EXPECT_NEAR(r[0].forward_s - fast[0].forward_s, r[0].context_forward_s, 1e-9);
}

TEST(ContextParallel, GradientsStillAverageOverEveryReplica) {
    // The ranks of a group hold the same weights: the gradients reduce
    // over all 4 replicas either way.
    json two = llama_json(2);
    two["training"]["microbatches"] = 4;
    const SimulationReport whole = simulate_project(analyze(llama_json(1)));
    const SimulationReport split = simulate_project(analyze(two));
    ASSERT_EQ(split.collectives.size(), 2U);
    for (std::size_t s = 0; s < 2; ++s) {
        EXPECT_DOUBLE_EQ(split.collectives[s].reduce_s, whole.collectives[s].reduce_s);
    }
    EXPECT_EQ(split.context_parallel.size, 2);
    EXPECT_DOUBLE_EQ(split.throughput_samples_per_s * split.iteration_time_s, 8);
}

TEST(ContextParallel, ItsSizeAndExchangeAreSavedAndRead) {
    Diagnostics d;
    const auto p = project_from_json(llama_json(4, "all_gather"), d);
    ASSERT_TRUE(p) << d.format();
    EXPECT_EQ(p->context_parallel.size, 4);
    EXPECT_EQ(p->context_parallel.exchange, ContextExchange::all_gather);
    const auto again = project_from_json(project_to_json(*p), d);
    ASSERT_TRUE(again) << d.format();
    EXPECT_EQ(*again, *p);
    // The default is not written.
    EXPECT_FALSE(
        project_to_json(*project_from_json(llama_json(1), d)).contains("context_parallel"));
    json bad = llama_json(2);
    bad["context_parallel"]["exchange"] = "broadcast";
    const std::string message = problems(bad);
    EXPECT_NE(message.find("context_parallel.exchange"), std::string::npos) << message;
}

TEST(ContextParallel, ALayoutThatCannotSplitTheSequencesIsRefused) {
    // 8 does not divide the 4 replicas.
    const std::string eight = problems(llama_json(8));
    EXPECT_NE(eight.find("context_parallel.size: 8 must divide the 4 data-parallel replicas"),
              std::string::npos)
        << eight;
    // 6 tokens do not cut into 2 × 2 chunks.
    json short_sequence = llama_json(1);
    short_sequence["model"]["input"]["shape"] = {6};
    AnalysisOptions two;
    two.context_parallel = 2;
    const std::string chunks = problems(short_sequence, two);
    EXPECT_NE(chunks.find("--context-parallel: the sequence of 6 tokens does not cut into 4 "
                          "equal chunks"),
              std::string::npos)
        << chunks;
    // A model without attention has no sequence to share.
    json mlp = llama_json(2);
    mlp["model"]["layers"] = json::array(
        {{{"name", "fc"}, {"type", "linear"}, {"in_features", 4}, {"out_features", 4}}});
    mlp["model"]["input"] = {{"shape", {4}}, {"dtype", "float32"}};
    mlp["model"]["loss"] = "mse";
    mlp["placement"] = json::array({{{"device", "node0/c0/gpu0"}, {"layers", {"fc"}}}});
    EXPECT_NE(problems(mlp).find("the model has no transformer_block"), std::string::npos)
        << problems(mlp);
    // The batch splits over the groups: 2 groups cannot share 3 samples.
    json odd = llama_json(2);
    odd["training"]["batch_size"] = 3;
    odd["training"]["microbatches"] = 1;
    EXPECT_NE(problems(odd).find("does not split evenly across 2 context-parallel groups (4 "
                                 "data-parallel replicas, 2 to a sequence)"),
              std::string::npos)
        << problems(odd);
}

TEST(ContextParallel, ThePlannerKeepsItsSizeAndLaysOutReplicaCountsItDivides) {
    Diagnostics d;
    const auto project = project_from_json(llama_json(2), d);
    ASSERT_TRUE(project) << d.format();
    PlanOptions options;
    options.data_parallel = 0;  // search
    const PlanResult r = plan_pipeline(*project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    ASSERT_FALSE(r.data_parallel.empty());
    for (const DataParallelOption& o : r.data_parallel) {
        EXPECT_EQ(o.replicas % 2, 0) << o.replicas;
    }
    EXPECT_EQ(r.project.context_parallel, project->context_parallel);
    // The plan is what its project simulates to: each group of 2 replicas
    // trains on its share of the batch.
    Diagnostics again;
    const auto analyzed = analyze_project(r.project, {}, again);
    ASSERT_TRUE(analyzed) << again.format();
    EXPECT_EQ(analyzed->microbatches * analyzed->microbatch_size * analyzed->data_parallel() / 2,
              8);
    EXPECT_NEAR(simulate_project(*analyzed).iteration_time_s, r.plan.report->iteration_time_s,
                1e-9);
    // An odd replica count asked for cannot hold the groups.
    PlanOptions three;
    three.data_parallel = 3;
    try {
        (void)plan_pipeline(*project, three);
        ADD_FAILURE() << "3 replicas were planned";
    } catch (const InputError& e) {
        EXPECT_NE(e.diagnostics().format().find("3 replicas do not split into groups of 2 "
                                                "(context_parallel.size)"),
                  std::string::npos)
            << e.diagnostics().format();
    }
}

TEST(ContextParallel, ThePlannerSearchesTheSizesThatSplitTheSequence) {
    Diagnostics d;
    const auto project = project_from_json(llama_json(1), d);
    ASSERT_TRUE(project) << d.format();
    PlanOptions options;
    options.context_parallel = 0;  // search, with the project's 4 replicas
    const PlanResult r = plan_pipeline(*project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    std::vector<int> sizes;
    for (const DataParallelOption& o : r.data_parallel) {
        EXPECT_EQ(o.replicas, 4);
        sizes.push_back(o.context_parallel);
    }
    EXPECT_EQ(sizes, (std::vector<int>{1, 2, 4}));
    // The winner is what its project simulates to, and the words say how
    // the replicas share the sequences when they do.
    Diagnostics again;
    const auto analyzed = analyze_project(r.project, {}, again);
    ASSERT_TRUE(analyzed) << again.format();
    EXPECT_NEAR(simulate_project(*analyzed).iteration_time_s, r.plan.report->iteration_time_s,
                1e-9);
    const int chosen = r.project.context_parallel.size;
    EXPECT_EQ(r.data_parallel_choice.find("to a sequence") != std::string::npos ||
                  r.data_parallel_choice.find("every sequence split over") != std::string::npos,
              true)
        << r.data_parallel_choice;
    EXPECT_EQ(chosen > 1, r.data_parallel_choice.find("every sequence split over " +
                                                      std::to_string(chosen)) != std::string::npos)
        << r.data_parallel_choice;
}

}  // namespace
}  // namespace pipewright

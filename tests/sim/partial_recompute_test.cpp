// Partial recomputation (training.recompute_blocks): under full
// recomputation only the first N blocks of each stage are rebuilt, as
// Megatron-LM's block method does; the stage's other layers keep what their
// backward needs.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "analyzed_json.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

constexpr int kBlocks = 4;

// A GPT of four blocks (hidden 1024, sequence 2048) on one stage of an A100,
// or on a tensor-parallel group of two, in bf16, GPipe over 2 micro-batches
// of 2 sequences; `recompute` as activation_checkpointing, `blocks` as
// recompute_blocks (0: unset).
nlohmann::json gpt_json(const nlohmann::json& recompute, int blocks, int tensor = 1) {
    nlohmann::json layers = {{{"name", "embed"},
                              {"type", "embedding"},
                              {"num_embeddings", 32000},
                              {"embedding_dim", 1024}}};
    for (int b = 0; b < kBlocks; ++b) {
        layers.push_back({{"name", "block" + std::to_string(b)},
                          {"type", "transformer_block"},
                          {"hidden", 1024},
                          {"heads", 16}});
    }
    layers.push_back({{"name", "ln_f"}, {"type", "layernorm"}, {"features", 1024}});
    layers.push_back({{"name", "head"},
                      {"type", "linear"},
                      {"in_features", 1024},
                      {"out_features", 32000},
                      {"bias", false}});
    nlohmann::json j = {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "gpt"},
          {"input", {{"shape", {2048}}, {"dtype", "int64"}}},
          {"loss", "cross_entropy"},
          {"layers", layers}}},
        {"topology", testing::one_container_topology("A100-80GB", tensor)},
        {"placement", {{{"device", "n/c/gpu0"}, {"layers", {{"from", "embed"}, {"to", "head"}}}}}},
        {"training",
         {{"batch_size", 4},
          {"microbatches", 2},
          {"schedule", "gpipe"},
          {"dtype", "bfloat16"},
          {"activation_checkpointing", recompute}}}};
    if (blocks > 0) {
        j["training"]["recompute_blocks"] = blocks;
    }
    if (tensor > 1) {
        j["tensor_parallel"] = {{"size", tensor}};
    }
    return j;
}

AnalyzedProject gpt(bool recompute, int blocks, int tensor = 1) {
    LoadedProject loaded = parse_project_text(gpt_json(recompute, blocks, tensor).dump());
    EXPECT_TRUE(loaded.project.has_value()) << loaded.diagnostics.format();
    Diagnostics d;
    auto project = analyze_project(*loaded.project, {}, d);
    EXPECT_TRUE(project.has_value()) << d.format();
    return std::move(*project);
}

LayerCost cost_of(const AnalyzedProject& p, int layer) {
    return layer_cost(p, layer, p.rank_specs.at(0), {});
}

// The backward runs again the forward of the first N blocks only, and the
// stage keeps the inputs of those blocks and whatever the other layers'
// backward needs, the embedding's and the head's included.
TEST(PartialRecompute, RebuildsTheFirstBlocksAndKeepsTheRest) {
    const AnalyzedProject plain = gpt(false, 0);
    const AnalyzedProject two = gpt(true, 2);
    const StageCost kept = stage_costs(plain, {}).at(0);
    const StageCost partial = stage_costs(two, {}).at(0);
    // Layers: 0 embed, 1-4 blocks, 5 ln_f, 6 head.
    EXPECT_DOUBLE_EQ(partial.recompute_s,
                     cost_of(plain, 1).forward_s + cost_of(plain, 2).forward_s);
    EXPECT_NEAR(partial.backward_input_s, kept.backward_input_s + partial.recompute_s, 1e-12);
    EXPECT_DOUBLE_EQ(partial.forward_s, kept.forward_s);
    EXPECT_DOUBLE_EQ(partial.backward_weight_s, kept.backward_weight_s);
    // Blocks 0 and 1 keep their inputs (the embedding's and block 0's
    // outputs) instead of their activations.
    EXPECT_NEAR(partial.stash_bytes,
                kept.stash_bytes - cost_of(plain, 1).stash_bytes - cost_of(plain, 2).stash_bytes +
                    cost_of(plain, 0).output_bytes + cost_of(plain, 1).output_bytes,
                1.0);
    // Rebuilt one at a time: one block's activations on top, in the backward.
    EXPECT_DOUBLE_EQ(partial.transient_backward_bytes - kept.transient_backward_bytes,
                     cost_of(plain, 1).stash_bytes);
    // A split backward's I rebuilds both and holds them until W.
    EXPECT_NEAR(partial.transient_backward_input_bytes - kept.transient_backward_input_bytes,
                cost_of(plain, 1).stash_bytes + cost_of(plain, 2).stash_bytes, 1.0);
}

// Between none and every unit: the more blocks rebuilt, the less memory and
// the more time; with N at least the stage's blocks, every block is rebuilt
// but the embedding and the head keep their activations, unlike full
// recomputation without N.
TEST(PartialRecompute, TradesMemoryForTimeBlockByBlock) {
    const SimulationReport none = simulate_project(gpt(false, 0));
    const SimulationReport full = simulate_project(gpt(true, 0));
    double time = none.iteration_time_s;
    auto memory = none.devices.at(0).peak_memory_bytes;
    for (int n = 1; n <= kBlocks; ++n) {
        SCOPED_TRACE(n);
        const SimulationReport r = simulate_project(gpt(true, n));
        EXPECT_GT(r.iteration_time_s, time);
        EXPECT_LT(r.devices.at(0).peak_memory_bytes, memory);
        time = r.iteration_time_s;
        memory = r.devices.at(0).peak_memory_bytes;
    }
    EXPECT_LT(time, full.iteration_time_s);
    EXPECT_GT(memory, full.devices.at(0).peak_memory_bytes);
    const StageCost all = stage_costs(gpt(true, 10), {}).at(0);
    const StageCost every = stage_costs(gpt(true, kBlocks), {}).at(0);
    EXPECT_DOUBLE_EQ(all.recompute_s, every.recompute_s);
    EXPECT_DOUBLE_EQ(all.stash_bytes, every.stash_bytes);
}

// Under tensor parallelism the rebuilt blocks' forward all-reduces run
// again too: identical blocks, so two cost twice one, and more than the
// block's kernels alone.
TEST(PartialRecompute, RunsTheRebuiltBlocksAllReducesAgain) {
    const AnalyzedProject one = gpt(true, 1, 2);
    const StageCost a = stage_costs(one, {}).at(0);
    const StageCost b = stage_costs(gpt(true, 2, 2), {}).at(0);
    EXPECT_NEAR(b.recompute_s, 2 * a.recompute_s, 1e-12);
    EXPECT_GT(a.recompute_s, cost_of(one, 1).forward_s);
    EXPECT_LT(a.recompute_s, a.tensor_forward_s + cost_of(one, 1).forward_s);
}

// The analysis says why it refuses recompute_blocks: without full
// recomputation, or for a model without blocks.
std::string refusal(const nlohmann::json& j) {
    LoadedProject loaded = parse_project_text(j.dump());
    if (!loaded.project || !loaded.diagnostics.empty()) {
        return loaded.diagnostics.format();
    }
    Diagnostics d;
    EXPECT_FALSE(analyze_project(*loaded.project, {}, d).has_value());
    return d.format();
}

TEST(PartialRecompute, IsRefusedWhereItCannotApply) {
    EXPECT_EQ(refusal(gpt_json("selective", 2)),
              "training.recompute_blocks: narrows full recomputation to the first blocks of each "
              "stage, and this training recomputes selectively: set "
              "training.activation_checkpointing to true, or remove recompute_blocks");
    EXPECT_EQ(refusal(gpt_json(false, 2)),
              "training.recompute_blocks: narrows full recomputation to the first blocks of each "
              "stage, and this training recomputes nothing: set "
              "training.activation_checkpointing to true, or remove recompute_blocks");
    nlohmann::json no_blocks = gpt_json(true, 2);
    auto& layers = no_blocks["model"]["layers"];
    layers.erase(layers.begin() + 1, layers.begin() + 1 + kBlocks);
    EXPECT_EQ(refusal(no_blocks),
              "training.recompute_blocks: the model has no blocks (transformer_block, "
              "resnet_bottleneck) to recompute; remove it to recompute each stage whole");
    nlohmann::json zero = gpt_json(true, 2);
    zero["training"]["recompute_blocks"] = 0;
    EXPECT_EQ(refusal(zero), "training.recompute_blocks: must be at least 1, got 0");
}

}  // namespace
}  // namespace pipewright

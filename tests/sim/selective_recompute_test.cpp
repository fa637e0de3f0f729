// Selective activation recomputation (Korthikanti et al. 2022, issue 31):
// the attention core's scores are recomputed instead of kept.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "analyzed_json.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/kernel_cost.h"

namespace pipewright {
namespace {

// One GPT block (hidden h, a heads, sequence s) with Megatron-LM's dropouts
// on one A100, bf16, in micro-batches of b sequences.
constexpr int kHidden = 1024;
constexpr int kHeads = 16;
constexpr int kSequence = 2048;
constexpr int kBatch = 4;

AnalyzedProject block(const std::string& recompute, bool flash = false, int tensor = 1) {
    nlohmann::json j = {{"format", "pipewright-project"},
                        {"version", 1},
                        {"model",
                         {{"name", "block"},
                          {"input", {{"shape", {kSequence, kHidden}}, {"dtype", "bfloat16"}}},
                          {"layers",
                           {{{"name", "b0"},
                             {"type", "transformer_block"},
                             {"hidden", kHidden},
                             {"heads", kHeads},
                             {"attention_dropout", 0.1},
                             {"hidden_dropout", 0.1},
                             {"flash_attention", flash}}}}}},
                        {"topology", testing::one_container_topology("A100-80GB", tensor)},
                        {"placement", {{{"device", "n/c/gpu0"}, {"layers", {"b0"}}}}},
                        {"training",
                         {{"batch_size", kBatch},
                          {"microbatches", 1},
                          {"schedule", "gpipe"},
                          {"dtype", "bfloat16"}}},
                        {"tensor_parallel", {{"size", tensor}, {"sequence_parallel", tensor > 1}}}};
    if (recompute == "true") {
        j["training"]["activation_checkpointing"] = true;
    } else if (!recompute.empty()) {
        j["training"]["activation_checkpointing"] = recompute;
    }
    LoadedProject loaded = parse_project_text(j.dump());
    EXPECT_TRUE(loaded.project.has_value()) << loaded.diagnostics.format();
    Diagnostics d;
    auto project = analyze_project(*loaded.project, {}, d);
    EXPECT_TRUE(project.has_value()) << d.format();
    return std::move(*project);
}

TEST(SelectiveRecompute, ActivationBytesAreKorthikantisFormula) {
    const double s = kSequence, b = kBatch, h = kHidden, a = kHeads;
    const CostModelOptions costs;
    const AnalyzedProject none = block("");
    const AnalyzedProject selective = block("selective");
    // Bytes per layer at 2 bytes an element: s·b·h·(34 + 5·a·s/h) without
    // recomputation, 34·s·b·h with the attention core recomputed.
    EXPECT_DOUBLE_EQ(layer_cost(none, 0, none.rank_specs[0], costs).stash_bytes,
                     s * b * h * (34 + 5 * a * s / h));
    EXPECT_DOUBLE_EQ(layer_cost(selective, 0, selective.rank_specs[0], costs).stash_bytes,
                     34 * s * b * h);
    // With tensor and sequence parallelism over t: 34·s·b·h / t.
    const AnalyzedProject split = block("selective", false, 2);
    EXPECT_DOUBLE_EQ(layer_cost(split, 0, split.rank_specs[0], costs).stash_bytes,
                     34 * s * b * h / 2);
}

TEST(SelectiveRecompute, TheBackwardRunsTheAttentionCoreAgain) {
    const CostModelOptions costs;
    const AnalyzedProject none = block("");
    const AnalyzedProject selective = block("selective");
    const LayerCost plain = layer_cost(none, 0, none.rank_specs[0], costs);
    const LayerCost recomputed = layer_cost(selective, 0, selective.rank_specs[0], costs);
    double core_s = 0;
    for (const Kernel& k : project_layer_kernels(none, 0).forward) {
        if (k.attention_core) {
            core_s += kernel_time(k, none.rank_specs[0], DType::bfloat16).seconds;
        }
    }
    EXPECT_GT(core_s, 0);
    EXPECT_NEAR(recomputed.backward_input_s - plain.backward_input_s, core_s, 1e-15);
    EXPECT_DOUBLE_EQ(recomputed.forward_s, plain.forward_s);
    EXPECT_DOUBLE_EQ(recomputed.backward_weight_s, plain.backward_weight_s);
    // Less than the whole forward that full recomputation runs again (here,
    // with a sequence twice the hidden and the scores' softmax and dropout
    // bound by memory, two thirds of it; at GPT-3's hidden of 12,288, a few
    // per cent of the layer, as the paper reports).
    EXPECT_LT(core_s, plain.forward_s);
    const AnalyzedProject full = block("true");
    const StageCost full_stage = stage_costs(full, costs).at(0);
    // The block is the model's last layer: its stage also runs the loss's
    // gradient, which is kept, not recomputed.
    const LossKernels loss = project_loss_kernels(full, costs);
    ASSERT_FALSE(loss.kernels.backward_input.empty());
    const double loss_backward_s =
        kernels_seconds(loss.kernels.backward_input, full.rank_specs[0], DType::bfloat16);
    EXPECT_NEAR(full_stage.backward_input_s - plain.backward_input_s,
                plain.forward_s + loss_backward_s, 1e-12);
}

TEST(SelectiveRecompute, AFlashKernelHasNothingToRecompute) {
    const CostModelOptions costs;
    const AnalyzedProject none = block("", true);
    const AnalyzedProject selective = block("selective", true);
    const LayerCost plain = layer_cost(none, 0, none.rank_specs[0], costs);
    const LayerCost recomputed = layer_cost(selective, 0, selective.rank_specs[0], costs);
    EXPECT_DOUBLE_EQ(recomputed.stash_bytes, plain.stash_bytes);
    EXPECT_DOUBLE_EQ(recomputed.backward_input_s, plain.backward_input_s);
}

}  // namespace
}  // namespace pipewright

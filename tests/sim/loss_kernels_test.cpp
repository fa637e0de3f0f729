// The loss after the last layer (issue 30: work the model left out): its
// kernels' bytes, and that the last stage pays its time and holds its
// float32 softmax, as Megatron-LM's cross-entropy does.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/kernel_breakdown.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/layer_kernels.h"

namespace pipewright {
namespace {

double bytes(const std::vector<Kernel>& kernels) {
    double b = 0;
    for (const Kernel& k : kernels) {
        EXPECT_EQ(k.kind, KernelKind::memory);
        b += k.bytes;
    }
    return b;
}

TEST(LossKernels, CrossEntropyRunsItsSoftmaxInFloat32) {
    const double n = 1e6;
    // bf16 logits: cast (2 + 4), max (4), subtract (8), exp (8), sum (4),
    // normalise (8); backward: the gradient in place (8), cast back (4 + 2).
    const LayerKernels bf16 = loss_kernels(LossKind::cross_entropy, n, DType::bfloat16);
    EXPECT_DOUBLE_EQ(bytes(bf16.forward), 38 * n);
    EXPECT_DOUBLE_EQ(bytes(bf16.backward_input), 14 * n);
    EXPECT_TRUE(bf16.backward_weight.empty());
    // Float32 logits need no casts.
    const LayerKernels fp32 = loss_kernels(LossKind::cross_entropy, n, DType::float32);
    EXPECT_DOUBLE_EQ(bytes(fp32.forward), 32 * n);
    EXPECT_DOUBLE_EQ(bytes(fp32.backward_input), 8 * n);
    EXPECT_DOUBLE_EQ(loss_stash_bytes(LossKind::cross_entropy, n, DType::bfloat16), 4 * n);
    // MSE reads the output and the target, and writes the gradient.
    const LayerKernels mse = loss_kernels(LossKind::mse, n, DType::bfloat16);
    EXPECT_DOUBLE_EQ(bytes(mse.forward), 4 * n);
    EXPECT_DOUBLE_EQ(bytes(mse.backward_input), 6 * n);
    EXPECT_DOUBLE_EQ(loss_stash_bytes(LossKind::mse, n, DType::bfloat16), 2 * n);
}

AnalyzedProject analyzed(const std::string& example) {
    auto loaded =
        load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" / example);
    EXPECT_TRUE(loaded.project.has_value());
    Diagnostics d;
    auto project = analyze_project(*loaded.project, {}, d);
    EXPECT_TRUE(project.has_value()) << d.format();
    return std::move(*project);
}

bool has(const PassKernels& pass, const std::string& name) {
    return std::any_of(pass.kernels.begin(), pass.kernels.end(),
                       [&](const KernelShare& k) { return k.name == name; });
}

TEST(LossKernels, TheLastStagePaysTheLossAndHoldsItsSoftmax) {
    // Llama 3.1 8B, 4 stages, sequence 8,192, vocabulary 128,256, bf16,
    // tensor-parallel over 2: each member holds half the vocabulary's logits.
    const AnalyzedProject project = analyzed("llama3.1-8b-h100-node.json");
    ASSERT_EQ(project.project.tensor_parallel.size, 2);
    const CostModelOptions costs;
    const LossKernels loss = project_loss_kernels(project, costs);
    const double logits = 8192.0 * 128256 * project.microbatch_size;
    EXPECT_DOUBLE_EQ(loss.stash_bytes, 4 * logits / 2);  // 4.2 GB a micro-batch, halved
    const std::vector<StageCost> stages = stage_costs(project, costs);
    const std::vector<StageKernels> kernels = stage_kernels(project, costs);
    const DeviceSpec& device =
        project.rank_specs.at(static_cast<std::size_t>(project.stages.back().rank));
    const double forward_s = kernels_seconds(loss.kernels.forward, device, DType::bfloat16);
    EXPECT_GT(forward_s, 0);
    // Only the last stage runs it, and its breakdown names it.
    for (std::size_t s = 0; s < stages.size(); ++s) {
        const bool last = s + 1 == stages.size();
        EXPECT_EQ(has(kernels[s].forward, "softmax exp"), last) << s;
        EXPECT_EQ(has(kernels[s].backward_input, "cross-entropy gradient"), last) << s;
    }
    // Without it, the last stage would hold its layers' stash alone.
    double layers_stash = 0;
    for (int l = project.stages.back().first_layer; l <= project.stages.back().last_layer; ++l) {
        layers_stash += layer_cost(project, l, device, costs).stash_bytes;
    }
    EXPECT_NEAR(stages.back().stash_bytes, layers_stash + loss.stash_bytes,
                1e-9 * stages.back().stash_bytes);
}

double all_bytes(const LayerKernels& k) {
    return bytes(k.forward) + bytes(k.backward_input) + bytes(k.backward_weight);
}

// Megatron-LM's vocabulary-parallel cross-entropy: with the head's output
// split over a group of t, each member computes the loss over its 1/t of the
// logits and keeps 1/t of the float32 softmax.
TEST(LossKernels, TensorParallelismSplitsTheLossOverTheVocabulary) {
    const auto loaded = load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) /
                                          "examples" / "llama3.1-8b-h100-node.json");
    ASSERT_TRUE(loaded.project.has_value());
    const auto with_tensor = [&](int t) {
        Project p = *loaded.project;
        p.tensor_parallel = {t, t > 1};
        Diagnostics d;
        auto a = analyze_project(p, {}, d);
        EXPECT_TRUE(a.has_value()) << d.format();
        return std::move(*a);
    };
    const AnalyzedProject one = with_tensor(1);
    const AnalyzedProject two = with_tensor(2);
    ASSERT_EQ(two.tensor_shares.back().split, TensorSplit::vocabulary_output);
    const LossKernels whole = project_loss_kernels(one, {});
    const LossKernels half = project_loss_kernels(two, {});
    ASSERT_GT(all_bytes(whole.kernels), 0);
    EXPECT_DOUBLE_EQ(all_bytes(half.kernels), all_bytes(whole.kernels) / 2);
    EXPECT_DOUBLE_EQ(bytes(half.kernels.forward), bytes(whole.kernels.forward) / 2);
    EXPECT_DOUBLE_EQ(bytes(half.kernels.backward_input), bytes(whole.kernels.backward_input) / 2);
    EXPECT_DOUBLE_EQ(half.stash_bytes, whole.stash_bytes / 2);
    // An MSE model's last linear is gathered: each member computes the whole loss.
    Project mse = *loaded.project;
    mse.model.loss = LossKind::mse;
    Diagnostics d;
    const auto gathered = analyze_project(mse, {}, d);
    ASSERT_TRUE(gathered.has_value()) << d.format();
    EXPECT_NE(gathered->tensor_shares.back().split, TensorSplit::vocabulary_output);
    const double elements = 8192.0 * 128256 * gathered->microbatch_size;
    EXPECT_DOUBLE_EQ(project_loss_kernels(*gathered, {}).stash_bytes, 2 * elements);  // bf16
}

TEST(LossKernels, ALastLayerGivenItsOwnCostOrMeasuredHasNone) {
    AnalyzedProject project = analyzed("llama3.1-8b-h100-node.json");
    CostModelOptions flat;
    flat.flat_efficiency = 0.5;
    EXPECT_TRUE(project_loss_kernels(project, flat).kernels.forward.empty());
    project.project.model.layers.back().cost = CostOverride{};
    project.project.model.layers.back().cost->forward_ms = 1.0;
    EXPECT_TRUE(project_loss_kernels(project, {}).kernels.forward.empty());
    EXPECT_EQ(project_loss_kernels(project, {}).stash_bytes, 0);
}

}  // namespace
}  // namespace pipewright

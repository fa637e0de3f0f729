// Where a stage's time goes (issue 30): the kernels of its layers, grouped,
// add up to the stage's analytic F, I and W.
#include "pipewright/sim/kernel_breakdown.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"

namespace pipewright {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples";

AnalyzedProject analyzed(const std::string& example) {
    auto loaded = load_project_file(kExamples / example);
    EXPECT_TRUE(loaded.project.has_value());
    Diagnostics d;
    auto project = analyze_project(*loaded.project, {}, d);
    EXPECT_TRUE(project.has_value()) << d.format();
    return std::move(*project);
}

double sum(const PassKernels& pass) {
    double s = 0;
    for (const auto& k : pass.kernels) {
        s += k.seconds;
    }
    return s;
}

TEST(KernelBreakdown, AStagesKernelsAddUpToItsComputeTime) {
    // Llama 3.1 8B on 4 stages of tensor-parallel pairs.
    const AnalyzedProject project = analyzed("llama3.1-8b-h100-node.json");
    const CostModelOptions costs;
    const std::vector<StageCost> stage = stage_costs(project, costs);
    const std::vector<StageKernels> kernels = stage_kernels(project, costs);
    ASSERT_EQ(kernels.size(), project.stages.size());
    for (std::size_t s = 0; s < kernels.size(); ++s) {
        SCOPED_TRACE(s);
        const StageKernels& k = kernels[s];
        EXPECT_TRUE(k.not_kernels.empty());
        // The collectives are the group's, not kernels of the layers.
        EXPECT_NEAR(k.forward.seconds, stage[s].forward_s - stage[s].tensor_forward_s,
                    1e-9 * stage[s].forward_s);
        EXPECT_NEAR(k.backward_input.seconds,
                    stage[s].backward_input_s - stage[s].tensor_backward_s,
                    1e-9 * stage[s].backward_input_s);
        EXPECT_NEAR(k.backward_weight.seconds, stage[s].backward_weight_s,
                    1e-9 * stage[s].backward_weight_s);
        EXPECT_NEAR(sum(k.forward), k.forward.seconds, 1e-12);
        for (std::size_t i = 1; i < k.forward.kernels.size(); ++i) {
            EXPECT_GE(k.forward.kernels[i - 1].seconds, k.forward.kernels[i].seconds);
        }
    }
    // A stage of whole blocks launches each block's attention once a block.
    const PipelineStage& middle = project.stages[1];
    int blocks = 0;
    for (int l = middle.first_layer; l <= middle.last_layer; ++l) {
        blocks +=
            project.project.model.layers[static_cast<std::size_t>(l)].type == "transformer_block"
                ? 1
                : 0;
    }
    ASSERT_GT(blocks, 0);
    const auto& forward = kernels[1].forward.kernels;
    const auto attention = std::find_if(forward.begin(), forward.end(), [](const KernelShare& k) {
        return k.name == "flash attention";
    });
    ASSERT_NE(attention, forward.end());
    EXPECT_EQ(attention->count, blocks);
    EXPECT_GT(attention->flops, 0);
}

TEST(KernelBreakdown, LayersPricedOtherwiseHaveNoKernels) {
    const AnalyzedProject project = analyzed("dummy-2gpu.json");
    Profile profile;
    profile.microbatch_size = 8;
    profile.layers = {{"net1", 1.0, 1.0, 1.0, std::nullopt}};
    CostModelOptions costs;
    costs.profile = &profile;
    std::vector<StageKernels> kernels = stage_kernels(project, costs);
    ASSERT_EQ(kernels.size(), 2U);
    EXPECT_TRUE(kernels[0].not_kernels.empty());
    EXPECT_EQ(kernels[1].not_kernels, std::vector<std::string>{"net1"});
    EXPECT_TRUE(kernels[1].forward.kernels.empty());
    costs = {};
    costs.flat_efficiency = 0.5;
    kernels = stage_kernels(project, costs);
    EXPECT_EQ(kernels[0].not_kernels, (std::vector<std::string>{"net0", "relu"}));
    EXPECT_EQ(describe_pass(kernels[0].forward), "");
}

TEST(KernelBreakdown, APassIsDescribedByItsSlowestKernels) {
    PassKernels pass;
    pass.kernels = {{"qkv", KernelKind::gemm, 2, 0.5, 0, 0, 0},
                    {"fc1", KernelKind::gemm, 2, 0.25, 0, 0, 0},
                    {"gelu", KernelKind::memory, 2, 0.15, 0, 0, 2},
                    {"dropout", KernelKind::memory, 2, 0.1, 0, 0, 2}};
    pass.seconds = 1.0;
    EXPECT_EQ(describe_pass(pass), "qkv 50 % · fc1 25 % · gelu 15 % · dropout 10 %");
    EXPECT_EQ(describe_pass(pass, 2), "qkv 50 % · fc1 25 % · 2 more 25 %");
}

}  // namespace
}  // namespace pipewright

// training.gradient_accumulation: "add" prices a kernel of its own after each
// micro-batch's weight gradients (PyTorch's AccumulateGrad, Megatron-LM's
// data-parallel hook of 2021); "fused", the default, none.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/layer_kernels.h"

namespace pipewright {
namespace {

AnalyzedProject dummy(GradientAccumulation accumulation) {
    auto loaded = load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" /
                                    "dummy-2gpu.json");
    EXPECT_TRUE(loaded.project.has_value());
    loaded.project->training.gradient_accumulation = accumulation;
    Diagnostics d;
    auto project = analyze_project(*loaded.project, {}, d);
    EXPECT_TRUE(project.has_value()) << d.format();
    return *project;
}

const Kernel* accumulation_kernel(const LayerKernels& k) {
    const auto it = std::find_if(k.backward_weight.begin(), k.backward_weight.end(),
                                 [](const Kernel& x) { return x.name == "gradient accumulation"; });
    return it == k.backward_weight.end() ? nullptr : &*it;
}

// Under tensor parallelism each member adds its slice's gradients.
TEST(GradientAccumulation, EachTensorParallelMemberAddsItsSlice) {
    auto loaded = load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" /
                                    "llama3.1-8b-h100-node.json");
    ASSERT_TRUE(loaded.project.has_value());
    loaded.project->training.gradient_accumulation = GradientAccumulation::add;
    Diagnostics d;
    const auto project = analyze_project(*loaded.project, {}, d);
    ASSERT_TRUE(project.has_value()) << d.format();
    ASSERT_GT(project->project.tensor_parallel.size, 1);
    int checked = 0;
    for (int l = 0; l < static_cast<int>(project->layers.size()); ++l) {
        const auto i = static_cast<std::size_t>(l);
        const Kernel* acc = accumulation_kernel(project_layer_kernels(*project, l));
        if (acc == nullptr) {
            continue;
        }
        const double held = project->tensor_shares.at(i).parameters;
        EXPECT_DOUBLE_EQ(acc->bytes, 3.0 * static_cast<double>(project->layers.at(i).parameters) *
                                         held * dtype_bytes(project->project.training.dtype));
        checked += held < 1 ? 1 : 0;
    }
    EXPECT_GT(checked, 0);  // some layers are sliced
}

TEST(GradientAccumulation, AddingReadsTheGradientAndTheSumAndWritesTheSum) {
    const AnalyzedProject add = dummy(GradientAccumulation::add);
    const AnalyzedProject fused = dummy(GradientAccumulation::fused);
    const DType dtype = add.project.training.dtype;
    for (int l = 0; l < static_cast<int>(add.layers.size()); ++l) {
        const auto params = add.layers.at(static_cast<std::size_t>(l)).parameters;
        SCOPED_TRACE(add.project.model.layers.at(static_cast<std::size_t>(l)).name);
        EXPECT_EQ(accumulation_kernel(project_layer_kernels(fused, l)), nullptr);
        const LayerKernels k = project_layer_kernels(add, l);
        const Kernel* acc = accumulation_kernel(k);
        if (params == 0) {
            EXPECT_EQ(acc, nullptr);  // a ReLU has nothing to accumulate
            continue;
        }
        ASSERT_NE(acc, nullptr);
        EXPECT_EQ(acc->kind, KernelKind::memory);
        EXPECT_DOUBLE_EQ(acc->bytes, 3.0 * static_cast<double>(params) * dtype_bytes(dtype));
        EXPECT_EQ(&k.backward_weight.back(), acc);  // after the weight gradient
        // The layer's weight gradient costs that kernel more, nothing else.
        const DeviceSpec& device = add.rank_specs.at(0);
        const LayerCost with = layer_cost(add, l, device, {});
        const LayerCost without = layer_cost(fused, l, device, {});
        EXPECT_NEAR(with.backward_weight_s - without.backward_weight_s,
                    kernel_time(*acc, device, dtype).seconds, 1e-15);
        EXPECT_DOUBLE_EQ(with.forward_s, without.forward_s);
        EXPECT_DOUBLE_EQ(with.backward_input_s, without.backward_input_s);
    }
}

// With training.gradient_dtype "float32" beside bfloat16, the kernel reads
// the micro-batch's bfloat16 gradient and reads and writes the float32 sum.
TEST(GradientAccumulation, Float32GradientsAreSummedInFloat32) {
    EXPECT_EQ(gradient_accumulation_kernel(1e9, DType::bfloat16, DType::bfloat16).bytes, 6e9);
    EXPECT_EQ(gradient_accumulation_kernel(1e9, DType::bfloat16, DType::float32).bytes, 10e9);
}

}  // namespace
}  // namespace pipewright

// The fused attention kernel a project names (training.attention_kernel)
// prices its flash-attention blocks at that implementation's measured rate
// on each device; a device without one is refused in words, and the Costs
// line says which rate priced them.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "analyzed_json.h"
#include "decoder_project_json.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/sim/attention_note.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

using nlohmann::json;

// 33 blocks of 128 queries for each of 16 heads: 528 CTAs, four full waves
// on an H100's 132 SMs (the FlashAttention-3 paper's lengths divisible by
// 132 likewise leave no partial wave).
constexpr int kSequence = 128 * 33;

json decoder(const std::string& spec, const std::string& kernel, bool flash = true) {
    testing::DecoderProject p;
    p.block = {
        {"type", "transformer_block"}, {"hidden", 2048},    {"heads", 16},   {"ffn_hidden", 5632},
        {"activation", "swiglu"},      {"norm", "rmsnorm"}, {"bias", false}, {"rotary", true},
        {"flash_attention", flash}};
    p.sequence = kSequence;
    p.hidden = 2048;
    p.final_norm = "rmsnorm";
    p.device_spec = spec;
    p.link = {{"bandwidth_GBps", 200}, {"latency_us", 5}, {"efficiency", 1.0}};
    p.training = {{"batch_size", 4},
                  {"microbatches", 4},
                  {"schedule", "1f1b"},
                  {"dtype", "bfloat16"},
                  {"attention_kernel", kernel}};
    return testing::decoder_project_json(p);
}

const Kernel& find(const std::vector<Kernel>& kernels, KernelKind kind) {
    for (const Kernel& k : kernels) {
        if (k.kind == kind) {
            return k;
        }
    }
    ADD_FAILURE() << "no " << to_string(kind) << " kernel";
    static const Kernel none;
    return none;
}

// Full waves: a kernel's arithmetic takes its executed FLOPs over the
// measured share of the bf16 peak, forward and backward alike.
TEST(AttentionKernel, AFlashKernelRunsAtItsImplementationsMeasuredRate) {
    const DeviceSpec& h100 = *DeviceCatalog::builtin().find("H100-SXM");
    for (const auto& [name, forward, backward] :
         {std::tuple{"flash2", 0.34, 0.33}, {"cudnn", 0.68, 0.59}, {"flash3", 0.62, 0.57}}) {
        SCOPED_TRACE(name);
        const AnalyzedProject p = testing::analyzed_json(decoder("H100-SXM", name));
        const LayerKernels k = project_layer_kernels(p, 1);
        const Kernel& f = find(k.forward, KernelKind::attention);
        const Kernel& b = find(k.backward_input, KernelKind::attention_backward);
        EXPECT_EQ(to_string(f.implementation), name);
        const KernelTime tf = kernel_time(f, h100, DType::bfloat16);
        const KernelTime tb = kernel_time(b, h100, DType::bfloat16);
        EXPECT_DOUBLE_EQ(tf.tiling.utilization, 1);
        EXPECT_NEAR(tf.compute_s, f.work_flops() / (989e12 * forward), 1e-9 * tf.compute_s);
        EXPECT_NEAR(tb.compute_s, b.work_flops() / (989e12 * backward), 1e-9 * tb.compute_s);
    }
}

// The same model on the same GPUs: only the attention kernels' times
// differ, so the iterations follow the kernels' rates on an H100 (cuDNN 9.19
// ahead of FlashAttention-3, FlashAttention-2 the slowest), each stage's
// forward apart by exactly its attention kernel's difference.
TEST(AttentionKernel, TheKernelChosenMovesOnlyTheAttentionsTime) {
    const DeviceSpec& h100 = *DeviceCatalog::builtin().find("H100-SXM");
    double previous = 0;
    LayerCost fa2;
    for (const char* name : {"cudnn", "flash3", "flash2"}) {
        SCOPED_TRACE(name);
        const AnalyzedProject p = testing::analyzed_json(decoder("H100-SXM", name));
        const double iteration = simulate_project(p, {}, Recording::summary).iteration_time_s;
        EXPECT_GT(iteration, previous);
        previous = iteration;
        fa2 = layer_cost(p, 1, h100, {});
    }
    const AnalyzedProject three = testing::analyzed_json(decoder("H100-SXM", "flash3"));
    const LayerCost fa3 = layer_cost(three, 1, h100, {});
    const LayerKernels k3 = project_layer_kernels(three, 1);
    Kernel f2 = find(k3.forward, KernelKind::attention);
    f2.implementation = AttentionKernel::flash2;
    EXPECT_NEAR(
        fa2.forward_s - fa3.forward_s,
        kernel_time(f2, h100, DType::bfloat16).seconds -
            kernel_time(find(k3.forward, KernelKind::attention), h100, DType::bfloat16).seconds,
        1e-12);
    EXPECT_EQ(fa2.backward_weight_s, fa3.backward_weight_s);
}

// A kernel the catalog has no rate of on a device of the layout is refused,
// naming the field, the device and where it was measured; FlashAttention-2
// prices anywhere, and a model without flash attention takes any name.
TEST(AttentionKernel, ADeviceWithoutTheKernelsRateIsRefusedInWords) {
    Diagnostics d;
    const auto project = project_from_json(decoder("A100-80GB", "flash3"), d);
    ASSERT_TRUE(project) << d.format();
    EXPECT_FALSE(analyze_project(*project, {}, d));
    EXPECT_EQ(d.format(),
              "training.attention_kernel: FlashAttention-3 runs on Hopper GPUs only and has no "
              "measured rate on node0/c0/gpu0 (A100-80GB); use \"flash2\", or devices the "
              "catalog measured it on (H100-SXM, H100-PCIe, H800, H200)");
    (void)testing::analyzed_json(decoder("A100-80GB", "flash2"));
    (void)testing::analyzed_json(decoder("MI300X", "flash2"));
    (void)testing::analyzed_json(decoder("A100-80GB", "flash3", false));
    // Blackwell runs cuDNN's kernel and FlashAttention-2, not FlashAttention-3.
    (void)testing::analyzed_json(decoder("B200", "cudnn"));
    Diagnostics blackwell;
    const auto fa3 = project_from_json(decoder("B200", "flash3"), blackwell);
    ASSERT_TRUE(fa3) << blackwell.format();
    EXPECT_FALSE(analyze_project(*fa3, {}, blackwell));
    EXPECT_NE(blackwell.format().find("no measured rate on node0/c0/gpu0 (B200); use \"cudnn\" "
                                      "(measured on B200) or \"flash2\""),
              std::string::npos)
        << blackwell.format();
}

// The Costs line: the measured share where there is one, the fallback said
// as such where not, nothing without flash attention.
TEST(AttentionKernel, TheCostsLineSaysWhichRatePricedTheAttention) {
    EXPECT_EQ(attention_kernel_note(testing::analyzed_json(decoder("H100-SXM", "flash3"))),
              "flash attention: FlashAttention-3 at 62 % / 57 % of H100-SXM's peak (forward / "
              "backward)");
    EXPECT_EQ(attention_kernel_note(testing::analyzed_json(decoder("B200", "cudnn"))),
              "flash attention: cuDNN fused attention at 59 % / 48 % of B200's peak (forward / "
              "backward)");
    EXPECT_EQ(attention_kernel_note(testing::analyzed_json(decoder("MI300X", "flash2"))),
              "flash attention: FlashAttention-2 not measured on MI300X: priced at 43 % / 31 % of "
              "its peak, the A100's share of the matmul rate");
    EXPECT_EQ(attention_kernel_note(testing::analyzed_json(decoder("H100-SXM", "flash3", false))),
              "");
    // The flat model prices no kernel: nothing to say.
    CostModelOptions flat;
    flat.flat_efficiency = 0.5;
    EXPECT_EQ(attention_kernel_note(testing::analyzed_json(decoder("H100-SXM", "flash3")), flat),
              "");
}

// A kernel named for a model without flash attention changes nothing, and
// says so; with flash attention, or the default, nothing is said.
TEST(AttentionKernel, AKernelNamedForUnfusedAttentionIsSaidToChangeNothing) {
    Diagnostics d;
    const auto unfused = project_from_json(decoder("H100-SXM", "flash3", false), d);
    ASSERT_TRUE(unfused) << d.format();
    EXPECT_EQ(unused_attention_kernel_warning(*unfused),
              "training.attention_kernel \"flash3\" prices the blocks with flash_attention, and "
              "this model has none: its attention runs unfused, as the simulation prices it (set "
              "flash_attention on the blocks to run FlashAttention-3)");
    const auto flash = project_from_json(decoder("H100-SXM", "flash3"), d);
    ASSERT_TRUE(flash) << d.format();
    EXPECT_EQ(unused_attention_kernel_warning(*flash), "");
    const auto plain = project_from_json(decoder("H100-SXM", "flash2", false), d);
    ASSERT_TRUE(plain) << d.format();
    EXPECT_EQ(unused_attention_kernel_warning(*plain), "");
}

}  // namespace
}  // namespace pipewright

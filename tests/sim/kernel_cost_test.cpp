// The kernel cost model: each layer type's kernels add up to its analysis,
// and each kernel is priced as docs/simulator.md says (roofline, waves,
// launches).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/tensor_parallel.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/layer_kernels.h"

namespace pipewright {
namespace {

LayerSpec layer(const std::string& type, nlohmann::json params) {
    LayerSpec l;
    l.name = "l";
    l.type = type;
    l.params = std::move(params);
    return l;
}

LayerAnalysis analysed(const LayerSpec& spec, const Shape& input, DType dtype = DType::float32) {
    Diagnostics d;
    auto a = analyze_layer(spec, input, dtype, d, "model.layers[0]");
    EXPECT_TRUE(a.has_value()) << d.format();
    return a.value_or(LayerAnalysis{});
}

double flops(const std::vector<Kernel>& kernels) {
    double f = 0;
    for (const Kernel& k : kernels) {
        f += k.flops;
    }
    return f;
}

const nlohmann::json kLlamaBlock = {
    {"hidden", 1024},         {"heads", 16},       {"kv_heads", 4}, {"ffn_hidden", 3584},
    {"activation", "swiglu"}, {"norm", "rmsnorm"}, {"bias", false}, {"qkv_bias", false},
    {"rotary", true}};

struct Case {
    std::string type;
    nlohmann::json params;
    Shape input;
    DType input_dtype = DType::float32;
};

// Every catalog layer: the kernels' FLOPs are the analysis's, pass by pass,
// times the micro-batch size; every kernel moves bytes.
TEST(LayerKernels, EveryLayerTypesKernelsAddUpToItsAnalysis) {
    const std::vector<Case> cases = {
        {"linear", {{"in_features", 1024}, {"out_features", 4096}}, {128, 1024}},
        {"linear", {{"in_features", 512}, {"out_features", 10}, {"bias", false}}, {512}},
        {"relu", nlohmann::json::object(), {64, 56, 56}},
        {"gelu", nlohmann::json::object(), {2048}},
        {"dropout", {{"p", 0.1}}, {2048}},
        {"flatten", nlohmann::json::object(), {64, 7, 7}},
        {"conv2d",
         {{"in_channels", 3},
          {"out_channels", 64},
          {"kernel_size", 7},
          {"stride", 2},
          {"padding", 3}},
         {3, 224, 224}},
        {"batchnorm2d", {{"num_features", 64}}, {64, 112, 112}},
        {"maxpool2d", {{"kernel_size", 3}, {"stride", 2}, {"padding", 1}}, {64, 112, 112}},
        {"adaptive_avgpool2d", {{"output_size", 1}}, {2048, 7, 7}},
        {"resnet_bottleneck",
         {{"in_channels", 256}, {"mid_channels", 128}, {"out_channels", 512}, {"stride", 2}},
         {256, 56, 56}},
        {"layernorm", {{"features", 768}}, {1024, 768}},
        {"embedding", {{"num_embeddings", 50304}, {"embedding_dim", 768}}, {1024}, DType::int64},
        {"transformer_block", {{"hidden", 768}, {"heads", 12}}, {1024, 768}},
        {"transformer_block",
         {{"hidden", 768}, {"heads", 12}, {"attention_dropout", 0.1}, {"hidden_dropout", 0.1}},
         {1024, 768}},
        {"transformer_block",
         {{"hidden", 768}, {"heads", 12}, {"flash_attention", true}},
         {1024, 768}},
        {"rmsnorm", {{"features", 768}}, {1024, 768}},
        // Llama-style: grouped-query attention, SwiGLU, RMSNorm, no biases.
        {"transformer_block", kLlamaBlock, {1024, 1024}},
        // Gemma 2's local layer and Qwen3's norms in one block.
        {"transformer_block",
         [] {
             nlohmann::json p = kLlamaBlock;
             p.update({{"sliding_window", 256},
                       {"qk_norm", true},
                       {"post_norms", true},
                       {"flash_attention", true}});
             return p;
         }(),
         {1024, 1024}},
        {"transformer_block",
         {{"hidden", 1024},
          {"heads", 8},
          {"head_dim", 160},
          {"kv_heads", 1},
          {"ffn_hidden", 3000},
          {"activation", "geglu"},
          {"flash_attention", true},
          {"bias", false}},
         {512, 1024}},
        // Mixtral-style: 8 experts, 2 a token, a busiest expert 1.5 times
        // an even share (its kernels run more than the analysis counts).
        {"transformer_block",
         {{"hidden", 1024},
          {"heads", 8},
          {"kv_heads", 2},
          {"experts", 8},
          {"top_k", 2},
          {"expert_ffn_hidden", 1536},
          {"capacity_factor", 1.5},
          {"activation", "swiglu"},
          {"bias", false}},
         {256, 1024}},
        // DeepSeek-style: latent attention, a shared expert, biases.
        {"transformer_block",
         {{"hidden", 1024},
          {"heads", 8},
          {"head_dim", 64},
          {"kv_lora_rank", 128},
          {"q_lora_rank", 192},
          {"rope_head_dim", 32},
          {"v_head_dim", 48},
          {"qkv_bias", false},
          {"experts", 16},
          {"top_k", 4},
          {"shared_experts", 1},
          {"expert_ffn_hidden", 256},
          {"activation", "swiglu"},
          {"rotary", true}},
         {256, 1024}},
        {"transformer_block",
         {{"hidden", 1024},
          {"heads", 8},
          {"kv_lora_rank", 128},
          {"rope_head_dim", 32},
          {"qkv_bias", false},
          {"flash_attention", true}},
         {256, 1024}},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.type + " " + c.params.dump());
        const LayerSpec spec = layer(c.type, c.params);
        const LayerAnalysis a = analysed(spec, c.input, c.input_dtype);
        KernelContext context;
        context.microbatch_size = 3;
        const LayerKernels k = layer_kernels(spec, a, c.input, nullptr, context);
        EXPECT_NEAR(flops(k.forward), 3 * a.forward_flops, 1e-9 * a.forward_flops + 1e-9);
        EXPECT_NEAR(flops(k.backward_input), 3 * a.backward_input_flops,
                    1e-9 * a.backward_input_flops + 1e-9);
        EXPECT_NEAR(flops(k.backward_weight), 3 * a.backward_weight_flops,
                    1e-9 * a.backward_weight_flops + 1e-9);
        for (const auto* list : {&k.forward, &k.backward_input, &k.backward_weight}) {
            for (const Kernel& kernel : *list) {
                EXPECT_GT(kernel.bytes, 0) << kernel.name;
            }
        }
        EXPECT_EQ(k.forward.empty(), c.type == "flatten");
    }
}

// A tensor-parallel slice runs 1/t of every split layer's FLOPs: a
// Megatron block, a column- and a row-parallel linear; with sequence
// parallelism a layer norm's too.
TEST(LayerKernels, ATensorParallelSliceRunsItsShareOfTheFlops) {
    Model model;
    model.input = {{512, 1024}, DType::float32};
    model.layers = {layer("transformer_block", kLlamaBlock),
                    layer("transformer_block", {{"hidden", 1024}, {"heads", 16}}),
                    layer("layernorm", {{"features", 1024}}),
                    layer("linear", {{"in_features", 1024}, {"out_features", 4096}}),
                    layer("gelu", nlohmann::json::object()),
                    layer("linear", {{"in_features", 4096}, {"out_features", 1024}})};
    std::vector<LayerAnalysis> analyses;
    Shape shape = model.input.shape;
    std::vector<Shape> inputs;
    for (const LayerSpec& l : model.layers) {
        inputs.push_back(shape);
        analyses.push_back(analysed(l, shape));
        shape = analyses.back().output_shape;
    }
    for (bool sp : {false, true}) {
        Diagnostics d;
        const auto shares = tensor_shares(model, analyses, TensorParallel{4, sp}, d);
        ASSERT_TRUE(d.empty()) << d.format();
        KernelContext context;
        context.tensor_parallel = 4;
        context.sequence_parallel = sp;
        for (std::size_t i = 0; i < model.layers.size(); ++i) {
            SCOPED_TRACE(model.layers[i].type + (sp ? " SP" : ""));
            const LayerKernels k =
                layer_kernels(model.layers[i], analyses[i], inputs[i], &shares[i], context);
            const double share = shares[i].compute;
            // A row-parallel linear adds its whole bias after the all-reduce,
            // on every device: 512 rows × 1024 outputs, not a quarter of them.
            const double whole_bias = shares[i].split == TensorSplit::row ? 512 * 1024 * 0.75 : 0;
            EXPECT_NEAR(flops(k.forward), analyses[i].forward_flops * share + whole_bias,
                        1e-9 * analyses[i].forward_flops);
            EXPECT_NEAR(flops(k.backward_input), analyses[i].backward_input_flops * share,
                        1e-9 * analyses[i].backward_input_flops);
            EXPECT_NEAR(flops(k.backward_weight),
                        analyses[i].backward_weight_flops * share + whole_bias,
                        1e-9 * analyses[i].backward_weight_flops + 1e-9);
        }
        EXPECT_EQ(shares[0].split, TensorSplit::block);
        EXPECT_EQ(shares[1].split, TensorSplit::block);
        EXPECT_EQ(shares[3].split, TensorSplit::column);
        EXPECT_EQ(shares[4].split, TensorSplit::features);
        EXPECT_EQ(shares[5].split, TensorSplit::row);
        EXPECT_EQ(shares[2].split, sp ? TensorSplit::sequence : TensorSplit::replicated);
    }
}

// What the catalog's A100 makes of a GPT block: a 12288-wide one runs its
// forward well above half of peak, a 1024-wide one at micro-batch 1 below it.
TEST(KernelCost, LargeBlocksRunNearerPeakThanSmallOnes) {
    const DeviceSpec* a100 = DeviceCatalog::builtin().find("A100-80GB");
    ASSERT_NE(a100, nullptr);
    const auto fraction_of_peak = [&](int hidden, int heads) {
        const LayerSpec spec = layer("transformer_block", {{"hidden", hidden}, {"heads", heads}});
        const Shape input{2048, hidden};
        const LayerAnalysis a = analysed(spec, input, DType::bfloat16);
        KernelContext context;
        context.dtype = DType::bfloat16;
        const LayerKernels k = layer_kernels(spec, a, input, nullptr, context);
        return a.forward_flops / kernels_seconds(k.forward, *a100, DType::bfloat16) / 312e12;
    };
    const double large = fraction_of_peak(12288, 96);
    const double small = fraction_of_peak(1024, 16);
    EXPECT_GT(large, 0.7);
    EXPECT_LT(small, large);
    EXPECT_LT(small, 0.6);
}

// A window of w keys: the flash kernels run the causal band below the
// diagonal, min(i + 1, w) keys for query i, instead of half the square.
TEST(LayerKernels, ASlidingWindowRunsTheBandOfKeysBelowTheDiagonal) {
    nlohmann::json params = kLlamaBlock;
    params["flash_attention"] = true;
    const Shape input{4096, 1024};
    const auto flash = [&](const nlohmann::json& p) {
        const LayerSpec spec = layer("transformer_block", p);
        KernelContext context;
        const LayerKernels k = layer_kernels(spec, analysed(spec, input), input, nullptr, context);
        for (const Kernel& kernel : k.forward) {
            if (kernel.kind == KernelKind::attention) {
                return kernel;
            }
        }
        return Kernel{};
    };
    const Kernel whole = flash(params);
    params["sliding_window"] = 512;
    const Kernel band = flash(params);
    const double L = 4096, w = 512, pairs_whole = L * L / 2, pairs_band = w * L - w * (w - 1) / 2;
    EXPECT_DOUBLE_EQ(band.executed_flops / whole.executed_flops, pairs_band / pairs_whole);
    EXPECT_DOUBLE_EQ(band.flops / whole.flops, w / L);
}

// Dropout launches its kernels and moves its masks only where the block
// has it: at 0 the residual adds are plain adds whose gradient is their
// output's (no kernel), and an unfused attention has no dropout pass.
TEST(LayerKernels, ABlockRunsDropoutKernelsOnlyWhereItHasDropout) {
    const Shape input{1024, 768};
    const auto kernels = [&](double attention, double hidden) {
        const LayerSpec spec = layer("transformer_block", {{"hidden", 768},
                                                           {"heads", 12},
                                                           {"attention_dropout", attention},
                                                           {"hidden_dropout", hidden}});
        KernelContext context;
        return layer_kernels(spec, analysed(spec, input), input, nullptr, context);
    };
    const auto names = [](const std::vector<Kernel>& pass) {
        std::vector<std::string> out;
        for (const Kernel& k : pass) {
            out.emplace_back(k.name);
        }
        return out;
    };
    const auto bytes = [](const std::vector<Kernel>& pass) {
        double b = 0;
        for (const Kernel& k : pass) {
            b += k.bytes;
        }
        return b;
    };
    const auto has = [](const std::vector<std::string>& list, const std::string& name) {
        return std::count(list.begin(), list.end(), name);
    };
    const LayerKernels none = kernels(0, 0);
    const LayerKernels both = kernels(0.1, 0.1);
    EXPECT_EQ(has(names(none.forward), "bias residual add"), 2);
    EXPECT_EQ(has(names(none.forward), "bias dropout add"), 0);
    EXPECT_EQ(has(names(none.forward), "attention dropout"), 0);
    EXPECT_EQ(has(names(none.backward_input), "dropout add backward"), 0);
    EXPECT_EQ(has(names(none.backward_input), "attention dropout backward"), 0);
    EXPECT_EQ(has(names(both.forward), "bias dropout add"), 2);
    EXPECT_EQ(has(names(both.forward), "attention dropout"), 1);
    EXPECT_EQ(has(names(both.backward_input), "dropout add backward"), 2);
    EXPECT_EQ(has(names(both.backward_input), "attention dropout backward"), 1);
    // The same FLOPs; the hidden masks, a byte a token and feature, written
    // in the forward.
    EXPECT_DOUBLE_EQ(flops(none.forward), flops(both.forward));
    const double L = 1024, h = 768, heads = 12;
    const LayerKernels hidden_only = kernels(0, 0.1);
    EXPECT_DOUBLE_EQ(bytes(hidden_only.forward) - bytes(none.forward), 2 * L * h);
    // The attention's dropout reads and writes the scores and writes its mask.
    const LayerKernels attention_only = kernels(0.1, 0);
    EXPECT_DOUBLE_EQ(bytes(attention_only.forward) - bytes(none.forward),
                     heads * L * L * (2 * 4 + 1));
}

// FP8 training: a block's linear GEMMs take FP8 operands at the device's FP8
// rate (twice bf16's on an H100), attention and everything outside the
// blocks stay in bfloat16.
TEST(KernelCost, Float8RunsTheBlocksLinearGemmsOnFp8TensorCores) {
    const DeviceSpec* h100 = DeviceCatalog::builtin().find("H100-SXM");
    ASSERT_NE(h100, nullptr);
    const LayerSpec block = layer("transformer_block", kLlamaBlock);
    const Shape input{4096, 1024};
    const LayerAnalysis a = analysed(block, input, DType::bfloat16);
    KernelContext bf16;
    bf16.dtype = DType::bfloat16;
    bf16.microbatch_size = 4;
    KernelContext fp8 = bf16;
    fp8.float8 = true;
    const LayerKernels plain = layer_kernels(block, a, input, nullptr, bf16);
    const LayerKernels fast = layer_kernels(block, a, input, nullptr, fp8);
    // The same kernels, with the quantizations before the FP8 GEMMs.
    const auto without_casts = [](const std::vector<Kernel>& list) {
        std::vector<Kernel> out;
        for (const Kernel& k : list) {
            if (!k.name.starts_with("fp8 ")) {
                out.push_back(k);
            }
        }
        return out;
    };
    const std::vector<Kernel> forward = without_casts(fast.forward);
    ASSERT_EQ(plain.forward.size(), forward.size());
    int in_fp8 = 0;
    for (std::size_t i = 0; i < plain.forward.size(); ++i) {
        const Kernel& p = plain.forward[i];
        const Kernel& f = forward[i];
        SCOPED_TRACE(std::string(p.name));
        EXPECT_EQ(f.flops, p.flops);  // the same work
        const bool linear = p.kind == KernelKind::gemm && !p.attention_core;
        EXPECT_EQ(f.fp8, linear);
        if (!linear) {
            EXPECT_EQ(kernel_time(f, *h100, DType::bfloat16).seconds,
                      kernel_time(p, *h100, DType::bfloat16).seconds);
            continue;
        }
        ++in_fp8;
        // One byte an operand element, the product in bfloat16.
        EXPECT_DOUBLE_EQ(f.bytes, p.batch * (p.m * p.k + p.k * p.n + 2 * p.m * p.n));
        // 16,384 rows: compute-bound at either rate, each tile fed fast
        // enough from L2, so the time of the peaks' ratio (989 / 1,979).
        EXPECT_NEAR(kernel_time(f, *h100, DType::bfloat16).compute_s,
                    kernel_time(p, *h100, DType::bfloat16).compute_s * 989 / 1979,
                    1e-9 * kernel_time(p, *h100, DType::bfloat16).compute_s);
    }
    EXPECT_EQ(in_fp8, 4);  // qkv, the projection, fc1 and fc2
    // Current scaling quantizes each FP8 GEMM's input just before it: two
    // bf16 reads (its maximum, then the cast) and an FP8 write an element,
    // one read where a norm found the maximum (qkv, fc1).
    const double tokens = 4 * 4096;
    int casts = 0;
    for (std::size_t i = 0; i + 1 < fast.forward.size(); ++i) {
        const Kernel& q = fast.forward[i];
        if (!q.name.starts_with("fp8 ")) {
            continue;
        }
        ++casts;
        const Kernel& g = fast.forward[i + 1];
        SCOPED_TRACE(std::string(g.name));
        ASSERT_TRUE(g.fp8);
        EXPECT_EQ(q.kind, KernelKind::memory);
        EXPECT_EQ(g.m, tokens);
        const bool after_norm = g.name == "qkv" || g.name == "fc1";
        EXPECT_DOUBLE_EQ(q.bytes, g.m * g.k * (after_norm ? 3 : 5));
    }
    EXPECT_EQ(casts, 4);
    // The backward quantizes each output gradient once, before the
    // input-gradient GEMM; the weight-gradient GEMM reuses it.
    casts = 0;
    for (std::size_t i = 0; i + 1 < fast.backward_input.size(); ++i) {
        const Kernel& q = fast.backward_input[i];
        if (q.name.starts_with("fp8 ")) {
            ++casts;
            const Kernel& g = fast.backward_input[i + 1];
            EXPECT_TRUE(g.fp8) << g.name;
            EXPECT_DOUBLE_EQ(q.bytes, g.m * g.k * 5) << g.name;
        }
    }
    EXPECT_EQ(casts, 4);
    for (const Kernel& k : fast.backward_weight) {
        EXPECT_FALSE(k.name.starts_with("fp8 ")) << k.name;
    }
    // Where FP8 GEMMs read one layout only (Hopper), each quantization also
    // writes the transposed copy the backward reads: one byte an element
    // more than on a device that reads one layout both ways.
    ASSERT_TRUE(h100->fp8_transposed_copies);
    DeviceSpec both_ways = *h100;
    both_ways.fp8_transposed_copies = false;
    for (const Kernel& q : fast.backward_input) {
        if (q.name.starts_with("fp8 ")) {
            const double elements = q.bytes / 5;
            EXPECT_DOUBLE_EQ(q.fp8_transpose_bytes, elements);
            EXPECT_NEAR(kernel_time(q, *h100, DType::bfloat16).seconds -
                            kernel_time(q, both_ways, DType::bfloat16).seconds,
                        elements / (h100->memory_bandwidth_GBps * 1e9 * h100->memory_efficiency),
                        1e-12);
        }
    }
    // They cost their bytes: the forward is slower than its GEMMs' halving
    // alone would make it.
    double casts_s = 0;
    for (const Kernel& k : fast.forward) {
        if (k.name.starts_with("fp8 ")) {
            casts_s += kernel_time(k, *h100, DType::bfloat16).seconds;
        }
    }
    EXPECT_GT(casts_s, 0);
    EXPECT_NEAR(kernels_seconds(fast.forward, *h100, DType::bfloat16),
                kernels_seconds(forward, *h100, DType::bfloat16) + casts_s, 1e-12);
    // A device without FP8 tensor cores runs them at its bf16 rate, and
    // quantizes nothing.
    const DeviceSpec* a100 = DeviceCatalog::builtin().find("A100-80GB");
    ASSERT_NE(a100, nullptr);
    EXPECT_EQ(kernels_seconds(fast.forward, *a100, DType::bfloat16),
              kernels_seconds(plain.forward, *a100, DType::bfloat16));
}

TEST(OptimizerStep, ReadsAndWritesWhatTheOptimizerKeepsPerParameter) {
    OptimizerConfig adam;
    adam.type = OptimizerKind::adamw;
    // fp32: gradient 4, weight 4 + 4, moments 8 + 8.
    EXPECT_EQ(optimizer_bytes_per_parameter(adam, DType::float32, DType::float32), 28);
    // bf16: gradient 2, fp32 master 4 + 4, moments 8 + 8, the bf16 copy 2.
    EXPECT_EQ(optimizer_bytes_per_parameter(adam, DType::bfloat16, DType::bfloat16), 28);
    // bf16 with fp32 gradients (training.gradient_dtype): the gradient read is 4.
    EXPECT_EQ(optimizer_bytes_per_parameter(adam, DType::bfloat16, DType::float32), 30);
    OptimizerConfig sgd;
    EXPECT_EQ(optimizer_bytes_per_parameter(sgd, DType::float32, DType::float32), 12);
    sgd.momentum = 0.9;
    EXPECT_EQ(optimizer_bytes_per_parameter(sgd, DType::float32, DType::float32), 20);
    EXPECT_EQ(optimizer_step_kernel(1e9, adam, DType::bfloat16, DType::bfloat16).bytes, 28e9);
}

// NCCL-like: a small all-reduce costs its latencies, a large one its bytes
// over the bus, and the time grows with the size in between.
TEST(CollectiveCost, AnAllReducesTimeGoesFromLatencyToBandwidthWithItsSize) {
    CollectiveGroup g;
    g.members = 8;
    g.ring = LinkSpec{100, 5};
    const double small = collective_time(CollectiveKind::all_reduce, 8, g).seconds;
    const double tree_latency = 2 * 3 * 5e-6;  // the tree wins for tiny messages
    EXPECT_NEAR(small, tree_latency + 2 * 8 / 100e9, 1e-12);
    const double big = collective_time(CollectiveKind::all_reduce, 8e9, g).seconds;
    EXPECT_NEAR(big, 2 * 7 * 5e-6 + 2.0 * 7 / 8 * 8e9 / 100e9, 1e-9);
    double previous = 0;
    for (double bytes = 1; bytes <= 1e10; bytes *= 4) {
        const double t = collective_time(CollectiveKind::all_reduce, bytes, g).seconds;
        EXPECT_GE(t, previous) << bytes;
        previous = t;
    }
}

}  // namespace
}  // namespace pipewright

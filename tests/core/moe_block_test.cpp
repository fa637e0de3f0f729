// Mixture-of-experts MLPs and multi-head latent attention in the
// transformer block: parameters total and active against published counts
// and the formulas by hand, FLOPs, what tensor parallelism leaves on each
// member, and the words for what does not fit together.
#include <gtest/gtest.h>

#include <string>

#include "pipewright/core/expert_parallel.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/model.h"
#include "pipewright/core/tensor_parallel.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright {
namespace {

using nlohmann::json;

LayerSpec block(json params) {
    LayerSpec l;
    l.name = "moe";
    l.type = "transformer_block";
    l.params = std::move(params);
    return l;
}

LayerAnalysis ok(const LayerSpec& layer, const Shape& in) {
    Diagnostics d;
    const auto a = analyze_layer(layer, in, DType::bfloat16, d, "model.layers[1]");
    EXPECT_TRUE(a.has_value()) << d.format();
    return a.value_or(LayerAnalysis{});
}

std::string problems(const LayerSpec& layer, const Shape& in) {
    Diagnostics d;
    EXPECT_FALSE(analyze_layer(layer, in, DType::bfloat16, d, "model.layers[1]").has_value());
    return d.format();
}

// Mixtral 8×7B's block (its config.json): Mistral's attention and 8
// SwiGLU experts of 14,336, two of them for each token.
const json kMixtral = {{"hidden", 4096},         {"heads", 32},       {"kv_heads", 8},
                       {"ffn_hidden", 14336},    {"experts", 8},      {"top_k", 2},
                       {"activation", "swiglu"}, {"norm", "rmsnorm"}, {"bias", false},
                       {"qkv_bias", false},      {"rotary", true}};

// DeepSeek-V3's routed block: MLA (query latent 1,536, key/value latent 512,
// heads of 128 + 64 rotary features, values of 128), 256 experts of 2,048
// with one shared, eight for each token.
const json kDeepSeekV3 = {{"hidden", 7168},
                          {"heads", 128},
                          {"head_dim", 128},
                          {"kv_lora_rank", 512},
                          {"q_lora_rank", 1536},
                          {"rope_head_dim", 64},
                          {"v_head_dim", 128},
                          {"experts", 256},
                          {"top_k", 8},
                          {"shared_experts", 1},
                          {"expert_ffn_hidden", 2048},
                          {"activation", "swiglu"},
                          {"norm", "rmsnorm"},
                          {"bias", false},
                          {"qkv_bias", false},
                          {"rotary", true}};

TEST(MoeBlock, MixtralsBlockHasItsParametersTotalAndActive) {
    const LayerAnalysis a = ok(block(kMixtral), {64, 4096});
    const std::int64_t attention = 4096LL * (4096 + 2 * 1024) + 4096LL * 4096;
    const std::int64_t expert = 3LL * 4096 * 14336;
    const std::int64_t router = 4096LL * 8;
    const std::int64_t norms = 2 * 4096;
    EXPECT_EQ(a.parameters, attention + 8 * expert + router + norms);
    // A token uses 2 of the 8 experts.
    EXPECT_EQ(a.parameters - a.inactive_parameters, attention + 2 * expert + router + norms);
}

TEST(MoeBlock, ForwardFlopsCountTheRoutedAndSharedExpertsATokenUses) {
    const double L = 64;
    json p = kMixtral;
    p["shared_experts"] = 1;
    const LayerAnalysis a = ok(block(p), {64, 4096});
    const double attention_macs = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096;
    const double expert_macs = 3.0 * 4096 * 14336;
    const double router_macs = 4096.0 * 8;
    const double gemm = 2 * L * (attention_macs + router_macs + (2 + 1) * expert_macs);
    const double core = 4 * L * L * 4096;  // Q·Kᵀ and attention × V over 32 heads of 128
    EXPECT_DOUBLE_EQ(a.forward_flops, gemm + core);
    EXPECT_DOUBLE_EQ(a.backward_input_flops, gemm + 2 * core);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, gemm);
}

TEST(MoeBlock, TheCapacityFactorGrowsTheExpertsActivationsNotTheirFlops) {
    json busy = kMixtral;
    busy["capacity_factor"] = 1.25;
    const LayerAnalysis even = ok(block(kMixtral), {64, 4096});
    const LayerAnalysis skewed = ok(block(busy), {64, 4096});
    EXPECT_DOUBLE_EQ(skewed.forward_flops, even.forward_flops);
    // Each routed copy of a token keeps the expert's input and output
    // (2h) and its SwiGLU inputs and product (3 × 14,336): a quarter more
    // of two copies a token.
    EXPECT_DOUBLE_EQ(skewed.stashed_elements - even.stashed_elements,
                     64 * 0.25 * 2 * (2 * 4096 + 3 * 14336));
}

TEST(MoeBlock, DeepSeekV3sLatentAttentionHasItsParameters) {
    const TransformerDims d = transformer_dims(block(kDeepSeekV3));
    // q down 7168 × 1536 and its norm, q up 1536 × 128·192, kv down
    // 7168 × (512 + 64) and its norm, kv up 512 × 128·(128 + 128), output
    // 128·128 × 7168.
    EXPECT_DOUBLE_EQ(d.attention_parameters(), 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 +
                                                   7168.0 * 576 + 512 + 512.0 * 128 * 256 +
                                                   128.0 * 128 * 7168);
    EXPECT_DOUBLE_EQ(d.attention_parameters(), 187'107'328);
    // 257 experts (one shared) of 3 × 7168 × 2048 and a router of 7168 × 256.
    EXPECT_DOUBLE_EQ(d.mlp_parameters(), 257 * 44'040'192.0 + 1'835'008);
    EXPECT_DOUBLE_EQ(d.active_parameters(), 187'107'328 + 2 * 7168 + 9 * 44'040'192.0 + 1'835'008);
}

TEST(MoeBlock, TensorParallelismSplitsEachExpertAndKeepsTheRouterWhole) {
    Model model;
    model.input = {{64, 4096}, DType::bfloat16};
    model.layers = {block(kMixtral)};
    const LayerAnalysis a = ok(model.layers[0], {64, 4096});
    Diagnostics d;
    const auto shares = tensor_shares(model, {a}, TensorParallel{4, false}, d);
    ASSERT_TRUE(d.empty()) << d.format();
    const double attention = (4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096) / 4;
    const double experts = 8 * 3.0 * 4096 * 14336 / 4;
    const double whole = 4096.0 * 8 + 2 * 4096;  // router and norms
    EXPECT_DOUBLE_EQ(shares[0].parameters * static_cast<double>(a.parameters),
                     attention + experts + whole);
    // The router's work is done whole on each member.
    EXPECT_GT(shares[0].compute, 0.25);
    EXPECT_LT(shares[0].compute, 0.2501);

    // An expert width that 3 members cannot split evenly.
    json odd = kMixtral;
    odd["expert_ffn_hidden"] = 1000;
    model.layers = {block(odd)};
    Diagnostics bad;
    (void)tensor_shares(model, {ok(model.layers[0], {64, 4096})}, TensorParallel{3, false}, bad);
    EXPECT_NE(bad.format().find("expert_ffn_hidden"), std::string::npos) << bad.format();
}

TEST(MoeBlock, FieldsThatDoNotFitTogetherAreNamed) {
    json p = kMixtral;
    p["top_k"] = 9;
    EXPECT_NE(problems(block(p), {64, 4096})
                  .find("model.layers[1].top_k: \"top_k\" must be at "
                        "most experts = 8"),
              std::string::npos);
    json dense = {{"hidden", 512}, {"heads", 8}, {"top_k", 2}};
    EXPECT_NE(problems(block(dense), {64, 512}).find("model.layers[1].top_k"), std::string::npos);
    json rope = {{"hidden", 512}, {"heads", 8}, {"rope_head_dim", 32}};
    EXPECT_NE(problems(block(rope), {64, 512}).find("give kv_lora_rank too"), std::string::npos);
    json mla = kDeepSeekV3;
    mla["qkv_bias"] = true;
    EXPECT_NE(problems(block(mla), {16, 7168}).find("qkv_bias"), std::string::npos);
    json cf = kMixtral;
    cf["capacity_factor"] = 0.5;
    EXPECT_NE(problems(block(cf), {64, 4096}).find("capacity_factor"), std::string::npos);
}

TEST(ExpertParallel, SizesThatCannotSplitTheExpertsAreRefusedInWords) {
    Model model;
    model.layers = {block(kMixtral)};
    const auto check = [&model](int size, int data_parallel) {
        Diagnostics d;
        check_expert_parallel(model, size, data_parallel, "expert_parallel.size", d);
        return d.format();
    };
    EXPECT_EQ(check(1, 1), "");
    EXPECT_EQ(check(4, 8), "");
    EXPECT_NE(check(3, 6).find("do not split evenly"), std::string::npos);
    EXPECT_NE(check(4, 6).find("must divide the 6 data-parallel replicas"), std::string::npos);
    model.layers = {block({{"hidden", 512}, {"heads", 8}})};
    EXPECT_NE(check(2, 2).find("the model has none"), std::string::npos);
}

}  // namespace
}  // namespace pipewright

// The transformer block as today's decoders build it: grouped-query
// attention, gated MLPs, RMSNorm, blocks without biases, and rotary
// embedding, against published parameter counts and the formulas by hand.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/model.h"
#include "pipewright/core/tensor_parallel.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright {
namespace {

using nlohmann::json;

LayerSpec make(const std::string& type, json params) {
    LayerSpec l;
    l.name = "l";
    l.type = type;
    l.params = std::move(params);
    return l;
}

LayerAnalysis ok(const LayerSpec& layer, const Shape& in, DType dtype = DType::float32) {
    Diagnostics d;
    const auto a = analyze_layer(layer, in, dtype, d, "model.layers[1]");
    EXPECT_TRUE(a.has_value()) << d.format();
    return a.value_or(LayerAnalysis{});
}

Diagnostics problems(const LayerSpec& layer, const Shape& in) {
    Diagnostics d;
    EXPECT_FALSE(analyze_layer(layer, in, DType::float32, d, "model.layers[1]").has_value());
    return d;
}

// Llama 3.1 8B's block (its config.json): hidden 4096, 32 query heads, 8
// key/value heads, SwiGLU of 14,336, RMSNorm, no biases, rotary.
const json kLlama8B = {
    {"hidden", 4096},         {"heads", 32},       {"kv_heads", 8}, {"ffn_hidden", 14336},
    {"activation", "swiglu"}, {"norm", "rmsnorm"}, {"bias", false}, {"qkv_bias", false},
    {"rotary", true}};

TEST(DecoderBlock, Llama31_8BHasItsPublishedParameters) {
    const LayerAnalysis block = ok(make("transformer_block", kLlama8B), {16, 4096});
    // q 4096², k and v 4096 × 1024 each, o 4096², gate, up and down
    // 4096 × 14336 each, two norms of 4096.
    EXPECT_EQ(block.parameters, 218'112'000);
    const LayerAnalysis embedding =
        ok(make("embedding", {{"num_embeddings", 128256}, {"embedding_dim", 4096}}), {16},
           DType::int64);
    const LayerAnalysis norm = ok(make("rmsnorm", {{"features", 4096}}), {16, 4096});
    const LayerAnalysis head =
        ok(make("linear", {{"in_features", 4096}, {"out_features", 128256}, {"bias", false}}),
           {16, 4096});
    EXPECT_EQ(norm.parameters, 4096);
    // 8.03 billion, as Meta publishes it (untied embeddings).
    EXPECT_EQ(embedding.parameters + 32 * block.parameters + norm.parameters + head.parameters,
              8'030'261'248);
}

TEST(DecoderBlock, FlopsAndActivationsFollowTheWidthsOfEachPart) {
    const double L = 16, h = 4096, q = 4096, kv = 1024, f = 14336, a = 32;
    const LayerAnalysis b = ok(make("transformer_block", kLlama8B), {16, 4096});
    const double gemm = 2 * L * (h * (q + 2 * kv) + q * h + h * 2 * f + f * h);
    EXPECT_DOUBLE_EQ(b.forward_flops, gemm + 4 * L * L * q);
    EXPECT_DOUBLE_EQ(b.backward_input_flops, gemm + 8 * L * L * q);
    EXPECT_DOUBLE_EQ(b.backward_weight_flops, gemm);
    // Korthikanti's parts with K and V a quarter wide and the gate, the up
    // projection and their product kept for the gated MLP; no dropout, so
    // no masks, and the softmax's output is all the core keeps.
    EXPECT_DOUBLE_EQ(b.stashed_elements, L * (4 * h + 2 * q + 2 * kv + 3 * f) + a * L * L);
    EXPECT_DOUBLE_EQ(b.weight_stashed_elements, L * (2 * h + q + f));

    json flash = kLlama8B;
    flash["flash_attention"] = true;
    EXPECT_DOUBLE_EQ(ok(make("transformer_block", flash), {16, 4096}).stashed_elements,
                     L * (4 * h + 2 * q + 2 * kv + 3 * f) + 2 * a * L);
}

// Without dropout (the Llama family's training) no mask is kept: the two
// residual branches' (a byte an element each), and the attention's mask and
// dropped probabilities, whose softmax output then serves both backwards.
// The FLOPs and the weight gradient's inputs are the same. GPT-3's block.
TEST(DecoderBlock, ABlockWithoutDropoutKeepsNoMasks) {
    const double h = 12288, heads = 96, L = 2048;
    const auto with = [&](double attention, double hidden) {
        return ok(make("transformer_block", {{"hidden", 12288},
                                             {"heads", 96},
                                             {"attention_dropout", attention},
                                             {"hidden_dropout", hidden}}),
                  {2048, 12288}, DType::bfloat16);
    };
    const LayerAnalysis none = ok(make("transformer_block", {{"hidden", 12288}, {"heads", 96}}),
                                  {2048, 12288}, DType::bfloat16);
    // Korthikanti's 34·s·h + 5·a·s² bytes less the two masks' 2·s·h and the
    // attention's 3·a·s².
    EXPECT_DOUBLE_EQ(none.stashed_elements, (32 * L * h + 2 * heads * L * L) / 2);
    EXPECT_DOUBLE_EQ(with(0, 0).stashed_elements, none.stashed_elements);
    EXPECT_DOUBLE_EQ(with(0, 0.1).stashed_elements - none.stashed_elements, L * h);
    EXPECT_DOUBLE_EQ(with(0.1, 0).stashed_elements - none.stashed_elements, 1.5 * heads * L * L);
    EXPECT_DOUBLE_EQ(none.weight_stashed_elements, with(0.1, 0.1).weight_stashed_elements);
    EXPECT_DOUBLE_EQ(none.forward_flops, with(0.1, 0.1).forward_flops);
    // Selective recomputation drops what the core keeps, whichever it is.
    EXPECT_DOUBLE_EQ(none.recomputable_elements, heads * L * L);
    EXPECT_DOUBLE_EQ(with(0.1, 0).recomputable_elements, 2.5 * heads * L * L);
}

TEST(DecoderBlock, DropoutIsAProbability) {
    for (const double p : {-0.1, 1.0, 1.5}) {
        const Diagnostics d = problems(
            make("transformer_block", {{"hidden", 64}, {"heads", 4}, {"hidden_dropout", p}}),
            {10, 64});
        ASSERT_FALSE(d.empty()) << p;
        EXPECT_EQ(d.items().front().path, "model.layers[1].hidden_dropout") << p;
    }
}

// head_dim apart from hidden / heads (Gemma, Qwen3): the query width is
// heads × head_dim, and the projection brings it back to hidden.
// Gemma 2 9B's block (its config.json): a head width of its own, GeGLU,
// four RMSNorms (post_norms), no biases; Qwen3's query and key norms.
TEST(DecoderBlock, PostNormsQueryKeyNormsAndAWindowCountWhatTheyAdd) {
    const json gemma = {{"hidden", 3584},    {"heads", 16},         {"kv_heads", 8},
                        {"head_dim", 256},   {"ffn_hidden", 14336}, {"activation", "geglu"},
                        {"norm", "rmsnorm"}, {"bias", false},       {"qkv_bias", false},
                        {"rotary", true},    {"post_norms", true},  {"flash_attention", true}};
    const LayerAnalysis block = ok(make("transformer_block", gemma), {4096, 3584});
    // q and o 3584 × 4096, k and v 3584 × 2048, three MLP matrices of
    // 3584 × 14336, four norms of 3584.
    EXPECT_EQ(block.parameters, 198'195'200);
    // 42 blocks, the tied embedding of 256,000 and the final norm: 9.24 B.
    EXPECT_EQ(42 * block.parameters + 256'000 * 3584 + 3584, 9'241'705'984);
    const LayerAnalysis plain = ok(make("transformer_block", kLlama8B), {16, 4096});
    json qk = kLlama8B;
    qk["qk_norm"] = true;
    const LayerAnalysis normed = ok(make("transformer_block", qk), {16, 4096});
    EXPECT_EQ(normed.parameters - plain.parameters, 2 * 128);
    // It keeps Q and K before their norms: 4096 + 1024 more a token.
    EXPECT_DOUBLE_EQ(normed.stashed_elements - plain.stashed_elements, 16 * (4096 + 1024));

    // A window of 1,024 over 4,096 tokens: each query meets 1,024 keys.
    json windowed = gemma;
    windowed["sliding_window"] = 1024;
    const LayerAnalysis full = ok(make("transformer_block", gemma), {4096, 3584});
    const LayerAnalysis local = ok(make("transformer_block", windowed), {4096, 3584});
    const double L = 4096, widths = 256 + 256, heads = 16;
    EXPECT_DOUBLE_EQ(full.forward_flops - local.forward_flops, 2 * L * (L - 1024) * heads * widths);
    EXPECT_EQ(local.parameters, full.parameters);
    // A window as long as the sequence changes nothing.
    windowed["sliding_window"] = 8192;
    EXPECT_DOUBLE_EQ(ok(make("transformer_block", windowed), {4096, 3584}).forward_flops,
                     full.forward_flops);
    const TransformerDims d = transformer_dims(make("transformer_block", windowed));
    EXPECT_DOUBLE_EQ(d.causal_fraction(4096), 0.5);
    windowed["sliding_window"] = 1024;
    // Query i meets min(i + 1, 1024) keys.
    EXPECT_DOUBLE_EQ(transformer_dims(make("transformer_block", windowed)).causal_fraction(4096),
                     (1024.0 * 4096 - 1024.0 * 1023 / 2) / (1024.0 * 4096));
}

// Read at once, the block's parameters are what layer_param reads one by
// one, defaults included; a name the type lacks is a defect, not a 0.
TEST(DecoderBlock, ParametersReadAtOnceAreTheOnesReadOneByOne) {
    const LayerSpec spec = make("transformer_block", kLlama8B);
    const LayerParams all(spec);
    for (const char* name : {"hidden", "heads", "kv_heads", "ffn_hidden", "mlp_ratio", "activation",
                             "norm", "bias", "rotary", "sliding_window", "experts", "top_k"}) {
        EXPECT_EQ(all(name), layer_param(spec, name)) << name;
    }
    EXPECT_EQ(all("mlp_ratio"), 4);  // the default
    EXPECT_THROW((void)all("hiden"), std::invalid_argument);
}

TEST(DecoderBlock, AHeadWidthOfItsOwnSetsTheAttentionWidths) {
    const json p = {{"hidden", 2304},  {"heads", 8},         {"kv_heads", 4},
                    {"head_dim", 256}, {"ffn_hidden", 9216}, {"activation", "geglu"},
                    {"bias", false},   {"qkv_bias", false}};
    const LayerSpec spec = make("transformer_block", p);
    const TransformerDims d = transformer_dims(spec);
    EXPECT_EQ(d.query_width(), 2048);
    EXPECT_EQ(d.key_value_width(), 1024);
    EXPECT_TRUE(d.gated());
    const double h = 2304;
    EXPECT_EQ(ok(spec, {8, 2304}).parameters,
              static_cast<std::int64_t>(h * (2048 + 2 * 1024) + 2048 * h + 3 * h * 9216 + 4 * h));
}

TEST(DecoderBlock, DefaultsAreTheGptBlockAndChoicesReadAsWords) {
    const LayerSpec gpt = make("transformer_block", {{"hidden", 64}, {"heads", 4}});
    const TransformerDims d = transformer_dims(gpt);
    EXPECT_EQ(d.kv_heads, 4);
    EXPECT_EQ(d.head_dim, 16);
    EXPECT_EQ(d.ffn, 256);
    EXPECT_EQ(d.activation, MlpActivation::gelu);
    EXPECT_FALSE(d.rms_norm);
    EXPECT_TRUE(d.bias && d.qkv_bias);
    EXPECT_EQ(layer_choice(gpt, "activation"), "gelu");
    EXPECT_EQ(layer_choice(make("transformer_block", kLlama8B), "norm"), "rmsnorm");
    const LayerTypeInfo* info = find_layer_type("transformer_block");
    ASSERT_NE(info, nullptr);
    bool listed = false;
    for (const ParamSpec& p : info->params) {
        if (p.name == "activation") {
            listed = true;
            EXPECT_EQ(p.kind, ParamKind::choice);
            EXPECT_EQ(p.choices, (std::vector<std::string>{"gelu", "swiglu", "geglu", "relu"}));
            EXPECT_EQ(p.default_text(), "gelu");
        }
        if (p.name == "head_dim") {
            EXPECT_EQ(p.zero_means, "hidden / heads");  // the inspector shows it for 0
        }
    }
    EXPECT_TRUE(listed);
}

TEST(DecoderBlock, ProblemsAreNamedWithTheirField) {
    json p = kLlama8B;
    p["kv_heads"] = 5;
    Diagnostics d = problems(make("transformer_block", p), {16, 4096});
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].path, "model.layers[1].kv_heads");
    EXPECT_EQ(d.items()[0].message, "\"kv_heads\" must divide heads = 32, got 5");

    p = kLlama8B;
    p["activation"] = "silu";
    d = problems(make("transformer_block", p), {16, 4096});
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].path, "model.layers[1].activation");
    EXPECT_EQ(d.items()[0].message,
              "\"activation\" must be \"gelu\", \"swiglu\", \"geglu\" or \"relu\", got the "
              "string \"silu\"");

    p = kLlama8B;
    p["head_dim"] = 127;
    d = problems(make("transformer_block", p), {16, 4096});
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].path, "model.layers[1].rotary");

    // head_dim 0 is the default: heads must then divide hidden.
    d = problems(make("transformer_block", {{"hidden", 768}, {"heads", 7}, {"head_dim", 0}}),
                 {16, 768});
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].path, "model.layers[1].heads");

    p = kLlama8B;
    p["norm"] = true;
    d = problems(make("transformer_block", p), {16, 4096});
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].message, "\"norm\" must be \"layernorm\" or \"rmsnorm\", got true");

    // The unfused kernels compute every score: a window needs flash.
    p = kLlama8B;
    p["sliding_window"] = 1024;
    d = problems(make("transformer_block", p), {4096, 4096});
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].path, "model.layers[1].sliding_window");
    EXPECT_NE(d.items()[0].message.find("flash_attention: true"), std::string::npos);
}

// Key/value heads split over a group that divides them; with fewer heads
// than members each holds one, as Megatron-LM replicates them; otherwise
// refused in words.
TEST(DecoderBlock, KeyValueHeadsSplitOrReplicateOverATensorParallelGroup) {
    Model model;
    model.input = {{16, 4096}, DType::float32};
    model.layers = {make("transformer_block", kLlama8B)};
    const std::vector<LayerAnalysis> analyses = {ok(model.layers[0], {16, 4096})};
    const double h = 4096, q = 4096, kv = 1024, f = 14336, d = 128;
    const double all = 218'112'000;
    for (int t : {2, 8, 16, 32}) {
        SCOPED_TRACE(t);
        Diagnostics diagnostics;
        const auto shares = tensor_shares(model, analyses, TensorParallel{t, false}, diagnostics);
        ASSERT_TRUE(diagnostics.empty()) << diagnostics.format();
        const double kv_local = t <= 8 ? kv / t : d;
        const double local = h * (q / t + 2 * kv_local) + q * h / t + 3 * h * f / t + 2 * h;
        EXPECT_NEAR(shares[0].parameters, local / all, 1e-12);
    }
    model.layers[0].params["heads"] = 48;
    model.layers[0].params["head_dim"] = 128;
    model.layers[0].params["kv_heads"] = 8;
    Diagnostics diagnostics;
    (void)tensor_shares(model, {ok(model.layers[0], {16, 4096})}, TensorParallel{12, false},
                        diagnostics);
    ASSERT_FALSE(diagnostics.empty());
    EXPECT_NE(diagnostics.format().find("neither divides kv_heads = 8"), std::string::npos)
        << diagnostics.format();
}

}  // namespace
}  // namespace pipewright

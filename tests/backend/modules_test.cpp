// Every catalog layer type: the Torch module has the shape and parameter
// count that core's analysis promises.
#include <gtest/gtest.h>

#include "pipewright/backend/modules.h"
#include "pipewright/core/layer_catalog.h"

namespace pipewright {
namespace {

struct Case {
    nlohmann::json layer;  // type and hyper-parameters
    Shape input;
    bool token_ids = false;
};

std::vector<Case> cases() {
    return {
        {{{"type", "linear"}, {"in_features", 12}, {"out_features", 5}}, {3, 12}},
        {{{"type", "linear"}, {"in_features", 12}, {"out_features", 5}, {"bias", false}}, {12}},
        {{{"type", "relu"}}, {4, 6}},
        {{{"type", "gelu"}}, {7}},
        {{{"type", "dropout"}, {"p", 0.25}}, {9}},
        {{{"type", "flatten"}}, {2, 3, 4}},
        {{{"type", "conv2d"},
          {"in_channels", 3},
          {"out_channels", 8},
          {"kernel_size", 3},
          {"stride", 2},
          {"padding", 1}},
         {3, 11, 9}},
        {{{"type", "batchnorm2d"}, {"num_features", 4}}, {4, 5, 5}},
        {{{"type", "maxpool2d"}, {"kernel_size", 3}, {"stride", 2}, {"padding", 1}}, {2, 9, 8}},
        {{{"type", "adaptive_avgpool2d"}, {"output_size", 2}}, {3, 7, 7}},
        {{{"type", "resnet_bottleneck"}, {"in_channels", 8}, {"mid_channels", 4}, {"stride", 2}},
         {8, 8, 8}},
        {{{"type", "resnet_bottleneck"}, {"in_channels", 16}, {"mid_channels", 4}}, {16, 5, 5}},
        {{{"type", "layernorm"}, {"features", 10}}, {3, 10}},
        {{{"type", "embedding"}, {"num_embeddings", 50}, {"embedding_dim", 6}}, {7}, true},
        // GPT-2's learned positions, more rows than the sequence.
        {{{"type", "embedding"}, {"num_embeddings", 50}, {"embedding_dim", 6}, {"positions", 9}},
         {7},
         true},
        {{{"type", "transformer_block"}, {"hidden", 16}, {"heads", 4}, {"mlp_ratio", 2}}, {5, 16}},
        {{{"type", "rmsnorm"}, {"features", 10}}, {3, 10}},
        // Llama-style: grouped-query, SwiGLU, RMSNorm, no biases, rotary.
        {{{"type", "transformer_block"},
          {"hidden", 16},
          {"heads", 4},
          {"kv_heads", 2},
          {"ffn_hidden", 40},
          {"activation", "swiglu"},
          {"norm", "rmsnorm"},
          {"bias", false},
          {"qkv_bias", false},
          {"rotary", true}},
         {5, 16}},
        // Qwen-style biases on QKV only; a head width of its own; multi-query.
        {{{"type", "transformer_block"},
          {"hidden", 16},
          {"heads", 2},
          {"kv_heads", 1},
          {"head_dim", 6},
          {"ffn_hidden", 24},
          {"activation", "geglu"},
          {"bias", false}},
         {5, 16}},
        {{{"type", "transformer_block"}, {"hidden", 16}, {"heads", 4}, {"activation", "relu"}},
         {5, 16}},
        // Mixtures of experts: Mixtral-style (SwiGLU, no biases), and with a
        // shared expert and biases.
        {{{"type", "transformer_block"},
          {"hidden", 16},
          {"heads", 4},
          {"activation", "swiglu"},
          {"norm", "rmsnorm"},
          {"bias", false},
          {"qkv_bias", false},
          {"experts", 4},
          {"top_k", 2},
          {"expert_ffn_hidden", 12}},
         {5, 16}},
        {{{"type", "transformer_block"},
          {"hidden", 16},
          {"heads", 4},
          {"experts", 3},
          {"top_k", 1},
          {"shared_experts", 1},
          {"expert_ffn_hidden", 8}},
         {5, 16}},
    };
}

TEST(Modules, EveryLayerTypeMatchesCoreShapesAndParameterCounts) {
    std::set<std::string> covered;
    for (const auto& c : cases()) {
        LayerSpec spec;
        spec.type = c.layer.at("type").get<std::string>();
        spec.name = "l";
        spec.params = c.layer;
        spec.params.erase("type");
        SCOPED_TRACE(spec.type + " " + c.layer.dump());
        Diagnostics d;
        const auto analysis =
            analyze_layer(spec, c.input, c.token_ids ? DType::int64 : DType::float32, d, "layer");
        ASSERT_TRUE(analysis) << (d.empty() ? "" : d.items().front().message);

        auto module = backend::build_layer(spec, c.input, 1);
        std::int64_t params = 0;
        for (const auto& p : module.ptr()->parameters()) {
            params += p.numel();
        }
        EXPECT_EQ(params, analysis->parameters);

        const std::int64_t batch = 2;
        std::vector<std::int64_t> sizes{batch};
        sizes.insert(sizes.end(), c.input.begin(), c.input.end());
        const torch::Tensor x =
            c.token_ids ? torch::randint(50, sizes, torch::kInt64) : torch::randn(sizes);
        const torch::Tensor y = module.forward(x);
        std::vector<std::int64_t> expected{batch};
        expected.insert(expected.end(), analysis->output_shape.begin(),
                        analysis->output_shape.end());
        EXPECT_EQ(y.sizes().vec(), expected);
        covered.insert(spec.type);
    }
    for (const auto& t : layer_types()) {
        EXPECT_TRUE(covered.contains(t.type)) << t.type << " has no case here";
        EXPECT_TRUE(backend::can_build(t.type)) << t.type;
    }
}

TEST(Modules, UnknownTypeIsAClearError) {
    LayerSpec spec;
    spec.name = "mystery";
    spec.type = "capsule";
    EXPECT_FALSE(backend::can_build("capsule"));
    try {
        (void)backend::build_layer(spec, {4}, 0);
        FAIL() << "expected BackendError";
    } catch (const backend::BackendError& e) {
        EXPECT_NE(std::string(e.what()).find("capsule"), std::string::npos);
    }
}

TEST(Modules, SameSeedSameWeights) {
    LayerSpec spec;
    spec.name = "fc";
    spec.type = "linear";
    spec.params = {{"in_features", 8}, {"out_features", 8}};
    auto a = backend::build_layer(spec, {8}, 42).ptr()->parameters();
    auto b = backend::build_layer(spec, {8}, 42).ptr()->parameters();
    auto c = backend::build_layer(spec, {8}, 43).ptr()->parameters();
    EXPECT_TRUE(torch::equal(a[0], b[0]));
    EXPECT_FALSE(torch::equal(a[0], c[0]));
}

TEST(Modules, TransformerBlockIsCausal) {
    LayerSpec spec;
    spec.name = "block";
    spec.type = "transformer_block";
    spec.params = {{"hidden", 8}, {"heads", 2}};
    auto block = backend::build_layer(spec, {4, 8}, 3);
    auto x = torch::randn({1, 4, 8});
    auto y = block.forward(x);
    auto x2 = x.clone();
    x2.index_put_({0, 3}, torch::randn({8}));  // change only the last position
    auto y2 = block.forward(x2);
    EXPECT_TRUE(torch::allclose(y.index({0, torch::indexing::Slice(0, 3)}),
                                y2.index({0, torch::indexing::Slice(0, 3)})));
    // The changed position's own output does change, so the block is not
    // merely ignoring its input.
    EXPECT_FALSE(torch::allclose(y.index({0, 3}), y2.index({0, 3})));
    // And the first position, changed, reaches every later one: attention
    // looks back.
    auto x3 = x.clone();
    x3.index_put_({0, 0}, torch::randn({8}));
    auto y3 = block.forward(x3);
    for (int t = 1; t < 4; ++t) {
        EXPECT_FALSE(torch::allclose(y.index({0, t}), y3.index({0, t}))) << "position " << t;
    }
}

}  // namespace
}  // namespace pipewright

#include "pipewright/core/layer_catalog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipewright {
namespace {

using nlohmann::json;

LayerSpec make(const std::string& type, json params = json::object()) {
    LayerSpec l;
    l.name = "l";
    l.type = type;
    l.params = std::move(params);
    return l;
}

struct Outcome {
    std::optional<LayerAnalysis> result;
    Diagnostics diagnostics;
};

Outcome run(const LayerSpec& layer, const Shape& in, DType dtype = DType::float32,
            const std::string& path = "model.layers[3]") {
    Outcome r;
    r.result = analyze_layer(layer, in, dtype, r.diagnostics, path);
    return r;
}

// Analyses a layer that must be valid.
LayerAnalysis ok(const std::string& type, json params, const Shape& in,
                 DType dtype = DType::float32) {
    Outcome r = run(make(type, std::move(params)), in, dtype);
    EXPECT_TRUE(r.result.has_value()) << r.diagnostics.format();
    EXPECT_TRUE(r.diagnostics.empty()) << r.diagnostics.format();
    return r.result.value_or(LayerAnalysis{});
}

// Analyses a layer that must fail with exactly one diagnostic; returns it.
Diagnostic fails(const LayerSpec& layer, const Shape& in, DType dtype = DType::float32) {
    Outcome r = run(layer, in, dtype);
    EXPECT_FALSE(r.result.has_value());
    EXPECT_EQ(r.diagnostics.size(), 1u) << r.diagnostics.format();
    return r.diagnostics.empty() ? Diagnostic{} : r.diagnostics.items().front();
}

// ---- catalog --------------------------------------------------------------

TEST(LayerCatalog, TypesComeInPaletteOrder) {
    std::vector<std::string> names;
    for (const auto& t : layer_types()) {
        names.push_back(t.type);
    }
    EXPECT_EQ(names, (std::vector<std::string>{
                         "linear", "relu", "gelu", "dropout", "flatten", "conv2d", "batchnorm2d",
                         "maxpool2d", "adaptive_avgpool2d", "resnet_bottleneck", "layernorm",
                         "rmsnorm", "embedding", "transformer_block"}));
}

TEST(LayerCatalog, EveryTypeAndParamIsDescribed) {
    for (const auto& t : layer_types()) {
        EXPECT_FALSE(t.description.empty()) << t.type;
        for (const auto& p : t.params) {
            EXPECT_FALSE(p.description.empty()) << t.type << "." << p.name;
        }
    }
    const LayerTypeInfo* conv = find_layer_type("conv2d");
    ASSERT_NE(conv, nullptr);
    ASSERT_EQ(conv->params.size(), 6u);
    EXPECT_EQ(conv->params[2].name, "kernel_size");
    EXPECT_TRUE(conv->params[2].required);
    EXPECT_EQ(conv->params[3].name, "stride");
    EXPECT_FALSE(conv->params[3].required);
    EXPECT_EQ(conv->params[3].default_value, 1);
    EXPECT_EQ(conv->params[5].kind, ParamKind::boolean);
    EXPECT_EQ(conv->params[5].default_value, 1);
    EXPECT_EQ(find_layer_type("dropout")->params.at(0).kind, ParamKind::number);
    EXPECT_EQ(find_layer_type("lstm"), nullptr);
    EXPECT_EQ(find_layer_type(""), nullptr);
}

TEST(LayerCatalog, LayerParamAppliesDefaults) {
    EXPECT_EQ(layer_param(make("conv2d", {{"in_channels", 3}, {"kernel_size", 5}}), "kernel_size"),
              5);
    EXPECT_EQ(layer_param(make("conv2d", {{"in_channels", 3}}), "stride"), 1);
    EXPECT_EQ(layer_param(make("conv2d", {{"in_channels", 3}}), "bias"), 1);
    EXPECT_EQ(layer_param(make("linear", {{"bias", false}}), "bias"), 0);
    EXPECT_EQ(layer_param(make("dropout"), "p"), 0.5);
    EXPECT_EQ(layer_param(make("dropout", {{"p", 0.1}}), "p"), 0.1);
    EXPECT_EQ(layer_param(make("transformer_block", {{"hidden", 64}}), "mlp_ratio"), 4);
    // Derived defaults.
    EXPECT_EQ(layer_param(make("maxpool2d", {{"kernel_size", 3}}), "stride"), 3);
    EXPECT_EQ(layer_param(make("maxpool2d", {{"kernel_size", 3}, {"stride", 2}}), "stride"), 2);
    const LayerSpec block = make("resnet_bottleneck", {{"in_channels", 256}, {"mid_channels", 64}});
    EXPECT_EQ(layer_param(block, "out_channels"), 256);
    EXPECT_EQ(layer_param(block, "projection"), 0);
    EXPECT_EQ(layer_param(make("resnet_bottleneck", {{"in_channels", 64}, {"mid_channels", 64}}),
                          "projection"),
              1);
    // Invalid values and garbage fall back to the defaults (analyze_layer
    // reports them).
    EXPECT_EQ(layer_param(make("conv2d", {{"stride", "two"}}), "stride"), 1);
    EXPECT_EQ(layer_param(make("conv2d", json::array({1, 2})), "stride"), 1);
}

TEST(LayerCatalog, ParamOfAnUnknownTypeOrNameIsAnError) {
    // Both read as 0 before: a silent zero-sized or switched-off module.
    try {
        (void)layer_param(make("lstm", {{"hidden", 3}}), "hidden");
        ADD_FAILURE() << "an unknown layer type was read";
    } catch (const InputError& e) {
        ASSERT_EQ(e.diagnostics().size(), 1U);
        EXPECT_EQ(e.diagnostics().items()[0].path, "type");
        EXPECT_EQ(e.diagnostics().items()[0].message.rfind(
                      "unknown layer type \"lstm\" (known: linear", 0),
                  0U)
            << e.what();
    }
    EXPECT_THROW((void)layer_param(make(""), "hidden"), InputError);
    try {
        (void)layer_param(make("conv2d"), "foo");
        ADD_FAILURE() << "an unknown parameter was read";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "layer type conv2d has no parameter \"foo\"");
    }
}

// ---- linear -----------------------------------------------------------------

TEST(LayerCatalog, LinearCostsOnAVector) {
    const auto a = ok("linear", {{"in_features", 20}, {"out_features", 10}}, {20});
    EXPECT_EQ(a.output_shape, (Shape{10}));
    EXPECT_EQ(a.output_dtype, DType::float32);
    EXPECT_EQ(a.parameters, 210);
    EXPECT_DOUBLE_EQ(a.forward_flops, 410);  // 2*20*10 + 10 bias adds
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 400);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, 410);
    EXPECT_DOUBLE_EQ(a.output_elements, 10);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 20);
    EXPECT_DOUBLE_EQ(a.weight_stashed_elements, 20);
}

TEST(LayerCatalog, LinearAppliesToEveryTokenWithoutBias) {
    const auto a = ok("linear", {{"in_features", 8}, {"out_features", 3}, {"bias", false}},
                      {4, 5, 8}, DType::bfloat16);
    EXPECT_EQ(a.output_shape, (Shape{4, 5, 3}));
    EXPECT_EQ(a.output_dtype, DType::bfloat16);
    EXPECT_EQ(a.parameters, 24);
    EXPECT_DOUBLE_EQ(a.forward_flops, 2.0 * 20 * 8 * 3);
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 960);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, 960);
    EXPECT_DOUBLE_EQ(a.output_elements, 60);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 160);
}

TEST(LayerCatalog, LinearInputMismatchNamesBothShapes) {
    const auto d = fails(make("linear", {{"in_features", 20}, {"out_features", 5}}), {10});
    EXPECT_EQ(d.path, "model.layers[3]");
    EXPECT_EQ(d.message,
              "linear expects an input whose last dimension is in_features = 20, but the previous "
              "layer produces [10]");
}

// ---- parameter validation ---------------------------------------------------

TEST(LayerCatalog, MissingRequiredParameter) {
    const auto d = fails(make("linear", {{"in_features", 20}}), {20});
    EXPECT_EQ(d.path, "model.layers[3].out_features");
    EXPECT_EQ(d.message, "missing required parameter \"out_features\"");
}

TEST(LayerCatalog, EveryProblemIsReportedAtOnce) {
    Outcome r = run(make("conv2d", {{"kernel_size", -1}, {"bias", 1}, {"foo", 2}}), {3, 8, 8});
    EXPECT_FALSE(r.result);
    ASSERT_EQ(r.diagnostics.size(), 5u) << r.diagnostics.format();
    EXPECT_TRUE(r.diagnostics.mentions("model.layers[3].in_channels"));
    EXPECT_TRUE(r.diagnostics.mentions("model.layers[3].out_channels"));
    EXPECT_TRUE(r.diagnostics.mentions("model.layers[3].kernel_size"));
    EXPECT_TRUE(r.diagnostics.mentions("model.layers[3].bias"));
    EXPECT_TRUE(r.diagnostics.mentions("model.layers[3].foo"));
}

TEST(LayerCatalog, NonPositiveIntegerIsRejected) {
    const auto d = fails(
        make("conv2d", {{"in_channels", 3}, {"out_channels", 8}, {"kernel_size", -1}}), {3, 8, 8});
    EXPECT_EQ(d.path, "model.layers[3].kernel_size");
    EXPECT_EQ(d.message, "\"kernel_size\" must be a positive integer, got -1");
    const auto zero = fails(make("linear", {{"in_features", 0}, {"out_features", 2}}), {4});
    EXPECT_EQ(zero.path, "model.layers[3].in_features");
    const auto pad =
        fails(make("conv2d",
                   {{"in_channels", 3}, {"out_channels", 8}, {"kernel_size", 3}, {"padding", -2}}),
              {3, 8, 8});
    EXPECT_EQ(pad.message, "\"padding\" must be a non-negative integer, got -2");
}

TEST(LayerCatalog, WrongJsonTypesGiveDiagnostics) {
    const json bad_ints[] = {"3",
                             2.5,
                             true,
                             nullptr,
                             json::array({3}),
                             json::object(),
                             -0.5,
                             1e300,
                             std::numeric_limits<std::uint64_t>::max(),
                             3e9};
    for (const auto& v : bad_ints) {
        const auto d = fails(make("linear", {{"in_features", v}, {"out_features", 2}}), {3});
        EXPECT_EQ(d.path, "model.layers[3].in_features") << v.dump();
        EXPECT_NE(d.message.find("\"in_features\" must be a positive integer"), std::string::npos)
            << d.message;
    }
    EXPECT_EQ(fails(make("linear", {{"in_features", "3"}, {"out_features", 2}}), {3}).message,
              "\"in_features\" must be a positive integer, got the string \"3\"");
    EXPECT_EQ(fails(make("linear", {{"in_features", 2.5}, {"out_features", 2}}), {3}).message,
              "\"in_features\" must be a positive integer, got 2.5");
    const json bad_bools[] = {1, 0, "true", nullptr, json::array()};
    for (const auto& v : bad_bools) {
        const auto d =
            fails(make("linear", {{"in_features", 3}, {"out_features", 2}, {"bias", v}}), {3});
        EXPECT_EQ(d.path, "model.layers[3].bias");
        EXPECT_EQ(d.message.rfind("\"bias\" must be true or false, got ", 0), 0u) << d.message;
    }
}

TEST(LayerCatalog, IntegralFloatIsAcceptedAsInteger) {
    const auto a = ok("linear", {{"in_features", 4.0}, {"out_features", 2}}, {4});
    EXPECT_EQ(a.parameters, 10);
}

TEST(LayerCatalog, UnknownParameterListsTheKnownOnes) {
    const auto d = fails(
        make("conv2d", {{"in_channels", 3}, {"out_channels", 8}, {"kernel_size", 3}, {"foo", 1}}),
        {3, 8, 8});
    EXPECT_EQ(d.path, "model.layers[3].foo");
    EXPECT_EQ(d.message.rfind("unknown parameter \"foo\" for layer type conv2d", 0), 0u)
        << d.message;
    EXPECT_NE(d.message.find("kernel_size"), std::string::npos);
    const auto relu = fails(make("relu", {{"inplace", true}}), {4});
    EXPECT_EQ(relu.path, "model.layers[3].inplace");
    EXPECT_EQ(relu.message,
              "unknown parameter \"inplace\" for layer type relu, which takes no "
              "parameters");
}

TEST(LayerCatalog, UnknownTypeListsTheKnownOnes) {
    const auto d = fails(make("lstm", {{"hidden", 3}}), {4});
    EXPECT_EQ(d.path, "model.layers[3].type");
    EXPECT_EQ(d.message.rfind("unknown layer type \"lstm\" (known: linear, relu, gelu, ", 0), 0u)
        << d.message;
    EXPECT_NE(d.message.find("transformer_block)"), std::string::npos);
    EXPECT_EQ(fails(make(""), {4}).path, "model.layers[3].type");
}

TEST(LayerCatalog, GarbageParamsAndShapesNeverThrow) {
    const json garbage[] = {json::array({1, 2}),
                            "conv",
                            42,
                            true,
                            json::object({{"in_features", json::object({{"a", 1}})}}),
                            json::object({{"\xff\xfe", 1}}),
                            json::object({{"p", "\xff"}}),
                            json::object({{"", nullptr}})};
    for (const auto& t : layer_types()) {
        for (const auto& g : garbage) {
            Outcome r;
            EXPECT_NO_THROW(r = run(make(t.type, g), {3, 8, 8}));
            EXPECT_FALSE(r.result)
                << t.type << " " << g.dump(-1, ' ', false, json::error_handler_t::replace);
            EXPECT_FALSE(r.diagnostics.empty());
        }
    }
    const auto arr = fails(make("relu", json::array({1})), {4});
    EXPECT_EQ(arr.path, "model.layers[3]");
    // A null params value is read as "no parameters".
    EXPECT_TRUE(run(make("relu", nullptr), {4}).result.has_value());
    // Huge but valid values must not overflow: reported as too large instead.
    const auto huge = fails(make("conv2d", {{"in_channels", 1},
                                            {"out_channels", 2147483647},
                                            {"kernel_size", 1},
                                            {"padding", 2147483647}}),
                            {1, 1, std::int64_t{1} << 40});
    EXPECT_EQ(huge.path, "model.layers[3]");
    EXPECT_NE(huge.message.find("too large"), std::string::npos) << huge.message;
    // Bad input shapes are reported on the layer itself.
    for (const Shape& s : {Shape{}, Shape{3, 0}, Shape{-1, 4}, Shape{1 << 30, 1 << 30, 1 << 30}}) {
        const auto d = fails(make("relu"), s);
        EXPECT_EQ(d.path, "model.layers[3]") << to_string(s);
    }
}

// Random values of every JSON kind for every parameter of every type, on
// random shapes: never throws, and a missing result always comes with a reason.
TEST(LayerCatalog, FuzzedParamsNeverThrowAndAlwaysExplainFailure) {
    std::mt19937 rng(1234);
    const json pool[] = {0,
                         1,
                         2,
                         3,
                         4,
                         7,
                         64,
                         -1,
                         0.5,
                         2.5,
                         1e20,
                         "x",
                         nullptr,
                         true,
                         false,
                         json::array(),
                         json::object(),
                         1e308,
                         -1e308};
    auto pick = [&](std::size_t n) {
        return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
    };
    for (int iter = 0; iter < 3000; ++iter) {
        const auto& t = layer_types()[pick(layer_types().size())];
        json params = json::object();
        for (const auto& p : t.params) {
            if (pick(4) != 0) {
                params[p.name] = pool[pick(std::size(pool))];
            }
        }
        Shape s;
        const std::size_t rank = pick(5);
        for (std::size_t i = 0; i < rank; ++i) {
            s.push_back(static_cast<std::int64_t>(pick(70)) - 2);
        }
        const DType dt = pick(3) == 0 ? DType::int64 : DType::float16;
        Outcome r;
        ASSERT_NO_THROW(r = run(make(t.type, params), s, dt));
        EXPECT_EQ(r.result.has_value(), r.diagnostics.empty()) << r.diagnostics.format();
        if (r.result) {
            EXPECT_GE(r.result->parameters, 0);
            EXPECT_TRUE(std::isfinite(r.result->forward_flops));
            EXPECT_GT(r.result->output_elements, 0);
        }
    }
}

// ---- element-wise and reshaping layers ----------------------------------------

TEST(LayerCatalog, ReluAndGeluKeepTheShape) {
    const auto relu = ok("relu", json::object(), {4, 5});
    EXPECT_EQ(relu.output_shape, (Shape{4, 5}));
    EXPECT_EQ(relu.parameters, 0);
    EXPECT_DOUBLE_EQ(relu.forward_flops, 20);
    EXPECT_DOUBLE_EQ(relu.backward_input_flops, 20);
    EXPECT_DOUBLE_EQ(relu.backward_weight_flops, 0);
    EXPECT_DOUBLE_EQ(relu.stashed_elements, 20);
    EXPECT_DOUBLE_EQ(relu.weight_stashed_elements, 0);
    const auto gelu = ok("gelu", json::object(), {4, 5});
    EXPECT_DOUBLE_EQ(gelu.forward_flops, 160);
    EXPECT_DOUBLE_EQ(gelu.backward_input_flops, 160);
    EXPECT_DOUBLE_EQ(gelu.stashed_elements, 20);
    EXPECT_DOUBLE_EQ(gelu.output_elements, 20);
}

TEST(LayerCatalog, DropoutProbabilityMustBeBelowOne) {
    const auto a = ok("dropout", {{"p", 0.1}}, {6});
    EXPECT_DOUBLE_EQ(a.forward_flops, 6);
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 6);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 6);
    EXPECT_DOUBLE_EQ(a.weight_stashed_elements, 0);
    EXPECT_TRUE(run(make("dropout", {{"p", 0}}), {6}).result.has_value());
    const auto one = fails(make("dropout", {{"p", 1}}), {6});
    EXPECT_EQ(one.path, "model.layers[3].p");
    EXPECT_EQ(one.message, "\"p\" must be a number in [0, 1), got 1");
    EXPECT_EQ(fails(make("dropout", {{"p", -0.25}}), {6}).message,
              "\"p\" must be a number in [0, 1), got -0.25");
    EXPECT_EQ(fails(make("dropout", {{"p", "0.5"}}), {6}).path, "model.layers[3].p");
}

TEST(LayerCatalog, FlattenIsFree) {
    const auto a = ok("flatten", json::object(), {64, 7, 7});
    EXPECT_EQ(a.output_shape, (Shape{3136}));
    EXPECT_DOUBLE_EQ(a.output_elements, 3136);
    EXPECT_DOUBLE_EQ(a.forward_flops + a.backward_input_flops + a.backward_weight_flops, 0);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 0);
}

TEST(LayerCatalog, TokenIdsOnlyFeedAnEmbedding) {
    const auto d =
        fails(make("linear", {{"in_features", 4}, {"out_features", 2}}), {4}, DType::int64);
    EXPECT_EQ(d.path, "model.layers[3]");
    EXPECT_NE(d.message.find("embedding"), std::string::npos);
    // Flatten only reshapes, so ids may pass through it.
    EXPECT_EQ(ok("flatten", json::object(), {2, 8}, DType::int64).output_dtype, DType::int64);
}

// ---- convolutional layers --------------------------------------------------

TEST(LayerCatalog, Conv2dCosts) {
    const auto a =
        ok("conv2d", {{"in_channels", 3}, {"out_channels", 8}, {"kernel_size", 3}, {"padding", 1}},
           {3, 32, 32});
    EXPECT_EQ(a.output_shape, (Shape{8, 32, 32}));
    const double macs = 8.0 * 32 * 32 * 3 * 3 * 3;  // 221,184
    EXPECT_EQ(a.parameters, 8 * 27 + 8);
    EXPECT_DOUBLE_EQ(a.forward_flops, 2 * macs + 8 * 32 * 32);
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 2 * macs);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, 2 * macs + 8 * 32 * 32);
    EXPECT_DOUBLE_EQ(a.output_elements, 8 * 32 * 32);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 3 * 32 * 32);
    EXPECT_DOUBLE_EQ(a.weight_stashed_elements, 3 * 32 * 32);
}

TEST(LayerCatalog, Conv2dOutputSizeFloorsStridedWindows) {
    const auto stem = ok("conv2d",
                         {{"in_channels", 3},
                          {"out_channels", 64},
                          {"kernel_size", 7},
                          {"stride", 2},
                          {"padding", 3},
                          {"bias", false}},
                         {3, 224, 224});
    EXPECT_EQ(stem.output_shape, (Shape{64, 112, 112}));
    EXPECT_EQ(stem.parameters, 9408);
    EXPECT_DOUBLE_EQ(stem.forward_flops, 2.0 * 64 * 112 * 112 * 3 * 49);
    // floor((6 - 2) / 3) + 1 = 2 rows, floor((5 - 2) / 3) + 1 = 2 columns.
    const auto odd =
        ok("conv2d", {{"in_channels", 1}, {"out_channels", 1}, {"kernel_size", 2}, {"stride", 3}},
           {1, 6, 5});
    EXPECT_EQ(odd.output_shape, (Shape{1, 2, 2}));
}

TEST(LayerCatalog, Conv2dInputProblems) {
    const LayerSpec conv =
        make("conv2d", {{"in_channels", 3}, {"out_channels", 8}, {"kernel_size", 5}});
    const auto small = fails(conv, {3, 4, 10});
    EXPECT_EQ(small.path, "model.layers[3]");
    EXPECT_NE(small.message.find("[3, 4, 10]"), std::string::npos) << small.message;
    EXPECT_NE(small.message.find("kernel_size 5"), std::string::npos) << small.message;
    const auto channels = fails(conv, {1, 28, 28});
    EXPECT_EQ(channels.path, "model.layers[3]");
    EXPECT_EQ(channels.message,
              "conv2d expects an input with in_channels = 3 channels, but the previous layer "
              "produces [1, 28, 28]");
    const auto rank = fails(conv, {784});
    EXPECT_EQ(rank.message,
              "conv2d expects a [channels, height, width] input, but the previous layer produces "
              "[784]");
}

TEST(LayerCatalog, BatchNormCosts) {
    const auto a = ok("batchnorm2d", {{"num_features", 16}}, {16, 10, 10});
    EXPECT_EQ(a.output_shape, (Shape{16, 10, 10}));
    EXPECT_EQ(a.parameters, 32);
    EXPECT_DOUBLE_EQ(a.forward_flops, 12800);
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 12800);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, 3200);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 1600);
    EXPECT_DOUBLE_EQ(a.weight_stashed_elements, 1600);
    EXPECT_EQ(fails(make("batchnorm2d", {{"num_features", 8}}), {16, 10, 10}).path,
              "model.layers[3]");
}

TEST(LayerCatalog, MaxPoolStrideDefaultsToKernel) {
    const auto a = ok("maxpool2d", {{"kernel_size", 2}}, {8, 10, 9});
    EXPECT_EQ(a.output_shape, (Shape{8, 5, 4}));
    EXPECT_EQ(a.parameters, 0);
    EXPECT_DOUBLE_EQ(a.forward_flops, 160 * 4);
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 160);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, 0);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 160);
    EXPECT_DOUBLE_EQ(a.weight_stashed_elements, 0);
    const auto stem =
        ok("maxpool2d", {{"kernel_size", 3}, {"stride", 2}, {"padding", 1}}, {64, 112, 112});
    EXPECT_EQ(stem.output_shape, (Shape{64, 56, 56}));
    // An explicit 0 means the default, as the catalog documents.
    EXPECT_EQ(ok("maxpool2d", {{"kernel_size", 2}, {"stride", 0}}, {1, 4, 4}).output_shape,
              (Shape{1, 2, 2}));
}

TEST(LayerCatalog, MaxPoolPaddingAtMostHalfTheKernel) {
    const auto d = fails(make("maxpool2d", {{"kernel_size", 3}, {"padding", 2}}), {1, 8, 8});
    EXPECT_EQ(d.path, "model.layers[3].padding");
    EXPECT_EQ(d.message, "\"padding\" must be at most half of kernel_size = 3, got 2");
    EXPECT_EQ(fails(make("maxpool2d", {{"kernel_size", 3}, {"stride", -1}}), {1, 8, 8}).message,
              "\"stride\" must be a positive integer, or 0 for kernel_size, got -1");
}

TEST(LayerCatalog, AdaptiveAvgPool) {
    const auto a = ok("adaptive_avgpool2d", json::object(), {2048, 7, 7});
    EXPECT_EQ(a.output_shape, (Shape{2048, 1, 1}));
    EXPECT_DOUBLE_EQ(a.forward_flops, 2048 * 49);
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 2048 * 49);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 0);
    EXPECT_DOUBLE_EQ(a.output_elements, 2048);
    EXPECT_EQ(ok("adaptive_avgpool2d", {{"output_size", 2}}, {3, 7, 7}).output_shape,
              (Shape{3, 2, 2}));
    EXPECT_EQ(fails(make("adaptive_avgpool2d"), {49}).path, "model.layers[3]");
}

// ---- ResNet-50 ------------------------------------------------------------------

json bottleneck(int in, int mid, int stride = 1) {
    return {{"in_channels", in}, {"mid_channels", mid}, {"stride", stride}};
}

TEST(LayerCatalog, BottleneckParametersMatchTorchvision) {
    // layer1[0]: 64 -> 256 with a projection shortcut.
    const auto first = ok("resnet_bottleneck", bottleneck(64, 64), {64, 56, 56});
    EXPECT_EQ(first.parameters, 75008);
    EXPECT_EQ(first.output_shape, (Shape{256, 56, 56}));
    // layer1[1]: identity shortcut.
    EXPECT_EQ(ok("resnet_bottleneck", bottleneck(256, 64), {256, 56, 56}).parameters, 70400);
    // layer2[0]: strided, 256 -> 512.
    const auto down = ok("resnet_bottleneck", bottleneck(256, 128, 2), {256, 56, 56});
    EXPECT_EQ(down.parameters, 379392);
    EXPECT_EQ(down.output_shape, (Shape{512, 28, 28}));
    // An explicit projection on an identity-shaped block adds conv 256x256 + bn.
    json forced = bottleneck(256, 64);
    forced["projection"] = true;
    EXPECT_EQ(ok("resnet_bottleneck", forced, {256, 56, 56}).parameters, 70400 + 256 * 256 + 512);
    json narrow = bottleneck(64, 64);
    narrow["out_channels"] = 64;
    EXPECT_EQ(ok("resnet_bottleneck", narrow, {64, 8, 8}).output_shape, (Shape{64, 8, 8}));
}

// The block is the sum of its parts analysed as plain layers.
TEST(LayerCatalog, BottleneckIsTheSumOfItsParts) {
    const Shape in{256, 56, 56};
    const auto block = ok("resnet_bottleneck", bottleneck(256, 128, 2), in);
    auto conv = [](int i, int o, int k, int s, int p) {
        return json{{"in_channels", i}, {"out_channels", o}, {"kernel_size", k},
                    {"stride", s},      {"padding", p},      {"bias", false}};
    };
    const LayerAnalysis parts[] = {
        ok("conv2d", conv(256, 128, 1, 1, 0), in),
        ok("batchnorm2d", {{"num_features", 128}}, {128, 56, 56}),
        ok("relu", json::object(), {128, 56, 56}),
        ok("conv2d", conv(128, 128, 3, 2, 1), {128, 56, 56}),
        ok("batchnorm2d", {{"num_features", 128}}, {128, 28, 28}),
        ok("relu", json::object(), {128, 28, 28}),
        ok("conv2d", conv(128, 512, 1, 1, 0), {128, 28, 28}),
        ok("batchnorm2d", {{"num_features", 512}}, {512, 28, 28}),
        ok("conv2d", conv(256, 512, 1, 2, 0), in),
        ok("batchnorm2d", {{"num_features", 512}}, {512, 28, 28}),
        ok("relu", json::object(), {512, 28, 28}),
    };
    LayerAnalysis sum;
    for (const auto& p : parts) {
        sum.parameters += p.parameters;
        sum.forward_flops += p.forward_flops;
        sum.backward_input_flops += p.backward_input_flops;
        sum.backward_weight_flops += p.backward_weight_flops;
        sum.stashed_elements += p.stashed_elements;
        sum.weight_stashed_elements += p.weight_stashed_elements;
    }
    const double add = 512.0 * 28 * 28;  // the residual addition
    EXPECT_EQ(block.parameters, sum.parameters);
    EXPECT_DOUBLE_EQ(block.forward_flops, sum.forward_flops + add);
    EXPECT_DOUBLE_EQ(block.backward_input_flops, sum.backward_input_flops);
    EXPECT_DOUBLE_EQ(block.backward_weight_flops, sum.backward_weight_flops);
    EXPECT_DOUBLE_EQ(block.stashed_elements, sum.stashed_elements);
    EXPECT_DOUBLE_EQ(block.weight_stashed_elements, sum.weight_stashed_elements);
}

TEST(LayerCatalog, BottleneckProjectionCannotBeDroppedWhenShapesChange) {
    json p = bottleneck(256, 128, 2);
    p["projection"] = false;
    const auto d = fails(make("resnet_bottleneck", p), {256, 56, 56});
    EXPECT_EQ(d.path, "model.layers[3].projection");
    EXPECT_NE(d.message.find("stride 2"), std::string::npos) << d.message;
    const auto channels = fails(make("resnet_bottleneck", bottleneck(128, 64)), {256, 56, 56});
    EXPECT_EQ(channels.path, "model.layers[3]");
}

TEST(LayerCatalog, ResNet50MatchesTorchvision) {
    std::vector<LayerSpec> layers;
    layers.push_back(make("conv2d", {{"in_channels", 3},
                                     {"out_channels", 64},
                                     {"kernel_size", 7},
                                     {"stride", 2},
                                     {"padding", 3},
                                     {"bias", false}}));
    layers.push_back(make("batchnorm2d", {{"num_features", 64}}));
    layers.push_back(make("relu"));
    layers.push_back(make("maxpool2d", {{"kernel_size", 3}, {"stride", 2}, {"padding", 1}}));
    int in = 64;
    const int mids[] = {64, 128, 256, 512};
    const int blocks[] = {3, 4, 6, 3};
    for (int stage = 0; stage < 4; ++stage) {
        for (int b = 0; b < blocks[stage]; ++b) {
            const int stride = (stage > 0 && b == 0) ? 2 : 1;
            layers.push_back(make("resnet_bottleneck", bottleneck(in, mids[stage], stride)));
            in = 4 * mids[stage];
        }
    }
    layers.push_back(make("adaptive_avgpool2d"));
    layers.push_back(make("flatten"));
    layers.push_back(make("linear", {{"in_features", 2048}, {"out_features", 1000}}));
    ASSERT_EQ(layers.size(), 23u);

    Shape shape{3, 224, 224};
    std::int64_t params = 0;
    double flops = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        Diagnostics diags;
        const auto a = analyze_layer(layers[i], shape, DType::float32, diags,
                                     "model.layers[" + std::to_string(i) + "]");
        ASSERT_TRUE(a) << diags.format();
        params += a->parameters;
        flops += a->forward_flops;
        shape = a->output_shape;
    }
    EXPECT_EQ(params, 25557032);
    EXPECT_EQ(shape, (Shape{1000}));
    // torchvision: 4.09 GMACs per 224x224 image.
    EXPECT_NEAR(flops, 2 * 4.09e9, 0.05 * 2 * 4.09e9);
}

// ---- language models -----------------------------------------------------------

TEST(LayerCatalog, LayerNormCosts) {
    const auto a = ok("layernorm", {{"features", 64}}, {10, 64});
    EXPECT_EQ(a.parameters, 128);
    EXPECT_DOUBLE_EQ(a.forward_flops, 8 * 640);
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 8 * 640);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, 2 * 640);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 640);
    EXPECT_DOUBLE_EQ(a.weight_stashed_elements, 640);
    const auto d = fails(make("layernorm", {{"features", 32}}), {10, 64});
    EXPECT_EQ(d.message,
              "layernorm expects an input whose last dimension is features = 32, but the "
              "previous layer produces [10, 64]");
}

TEST(LayerCatalog, EmbeddingTurnsIdsIntoVectors) {
    const auto a =
        ok("embedding", {{"num_embeddings", 50257}, {"embedding_dim", 768}}, {128}, DType::int64);
    EXPECT_EQ(a.output_shape, (Shape{128, 768}));
    EXPECT_EQ(a.output_dtype, DType::float32);
    EXPECT_EQ(a.parameters, 38597376);
    EXPECT_DOUBLE_EQ(a.forward_flops, 128 * 768);
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 0);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, 128 * 768);
    EXPECT_DOUBLE_EQ(a.output_elements, 128 * 768);
    EXPECT_DOUBLE_EQ(a.stashed_elements, 128);
    EXPECT_DOUBLE_EQ(a.weight_stashed_elements, 128);
}

TEST(LayerCatalog, EmbeddingNeedsInt64Input) {
    const auto d = fails(make("embedding", {{"num_embeddings", 100}, {"embedding_dim", 8}}), {16},
                         DType::float32);
    EXPECT_EQ(d.path, "model.layers[3]");
    EXPECT_NE(d.message.find("\"int64\""), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("float32"), std::string::npos) << d.message;
}

TEST(LayerCatalog, TransformerBlockGpt3) {
    const double h = 12288, heads = 96, L = 2048;
    // Megatron-LM's GPT-3, with its dropouts.
    const auto a =
        ok("transformer_block",
           {{"hidden", 12288}, {"heads", 96}, {"attention_dropout", 0.1}, {"hidden_dropout", 0.1}},
           {2048, 12288}, DType::bfloat16);
    EXPECT_EQ(a.output_shape, (Shape{2048, 12288}));
    EXPECT_EQ(a.output_dtype, DType::bfloat16);
    EXPECT_EQ(a.parameters, 1812099072);         // 12 h^2 + 13 h
    EXPECT_EQ(96 * a.parameters, 173961510912);  // ~174 B (plus embeddings: 175 B)
    EXPECT_DOUBLE_EQ(a.forward_flops, 24 * L * h * h + 4 * L * L * h);
    // The attention matmuls' backward computes both operands' gradients.
    EXPECT_DOUBLE_EQ(a.backward_input_flops, 24 * L * h * h + 8 * L * L * h);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, 24 * L * h * h);
    // Forward and backward are 3x the forward, as Narayanan et al. count a
    // layer: 72 L h^2 (1 + L / 6h).
    EXPECT_DOUBLE_EQ(a.forward_flops + a.backward_input_flops + a.backward_weight_flops,
                     72 * L * h * h * (1 + L / (6 * h)));
    EXPECT_DOUBLE_EQ(a.output_elements, L * h);
    // Korthikanti et al.: 34 s h + 5 a s^2 bytes at 2 bytes per element.
    EXPECT_DOUBLE_EQ(a.stashed_elements, (34 * L * h + 5 * heads * L * L) / 2);
    EXPECT_DOUBLE_EQ(a.weight_stashed_elements, 7 * L * h);
}

TEST(LayerCatalog, TransformerBlockOtherMlpRatio) {
    const auto a =
        ok("transformer_block", {{"hidden", 64}, {"heads", 4}, {"mlp_ratio", 2}}, {10, 64});
    // attention 4h^2 + 4h, MLP 2*2*h^2 + 2h + h, two layernorms 4h.
    EXPECT_EQ(a.parameters, 4 * 4096 + 256 + 4 * 4096 + 128 + 64 + 256);
    EXPECT_DOUBLE_EQ(a.forward_flops, 16.0 * 10 * 4096 + 4.0 * 100 * 64);
    EXPECT_DOUBLE_EQ(a.backward_weight_flops, 16.0 * 10 * 4096);
    EXPECT_DOUBLE_EQ(a.weight_stashed_elements, 5.0 * 640);
}

TEST(LayerCatalog, TransformerBlockProblems) {
    const auto heads = fails(make("transformer_block", {{"hidden", 768}, {"heads", 7}}), {16, 768});
    EXPECT_EQ(heads.path, "model.layers[3].heads");
    EXPECT_EQ(heads.message, "\"heads\" must divide hidden = 768, got 7 (or give head_dim)");
    const auto width =
        fails(make("transformer_block", {{"hidden", 768}, {"heads", 12}}), {16, 512});
    EXPECT_EQ(width.path, "model.layers[3]");
    EXPECT_NE(width.message.find("hidden = 768"), std::string::npos);
    const auto rank = fails(make("transformer_block", {{"hidden", 768}, {"heads", 12}}), {768});
    EXPECT_EQ(rank.path, "model.layers[3]");
    EXPECT_NE(rank.message.find("[768]"), std::string::npos);
}

}  // namespace
}  // namespace pipewright

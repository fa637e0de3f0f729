// Torch modules for the layer catalog. Each mirrors the formulas of
// core/src/model/layer_catalog.cpp (shapes, parameter counts); tests/backend checks
// that they agree type by type.
#include "pipewright/backend/modules.h"

#include <algorithm>
#include <array>
#include <mutex>

#include "layers/causal_attention.h"
#include "layers/context_chunks.h"
#include "layers/decoder_parts.h"
#include "layers/fused_linear.h"
#include "layers/mixture_of_experts.h"
#include "layers/tied_head.h"
#include "torchscript/torchscript_modules.h"

namespace pipewright::backend {
namespace {

std::int64_t int_param(const LayerSpec& layer, const char* name) {
    return static_cast<std::int64_t>(layer_param(layer, name));
}

// A pre-norm causal decoder block: x + attn(norm1(x)), then
// x + mlp(norm2(x)), its widths and kinds from the catalog's dimensions.
struct TransformerBlockImpl : torch::nn::Module {
    explicit TransformerBlockImpl(const TransformerDims& d)
        : heads_(static_cast<std::int64_t>(d.heads)),
          kv_heads_(static_cast<std::int64_t>(d.kv_heads)),
          head_dim_(static_cast<std::int64_t>(d.head_dim)),
          activation_(d.activation),
          rotary_(d.rotary),
          attention_dropout_(d.attention_dropout),
          hidden_dropout_(d.hidden_dropout) {
        const auto width = [](double v) { return static_cast<std::int64_t>(v); };
        const auto linear = [](std::int64_t in, std::int64_t out, bool bias) {
            return FusedLinear(torch::nn::LinearOptions(in, out).bias(bias));
        };
        const std::int64_t h = width(d.hidden);
        norm1 = make_norm(d.rms_norm, h);
        register_module("ln1", norm1.ptr());
        qkv = register_module("qkv", linear(h, width(d.qkv_width()), d.qkv_bias));
        proj = register_module("proj", linear(width(d.value_width()), h, d.bias));
        norm2 = make_norm(d.rms_norm, h);
        register_module("ln2", norm2.ptr());
        if (d.moe()) {
            moe = register_module("moe", MixtureOfExperts(d));
            return;
        }
        fc1 = register_module("fc1", linear(h, width(d.mlp_in_width()), d.bias));
        fc2 = register_module("fc2", linear(width(d.ffn), h, d.bias));
    }

    // Dropout as Megatron-LM places it: on the attention's probabilities,
    // and on each residual branch before its add; only while training.
    torch::Tensor forward(torch::Tensor x) {
        const bool train = is_training();
        const double attention_p = train ? attention_dropout_ : 0;
        const auto branch = [this, train](const torch::Tensor& y) {
            return train && hidden_dropout_ > 0 ? torch::dropout(y, hidden_dropout_, true) : y;
        };
        const torch::Tensor q = qkv(norm1.forward(x));
        x = x + branch(proj(recompute_core
                                ? recomputed_causal_attention(q, heads_, kv_heads_, head_dim_,
                                                              rotary_, context, attention_p)
                                : causal_attention(q, heads_, kv_heads_, head_dim_, rotary_,
                                                   context, attention_p)));
        const torch::Tensor normed = norm2.forward(x);
        return x + branch(moe ? moe(normed) : fc2(mlp_activation(fc1(normed), activation_)));
    }

    std::int64_t heads_, kv_heads_, head_dim_;
    MlpActivation activation_;
    bool rotary_;
    double attention_dropout_, hidden_dropout_;
    // Selective recomputation (set by build_layers from the training).
    bool recompute_core = false;
    // Context parallelism (set by build_layers): the attention exchanges
    // keys and values with the group. A member, so that its address stays
    // valid for every graph the block builds.
    ContextGroup context;
    torch::nn::AnyModule norm1, norm2;
    FusedLinear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
    MixtureOfExperts moe{nullptr};  // in place of fc1 and fc2
};
TORCH_MODULE(TransformerBlock);

// Token ids to vectors, plus a learned absolute position table (GPT-2/3)
// whose first rows are added along the sequence; under context parallelism
// the rows of the member's tokens' true positions.
struct PositionedEmbeddingImpl : torch::nn::Module {
    PositionedEmbeddingImpl(std::int64_t vocabulary, std::int64_t dim, std::int64_t rows) {
        weight = register_parameter("weight", torch::randn({vocabulary, dim}));
        positions = register_parameter("positions", torch::randn({rows, dim}) * 0.02);
    }
    torch::Tensor forward(const torch::Tensor& ids) {
        const std::int64_t length = ids.size(-1);
        if (context_size > 1) {
            return torch::embedding(weight, ids) +
                   positions.index_select(0, context_positions(length, context_rank, context_size)
                                                 .to(positions.device()));
        }
        return torch::embedding(weight, ids) + positions.narrow(0, 0, length);
    }
    torch::Tensor weight, positions;
    // Context parallelism (set by build_layers): this member's chunks.
    int context_rank = 0;
    int context_size = 1;
};
TORCH_MODULE(PositionedEmbedding);

torch::nn::Conv2d conv(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride,
                       std::int64_t padding, bool bias) {
    return torch::nn::Conv2d(
        torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(padding).bias(bias));
}

// ResNet-50 v1.5 bottleneck: the 3x3 convolution carries the stride.
struct BottleneckImpl : torch::nn::Module {
    BottleneckImpl(std::int64_t in, std::int64_t mid, std::int64_t out, std::int64_t stride,
                   bool projection) {
        conv1 = register_module("conv1", conv(in, mid, 1, 1, 0, false));
        bn1 = register_module("bn1", torch::nn::BatchNorm2d(mid));
        conv2 = register_module("conv2", conv(mid, mid, 3, stride, 1, false));
        bn2 = register_module("bn2", torch::nn::BatchNorm2d(mid));
        conv3 = register_module("conv3", conv(mid, out, 1, 1, 0, false));
        bn3 = register_module("bn3", torch::nn::BatchNorm2d(out));
        if (projection) {
            shortcut_conv = register_module("shortcut_conv", conv(in, out, 1, stride, 0, false));
            shortcut_bn = register_module("shortcut_bn", torch::nn::BatchNorm2d(out));
        }
    }

    torch::Tensor forward(torch::Tensor x) {
        auto y = torch::relu(bn1(conv1(x)));
        y = torch::relu(bn2(conv2(y)));
        y = bn3(conv3(y));
        auto shortcut = shortcut_conv ? shortcut_bn(shortcut_conv(x)) : x;
        return torch::relu(y + shortcut);
    }

    torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr}, shortcut_conv{nullptr};
    torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr}, shortcut_bn{nullptr};
};
TORCH_MODULE(Bottleneck);

torch::nn::AnyModule make_module(const LayerSpec& l) {
    namespace nn = torch::nn;
    const std::string& t = l.type;
    if (t == "linear") {
        return nn::AnyModule(
            FusedLinear(nn::LinearOptions(int_param(l, "in_features"), int_param(l, "out_features"))
                            .bias(layer_param(l, "bias") != 0)));
    }
    if (t == "relu") {
        return nn::AnyModule(nn::ReLU());
    }
    if (t == "gelu") {
        return nn::AnyModule(nn::GELU());
    }
    if (t == "dropout") {
        return nn::AnyModule(nn::Dropout(nn::DropoutOptions(layer_param(l, "p"))));
    }
    if (t == "flatten") {
        return nn::AnyModule(nn::Flatten());  // keeps the batch dimension
    }
    if (t == "conv2d") {
        return nn::AnyModule(conv(int_param(l, "in_channels"), int_param(l, "out_channels"),
                                  int_param(l, "kernel_size"), int_param(l, "stride"),
                                  int_param(l, "padding"), layer_param(l, "bias") != 0));
    }
    if (t == "batchnorm2d") {
        return nn::AnyModule(nn::BatchNorm2d(int_param(l, "num_features")));
    }
    if (t == "maxpool2d") {
        return nn::AnyModule(nn::MaxPool2d(nn::MaxPool2dOptions(int_param(l, "kernel_size"))
                                               .stride(int_param(l, "stride"))
                                               .padding(int_param(l, "padding"))));
    }
    if (t == "adaptive_avgpool2d") {
        const auto o = int_param(l, "output_size");
        return nn::AnyModule(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({o, o})));
    }
    if (t == "resnet_bottleneck") {
        return nn::AnyModule(Bottleneck(int_param(l, "in_channels"), int_param(l, "mid_channels"),
                                        int_param(l, "out_channels"), int_param(l, "stride"),
                                        layer_param(l, "projection") != 0));
    }
    if (t == "layernorm") {
        return nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({int_param(l, "features")})));
    }
    if (t == "rmsnorm") {
        return nn::AnyModule(RmsNorm(int_param(l, "features")));
    }
    if (t == "embedding") {
        if (const auto positions = int_param(l, "positions"); positions > 0) {
            return nn::AnyModule(PositionedEmbedding(int_param(l, "num_embeddings"),
                                                     int_param(l, "embedding_dim"), positions));
        }
        return nn::AnyModule(
            nn::Embedding(int_param(l, "num_embeddings"), int_param(l, "embedding_dim")));
    }
    if (t == "transformer_block") {
        return nn::AnyModule(TransformerBlock(transformer_dims(l)));
    }
    if (t == "torchscript") {
        // Its weights come from its file, and its glue from its neighbours
        // there: built with its model, by build_layers.
        throw BackendError("layer \"" + l.name +
                           "\": a torchscript layer is built with the rest of its model");
    }
    throw BackendError("layer \"" + l.name + "\": the backend cannot build layer type \"" + t +
                       "\"");
}

Shape input_shape_of(const AnalyzedProject& p, int layer) {
    return layer == 0 ? p.project.model.input.shape
                      : p.layers[static_cast<std::size_t>(layer - 1)].output_shape;
}

constexpr std::array<std::string_view, 15> kBuildable = {"linear",
                                                         "relu",
                                                         "gelu",
                                                         "dropout",
                                                         "flatten",
                                                         "conv2d",
                                                         "batchnorm2d",
                                                         "maxpool2d",
                                                         "adaptive_avgpool2d",
                                                         "resnet_bottleneck",
                                                         "layernorm",
                                                         "rmsnorm",
                                                         "embedding",
                                                         "transformer_block",
                                                         "torchscript"};

}  // namespace

bool can_build(std::string_view type) {
    return std::find(kBuildable.begin(), kBuildable.end(), type) != kBuildable.end();
}

bool draws_random(const LayerSpec& layer) {
    return layer.type == "dropout" || !block_dropout_field(layer).empty();
}

std::string_view block_dropout_field(const LayerSpec& layer) {
    if (layer.type != "transformer_block") {
        return {};
    }
    const TransformerDims d = transformer_dims(layer);
    return d.attention_dropout > 0 ? "attention_dropout"
           : d.hidden_dropout > 0  ? "hidden_dropout"
                                   : std::string_view();
}

torch::Dtype torch_dtype(DType dtype) {
    switch (dtype) {
        case DType::float32:
            return torch::kFloat32;
        case DType::bfloat16:
            return torch::kBFloat16;
        case DType::float16:
            throw BackendError(
                "float16 training is not supported on CPU; use float32 or bfloat16 in "
                "training.dtype");
        case DType::int64:
            break;
    }
    throw BackendError("training.dtype must be a floating-point type");
}

torch::Dtype run_dtype(const AnalyzedProject& project, const std::string& override_dtype) {
    if (override_dtype == "float64") {
        return torch::kFloat64;
    }
    if (override_dtype == "float32") {
        return torch::kFloat32;
    }
    return torch_dtype(project.project.training.dtype);
}

std::int64_t input_vocabulary(const Model& model) {
    if (model.input.dtype != DType::int64 || model.layers.empty()) {
        return 0;
    }
    const auto& first = model.layers.front();
    if (first.type == "embedding") {
        return static_cast<std::int64_t>(layer_param(first, "num_embeddings"));
    }
    const auto& imported = first.params.value("vocabulary", nlohmann::json());
    if (first.type == "torchscript" && imported.is_number_integer()) {
        return imported.get<std::int64_t>();
    }
    return 2;
}

bool has_imported_layers(const Model& model) {
    return std::any_of(model.layers.begin(), model.layers.end(),
                       [](const LayerSpec& l) { return l.type == "torchscript"; });
}

std::uint64_t layer_seed(std::uint64_t seed, int index) {
    // splitmix64 of the pair: unrelated streams for nearby seeds and indices.
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(index) + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (z ^ (z >> 31)) >> 1;  // Torch seeds are used as signed on some paths
}

torch::nn::AnyModule build_layer(const LayerSpec& layer, const Shape& /*input_shape*/,
                                 std::uint64_t seed) {
    // Default initialisation draws from Torch's global generator; hold it
    // while seeding and building so that threads (in-process ranks) building
    // their stages at once still get the weights their seed promises.
    static std::mutex generator_mutex;
    const std::lock_guard lock(generator_mutex);
    torch::manual_seed(seed);
    return make_module(layer);
}

std::string stage_module_name(const LayerSpec& layer) {
    std::string name = layer.name;
    std::replace(name.begin(), name.end(), '.', '_');
    return name;
}

torch::nn::Sequential build_layers(const AnalyzedProject& project, int first, int last,
                                   std::uint64_t seed, torch::Dtype dtype,
                                   ImportedWeights imported_weights, const ExpertGroup& experts,
                                   const ContextGroup& context) {
    torch::nn::Sequential seq;
    const auto& layers = project.project.model.layers;
    TorchScriptLayers imported(project.project.model);
    for (int i = first; i <= last; ++i) {
        const auto& spec = layers[static_cast<std::size_t>(i)];
        const std::string name = stage_module_name(spec);
        if (spec.type == "torchscript") {
            seq->push_back(
                name, torch::nn::AnyModule(imported.build(
                          i, layer_seed(seed, i), imported_weights == ImportedWeights::from_seed)));
            continue;
        }
        if (project.tied && i == project.tied->head) {
            // The head multiplies by the embedding's matrix: the embedding's
            // own tensor in this module, or a copy of its first value.
            seq->push_back(name, first <= project.tied->embedding
                                     ? shared_weight_head(seq->ptr(static_cast<std::size_t>(
                                           project.tied->embedding - first)))
                                     : copied_weight_head(project, seed));
            continue;
        }
        torch::nn::AnyModule module =
            build_layer(spec, input_shape_of(project, i), layer_seed(seed, i));
        if (project.tied && i == project.tied->embedding) {
            scale_tied_embedding(*module.ptr());
        }
        if (auto* block = dynamic_cast<TransformerBlockImpl*>(module.ptr().get())) {
            block->recompute_core = project.project.training.recompute == Recompute::selective;
            if (block->moe) {
                // Built whole from the seed, then cut: a member's experts
                // are the ones single-process training has at their index.
                block->moe->keep_local_experts(experts);
            }
            block->context = context;
        }
        if (auto* embedding = dynamic_cast<PositionedEmbeddingImpl*>(module.ptr().get())) {
            embedding->context_rank = context.rank;
            embedding->context_size = context.size;
        }
        seq->push_back(name, std::move(module));
    }
    seq->to(dtype);
    return seq;
}

torch::nn::Sequential build_stage(const AnalyzedProject& project, int stage, torch::Dtype dtype,
                                  const ExpertGroup& experts, const ContextGroup& context) {
    const auto& s = project.stages.at(static_cast<std::size_t>(stage));
    return build_layers(project, s.first_layer, s.last_layer,
                        static_cast<std::uint64_t>(project.project.training.seed), dtype,
                        ImportedWeights::as_project, experts, context);
}

torch::nn::Sequential build_model(const AnalyzedProject& project, std::uint64_t seed,
                                  torch::Dtype dtype, ImportedWeights imported) {
    return build_layers(project, 0, static_cast<int>(project.layers.size()) - 1, seed, dtype,
                        imported);
}

}  // namespace pipewright::backend

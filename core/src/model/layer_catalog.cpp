// The layer catalog: which layer types exist, which hyper-parameters they take,
// and what one layer costs for ONE sample (shapes exclude the batch dimension;
// the caller multiplies by the micro-batch size).
//
// Cost conventions, and why:
// - FLOPs count a multiply-add as two, the convention of hardware peak figures
//   (dense TFLOP/s), so that time = flops / (peak * efficiency) needs no factor.
// - Backward is split into B (gradient w.r.t. the layer input) and W (gradient
//   w.r.t. the parameters) because zero-bubble schedules run them separately.
//   For a matmul y = xA each half costs as much as the forward (2*m*n*k), which
//   gives the familiar "backward = 2x forward". Bias gradients add to W only.
// - Element-wise layers (relu, gelu, dropout, norms) are memory-bound; their
//   FLOPs are rough operation counts (gelu ~8 per element, norms ~8 forward)
//   meant only to keep them from being free, not to be exact.
// - Stashed elements are what autograd keeps from forward to backward: inputs of
//   layers with weights, masks, pooling indices. weight_stashed_elements is the
//   part W still needs after B has run: the inputs of layers with weights.
// - Composite blocks (resnet_bottleneck, transformer_block) sum the same
//   per-part formulas; the transformer uses the closed forms of Narayanan et al.
//   (2021) for FLOPs and Korthikanti et al. (2022) for activation memory.
#include "pipewright/core/layer_catalog.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "model/catalog_parts.h"
#include "model/torchscript_layer.h"
#include "pipewright/core/json_reader.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright {
namespace {

using namespace catalog;

// ---- per-type analysers (the convolutional ones: vision_layers.cpp) --------

std::optional<Result> analyze_linear(const Params& p, const Shape& in, const Ctx& ctx) {
    const double fin = p.get("in_features"), fout = p.get("out_features");
    if (!expect_last_dim(ctx, in, "in_features", fin)) {
        return std::nullopt;
    }
    Shape out = in;
    out.back() = as_int(fout);
    return Result{matmul_cost(dnumel(in) / fin, fin, fout, p.flag("bias")), out, {}};
}

std::optional<Result> analyze_relu(const Params&, const Shape& in, const Ctx&) {
    return Result{elementwise_cost(dnumel(in), 1), in, {}};
}

std::optional<Result> analyze_gelu(const Params&, const Shape& in, const Ctx&) {
    return Result{elementwise_cost(dnumel(in), 8), in, {}};
}

std::optional<Result> analyze_flatten(const Params&, const Shape& in, const Ctx&) {
    return Result{Cost{}, Shape{numel(in)}, {}};
}

std::optional<Result> analyze_layernorm(const Params& p, const Shape& in, const Ctx& ctx) {
    const double f = p.get("features");
    if (!expect_last_dim(ctx, in, "features", f)) {
        return std::nullopt;
    }
    return Result{norm_cost(dnumel(in), f), in, {}};
}

std::optional<Result> analyze_embedding(const Params& p, const Shape& in, const Ctx& ctx) {
    const double dim = p.get("embedding_dim");
    Shape out = in;
    out.push_back(as_int(dim));
    const double n_out = dnumel(out);
    // A gather: memory traffic, counted so that it is not free. Stashes the token ids.
    Cost c{p.get("num_embeddings") * dim, n_out, 0, n_out, dnumel(in), dnumel(in)};
    if (const double positions = p.get("positions"); positions != 0) {
        if (in.empty() || positions < static_cast<double>(in.back())) {
            ctx.param_error("positions", "\"positions\" must cover the sequence of " +
                                             std::to_string(in.empty() ? 1 : in.back()) +
                                             " tokens, got " + std::to_string(as_int(positions)));
            return std::nullopt;
        }
        c.params += positions * dim;
        c.fwd += n_out;         // the add
        c.bwd_weight += n_out;  // the positions' gradient
    }
    return Result{c, out, DType::float32};
}

std::optional<Result> analyze_rmsnorm(const Params& p, const Shape& in, const Ctx& ctx) {
    const double f = p.get("features");
    if (!expect_last_dim(ctx, in, "features", f)) {
        return std::nullopt;
    }
    const double n = dnumel(in);
    // A scale per feature; x · rsqrt(mean(x²) + ε) · g: 4 FLOPs an element
    // forward, 6 for the input gradient, 1 for the weight's.
    return Result{Cost{f, 4 * n, 6 * n, n, n, n}, in, {}};
}

// ---- the catalog ------------------------------------------------------------

enum class InputKind { floating, token_ids, any };

struct Entry {
    LayerTypeInfo info;
    std::vector<ParamDef> params;
    Analyzer analyze;
    InputKind input = InputKind::floating;
};

std::vector<Entry> build_entries() {
    const std::string k_desc = "Side of the square window";
    return {
        {{"linear", "Fully connected layer applied to the last dimension", {}},
         {req_int("in_features", "Size of the input's last dimension"),
          req_int("out_features", "Size of the output's last dimension"),
          opt_bool("bias", true, "Adds a learned bias")},
         analyze_linear},
        {{"relu", "Rectified linear unit, max(x, 0)", {}}, {}, analyze_relu},
        {{"gelu", "Gaussian error linear unit", {}}, {}, analyze_gelu},
        {{"dropout", "Zeroes elements at random while training", {}},
         {param("p", ParamKind::number, false, 0.5, "Probability of zeroing an element, in [0, 1)",
                0)},
         analyze_relu},
        {{"flatten", "Flattens a sample to one dimension", {}},
         {},
         analyze_flatten,
         InputKind::any},
        {{"conv2d", "2-D convolution over a [channels, height, width] input", {}},
         {req_int("in_channels", "Channels of the input"),
          req_int("out_channels", "Channels of the output"), req_int("kernel_size", k_desc),
          opt_int("stride", 1, "Step of the window"),
          opt_int("padding", 0, "Zeros added on each side", 0),
          opt_bool("bias", true, "Adds a learned bias per output channel")},
         analyze_conv2d},
        {{"batchnorm2d", "Batch normalisation per channel of a [C, H, W] input", {}},
         {req_int("num_features", "Channels of the input")},
         analyze_batchnorm2d},
        {{"maxpool2d", "2-D max pooling over a [channels, height, width] input", {}},
         {req_int("kernel_size", k_desc),
          opt_int("stride", 0, "Step of the window; 0 means kernel_size", 0, "kernel_size"),
          opt_int("padding", 0, "Padding on each side, at most kernel_size / 2", 0)},
         analyze_maxpool2d},
        {{"adaptive_avgpool2d", "Averages each channel down to output_size x output_size", {}},
         {opt_int("output_size", 1, "Side of the output")},
         analyze_adaptive_avgpool2d},
        {{"resnet_bottleneck",
          "ResNet-50 v1.5 bottleneck block: 1x1, 3x3 (strided), 1x1 convolutions and a shortcut",
          {}},
         {req_int("in_channels", "Channels of the input"),
          req_int("mid_channels", "Channels of the inner 3x3 convolution"),
          opt_int("out_channels", 0, "Channels of the output; 0 means 4 x mid_channels", 0,
                  "4 x mid_channels"),
          opt_int("stride", 1, "Stride of the 3x3 convolution and of the shortcut"),
          opt_bool("projection", false,
                   "1x1 convolution on the shortcut; when absent, used iff stride != 1 or "
                   "in_channels != out_channels")},
         analyze_bottleneck},
        {{"layernorm", "Layer normalisation over the last dimension", {}},
         {req_int("features", "Size of the input's last dimension")},
         analyze_layernorm},
        {{"rmsnorm", "Root-mean-square normalisation over the last dimension (a scale only)", {}},
         {req_int("features", "Size of the input's last dimension")},
         analyze_rmsnorm},
        {{"embedding", "Token embedding: int64 token ids to vectors", {}},
         {req_int("num_embeddings", "Vocabulary size"),
          req_int("embedding_dim", "Size of each embedding vector"),
          opt_int("positions", 0,
                  "Rows of a learned absolute position table added to the tokens (GPT-2, "
                  "GPT-3); at least the sequence length",
                  0, "none")},
         analyze_embedding,
         InputKind::token_ids},
        {{"transformer_block",
          "Pre-norm decoder block on [seq_len, hidden]: causal self-attention (multi-head, "
          "grouped-query, multi-query or multi-head latent) and an MLP or a mixture of "
          "experts, GPT-, Llama-, Qwen-, Mistral-, Mixtral- or DeepSeek-style",
          {}},
         transformer_block_params(),
         analyze_transformer},
    };
}

const std::vector<Entry>& entries() {
    static const std::vector<Entry> all = [] {
        auto e = build_entries();
        for (auto& entry : e) {
            for (const auto& def : entry.params) {
                entry.info.params.push_back(def.spec);
            }
        }
        return e;
    }();
    return all;
}

const Entry* find_entry(std::string_view type) {
    for (const auto& e : entries()) {
        if (e.info.type == type) {
            return &e;
        }
    }
    return nullptr;
}

// ---- hyper-parameter reading ------------------------------------------------

std::string show_number(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') {
        s.pop_back();
    }
    return s;
}

std::string expectation(const ParamDef& d) {
    const std::string& name = d.spec.name;
    switch (d.spec.kind) {
        case ParamKind::boolean:
            return "\"" + name + "\" must be true or false";
        case ParamKind::number:
            return "\"" + name + "\" must be a number in [" + show_number(d.min) + ", " +
                   show_number(d.max) + (d.max_open ? ")" : "]");
        case ParamKind::choice: {
            std::string words;
            for (std::size_t i = 0; i < d.spec.choices.size(); ++i) {
                words += (i == 0                           ? ""
                          : i + 1 == d.spec.choices.size() ? " or "
                                                           : ", ") +
                         ("\"" + d.spec.choices[i] + "\"");
            }
            return "\"" + name + "\" must be " + words;
        }
        case ParamKind::integer:
            break;
    }
    if (!d.spec.zero_means.empty()) {
        return "\"" + name + "\" must be a positive integer, or 0 for " + d.spec.zero_means;
    }
    return "\"" + name + "\" must be a " + (d.min > 0 ? "positive" : "non-negative") + " integer";
}

// Reads one value; nullopt (with a diagnostic) when it is unusable.
std::optional<double> read_value(const ParamDef& d, const nlohmann::json& j, const Ctx& ctx) {
    // A value of the wrong type is named with its type ("got the string
    // \"3\""), as every JSON reader does; a number out of range only by value.
    const auto fail = [&](const std::string& extra) {
        const bool wrong_type = d.spec.kind == ParamKind::boolean || !j.is_number();
        const std::string got = wrong_type ? describe_json(j) : j.dump();
        ctx.param_error(d.spec.name, expectation(d) + extra + ", got " + got);
        return std::nullopt;
    };
    if (d.spec.kind == ParamKind::boolean) {
        if (!j.is_boolean()) {
            return fail("");
        }
        return j.get<bool>() ? 1.0 : 0.0;
    }
    if (d.spec.kind == ParamKind::choice) {
        const auto& words = d.spec.choices;
        const auto it = j.is_string() ? std::find(words.begin(), words.end(), j.get<std::string>())
                                      : words.end();
        if (it == words.end()) {
            ctx.param_error(d.spec.name, expectation(d) + ", got " + describe_json(j));
            return std::nullopt;
        }
        return static_cast<double>(it - words.begin());
    }
    if (!j.is_number()) {
        return fail("");
    }
    const double v = j.get<double>();
    if (!std::isfinite(v) || v < d.min) {
        return fail("");
    }
    if (d.spec.kind == ParamKind::integer && v != std::floor(v)) {
        return fail("");
    }
    if (v > d.max || (d.max_open && v >= d.max)) {
        return d.spec.kind == ParamKind::integer ? fail(" of at most " + show_number(d.max))
                                                 : fail("");
    }
    return v;
}

// Defaults that depend on other parameters.
void resolve_derived(std::string_view type, Params& p) {
    if (type == "maxpool2d" && p.get("stride") == 0) {
        p.values["stride"] = p.get("kernel_size");
    }
    if (type == "resnet_bottleneck") {
        if (p.get("out_channels") == 0) {
            p.values["out_channels"] = 4 * p.get("mid_channels");
        }
        if (!p.given.contains("projection")) {
            const bool needed =
                p.get("stride") != 1 || p.get("in_channels") != p.get("out_channels");
            p.values["projection"] = needed ? 1.0 : 0.0;
        }
    }
}

// Validates layer.params against the entry; every problem goes to ctx. Values
// that are missing or unusable fall back to their default.
Params read_params(const Entry& e, const nlohmann::json& given_params, const Ctx& ctx) {
    Params p;
    for (const auto& d : e.params) {
        p.values[d.spec.name] = d.spec.default_value;
    }
    static const nlohmann::json none = nlohmann::json::object();
    const nlohmann::json& params = given_params.is_null() ? none : given_params;
    if (!params.is_object()) {
        ctx.input_error("the hyper-parameters of a " + e.info.type +
                        " layer must be a JSON object, got " + describe_json(params));
        return p;
    }
    for (const auto& d : e.params) {
        auto it = params.find(d.spec.name);
        if (it == params.end()) {
            if (d.spec.required) {
                ctx.param_error(d.spec.name, "missing required parameter \"" + d.spec.name + "\"");
            }
            continue;
        }
        if (auto v = read_value(d, *it, ctx)) {
            p.values[d.spec.name] = *v;
            p.given.insert(d.spec.name);
        }
    }
    static const std::set<std::string, std::less<>> reserved = {"name", "type", "cost",
                                                                "activation_bytes"};
    for (const auto& [key, value] : params.items()) {
        if (reserved.contains(key) || p.values.contains(key)) {
            continue;
        }
        std::string message = "unknown parameter \"" + key + "\" for layer type " + e.info.type;
        if (e.params.empty()) {
            message += ", which takes no parameters";
        } else {
            message += " (known: ";
            for (std::size_t i = 0; i < e.params.size(); ++i) {
                message += (i > 0 ? ", " : "") + e.params[i].spec.name;
            }
            message += ")";
        }
        ctx.param_error(key, message);
    }
    resolve_derived(e.info.type, p);
    return p;
}

std::string unknown_type_message(const std::string& type) {
    std::string known;
    for (const auto& entry : entries()) {
        known += (known.empty() ? "" : ", ") + entry.info.type;
    }
    return type.empty() ? "missing layer type (known: " + known + ")"
                        : "unknown layer type \"" + type + "\" (known: " + known + ")";
}

std::optional<LayerAnalysis> analyze(const LayerSpec& layer, const Shape& in, DType dtype,
                                     Diagnostics& diagnostics, const std::string& path) {
    const Entry* e = find_entry(layer.type);
    Ctx ctx{diagnostics, path, layer.type};
    if (e == nullptr) {
        ctx.param_error("type", unknown_type_message(layer.type));
        return std::nullopt;
    }
    const std::size_t before = diagnostics.size();
    const Params p = read_params(*e, layer.params, ctx);
    if (diagnostics.size() != before) {
        return std::nullopt;
    }
    bool bad_dim = false;
    for (auto d : in) {
        bad_dim = bad_dim || d < 1;
    }
    if (in.empty() || bad_dim || dnumel(in) > kMaxExact) {
        ctx.input_error(e->info.type + " cannot take an input of shape " + to_string(in) +
                        ": a sample needs one or more dimensions, each at least 1, and at most "
                        "2^53 elements");
        return std::nullopt;
    }
    if (e->input == InputKind::token_ids && dtype != DType::int64) {
        ctx.input_error(e->info.type +
                        " takes token ids: it must be the first layer and the model input dtype "
                        "must be \"int64\", but its input is " +
                        std::string(to_string(dtype)));
        return std::nullopt;
    }
    if (e->input == InputKind::floating && dtype == DType::int64) {
        ctx.input_error(e->info.type +
                        " needs floating-point input, but its input is int64 (token ids); start "
                        "the model with an embedding layer");
        return std::nullopt;
    }
    auto r = e->analyze(p, in, ctx);
    if (!r) {
        return std::nullopt;
    }
    const Cost& c = r->cost;
    const double out_n = dnumel(r->shape);
    bool too_large = c.params > kMaxExact || out_n > kMaxExact;
    for (double v : {c.fwd, c.bwd_input, c.bwd_weight, c.stash, c.weight_stash}) {
        too_large = too_large || !std::isfinite(v) || v > 1e30;
    }
    if (too_large) {
        ctx.input_error(e->info.type + " is too large to analyse on an input of shape " +
                        to_string(in));
        return std::nullopt;
    }
    LayerAnalysis a;
    a.output_shape = r->shape;
    a.output_dtype = r->dtype.value_or(dtype);
    a.parameters = static_cast<std::int64_t>(c.params);
    a.forward_flops = c.fwd;
    a.backward_input_flops = c.bwd_input;
    a.backward_weight_flops = c.bwd_weight;
    a.output_elements = out_n;
    a.stashed_elements = c.stash;
    a.weight_stashed_elements = c.weight_stash;
    a.recomputable_elements = c.recomputable;
    a.inactive_parameters = static_cast<std::int64_t>(c.inactive_params);
    return a;
}

}  // namespace

const std::vector<LayerTypeInfo>& layer_types() {
    static const std::vector<LayerTypeInfo> types = [] {
        std::vector<LayerTypeInfo> out;
        for (const auto& e : entries()) {
            out.push_back(e.info);
        }
        return out;
    }();
    return types;
}

const LayerTypeInfo* find_layer_type(std::string_view type) {
    if (type == kTorchScriptLayerType) {
        return &torchscript_layer_info();
    }
    const Entry* e = find_entry(type);
    return e == nullptr ? nullptr : &layer_types()[static_cast<std::size_t>(e - entries().data())];
}

std::optional<LayerAnalysis> analyze_layer(const LayerSpec& layer, const Shape& input_shape,
                                           DType input_dtype, Diagnostics& diagnostics,
                                           const std::string& path) {
    try {
        if (layer.type == kTorchScriptLayerType) {
            return analyze_torchscript_layer(layer, input_shape, input_dtype, diagnostics, path);
        }
        return analyze(layer, input_shape, input_dtype, diagnostics, path);
    } catch (const std::exception& ex) {
        diagnostics.add(path, std::string("cannot analyse this layer: ") + ex.what());
        return std::nullopt;
    }
}

std::string ParamSpec::default_text() const {
    if (kind == ParamKind::choice) {
        return choices.at(static_cast<std::size_t>(default_value));
    }
    if (kind == ParamKind::boolean) {
        return default_value != 0 ? "true" : "false";
    }
    return show_number(default_value);
}

std::string layer_choice(const LayerSpec& layer, std::string_view name) {
    const LayerTypeInfo* info = find_layer_type(layer.type);
    const double index = layer_param(layer, name);
    for (const ParamSpec& p : info->params) {
        if (p.name == name && p.kind == ParamKind::choice) {
            return p.choices.at(static_cast<std::size_t>(index));
        }
    }
    throw std::invalid_argument("layer type " + layer.type + " has no choice parameter \"" +
                                std::string(name) + "\"");
}

LayerParams::LayerParams(const LayerSpec& layer) : type_(layer.type) {
    const Entry* e = find_entry(layer.type);
    if (e == nullptr) {
        throw InputError("type", unknown_type_message(layer.type));
    }
    Diagnostics ignored;
    const std::string path;
    values_ = read_params(*e, layer.params, Ctx{ignored, path, layer.type}).values;
}

double LayerParams::operator()(std::string_view name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) {
        throw std::invalid_argument("layer type " + type_ + " has no parameter \"" +
                                    std::string(name) + "\"");
    }
    return it->second;
}

double layer_param(const LayerSpec& layer, std::string_view name) {
    const Entry* e = find_entry(layer.type);
    if (e == nullptr) {
        throw InputError("type", unknown_type_message(layer.type));
    }
    bool known = false;
    for (const auto& d : e->params) {
        known = known || d.spec.name == name;
    }
    if (!known) {
        // Asking for what the type does not have is a defect of the caller,
        // not of the project: a 0 would have gone unnoticed into a module.
        throw std::invalid_argument("layer type " + e->info.type + " has no parameter \"" +
                                    std::string(name) + "\"");
    }
    // Invalid values fall back to the defaults: analyze_layer reports them.
    Diagnostics ignored;
    const std::string path;
    const Params p = read_params(*e, layer.params, Ctx{ignored, path, layer.type});
    return p.get(name);
}

}  // namespace pipewright

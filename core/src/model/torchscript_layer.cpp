#include "model/torchscript_layer.h"

#include <cmath>

#include "pipewright/core/json_reader.h"

namespace pipewright {
namespace {

constexpr double kMaxCount = 9007199254740992.0;  // 2^53: exact in a double
constexpr std::int64_t kMaxDim = 2147483647;

std::optional<Shape> read_shape(const JsonObject& o, std::string_view key) {
    auto a = o.array(key, Need::required);
    if (!a) {
        return std::nullopt;
    }
    if (a->size() == 0) {
        a->error("must list one or more dimensions (a sample's shape, without the batch)");
        return std::nullopt;
    }
    Shape s;
    for (std::size_t i = 0; i < a->size(); ++i) {
        auto d = a->element(i).integer(1, kMaxDim);
        if (!d) {
            return std::nullopt;
        }
        s.push_back(*d);
    }
    return s;
}

std::optional<DType> read_dtype(const JsonObject& o, std::string_view key) {
    return o.one_of<DType>(key, Need::required,
                           {{"float32", DType::float32},
                            {"float16", DType::float16},
                            {"bfloat16", DType::bfloat16},
                            {"int64", DType::int64}});
}

bool floating(DType t) {
    return t != DType::int64;
}

}  // namespace

const LayerTypeInfo& torchscript_layer_info() {
    static const LayerTypeInfo info{
        kTorchScriptLayerType,
        "A submodule of a TorchScript file, imported with `pipewright import`: run as written, "
        "with the weights of the file",
        {}};
    return info;
}

std::optional<LayerAnalysis> analyze_torchscript_layer(const LayerSpec& layer,
                                                       const Shape& input_shape, DType input_dtype,
                                                       Diagnostics& diagnostics,
                                                       const std::string& path) {
    const std::size_t before = diagnostics.size();
    const JsonValue value(layer.params, path, diagnostics);
    const JsonObject o(value);
    if (!o.ok()) {
        return std::nullopt;
    }
    o.reject_unknown({"name",
                      "type",
                      "cost",
                      "activation_bytes",
                      "module",
                      "module_digest",
                      "submodule",
                      "module_type",
                      "then",
                      "input_shape",
                      "input_dtype",
                      "output_shape",
                      "output_dtype",
                      "parameters",
                      "forward_flops",
                      "backward_input_flops",
                      "backward_weight_flops",
                      "stashed_elements",
                      "weight_stashed_elements",
                      "vocabulary",
                      "weights"});
    const auto module = o.string("module", Need::required);
    if (module && module->empty()) {
        o.error("module", "must name the TorchScript file (relative to the project file)");
    }
    (void)o.string("module_digest", Need::optional);  // checked by the backend
    (void)o.string("submodule", Need::required);      // "" is the whole module
    (void)o.string("module_type", Need::optional);
    if (auto then = o.array("then", Need::optional)) {
        for (std::size_t i = 0; i < then->size(); ++i) {
            (void)then->element(i).string();
        }
    }
    (void)o.one_of<bool>("weights", Need::optional, {{"file", false}, {"seed", true}});
    const auto in = read_shape(o, "input_shape");
    const auto in_dtype = read_dtype(o, "input_dtype");
    const auto out = read_shape(o, "output_shape");
    const auto out_dtype = read_dtype(o, "output_dtype");
    const auto params =
        o.integer("parameters", Need::required, 0, static_cast<std::int64_t>(kMaxCount));
    const NumberRange counts{0, 1e30};
    const auto fwd = o.number("forward_flops", Need::required, counts);
    const auto bwd_in = o.number("backward_input_flops", Need::required, counts);
    const auto bwd_w = o.number("backward_weight_flops", Need::required, counts);
    const auto stash = o.number("stashed_elements", Need::required, counts);
    const auto w_stash = o.number("weight_stashed_elements", Need::optional, counts);
    (void)o.integer("vocabulary", Need::optional, 1, kMaxDim);
    if (diagnostics.size() != before) {
        return std::nullopt;
    }
    if (*in != input_shape) {
        diagnostics.add(path, "this submodule was imported for inputs of shape " + to_string(*in) +
                                  ", but " +
                                  (path.ends_with("[0]") ? std::string("the model input is ")
                                                         : "the previous layer produces ") +
                                  to_string(input_shape) +
                                  "; import the file again (pipewright import --input-shape) "
                                  "or fix the layers before it");
        return std::nullopt;
    }
    if (*in_dtype != input_dtype && !(floating(*in_dtype) && floating(input_dtype))) {
        diagnostics.add(path, "this submodule was imported for " +
                                  std::string(to_string(*in_dtype)) + " inputs, but receives " +
                                  std::string(to_string(input_dtype)));
        return std::nullopt;
    }
    double out_elements = 1;
    for (auto d : *out) {
        out_elements *= static_cast<double>(d);
    }
    if (out_elements > kMaxCount) {
        diagnostics.add(path + ".output_shape", "has more than 2^53 elements per sample");
        return std::nullopt;
    }
    LayerAnalysis a;
    a.output_shape = *out;
    // A floating output follows the compute precision, like catalog layers.
    a.output_dtype =
        floating(*out_dtype) ? (floating(input_dtype) ? input_dtype : *out_dtype) : *out_dtype;
    a.parameters = *params;
    a.forward_flops = *fwd;
    a.backward_input_flops = *bwd_in;
    a.backward_weight_flops = *bwd_w;
    a.output_elements = out_elements;
    a.stashed_elements = *stash;
    a.weight_stashed_elements = std::min(*stash, w_stash.value_or(*params > 0 ? *stash : 0.0));
    return a;
}

}  // namespace pipewright

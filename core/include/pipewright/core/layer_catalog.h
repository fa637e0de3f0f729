#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/layer.h"
#include "pipewright/core/tensor.h"

namespace pipewright {

enum class ParamKind { integer, number, boolean, choice };

// A hyper-parameter of a layer type, as shown in docs and in the inspector.
struct ParamSpec {
    std::string name;
    ParamKind kind = ParamKind::integer;
    bool required = true;
    double default_value = 0;  // used when !required; a choice's index
    std::string description;
    std::vector<std::string> choices;  // the words a choice accepts, in index order
    std::string zero_means;            // an integer whose 0 stands for this ("heads")

    // The default as a project file writes it: a number, or a choice's word.
    [[nodiscard]] std::string default_text() const;
};

struct LayerTypeInfo {
    std::string type;         // "linear"
    std::string description;  // one line for `pipewright layers` and the palette
    std::vector<ParamSpec> params;
};

// What one layer does to one sample; multiply by the micro-batch size for a
// micro-batch. FLOPs count a multiply-add as two.
struct LayerAnalysis {
    Shape output_shape;
    DType output_dtype = DType::float32;
    std::int64_t parameters = 0;
    // Of the parameters, those one token does not use: the routed experts of
    // a mixture of experts that it is not sent to. Active parameters are
    // parameters − inactive_parameters.
    std::int64_t inactive_parameters = 0;
    double forward_flops = 0;
    double backward_input_flops = 0;   // gradient w.r.t. the layer input
    double backward_weight_flops = 0;  // gradient w.r.t. the parameters
    // Elements of the output tensor (what crosses to the next stage).
    double output_elements = 0;
    // Elements kept from forward until the backward has run (inputs of matmuls,
    // masks, normalisation statistics ...), excluding the output itself when
    // the next layer already keeps it.
    double stashed_elements = 0;
    // The part of stashed_elements still needed after the input-gradient
    // backward (I) until the weight-gradient backward (W) of zero-bubble
    // schedules: typically the inputs of layers that have weights.
    double weight_stashed_elements = 0;
    // The part of stashed_elements that selective recomputation
    // (training.activation_checkpointing "selective") recomputes in the
    // backward instead of keeping: the attention core's scores, softmax and
    // dropout mask (Korthikanti et al. 2022's 5·a·s² bytes).
    double recomputable_elements = 0;
};

// What a transformer block's attention core keeps for its backward per
// sample, in elements of the compute dtype: the softmax output, and with
// attention dropout its mask and output too (Korthikanti et al. 2022:
// 5·a·s² bytes at 2 bytes an element; 2·a·s² without dropout, the softmax's
// output serving both backwards), or with a flash kernel only the fp32
// log-sum-exp of each row (it draws its dropout again from the seed).
[[nodiscard]] inline double attention_stash_elements(double heads, double sequence, bool flash,
                                                     bool dropout) {
    if (flash) {
        return 2 * heads * sequence;
    }
    return (dropout ? 2.5 : 1.0) * heads * sequence * sequence;
}

// Every layer type the catalog knows, in palette order.
[[nodiscard]] const std::vector<LayerTypeInfo>& layer_types();
[[nodiscard]] const LayerTypeInfo* find_layer_type(std::string_view type);

// Checks the layer's hyper-parameters and its input shape, and computes its
// analysis. Every problem goes to `diagnostics` with a path under `path`
// (e.g. "model.layers[2]"); returns nullopt when the layer cannot be analysed.
// `dtype` is the compute precision (bytes follow from it at the caller).
[[nodiscard]] std::optional<LayerAnalysis> analyze_layer(const LayerSpec& layer,
                                                         const Shape& input_shape,
                                                         DType input_dtype,
                                                         Diagnostics& diagnostics,
                                                         const std::string& path);

// Hyper-parameter access with the catalog's defaults applied (and where a
// given value is unusable; analyze_layer reports those). Throws InputError
// (path "type") when the catalog does not know the layer's type, and
// std::invalid_argument when the type has no parameter of that name: both
// used to read as 0, a silent wrong size or switch in a built module.
[[nodiscard]] double layer_param(const LayerSpec& layer, std::string_view name);
// Every hyper-parameter of `layer` at once, as layer_param reads each: for
// callers that read many (a transformer block's two dozen), which would
// otherwise parse the layer's JSON once for each.
class LayerParams {
  public:
    explicit LayerParams(const LayerSpec& layer);
    // Throws std::invalid_argument for a name the type does not have.
    [[nodiscard]] double operator()(std::string_view name) const;

  private:
    std::string type_;
    std::map<std::string, double, std::less<>> values_;
};
// A choice parameter's word ("swiglu"), its default applied.
[[nodiscard]] std::string layer_choice(const LayerSpec& layer, std::string_view name);

}  // namespace pipewright

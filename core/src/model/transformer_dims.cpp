#include "pipewright/core/transformer_dims.h"

#include "pipewright/core/layer_catalog.h"

namespace pipewright {

double TransformerDims::parameters() const {
    const double qkv = hidden * qkv_width() + (qkv_bias ? qkv_width() : 0);
    const double projection = query_width() * hidden + (bias ? hidden : 0);
    const double mlp =
        hidden * mlp_in_width() + ffn * hidden + (bias ? mlp_in_width() + hidden : 0);
    return qkv + projection + mlp + 2 * norm_parameters();
}

TransformerDims transformer_dims_from(const std::function<double(std::string_view)>& param) {
    TransformerDims d;
    d.hidden = param("hidden");
    d.heads = param("heads");
    d.kv_heads = param("kv_heads") > 0 ? param("kv_heads") : d.heads;
    d.head_dim = param("head_dim") > 0 ? param("head_dim") : d.hidden / d.heads;
    d.ffn = param("ffn_hidden") > 0 ? param("ffn_hidden") : param("mlp_ratio") * d.hidden;
    d.activation = static_cast<MlpActivation>(static_cast<int>(param("activation")));
    d.rms_norm = param("norm") == 1;
    d.bias = param("bias") != 0;
    d.qkv_bias = param("qkv_bias") != 0;
    d.rotary = param("rotary") != 0;
    d.flash = param("flash_attention") != 0;
    return d;
}

TransformerDims transformer_dims(const LayerSpec& layer) {
    return transformer_dims_from(
        [&layer](std::string_view name) { return layer_param(layer, name); });
}

}  // namespace pipewright

#pragma once

#include <functional>
#include <string_view>

#include "pipewright/core/layer.h"

namespace pipewright {

// The MLP's activation; the gated kinds (SwiGLU, GeGLU) multiply it by a
// second projection, so their first matrix is twice as wide.
enum class MlpActivation { gelu, swiglu, geglu, relu };

// A transformer block's dimensions with its defaults resolved: what the
// catalog, the kernels, the tensor-parallel split and the backend's module
// all read, so that they agree.
struct TransformerDims {
    double hidden = 0;
    double heads = 0;     // query heads
    double kv_heads = 0;  // key/value heads: grouped-query attention when fewer
    double head_dim = 0;
    double ffn = 0;  // the MLP's inner width
    MlpActivation activation = MlpActivation::gelu;
    bool rms_norm = false;  // RMSNorm (a scale) instead of LayerNorm (scale and shift)
    bool bias = true;       // biases of the projection and the MLP
    bool qkv_bias = true;
    bool rotary = false;  // rotary position embedding of queries and keys
    bool flash = false;

    [[nodiscard]] bool gated() const {
        return activation == MlpActivation::swiglu || activation == MlpActivation::geglu;
    }
    [[nodiscard]] double query_width() const { return heads * head_dim; }
    [[nodiscard]] double key_value_width() const { return kv_heads * head_dim; }
    [[nodiscard]] double qkv_width() const { return query_width() + 2 * key_value_width(); }
    // Outputs of the MLP's first projection: the gate and the up projection
    // side by side when gated.
    [[nodiscard]] double mlp_in_width() const { return gated() ? 2 * ffn : ffn; }
    // Parameters of one norm.
    [[nodiscard]] double norm_parameters() const { return rms_norm ? hidden : 2 * hidden; }
    [[nodiscard]] double parameters() const;
};

// The key/value width each of `t` tensor-parallel members holds: its share
// of the key/value heads, or one head when there are fewer heads than
// members (replicated, as Megatron-LM does). The caller has checked that
// one of t and kv_heads divides the other.
[[nodiscard]] inline double tensor_kv_width(const TransformerDims& d, int t) {
    return d.kv_heads >= t ? d.key_value_width() / t : d.head_dim;
}

// From the block's parameter values by name (choices as their index), as
// the catalog reads them; 0 for kv_heads, head_dim or ffn_hidden means the
// default (heads, hidden / heads, mlp_ratio × hidden).
[[nodiscard]] TransformerDims transformer_dims_from(
    const std::function<double(std::string_view)>& param);
// A catalog transformer_block's dimensions.
[[nodiscard]] TransformerDims transformer_dims(const LayerSpec& layer);

}  // namespace pipewright

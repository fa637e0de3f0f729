#pragma once

#include <functional>
#include <string_view>
#include <vector>

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
    double head_dim = 0;  // of queries and keys (without the rotary part under MLA)
    double ffn = 0;       // the dense MLP's inner width
    MlpActivation activation = MlpActivation::gelu;
    bool rms_norm = false;  // RMSNorm (a scale) instead of LayerNorm (scale and shift)
    bool bias = true;       // biases of the projection and the MLP
    bool qkv_bias = true;
    bool rotary = false;  // rotary position embedding of queries and keys
    bool flash = false;
    // Keys each query attends to, itself included (Mistral, Gemma 2's local
    // layers): 0 for every earlier token.
    double sliding_window = 0;
    // An RMSNorm over each head's query and key before attention (Qwen3):
    // one scale of the head's width each, shared by the heads.
    bool qk_norm = false;
    // A norm after the attention and after the MLP too, before each
    // residual add (Gemma 2's "sandwich"): four norms a block.
    bool post_norms = false;
    // Dropout probabilities (Megatron-LM's attention_dropout and
    // hidden_dropout): on the attention's probabilities, and on both
    // residual branches before their adds. A dropout keeps its mask (a byte
    // an element) for the backward and runs its kernels; at 0 neither exists
    // (PyTorch returns its input untouched), as in the Llama family.
    double attention_dropout = 0;
    double hidden_dropout = 0;

    // Multi-head latent attention (DeepSeek-V2 and V3) when kv_lora_rank > 0:
    // keys and values are projected up from a shared latent of that rank,
    // queries from one of q_lora_rank (0: straight from the hidden state).
    // A head's query and key carry head_dim features without the rotary
    // embedding and rope_head_dim with it (the latter shared by all heads'
    // keys); its value has v_head_dim.
    double q_lora_rank = 0;
    double kv_lora_rank = 0;
    double rope_head_dim = 0;
    double v_head_dim = 0;  // resolved: head_dim when not given

    // A mixture of experts in place of the MLP when experts > 0: a router
    // (a [hidden, experts] matrix) sends each token to top_k of the routed
    // experts, MLPs of width expert_ffn, and every token also passes
    // through the shared experts (DeepSeek). The busiest expert takes
    // capacity_factor times an even share of the tokens: the capacity of a
    // token-dropping router, or the imbalance of a dropless one.
    double experts = 0;
    double top_k = 0;
    double expert_ffn = 0;  // resolved: ffn when not given
    double shared_experts = 0;
    double capacity_factor = 1;

    [[nodiscard]] bool gated() const {
        return activation == MlpActivation::swiglu || activation == MlpActivation::geglu;
    }
    [[nodiscard]] bool latent() const { return kv_lora_rank > 0; }
    [[nodiscard]] bool moe() const { return experts > 0; }

    // ---- attention -------------------------------------------------------
    [[nodiscard]] double qk_head_dim() const { return head_dim + rope_head_dim; }
    // Keys a query of a `sequence`-token sample meets (its window's, or all).
    [[nodiscard]] double attended_keys(double sequence) const {
        return sliding_window > 0 && sliding_window < sequence ? sliding_window : sequence;
    }
    // Of the query-key pairs in `attended_keys`, the fraction the causal
    // mask lets run: half of the square, or of a window the band below the
    // diagonal.
    [[nodiscard]] double causal_fraction(double sequence) const;
    // Queries (and, under MLA, keys) of all heads.
    [[nodiscard]] double query_width() const { return heads * qk_head_dim(); }
    // The attention's output: the values of all heads, the projection's input.
    [[nodiscard]] double value_width() const { return heads * v_head_dim; }
    [[nodiscard]] double key_value_width() const { return kv_heads * head_dim; }
    [[nodiscard]] double qkv_width() const { return query_width() + 2 * key_value_width(); }
    // MLA's up projection of the key/value latent: each head's key without
    // the rotary part, and its value.
    [[nodiscard]] double kv_up_width() const { return heads * (head_dim + v_head_dim); }
    // MLA's down projection of the hidden state: the latent and the shared
    // rotary key.
    [[nodiscard]] double kv_down_width() const { return kv_lora_rank + rope_head_dim; }

    // ---- MLP -------------------------------------------------------------
    // Outputs of the MLP's first projection: the gate and the up projection
    // side by side when gated.
    [[nodiscard]] double mlp_in_width() const { return gated() ? 2 * ffn : ffn; }
    [[nodiscard]] double expert_in_width() const { return gated() ? 2 * expert_ffn : expert_ffn; }
    // Routed copies of a token the busiest expert's rank computes, on
    // average per token.
    [[nodiscard]] double routed_rows() const { return top_k * capacity_factor; }

    // ---- parameters ------------------------------------------------------
    // Parameters of one norm, and the block's norms (two, or four with
    // post_norms), the query and key norms included.
    [[nodiscard]] double norm_parameters() const { return rms_norm ? hidden : 2 * hidden; }
    [[nodiscard]] double norms_parameters() const {
        return (post_norms ? 4 : 2) * norm_parameters() + (qk_norm ? 2 * head_dim : 0);
    }
    [[nodiscard]] double attention_parameters() const;
    // One expert's MLP (a shared expert's too).
    [[nodiscard]] double expert_parameters() const;
    [[nodiscard]] double router_parameters() const { return hidden * experts; }
    [[nodiscard]] double mlp_parameters() const;
    [[nodiscard]] double parameters() const;
    // What one token uses: the routed experts it is sent to, not all.
    [[nodiscard]] double active_parameters() const;
    // Multiply-adds of the block's matrices per token (forward), which is
    // also the FLOPs of each backward pass over them, halved.
    [[nodiscard]] double matrix_macs_per_token() const;
    // Of those, the ones every tensor-parallel member computes whole: the
    // router, and MLA's down projections.
    [[nodiscard]] double replicated_macs_per_token() const;
};

// The parameters each member of a tensor-parallel group of t holds: the
// heads and the MLP (each expert's) split, the norms, the router, MLA's
// down projections and the row-parallel biases whole.
[[nodiscard]] double block_parameters_on(const TransformerDims& d, int t);
// Of those, the routed experts' (what expert parallelism divides further).
[[nodiscard]] double routed_expert_parameters_on(const TransformerDims& d, int t);

// What a block keeps per sample of `sequence` tokens for its backward, on
// each member of a tensor-parallel group of t (1: the whole block), in
// elements: all of it, and what the weight-gradient pass (W) still needs
// after the input-gradient pass.
struct BlockStash {
    double total = 0;
    double weight = 0;
};
[[nodiscard]] BlockStash block_stash(const TransformerDims& d, double sequence, int t,
                                     bool sequence_parallel);

// The key/value width each of `t` tensor-parallel members holds: its share
// of the key/value heads, or one head when there are fewer heads than
// members (replicated, as Megatron-LM does). The caller has checked that
// one of t and kv_heads divides the other. (Under MLA every head has its
// own key and value, split with the heads.)
[[nodiscard]] inline double tensor_kv_width(const TransformerDims& d, int t) {
    return d.kv_heads >= t ? d.key_value_width() / t : d.head_dim;
}

// From the block's parameter values by name (choices as their index), as
// the catalog reads them; 0 for kv_heads, head_dim, ffn_hidden, v_head_dim
// or expert_ffn_hidden means the default (heads, hidden / heads,
// mlp_ratio × hidden, head_dim, ffn).
[[nodiscard]] TransformerDims transformer_dims_from(
    const std::function<double(std::string_view)>& param);
// Whether `layer` is a transformer block with a mixture of experts, read
// from its file as given: a malformed value reads as none (the analysis
// says what is wrong with it). Cheap: no dimensions are resolved.
[[nodiscard]] bool has_experts(const LayerSpec& layer);
// A transformer block whose attention is one fused (flash) kernel.
[[nodiscard]] bool has_flash_attention(const LayerSpec& layer);
// Whether any of `layers` is: what training.attention_kernel prices.
[[nodiscard]] bool any_flash_attention(const std::vector<LayerSpec>& layers);
// A catalog transformer_block's dimensions.
[[nodiscard]] TransformerDims transformer_dims(const LayerSpec& layer);

}  // namespace pipewright

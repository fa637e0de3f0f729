#include "pipewright/core/transformer_dims.h"

#include <algorithm>

#include "pipewright/core/layer_catalog.h"

namespace pipewright {

namespace {

// The attention's parameters on each of t members: the heads' matrices
// split (Megatron-LM's column-parallel QKV or up projections, row-parallel
// output projection), MLA's down projections and latent norms whole.
double attention_parameters_on(const TransformerDims& d, double t) {
    const double h = d.hidden;
    const double projection = d.value_width() * h / t + (d.bias ? h : 0);
    if (d.latent()) {
        const double query = d.q_lora_rank > 0 ? h * d.q_lora_rank + d.q_lora_rank +
                                                     d.q_lora_rank * d.query_width() / t
                                               : h * d.query_width() / t;
        const double key_value =
            h * d.kv_down_width() + d.kv_lora_rank + d.kv_lora_rank * d.kv_up_width() / t;
        return query + key_value + projection;
    }
    const double qkv = d.query_width() / t + 2 * tensor_kv_width(d, static_cast<int>(t));
    return h * qkv + (d.qkv_bias ? qkv : 0) + projection;
}

// One MLP of `in` first-projection outputs and `width` inner features on
// each of t members: both matrices and the first bias split, the second
// bias (added after the row-parallel reduction) whole.
double mlp_on(const TransformerDims& d, double in, double width, double t) {
    return (d.hidden * in + (d.bias ? in : 0) + width * d.hidden) / t + (d.bias ? d.hidden : 0);
}

double mlp_parameters_on(const TransformerDims& d, double t) {
    if (!d.moe()) {
        return mlp_on(d, d.mlp_in_width(), d.ffn, t);
    }
    return d.router_parameters() +
           (d.experts + d.shared_experts) * mlp_on(d, d.expert_in_width(), d.expert_ffn, t);
}

}  // namespace

double TransformerDims::causal_fraction(double sequence) const {
    const double w = attended_keys(sequence);
    if (w >= sequence) {
        return 0.5;
    }
    // Query i meets min(i + 1, w) keys: w·L − w(w − 1)/2 pairs of L·w.
    return (w * sequence - w * (w - 1) / 2) / (w * sequence);
}

double TransformerDims::attention_parameters() const {
    return attention_parameters_on(*this, 1);
}

double TransformerDims::expert_parameters() const {
    return mlp_on(*this, expert_in_width(), expert_ffn, 1);
}

double TransformerDims::mlp_parameters() const {
    return mlp_parameters_on(*this, 1);
}

double TransformerDims::parameters() const {
    return block_parameters_on(*this, 1);
}

double TransformerDims::active_parameters() const {
    if (!moe()) {
        return parameters();
    }
    return attention_parameters() + norms_parameters() + router_parameters() +
           (top_k + shared_experts) * expert_parameters();
}

double TransformerDims::matrix_macs_per_token() const {
    const double h = hidden;
    double attention = value_width() * h;
    if (latent()) {
        attention +=
            (q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank * query_width() : h * query_width()) +
            h * kv_down_width() + kv_lora_rank * kv_up_width();
    } else {
        attention += h * qkv_width();
    }
    const double mlp =
        moe() ? h * experts + (top_k + shared_experts) * (h * expert_in_width() + expert_ffn * h)
              : h * mlp_in_width() + ffn * h;
    return attention + mlp;
}

double TransformerDims::replicated_macs_per_token() const {
    const double router = moe() ? hidden * experts : 0;
    const double down =
        latent() ? hidden * kv_down_width() + (q_lora_rank > 0 ? hidden * q_lora_rank : 0) : 0;
    return router + down;
}

double block_parameters_on(const TransformerDims& d, int t) {
    const double members = t;
    return attention_parameters_on(d, members) + mlp_parameters_on(d, members) +
           d.norms_parameters();
}

// Korthikanti et al. 2022 (34·s·h + 5·a·s² bytes for a GPT block at 2
// bytes an element), generalised part by part:
// - whole on every member (split along the sequence under sequence
//   parallelism): the norms' inputs (2h), QKV's input and the MLP's (2h),
//   and with hidden dropout its two masks, a byte an element (h);
// - split with the heads: Q and the projection's input, and K and V (each
//   member's key/value width, replicated heads included); under MLA Q and
//   K of every head, V and the projection's input, with the latents and
//   the shared rotary key whole;
// - the MLP's activation inputs and fc2's input (2f, or 3f when gated: the
//   gate, the up projection and their product), split; a mixture of
//   experts keeps the router's probabilities and, for each routed copy of
//   a token, the expert's input and output (for the combine) whole, and
//   the experts' activations split;
// - the attention core's scores (a flash kernel keeps a row statistic).
double routed_expert_parameters_on(const TransformerDims& d, int t) {
    return d.moe() ? d.experts * mlp_on(d, d.expert_in_width(), d.expert_ffn, t) : 0;
}

BlockStash block_stash(const TransformerDims& d, double sequence, int t, bool sequence_parallel) {
    const double h = d.hidden;
    const double members = t;
    const double hidden_share = sequence_parallel ? 1 / members : 1;
    const double gated = d.gated() ? 3 : 2;
    double split = 0;    // per token, before dividing by t
    double whole = 0;    // per token, on every member
    double split_w = 0;  // of W's, per token, before dividing by t
    double whole_w = 0;  // of W's, per token, on every member
    if (d.latent()) {
        split += 2 * d.query_width() + 2 * d.value_width();
        const double q_latent = d.q_lora_rank > 0 ? d.q_lora_rank : 0;
        whole += 2 * q_latent + 2 * d.kv_lora_rank + d.rope_head_dim;
        whole_w += q_latent + d.kv_lora_rank;
    } else {
        split += d.query_width() + d.value_width();
        whole += 2 * tensor_kv_width(d, t);  // already each member's share
    }
    split_w += d.value_width();
    if (d.moe()) {
        whole += d.experts + d.routed_rows() * 2 * h;
        split += (d.routed_rows() + d.shared_experts) * gated * d.expert_ffn;
        whole_w += d.routed_rows() * h;
        split_w += (d.routed_rows() + d.shared_experts) * d.expert_ffn;
    } else {
        split += gated * d.ffn;
        split_w += d.ffn;
    }
    // The post-norms keep their inputs, as the pre-norms do; the query and
    // key norms keep Q and K before them.
    const double norms = (d.post_norms ? 2 : 0) * h * hidden_share;
    if (d.qk_norm) {
        split += d.query_width();
        whole += tensor_kv_width(d, t);
    }
    const double core =
        attention_stash_elements(d.heads, sequence, d.flash, d.attention_dropout > 0) / members;
    const double masks = d.hidden_dropout > 0 ? h : 0;
    BlockStash s;
    s.total = sequence * ((4 * h + masks) * hidden_share + norms + whole + split / members) + core;
    s.weight = sequence * (2 * h * hidden_share + norms + whole_w + split_w / members);
    return s;
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
    d.sliding_window = param("sliding_window");
    d.qk_norm = param("qk_norm") != 0;
    d.post_norms = param("post_norms") != 0;
    d.attention_dropout = param("attention_dropout");
    d.hidden_dropout = param("hidden_dropout");
    d.q_lora_rank = param("q_lora_rank");
    d.kv_lora_rank = param("kv_lora_rank");
    d.rope_head_dim = d.latent() ? param("rope_head_dim") : 0;
    d.v_head_dim = param("v_head_dim") > 0 ? param("v_head_dim") : d.head_dim;
    d.experts = param("experts");
    d.top_k = d.moe() ? param("top_k") : 0;
    d.expert_ffn = param("expert_ffn_hidden") > 0 ? param("expert_ffn_hidden") : d.ffn;
    d.shared_experts = d.moe() ? param("shared_experts") : 0;
    d.capacity_factor = d.moe() ? param("capacity_factor") : 1;
    return d;
}

bool has_experts(const LayerSpec& layer) {
    if (layer.type != "transformer_block" || !layer.params.is_object()) {
        return false;
    }
    const auto experts = layer.params.find("experts");
    return experts != layer.params.end() && experts->is_number() && experts->get<double>() > 0;
}

bool has_flash_attention(const LayerSpec& layer) {
    if (layer.type != "transformer_block" || !layer.params.is_object()) {
        return false;
    }
    const auto flash = layer.params.find("flash_attention");
    return flash != layer.params.end() && ((flash->is_boolean() && flash->get<bool>()) ||
                                           (flash->is_number() && flash->get<double>() != 0));
}

bool any_flash_attention(const std::vector<LayerSpec>& layers) {
    return std::any_of(layers.begin(), layers.end(),
                       [](const LayerSpec& l) { return has_flash_attention(l); });
}

TransformerDims transformer_dims(const LayerSpec& layer) {
    const LayerParams params(layer);
    return transformer_dims_from(params);
}

}  // namespace pipewright

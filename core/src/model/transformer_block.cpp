// The catalog's transformer_block: a pre-norm decoder block whose attention
// is multi-head, grouped-query, multi-query or multi-head latent (MLA), and
// whose MLP is dense or a mixture of experts. Its parameters, FLOPs and
// activations come from TransformerDims (transformer_dims.h), which the
// tensor-parallel split, the kernels and the backend's module read too.
#include <cmath>
#include <string>

#include "model/catalog_parts.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright::catalog {

namespace {

// A positive number of at most `max`.
ParamDef opt_number(std::string name, double def, double min, double max, std::string desc) {
    ParamDef d = param(std::move(name), ParamKind::number, false, def, std::move(desc), min);
    d.max = max;
    d.max_open = false;
    return d;
}

// A probability in [0, 1), 0 by default.
ParamDef probability(std::string name, std::string desc) {
    ParamDef d = param(std::move(name), ParamKind::number, false, 0, std::move(desc), 0);
    d.max = 1;
    d.max_open = true;
    return d;
}

std::string whole(double v) {
    return std::to_string(as_int(v));
}

// Hyper-parameters that only make sense together; false (with a
// diagnostic) when they do not.
bool check_dims(const Params& p, const TransformerDims& b, const Ctx& ctx) {
    if (p.get("head_dim") == 0 && std::fmod(b.hidden, b.heads) != 0) {
        ctx.param_error("heads", "\"heads\" must divide hidden = " + whole(b.hidden) + ", got " +
                                     whole(b.heads) + " (or give head_dim)");
        return false;
    }
    if (std::fmod(b.heads, b.kv_heads) != 0) {
        ctx.param_error("kv_heads", "\"kv_heads\" must divide heads = " + whole(b.heads) +
                                        ", got " + whole(b.kv_heads));
        return false;
    }
    if (b.rotary && std::fmod(b.latent() ? b.rope_head_dim : b.head_dim, 2) != 0) {
        const std::string field = b.latent() ? "rope_head_dim" : "head_dim";
        ctx.param_error("rotary", "rotary position embedding turns pairs of features, so " + field +
                                      " must be even, but it is " +
                                      whole(b.latent() ? b.rope_head_dim : b.head_dim));
        return false;
    }
    if (b.sliding_window > 0 && !b.flash) {
        ctx.param_error("sliding_window",
                        "a sliding window needs flash_attention: true (the unfused kernels "
                        "compute every score and mask the rest)");
        return false;
    }
    if (b.qk_norm && b.latent()) {
        ctx.param_error("qk_norm",
                        "multi-head latent attention normalises its latents, not each head's "
                        "query and key; set qk_norm to false");
        return false;
    }
    if (!b.latent()) {
        for (const char* name : {"q_lora_rank", "rope_head_dim", "v_head_dim"}) {
            if (p.given.contains(name) && p.get(name) != 0) {
                ctx.param_error(name, std::string("\"") + name +
                                          "\" belongs to multi-head latent attention: give "
                                          "kv_lora_rank too, or leave it out");
                return false;
            }
        }
    } else {
        if (p.get("kv_heads") != 0 && b.kv_heads != b.heads) {
            ctx.param_error("kv_heads",
                            "multi-head latent attention gives every head its own key and value "
                            "(from the shared latent), so kv_heads must be 0 or heads = " +
                                whole(b.heads));
            return false;
        }
        if (b.qkv_bias) {
            ctx.param_error("qkv_bias",
                            "multi-head latent attention's projections have no biases in "
                            "Pipewright's model (DeepSeek's have none); set qkv_bias to false");
            return false;
        }
    }
    if (!b.moe()) {
        for (const char* name :
             {"top_k", "expert_ffn_hidden", "shared_experts", "capacity_factor"}) {
            if (p.given.contains(name)) {
                ctx.param_error(name, std::string("\"") + name +
                                          "\" belongs to a mixture of experts: give experts "
                                          "too, or leave it out");
                return false;
            }
        }
    } else if (b.top_k > b.experts) {
        ctx.param_error("top_k", "\"top_k\" must be at most experts = " + whole(b.experts) +
                                     ", got " + whole(b.top_k));
        return false;
    }
    return true;
}

}  // namespace

std::vector<ParamDef> transformer_block_params() {
    return {
        req_int("hidden", "Model width; the input's last dimension"),
        req_int("heads", "Query heads; must divide hidden unless head_dim is given"),
        opt_int("kv_heads", 0,
                "Key/value heads, dividing heads (0: heads): fewer is grouped-query attention, "
                "1 multi-query",
                0, "heads"),
        opt_int("head_dim", 0,
                "Width of each head's query and key (0: hidden / heads); under multi-head "
                "latent attention, their part without the rotary embedding",
                0, "hidden / heads"),
        opt_int("mlp_ratio", 4, "MLP width as a multiple of hidden (when ffn_hidden is 0)"),
        opt_int("ffn_hidden", 0, "MLP inner width (0: mlp_ratio x hidden)", 0,
                "mlp_ratio x hidden"),
        opt_choice("activation", {"gelu", "swiglu", "geglu", "relu"},
                   "MLP activation; swiglu and geglu are gated: three matrices"),
        opt_choice("norm", {"layernorm", "rmsnorm"}, "The two pre-norms"),
        opt_bool("bias", true, "Biases on the attention projection and the MLP"),
        opt_bool("qkv_bias", true, "Biases on the query, key and value projection"),
        opt_bool("rotary", false, "Rotary position embedding of queries and keys"),
        opt_bool("flash_attention", false,
                 "Attention as one fused (flash) kernel that keeps no scores for the backward; "
                 "false: the unfused scores, softmax, dropout and context kernels of "
                 "Megatron-LM"),
        opt_int("sliding_window", 0,
                "Keys each query attends to, itself included (Mistral, Gemma 2's local "
                "layers); needs flash_attention (0: every earlier token)",
                0, "every earlier token"),
        probability("attention_dropout",
                    "Dropout probability on the attention's probabilities, in [0, 1) "
                    "(Megatron-LM and GPT-2 train with 0.1, the Llama family with none): an "
                    "unfused attention keeps its mask and output for the backward"),
        probability("hidden_dropout",
                    "Dropout probability on both residual branches before their adds, in [0, 1) "
                    "(Megatron-LM's hidden_dropout, GPT-2's resid_pdrop): the block keeps their "
                    "masks and runs their kernels"),
        opt_bool("qk_norm", false,
                 "An RMSNorm over each head's query and key before attention (Qwen3)"),
        opt_bool("post_norms", false,
                 "A norm after the attention and after the MLP too, before each residual add "
                 "(Gemma 2): four norms a block"),
        opt_int("kv_lora_rank", 0,
                "Multi-head latent attention (DeepSeek): the rank of the latent that keys and "
                "values are projected up from (0: ordinary attention)",
                0, "no latent attention"),
        opt_int("q_lora_rank", 0,
                "Multi-head latent attention: the rank of the queries' latent (0: queries "
                "straight from the hidden state)",
                0, "no query latent"),
        opt_int("rope_head_dim", 0,
                "Multi-head latent attention: each query's and key's features that carry the "
                "rotary embedding, beside head_dim",
                0),
        opt_int("v_head_dim", 0, "Multi-head latent attention: each value's width (0: head_dim)", 0,
                "head_dim"),
        opt_int("experts", 0,
                "Routed experts of a mixture-of-experts MLP (0: one dense MLP); each is an MLP "
                "of expert_ffn_hidden",
                0, "a dense MLP"),
        opt_int("top_k", 2, "Experts each token is routed to"),
        opt_int("expert_ffn_hidden", 0, "Each expert's inner width (0: the MLP's width)", 0,
                "the MLP's width"),
        opt_int("shared_experts", 0,
                "Experts every token passes through besides its routed ones (DeepSeek)", 0),
        opt_number("capacity_factor", 1, 1, 64,
                   "Tokens the busiest expert takes relative to an even share (1 to 64): a "
                   "token-dropping router's capacity, or a dropless one's load imbalance; the "
                   "experts' time and memory are priced at it"),
    };
}

std::optional<Result> analyze_transformer(const Params& p, const Shape& in, const Ctx& ctx) {
    const TransformerDims b =
        transformer_dims_from([&p](std::string_view name) { return p.get(name); });
    if (!check_dims(p, b, ctx)) {
        return std::nullopt;
    }
    if (in.size() != 2) {
        ctx.input_error("transformer_block expects a [sequence_length, hidden] input, but " +
                        std::string(kPrevious) + to_string(in));
        return std::nullopt;
    }
    if (!expect_last_dim(ctx, in, "hidden", b.hidden)) {
        return std::nullopt;
    }
    const double L = static_cast<double>(in[0]);
    const double gemm = 2 * L * b.matrix_macs_per_token();
    // QK^T over the query/key width and attention x V over the value width,
    // every query head against every key it may attend to, the full square
    // under the causal mask (Narayanan et al.); their backward computes the
    // gradients of both operands: twice the forward, and no weight's.
    const double core = 2 * L * b.attended_keys(L) * b.heads * (b.qk_head_dim() + b.v_head_dim);
    const BlockStash stash = block_stash(b, L, 1, false);
    // Selective recomputation drops the attention core's scores (a flash
    // kernel keeps none: it recomputes them anyway).
    const double recomputable =
        b.flash ? 0 : attention_stash_elements(b.heads, L, false, b.attention_dropout > 0);
    Cost c{b.parameters(), gemm + core,  gemm + 2 * core, gemm,
           stash.total,    stash.weight, recomputable};
    c.inactive_params = b.parameters() - b.active_parameters();
    return Result{c, in, {}};
}

}  // namespace pipewright::catalog

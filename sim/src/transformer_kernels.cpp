// A transformer block's kernels, as Megatron-LM launches them: a pre-norm,
// the query/key/value projections (MLA's down and up projections with
// their latent norms), the attention core (unfused, or one flash kernel
// whose causal mask skips half of the score blocks and whose backward
// recomputes the scores: FlashAttention-2's 2.5 × the forward's matmul
// work), the output projection, bias + dropout + residual add (dropout only
// where the block has it: at 0 PyTorch skips it), a second
// norm, and the MLP: fc1 (gate and up when gated), the activation (times
// the up projection), fc2; or a mixture of experts: the router, the token
// permutation to the experts, each local expert's MLP as a grouped GEMM,
// and the weighted combine, with the shared experts as one MLP beside them.
//
// Under expert parallelism each rank holds experts / E of them and computes
// the tokens all E ranks route to them: the same rows in all as without it
// (top_k copies of each token, capacity_factor more on the busiest rank),
// in fewer, taller GEMMs. The all-to-alls that move the tokens are priced
// with the collectives, not here.
#include <string_view>

#include "kernel_lowering.h"

namespace pipewright::lowering {

namespace {

struct Block {
    const TransformerDims& dims;
    const BlockShape& shape;

    // What each member holds of the heads and the widths.
    [[nodiscard]] double t() const { return shape.t; }
    [[nodiscard]] double heads() const { return dims.heads / t(); }
    [[nodiscard]] double query() const { return dims.query_width() / t(); }
    [[nodiscard]] double value() const { return dims.value_width() / t(); }
    [[nodiscard]] double key_value() const { return tensor_kv_width(dims, static_cast<int>(t())); }
    [[nodiscard]] double qkv() const { return query() + 2 * key_value(); }
    // Q, K and V as the attention core reads them (MLA: every head's key).
    [[nodiscard]] double attention_inputs() const {
        return dims.latent() ? 2 * query() + value() : qkv();
    }
    [[nodiscard]] double mlp_in() const { return dims.mlp_in_width() / t(); }
    [[nodiscard]] double ffn() const { return dims.ffn / t(); }
    [[nodiscard]] double expert_in() const { return dims.expert_in_width() / t(); }
    [[nodiscard]] double expert_ffn() const { return dims.expert_ffn / t(); }
    // The token copies the busiest rank's experts compute (top_k of each
    // token, capacity_factor more), over the experts it holds.
    [[nodiscard]] double routed() const { return shape.tokens * dims.routed_rows(); }
    [[nodiscard]] double local_experts() const { return dims.experts / shape.expert_parallel; }
    [[nodiscard]] double rows_per_expert() const { return routed() / local_experts(); }
};

// Kernel names are static strings (layer_kernels.h).
struct Activation {
    std::string_view forward = "bias gelu";
    std::string_view backward = "gelu backward";
};

Activation activation_names(MlpActivation a) {
    switch (a) {
        case MlpActivation::swiglu:
            return {"silu mul", "silu mul backward"};
        case MlpActivation::geglu:
            return {"gelu mul", "gelu mul backward"};
        case MlpActivation::relu:
            return {"bias relu", "relu backward"};
        case MlpActivation::gelu:
            break;
    }
    return {};
}

void attention_unfused(Lowering& k, const Block& b) {
    const double dqk = b.dims.qk_head_dim();
    const double dv = b.dims.v_head_dim;
    const double L = b.shape.sequence;
    const double q = b.shape.queries;  // L, or this rank's share under context parallelism
    const double batch = b.shape.sequences * b.heads();
    const double scores = batch * q * L;
    // Scores = Q·Kᵀ and context = P·V; their backward: dP = dO·Vᵀ, dV = Pᵀ·dO,
    // dQ = dS·K, dK = dSᵀ·Q. Grouped heads read a shared K and V.
    const auto core = [&k](Kernel kernel) {
        kernel.attention_core = true;
        k.forward(std::move(kernel));
    };
    const auto core_grad = [&k](Kernel kernel) {
        kernel.attention_core = true;
        k.input_grad(std::move(kernel));
    };
    core(k.gemm("attention scores", q, L, dqk, 0, batch));
    core(k.memory("scale mask softmax", 2 * scores));
    const bool dropout = b.dims.attention_dropout > 0;
    if (dropout) {
        core(k.memory("attention dropout", 2 * scores, 0, scores * kMaskBytes));
    }
    core(k.gemm("attention context", q, dv, L, 0, batch));
    core_grad(k.gemm("attention context grad", q, L, dv, 0, batch));
    core_grad(k.gemm("attention value grad", L, dv, q, 0, batch));
    if (dropout) {
        core_grad(k.memory("attention dropout backward", 2 * scores, 0, scores * kMaskBytes));
    }
    core_grad(k.memory("softmax backward", 3 * scores));
    core_grad(k.gemm("attention query grad", q, dqk, L, 0, batch));
    core_grad(k.gemm("attention key grad", L, dqk, q, 0, batch));
}

// Under context parallelism the rank's queries meet every key, its two
// chunks (one from each end of the sequence) balancing the causal mask:
// still half of the score blocks run.
void attention_flash(Lowering& k, const Block& b) {
    const double widths = b.dims.qk_head_dim() + b.dims.v_head_dim;  // Q·Kᵀ's and P·V's
    const double L = b.shape.sequence;
    const double q = b.shape.queries;
    const double batch = b.shape.sequences * b.heads();
    const double inputs = b.shape.tokens * b.attention_inputs();
    const double out = b.shape.tokens * b.value();
    const double lse = batch * q * 2;  // fp32 row statistics, in 2-byte elements
    // Each query meets the keys of its window (all, without one); the causal
    // mask runs half of that square, or a window's band.
    const double keys = b.dims.attended_keys(L);
    const double causal = b.dims.causal_fraction(L);
    Kernel f = k.gemm("flash attention", q, keys, b.dims.qk_head_dim(), 0, batch);
    f.kind = KernelKind::attention;
    f.implementation = b.shape.attention_kernel;
    f.flops = 2 * batch * q * keys * widths;  // Q·Kᵀ and P·V, as the catalog counts them
    f.executed_flops = f.flops * causal;
    f.bytes = k.bytes(inputs + out + lse);
    k.forward(std::move(f));
    Kernel g = k.gemm("flash attention backward", q, keys, b.dims.qk_head_dim(), 0, batch);
    g.kind = KernelKind::attention_backward;
    g.implementation = b.shape.attention_kernel;
    g.flops = 4 * batch * q * keys * widths;
    // It recomputes Q·Kᵀ: 2.5 × the forward's matmul work, of the pairs the
    // mask lets run.
    g.executed_flops = 5 * causal * batch * q * keys * widths;
    g.bytes = k.bytes(2 * inputs + 3 * out + lse);
    k.input_grad(std::move(g));
}

// Q, K and V from the normed hidden state, forward: one fused QKV GEMM, or
// MLA's down projections, latent norms and up projections.
void projections_forward(Lowering& k, const Block& b, std::string_view norm) {
    const TransformerDims& d = b.dims;
    const double T = b.shape.tokens;
    const double h = d.hidden;
    if (!d.latent()) {
        k.forward(k.gemm("qkv", T, b.qkv(), h));
        return;
    }
    if (d.q_lora_rank > 0) {
        k.forward(k.gemm("q down", T, d.q_lora_rank, h));
        k.forward(k.memory(norm, 2 * T * d.q_lora_rank));
        k.forward(k.gemm("q up", T, b.query(), d.q_lora_rank));
    } else {
        k.forward(k.gemm("q", T, b.query(), h));
    }
    k.forward(k.gemm("kv down", T, d.kv_down_width(), h));
    k.forward(k.memory(norm, 2 * T * d.kv_lora_rank));
    k.forward(k.gemm("kv up", T, d.kv_up_width() / b.t(), d.kv_lora_rank));
}

void projections_input_grad(Lowering& k, const Block& b, std::string_view norm_input_grad) {
    const TransformerDims& d = b.dims;
    const double T = b.shape.tokens;
    const double h = d.hidden;
    if (!d.latent()) {
        k.input_grad(k.gemm("qkv input grad", T, h, b.qkv()));
        return;
    }
    k.input_grad(k.gemm("kv up input grad", T, d.kv_lora_rank, d.kv_up_width() / b.t()));
    k.input_grad(k.memory(norm_input_grad, 3 * T * d.kv_lora_rank));
    k.input_grad(k.gemm("kv down input grad", T, h, d.kv_down_width()));
    if (d.q_lora_rank > 0) {
        k.input_grad(k.gemm("q up input grad", T, d.q_lora_rank, b.query()));
        k.input_grad(k.memory(norm_input_grad, 3 * T * d.q_lora_rank));
        k.input_grad(k.gemm("q down input grad", T, h, d.q_lora_rank));
    } else {
        k.input_grad(k.gemm("q input grad", T, h, b.query()));
    }
}

void projections_weight_grad(Lowering& k, const Block& b, std::string_view norm_weight_grad) {
    const TransformerDims& d = b.dims;
    const double T = b.shape.tokens;
    const double h = d.hidden;
    if (!d.latent()) {
        k.weight_grad(k.gemm("qkv weight grad", h, b.qkv(), T));
        if (d.qkv_bias) {
            k.weight_grad(k.memory("qkv bias grad", T * b.qkv()));
        }
        return;
    }
    k.weight_grad(k.gemm("kv up weight grad", d.kv_lora_rank, d.kv_up_width() / b.t(), T));
    k.weight_grad(k.memory(norm_weight_grad, 2 * T * d.kv_lora_rank));
    k.weight_grad(k.gemm("kv down weight grad", h, d.kv_down_width(), T));
    if (d.q_lora_rank > 0) {
        k.weight_grad(k.gemm("q up weight grad", d.q_lora_rank, b.query(), T));
        k.weight_grad(k.memory(norm_weight_grad, 2 * T * d.q_lora_rank));
        k.weight_grad(k.gemm("q down weight grad", h, d.q_lora_rank, T));
    } else {
        k.weight_grad(k.gemm("q weight grad", h, b.query(), T));
    }
}

// The features the rotary embedding turns, read and written: Q and K of
// every head, or under MLA their rotary parts (one shared key).
double rotary_elements(const Block& b) {
    const double T = b.shape.tokens;
    if (b.dims.latent()) {
        return 2 * T * (b.heads() * b.dims.rope_head_dim + b.dims.rope_head_dim);
    }
    return 2 * T * (b.query() + b.key_value());
}

// A gated activation reads the gate and the up projection and writes
// their product; its backward reads both and the gradient, and writes two.
double activation_elements(const TransformerDims& d, double rows, double width) {
    return (d.gated() ? 3 : 2) * rows * width;
}
double activation_backward_elements(const TransformerDims& d, double rows, double width) {
    return (d.gated() ? 5 : 3) * rows * width;
}

// Megatron's grouped GEMM: one [m, depth]·[depth, n] per local expert, one
// of whose sides is its rows (Block::rows_per_expert). The analysis counts
// the top_k copies of each token, the kernel runs the capacity factor's more.
Kernel grouped(Lowering& k, std::string_view name, const Block& b, double m, double n,
               double depth) {
    Kernel g = k.gemm(name, m, n, depth, 0, b.local_experts());
    g.executed_flops = g.flops;
    g.flops /= b.dims.capacity_factor;
    return g;
}

void moe_forward(Lowering& k, const Block& b, const Activation& act) {
    const TransformerDims& d = b.dims;
    const double T = b.shape.tokens;
    const double h = d.hidden;
    const double rows = b.routed();
    const double per_expert = b.rows_per_expert();
    k.forward(k.gemm("router", T, d.experts, h));
    k.forward(k.memory("router softmax top-k", 2 * T * d.experts));
    k.forward(k.memory("token permute", T * h + rows * h));
    k.forward(grouped(k, "expert fc1", b, per_expert, b.expert_in(), h));
    k.forward(k.memory(act.forward, activation_elements(d, rows, b.expert_ffn())));
    k.forward(grouped(k, "expert fc2", b, per_expert, h, b.expert_ffn()));
    k.forward(k.memory("token unpermute", rows * h + T * h));
    if (d.shared_experts > 0) {
        const double s = d.shared_experts;
        k.forward(k.gemm("shared expert fc1", T, s * b.expert_in(), h));
        k.forward(k.memory(act.forward, activation_elements(d, T, s * b.expert_ffn())));
        k.forward(k.gemm("shared expert fc2", T, h, s * b.expert_ffn()));
    }
}

void moe_input_grad(Lowering& k, const Block& b, const Activation& act) {
    const TransformerDims& d = b.dims;
    const double T = b.shape.tokens;
    const double h = d.hidden;
    const double rows = b.routed();
    const double per_expert = b.rows_per_expert();
    if (d.shared_experts > 0) {
        const double s = d.shared_experts;
        k.input_grad(k.gemm("shared expert fc2 input grad", T, s * b.expert_ffn(), h));
        k.input_grad(
            k.memory(act.backward, activation_backward_elements(d, T, s * b.expert_ffn())));
        k.input_grad(k.gemm("shared expert fc1 input grad", T, h, s * b.expert_in()));
    }
    k.input_grad(k.memory("token unpermute backward", rows * h + T * h + rows));
    k.input_grad(grouped(k, "expert fc2 input grad", b, per_expert, b.expert_ffn(), h));
    k.input_grad(k.memory(act.backward, activation_backward_elements(d, rows, b.expert_ffn())));
    k.input_grad(grouped(k, "expert fc1 input grad", b, per_expert, h, b.expert_in()));
    k.input_grad(k.memory("token permute backward", rows * h + T * h));
    k.input_grad(k.memory("router softmax backward", 3 * T * d.experts));
    k.input_grad(k.gemm("router input grad", T, h, d.experts));
}

void moe_weight_grad(Lowering& k, const Block& b) {
    const TransformerDims& d = b.dims;
    const double T = b.shape.tokens;
    const double h = d.hidden;
    const double rows = b.routed();
    const double per_expert = b.rows_per_expert();
    k.weight_grad(grouped(k, "expert fc2 weight grad", b, b.expert_ffn(), h, per_expert));
    if (d.bias) {
        k.weight_grad(k.memory("expert fc2 bias grad", rows * h));
    }
    k.weight_grad(grouped(k, "expert fc1 weight grad", b, h, b.expert_in(), per_expert));
    if (d.bias) {
        k.weight_grad(k.memory("expert fc1 bias grad", rows * b.expert_in()));
    }
    if (d.shared_experts > 0) {
        const double s = d.shared_experts;
        k.weight_grad(k.gemm("shared expert fc2 weight grad", s * b.expert_ffn(), h, T));
        k.weight_grad(k.gemm("shared expert fc1 weight grad", h, s * b.expert_in(), T));
    }
    k.weight_grad(k.gemm("router weight grad", h, d.experts, T));
}

}  // namespace

void transformer_block(Lowering& k, const TransformerDims& dims, const BlockShape& shape) {
    const Block b{dims, shape};
    const double T = shape.tokens;
    const double h = dims.hidden;
    // Norms and residual kernels see 1/t of the tokens under sequence parallelism.
    const double local = shape.sequence_parallel ? T / shape.t : T;
    const double branch_add = 3 * local * h;  // read the branch and the residual, write
    // With hidden dropout the add masks the branch and keeps the mask for the
    // backward, which applies it; without, the add's gradient is the output's,
    // handed to both branches: no kernel.
    const bool dropout = dims.hidden_dropout > 0;
    const auto residual_add = [&] {
        if (dropout) {
            return k.memory("bias dropout add", branch_add, 0, local * h * kMaskBytes);
        }
        return k.memory(dims.bias ? "bias residual add" : "residual add", branch_add);
    };
    const auto residual_add_backward = [&] {
        if (dropout) {
            k.input_grad(
                k.memory("dropout add backward", 2 * local * h, 0, local * h * kMaskBytes));
        }
    };
    const bool rms = dims.rms_norm;
    const std::string_view norm = rms ? "rmsnorm" : "layernorm";
    const std::string_view norm_input_grad = rms ? "rmsnorm input grad" : "layernorm input grad";
    const std::string_view norm_weight_grad = rms ? "rmsnorm weight grad" : "layernorm weight grad";
    const Activation act = activation_names(dims.activation);
    const double rope = rotary_elements(b);

    // Qwen3's query and key norms: each head's Q and K, read and written.
    const double qk = T * (b.query() + b.key_value());
    k.forward(k.memory(norm, 2 * local * h));
    projections_forward(k, b, norm);
    if (dims.qk_norm) {
        k.forward(k.memory("qk norm", 2 * qk));
    }
    if (dims.rotary) {
        k.forward(k.memory("rotary embedding", rope));
    }
    // The attention core adds its backward kernels to the input gradient's
    // list first: they run last in the backward, after everything below.
    if (dims.flash) {
        attention_flash(k, b);
    } else {
        attention_unfused(k, b);
    }
    k.forward(k.gemm("attention projection", T, h, b.value()));
    if (dims.post_norms) {
        k.forward(k.memory(norm, 2 * local * h));
    }
    k.forward(residual_add());
    k.forward(k.memory(norm, 2 * local * h));
    if (dims.moe()) {
        moe_forward(k, b, act);
    } else {
        k.forward(k.gemm("fc1", T, b.mlp_in(), h));
        k.forward(k.memory(act.forward, activation_elements(dims, T, b.ffn())));
        k.forward(k.gemm("fc2", T, h, b.ffn()));
    }
    if (dims.post_norms) {
        k.forward(k.memory(norm, 2 * local * h));
    }
    k.forward(residual_add());

    // The backward runs in reverse.
    residual_add_backward();
    if (dims.post_norms) {
        k.input_grad(k.memory(norm_input_grad, 3 * local * h));
    }
    if (dims.moe()) {
        moe_input_grad(k, b, act);
    } else {
        k.input_grad(k.gemm("fc2 input grad", T, b.ffn(), h));
        k.input_grad(k.memory(act.backward, activation_backward_elements(dims, T, b.ffn())));
        k.input_grad(k.gemm("fc1 input grad", T, h, b.mlp_in()));
    }
    k.input_grad(k.memory(norm_input_grad, 3 * local * h));
    residual_add_backward();
    if (dims.post_norms) {
        k.input_grad(k.memory(norm_input_grad, 3 * local * h));
    }
    k.input_grad(k.gemm("attention projection input grad", T, b.value(), h));
    if (dims.rotary) {
        k.input_grad(k.memory("rotary embedding backward", rope));
    }
    if (dims.qk_norm) {
        k.input_grad(k.memory("qk norm input grad", 3 * qk));
    }
    projections_input_grad(k, b, norm_input_grad);
    k.input_grad(k.memory(norm_input_grad, 3 * local * h));

    if (dims.moe()) {
        moe_weight_grad(k, b);
    } else {
        k.weight_grad(k.gemm("fc2 weight grad", b.ffn(), h, T));
        if (dims.bias) {
            k.weight_grad(k.memory("fc2 bias grad", T * h));
        }
        k.weight_grad(k.gemm("fc1 weight grad", h, b.mlp_in(), T));
        if (dims.bias) {
            k.weight_grad(k.memory("fc1 bias grad", T * b.mlp_in()));
        }
    }
    k.weight_grad(k.gemm("attention projection weight grad", b.value(), h, T));
    if (dims.bias) {
        k.weight_grad(k.memory("attention projection bias grad", T * h));
    }
    projections_weight_grad(k, b, norm_weight_grad);
    if (dims.qk_norm) {
        k.weight_grad(k.memory("qk norm weight grad", 2 * qk));
    }
    for (int n = 0; n < (dims.post_norms ? 4 : 2); ++n) {
        k.weight_grad(k.memory(norm_weight_grad, 2 * local * h));
    }
}

}  // namespace pipewright::lowering

// Lowers each catalog layer to the kernels PyTorch (and Megatron-LM, for the
// transformer block) launches for it. The GEMM FLOPs follow the catalog's
// formulas exactly (core/src/model/layer_catalog.cpp), so that a layer's kernels add
// up to its analysis; the bytes are what each kernel reads and writes in
// device memory, which prices the memory-bound ones.
//
// Conventions, and why:
// - A linear's bias is added in the GEMM's epilogue (cuBLASLt), so it costs
//   no kernel of its own forward; its gradient is a reduction over the rows.
// - Element-wise kernels read their input and write their output; their
//   backward reads the gradient and what it needs (input, output or mask)
//   and writes one gradient. Dropout masks are one byte an element.
// - Norms: one pass forward (Welford statistics in registers), and a
//   backward whose input gradient and gamma/beta reduction are separate
//   kernels, as in PyTorch and Apex.
// - A transformer block is Megatron-LM's: QKV, projection and two MLP GEMMs
//   sliced by the tensor-parallel group, fused bias + GELU and bias +
//   dropout + residual-add kernels, and attention either unfused (scores
//   baddbmm, fused scale-mask-softmax, dropout, context bmm) or one flash
//   kernel whose causal mask skips half of the score blocks, and whose
//   backward recomputes the scores (FlashAttention-2: 2.5 × the forward's
//   matmul work).
#include "pipewright/sim/layer_kernels.h"

#include <cmath>
#include <utility>

#include "pipewright/core/transformer_dims.h"

namespace pipewright {

std::string_view to_string(KernelKind k) {
    switch (k) {
        case KernelKind::gemm:
            return "gemm";
        case KernelKind::attention:
            return "attention";
        case KernelKind::attention_backward:
            return "attention backward";
        case KernelKind::memory:
            return "memory";
    }
    return "?";
}

namespace {

constexpr double kMaskBytes = 1;   // a bool dropout mask element
constexpr double kIndexBytes = 8;  // an int64 index (max-pool argmax, token id)

// Builds the three kernel lists of one layer.
class Lowering {
  public:
    explicit Lowering(double element_bytes) : e_(element_bytes) {}

    Kernel gemm(std::string_view name, double m, double n, double k, double extra_flops = 0,
                double batch = 1) const {
        Kernel g = gemm_kernel(name, batch, m, n, k, e_);
        g.flops += extra_flops;
        return g;
    }
    [[nodiscard]] double bytes(double elements) const { return elements * e_; }
    // A memory-bound kernel over `elements` read and written in all (plus
    // `other_bytes` of masks or indices).
    Kernel memory(std::string_view name, double elements, double flops = 0,
                  double other_bytes = 0) const {
        Kernel k;
        k.name = name;
        k.kind = KernelKind::memory;
        k.flops = flops;
        k.bytes = bytes(elements) + other_bytes;
        return k;
    }

    void forward(Kernel k) { add(out_.forward, std::move(k)); }
    void input_grad(Kernel k) { add(out_.backward_input, std::move(k)); }
    void weight_grad(Kernel k) { add(out_.backward_weight, std::move(k)); }

    // ---- the parts layers are made of -------------------------------------

    // `rows` rows of `in` features times [in, out] (already sliced).
    void linear(double rows, double in, double out, bool bias) {
        const double bias_flops = bias ? rows * out : 0;
        forward(gemm("linear", rows, out, in, bias_flops));
        input_grad(gemm("linear input grad", rows, in, out));
        weight_grad(gemm("linear weight grad", in, out, rows));
        if (bias) {
            weight_grad(memory("bias grad", rows * out + out, bias_flops));
        }
    }
    // An implicit-GEMM convolution over `rows` output pixels (all samples).
    void conv(double rows, double in_c, double out_c, double k, double input_elements, bool bias) {
        const double patch = in_c * k * k;
        const double weights = patch * out_c;
        const double output = rows * out_c;
        const double bias_flops = bias ? output : 0;
        Kernel f = gemm("conv", rows, out_c, patch, bias_flops);
        f.bytes = (input_elements + weights + output) * e_;
        f.tf32 = true;
        forward(std::move(f));
        Kernel in = gemm("conv input grad", rows, patch, out_c);
        in.bytes = (output + weights + input_elements) * e_;
        in.tf32 = true;
        input_grad(std::move(in));
        Kernel w = gemm("conv weight grad", out_c, patch, rows);
        w.bytes = (output + input_elements + weights) * e_;
        w.tf32 = true;
        weight_grad(std::move(w));
        if (bias) {
            weight_grad(memory("bias grad", output + out_c, bias_flops));
        }
    }
    // batch norm (two passes forward: statistics, then normalise) or layer
    // norm (one), with the catalog's 8, 8 and 2 FLOPs an element.
    void norm(double n, bool batch_norm) {
        forward(memory(batch_norm ? "batchnorm" : "layernorm", (batch_norm ? 3 : 2) * n, 8 * n));
        input_grad(
            memory(batch_norm ? "batchnorm input grad" : "layernorm input grad", 3 * n, 8 * n));
        weight_grad(
            memory(batch_norm ? "batchnorm weight grad" : "layernorm weight grad", 2 * n, 2 * n));
    }
    // RMSNorm: the catalog's 4, 6 and 1 FLOPs an element; one pass each way.
    void rms_norm(double n) {
        forward(memory("rmsnorm", 2 * n, 4 * n));
        input_grad(memory("rmsnorm input grad", 3 * n, 6 * n));
        weight_grad(memory("rmsnorm weight grad", 2 * n, n));
    }
    // relu, gelu: `flops` an element each way; the backward reads the
    // gradient and the input.
    void activation(std::string_view name, std::string_view backward, double n, double flops) {
        forward(memory(name, 2 * n, flops * n));
        input_grad(memory(backward, 3 * n, flops * n));
    }
    void dropout(double n) {
        forward(memory("dropout", 2 * n, n, n * kMaskBytes));
        input_grad(memory("dropout backward", 2 * n, n, n * kMaskBytes));
    }

    LayerKernels take() { return std::move(out_); }

  private:
    static void add(std::vector<Kernel>& list, Kernel k) {
        if (k.flops > 0 || k.bytes > 0) {
            list.push_back(std::move(k));
        }
    }

    double e_;
    LayerKernels out_;
};

struct Block {
    TransformerDims dims;
    double tokens;  // micro-batch × sequence
    double sequence;
    double sequences;  // micro-batch
    double t;          // tensor-parallel size
    bool sequence_parallel;

    // What each member holds of the heads and the widths.
    [[nodiscard]] double heads() const { return dims.heads / t; }
    [[nodiscard]] double query() const { return dims.query_width() / t; }
    [[nodiscard]] double key_value() const { return tensor_kv_width(dims, static_cast<int>(t)); }
    [[nodiscard]] double qkv() const { return query() + 2 * key_value(); }
    [[nodiscard]] double mlp_in() const { return dims.mlp_in_width() / t; }
    [[nodiscard]] double ffn() const { return dims.ffn / t; }
};

void attention_unfused(Lowering& k, const Block& b) {
    const double d = b.dims.head_dim;
    const double L = b.sequence;
    const double batch = b.sequences * b.heads();
    const double scores = batch * L * L;
    // Scores = Q·Kᵀ and context = P·V; their backward: dP = dO·Vᵀ, dV = Pᵀ·dO,
    // dQ = dS·K, dK = dSᵀ·Q. Grouped heads read a shared K and V.
    const auto core = [&k](Kernel kernel) {
        kernel.attention_core = true;
        k.forward(std::move(kernel));
    };
    core(k.gemm("attention scores", L, L, d, 0, batch));
    core(k.memory("scale mask softmax", 2 * scores));
    core(k.memory("attention dropout", 2 * scores, 0, scores * kMaskBytes));
    core(k.gemm("attention context", L, d, L, 0, batch));
    k.input_grad(k.gemm("attention context grad", L, L, d, 0, batch));
    k.input_grad(k.gemm("attention value grad", L, d, L, 0, batch));
    k.input_grad(k.memory("attention dropout backward", 2 * scores, 0, scores * kMaskBytes));
    k.input_grad(k.memory("softmax backward", 3 * scores));
    k.input_grad(k.gemm("attention query grad", L, d, L, 0, batch));
    k.input_grad(k.gemm("attention key grad", L, d, L, 0, batch));
}

void attention_flash(Lowering& k, const Block& b) {
    const double d = b.dims.head_dim;
    const double L = b.sequence;
    const double batch = b.sequences * b.heads();
    const double qkv = b.tokens * b.qkv();
    const double out = b.tokens * b.query();
    const double lse = batch * L * 2;  // fp32 row statistics, in 2-byte elements
    Kernel f = k.gemm("flash attention", L, L, d, 0, batch);
    f.kind = KernelKind::attention;
    f.flops = 4 * batch * L * L * d;  // Q·Kᵀ and P·V, as the catalog counts them
    f.executed_flops = f.flops / 2;   // causal: half of the score blocks run
    f.bytes = k.bytes(qkv + out + lse);
    k.forward(std::move(f));
    Kernel g = k.gemm("flash attention backward", L, L, d, 0, batch);
    g.kind = KernelKind::attention_backward;
    g.flops = 8 * batch * L * L * d;
    g.executed_flops = 10 * batch * L * L * d / 2;  // recomputes Q·Kᵀ; causal
    g.bytes = k.bytes(2 * qkv + 3 * out + lse);
    k.input_grad(std::move(g));
}

// Megatron-LM's block with a pre-norm: norm, QKV (with rotary embedding),
// attention, projection, bias + dropout + residual add, norm, fc1 (gate
// and up when gated), bias + activation (times the up projection), fc2,
// bias + dropout + add.
void transformer(Lowering& k, const Block& b) {
    const TransformerDims& dims = b.dims;
    const double T = b.tokens;
    const double h = dims.hidden;
    // Norms and residual kernels see 1/t of the tokens under sequence parallelism.
    const double local = b.sequence_parallel ? T / b.t : T;
    const double dropout_add = 3 * local * h;  // read the branch and the residual, write
    // Kernel names are static strings (layer_kernels.h).
    const bool rms = dims.rms_norm;
    const std::string_view norm = rms ? "rmsnorm" : "layernorm";
    const std::string_view norm_input_grad = rms ? "rmsnorm input grad" : "layernorm input grad";
    const std::string_view norm_weight_grad = rms ? "rmsnorm weight grad" : "layernorm weight grad";
    std::string_view act = "bias gelu";
    std::string_view act_grad = "gelu backward";
    if (dims.activation == MlpActivation::swiglu) {
        act = "silu mul";
        act_grad = "silu mul backward";
    } else if (dims.activation == MlpActivation::geglu) {
        act = "gelu mul";
        act_grad = "gelu mul backward";
    } else if (dims.activation == MlpActivation::relu) {
        act = "bias relu";
        act_grad = "relu backward";
    }
    // A gated activation reads the gate and the up projection and writes
    // their product; its backward reads both and the gradient, and writes two.
    const double act_elements = (dims.gated() ? 3 : 2) * T * b.ffn();
    const double act_backward = (dims.gated() ? 5 : 3) * T * b.ffn();
    const double rope = 2 * T * (b.query() + b.key_value());  // Q and K, read and written

    k.forward(k.memory(norm, 2 * local * h));
    k.forward(k.gemm("qkv", T, b.qkv(), h));
    if (dims.rotary) {
        k.forward(k.memory("rotary embedding", rope));
    }
    if (dims.flash) {
        attention_flash(k, b);
    } else {
        attention_unfused(k, b);
    }
    k.forward(k.gemm("attention projection", T, h, b.query()));
    k.forward(k.memory("bias dropout add", dropout_add, 0, local * h * kMaskBytes));
    k.forward(k.memory(norm, 2 * local * h));
    k.forward(k.gemm("fc1", T, b.mlp_in(), h));
    k.forward(k.memory(act, act_elements));
    k.forward(k.gemm("fc2", T, h, b.ffn()));
    k.forward(k.memory("bias dropout add", dropout_add, 0, local * h * kMaskBytes));

    // The backward runs in reverse; attention's kernels were added above.
    k.input_grad(k.memory("dropout add backward", 2 * local * h, 0, local * h * kMaskBytes));
    k.input_grad(k.gemm("fc2 input grad", T, b.ffn(), h));
    k.input_grad(k.memory(act_grad, act_backward));
    k.input_grad(k.gemm("fc1 input grad", T, h, b.mlp_in()));
    k.input_grad(k.memory(norm_input_grad, 3 * local * h));
    k.input_grad(k.memory("dropout add backward", 2 * local * h, 0, local * h * kMaskBytes));
    k.input_grad(k.gemm("attention projection input grad", T, b.query(), h));
    if (dims.rotary) {
        k.input_grad(k.memory("rotary embedding backward", rope));
    }
    k.input_grad(k.gemm("qkv input grad", T, h, b.qkv()));
    k.input_grad(k.memory(norm_input_grad, 3 * local * h));

    k.weight_grad(k.gemm("fc2 weight grad", b.ffn(), h, T));
    if (dims.bias) {
        k.weight_grad(k.memory("fc2 bias grad", T * h));
    }
    k.weight_grad(k.gemm("fc1 weight grad", h, b.mlp_in(), T));
    if (dims.bias) {
        k.weight_grad(k.memory("fc1 bias grad", T * b.mlp_in()));
    }
    k.weight_grad(k.gemm("attention projection weight grad", b.query(), h, T));
    if (dims.bias) {
        k.weight_grad(k.memory("attention projection bias grad", T * h));
    }
    k.weight_grad(k.gemm("qkv weight grad", h, b.qkv(), T));
    if (dims.qkv_bias) {
        k.weight_grad(k.memory("qkv bias grad", T * b.qkv()));
    }
    k.weight_grad(k.memory(norm_weight_grad, 2 * local * h));
    k.weight_grad(k.memory(norm_weight_grad, 2 * local * h));
}

}  // namespace

Kernel gemm_kernel(std::string_view name, double batch, double m, double n, double k,
                   double element_bytes) {
    Kernel g;
    g.name = name;
    g.kind = KernelKind::gemm;
    g.batch = batch;
    g.m = m;
    g.n = n;
    g.k = k;
    g.flops = 2 * batch * m * n * k;
    g.bytes = batch * (m * k + k * n + m * n) * element_bytes;
    return g;
}

LayerKernels layer_kernels(const LayerSpec& layer, const LayerAnalysis& analysis,
                           const Shape& input_shape, const TensorShare* share,
                           const KernelContext& context) {
    const double mb = context.microbatch_size;
    const double t = share != nullptr ? std::max(1, context.tensor_parallel) : 1;
    const TensorSplit split = share != nullptr ? share->split : TensorSplit::replicated;
    // Element-wise layers split along the sequence or the features run 1/t.
    const double part =
        split == TensorSplit::sequence || split == TensorSplit::features ? 1 / t : 1;
    Lowering k(dtype_bytes(context.dtype));
    const std::string& type = layer.type;
    const auto p = [&layer](std::string_view name) { return layer_param(layer, name); };
    const double in_elements = static_cast<double>(numel(input_shape)) * mb;
    const double out_elements = analysis.output_elements * mb;

    if (type == "linear") {
        const double in = p("in_features");
        const double out = p("out_features");
        const double rows = in_elements / in;
        k.linear(rows, split == TensorSplit::row ? in / t : in,
                 split == TensorSplit::column ? out / t : out, p("bias") != 0);
    } else if (type == "relu") {
        k.activation("relu", "relu backward", in_elements * part, 1);
    } else if (type == "gelu") {
        k.activation("gelu", "gelu backward", in_elements * part, 8);
    } else if (type == "dropout") {
        k.dropout(in_elements * part);
    } else if (type == "conv2d") {
        const double pixels = out_elements / p("out_channels");
        k.conv(pixels, p("in_channels"), p("out_channels"), p("kernel_size"), in_elements,
               p("bias") != 0);
    } else if (type == "batchnorm2d") {
        k.norm(in_elements, true);
    } else if (type == "layernorm") {
        k.norm(in_elements * part, false);
    } else if (type == "rmsnorm") {
        k.rms_norm(in_elements * part);
    } else if (type == "maxpool2d") {
        const double window = p("kernel_size") * p("kernel_size");
        k.forward(k.memory("maxpool", in_elements + out_elements, out_elements * window,
                           out_elements * kIndexBytes));
        k.input_grad(k.memory("maxpool backward", in_elements + out_elements, out_elements,
                              out_elements * kIndexBytes));
    } else if (type == "adaptive_avgpool2d") {
        k.forward(k.memory("avgpool", in_elements + out_elements, in_elements));
        k.input_grad(k.memory("avgpool backward", in_elements + out_elements, in_elements));
    } else if (type == "resnet_bottleneck") {
        const double cin = p("in_channels");
        const double mid = p("mid_channels");
        const double cout = p("out_channels");
        const double in_pixels = in_elements / cin;
        const double out_pixels = out_elements / cout;
        const double mid_in = mid * in_pixels;
        const double mid_out = mid * out_pixels;
        k.conv(in_pixels, cin, mid, 1, in_elements, false);
        k.norm(mid_in, true);
        k.activation("relu", "relu backward", mid_in, 1);
        k.conv(out_pixels, mid, mid, 3, mid_in, false);
        k.norm(mid_out, true);
        k.activation("relu", "relu backward", mid_out, 1);
        k.conv(out_pixels, mid, cout, 1, mid_out, false);
        k.norm(out_elements, true);
        if (p("projection") != 0) {
            k.conv(out_pixels, cin, cout, 1, in_elements, false);
            k.norm(out_elements, true);
        }
        // The residual add; its gradient flows to both branches unchanged.
        k.forward(k.memory("residual add", 3 * out_elements, out_elements));
        k.activation("relu", "relu backward", out_elements, 1);
    } else if (type == "embedding") {
        // A gather of one row per token; the backward adds each token's
        // gradient into its row. Under vocabulary parallelism each device
        // looks every token up in its rows (out-of-range ones masked).
        const double tokens = in_elements;
        const double flops = out_elements / t;
        k.forward(k.memory("embedding", 2 * out_elements, flops, tokens * kIndexBytes));
        k.weight_grad(
            k.memory("embedding weight grad", 3 * out_elements, flops, tokens * kIndexBytes));
        if (p("positions") != 0) {
            // Learned positions (GPT-2/3): added to the looked-up rows, and
            // their gradient summed over the batch.
            k.forward(k.memory("position add", 3 * out_elements, out_elements));
            k.weight_grad(k.memory("position weight grad", 2 * out_elements, out_elements));
        }
    } else if (type == "transformer_block") {
        const double L = static_cast<double>(input_shape.front());
        const bool split_block = split == TensorSplit::block;
        const Block b{transformer_dims(layer),
                      mb * L,
                      L,
                      mb,
                      split_block ? t : 1,
                      split_block && context.sequence_parallel};
        transformer(k, b);
    } else if (type == "flatten") {
        // A view: no kernel.
    } else {
        // An imported layer: its traced FLOPs per pass, as one kernel that
        // reads its input and writes its output, priced at the device's
        // large-GEMM rate (a profile measures it better).
        const double scale = share != nullptr ? share->compute : 1;
        const auto opaque = [&](std::string_view name, double flops) {
            Kernel g = k.gemm(name, 0, 0, 0, flops * mb * scale);
            g.bytes = (in_elements + out_elements) * dtype_bytes(context.dtype);
            return g;
        };
        k.forward(opaque("imported layer", analysis.forward_flops));
        k.input_grad(opaque("imported layer input grad", analysis.backward_input_flops));
        k.weight_grad(opaque("imported layer weight grad", analysis.backward_weight_flops));
    }
    return k.take();
}

double optimizer_bytes_per_parameter(const OptimizerConfig& optimizer, DType dtype) {
    const double weight = dtype_bytes(dtype);
    const bool mixed = dtype != DType::float32;
    // Reads the gradient, the (master) weight and the state; writes the
    // (master) weight and the state, and the compute-dtype copy when mixed.
    const double master = mixed ? 4 : weight;
    const double state = optimizer.state_bytes_per_param();
    return weight + 2 * master + 2 * state + (mixed ? weight : 0);
}

Kernel optimizer_step_kernel(double parameters, const OptimizerConfig& optimizer, DType dtype) {
    Kernel k;
    k.name = "optimizer step";
    k.kind = KernelKind::memory;
    k.bytes = parameters * optimizer_bytes_per_parameter(optimizer, dtype);
    return k;
}

}  // namespace pipewright

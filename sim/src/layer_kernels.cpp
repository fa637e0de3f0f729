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

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "kernel_lowering.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright {

using lowering::kIndexBytes;
using lowering::Lowering;

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

namespace {

// FP8 training as TransformerEngine and DeepSeek-V3 run it: the GEMMs of
// the block's linear layers (projections, MLP, experts) take FP8 operands;
// attention, the router and everything outside the blocks stay in the
// compute dtype.
//
// Each FP8 GEMM's operands are quantized first, as TransformerEngine's
// per-tensor current scaling does (its docs, "FP8 Current Scaling"): a
// memory-bound pass reads the tensor for its absolute maximum, a second
// reads it again to scale and cast it and writes one byte an element. The
// forward quantizes each GEMM's activation input, the backward each output
// gradient once, before the input-gradient GEMM (the weight-gradient GEMM
// reuses it). A norm that feeds a GEMM computes the maximum as it writes
// its output, leaving the cast's pass. Under sequence parallelism the
// norm's output and a row-parallel layer's output gradient are quantized
// on this rank's share of the sequence, before they are gathered. Where
// FP8 GEMMs read one layout only (Hopper, Ada), the same pass writes the
// transposed copy the backward's GEMMs read: one more byte an element. Not
// priced: the weights' casts (once an iteration where a framework caches
// them across micro-batches).
bool fed_by_norm(std::string_view gemm) {
    return gemm == "qkv" || gemm == "q" || gemm == "q down" || gemm == "kv down" || gemm == "fc1" ||
           gemm == "shared expert fc1";
}

bool row_parallel_gradient(std::string_view input_grad_gemm) {
    return input_grad_gemm == "attention projection input grad" ||
           input_grad_gemm == "fc2 input grad" || input_grad_gemm == "shared expert fc2 input grad";
}

Kernel fp8_quantize(std::string_view name, double elements, double element_bytes, bool amax) {
    Kernel q;
    q.name = name;
    q.kind = KernelKind::memory;
    q.fp8 = true;
    q.bytes = elements * ((amax ? 2 : 1) * element_bytes + 1);
    q.fp8_transpose_bytes = elements;  // the column-wise copy the backward reads
    return q;
}

bool takes_fp8(const Kernel& g) {
    return g.kind == KernelKind::gemm && !g.attention_core && !g.name.starts_with("router");
}

enum class Pass { forward, input_grad, weight_grad };

// The quantization FP8 GEMM `g` of `pass` waits for, if any. Its [m, k]
// operand is the activation input forward and the output gradient in an
// input-gradient GEMM; `shard` is this rank's share of a gathered sequence.
std::optional<Kernel> quantization(const Kernel& g, Pass pass, double element_bytes, double shard) {
    const double operand = g.batch * g.m * g.k;
    switch (pass) {
        case Pass::forward:
            if (fed_by_norm(g.name)) {
                return fp8_quantize("fp8 cast of norm output", operand * shard, element_bytes,
                                    false);
            }
            return fp8_quantize("fp8 quantize", operand, element_bytes, true);
        case Pass::input_grad:
            return fp8_quantize("fp8 quantize gradient",
                                operand * (row_parallel_gradient(g.name) ? shard : 1),
                                element_bytes, true);
        case Pass::weight_grad:
            break;  // reuses the input-gradient GEMM's quantized gradient
    }
    return std::nullopt;
}

void in_fp8(LayerKernels& kernels, double element_bytes, const lowering::BlockShape& shape) {
    // Sequence parallelism leaves this rank 1/t of the tokens before a gather.
    const double shard = shape.sequence_parallel ? 1 / shape.t : 1;
    const auto convert = [&](std::vector<Kernel>& list, Pass pass) {
        std::vector<Kernel> out;
        out.reserve(list.size() * 2);
        for (Kernel& g : list) {
            if (takes_fp8(g)) {
                if (auto q = quantization(g, pass, element_bytes, shard)) {
                    out.push_back(std::move(*q));
                }
                g.fp8 = true;
                g.bytes = g.batch * ((g.m * g.k + g.k * g.n) + g.m * g.n * element_bytes);
            }
            out.push_back(std::move(g));
        }
        list = std::move(out);
    };
    convert(kernels.forward, Pass::forward);
    convert(kernels.backward_input, Pass::input_grad);
    convert(kernels.backward_weight, Pass::weight_grad);
}

}  // namespace

LayerKernels layer_kernels(const LayerSpec& layer, const LayerAnalysis& analysis,
                           const Shape& input_shape, const TensorShare* share,
                           const KernelContext& context) {
    // Context parallelism leaves this rank 1/c of every sample's tokens.
    const double c = std::max(1, context.context_parallel);
    const double mb = context.microbatch_size / c;
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
        k.linear(
            rows, split == TensorSplit::row ? in / t : in,
            split == TensorSplit::column || split == TensorSplit::vocabulary_output ? out / t : out,
            p("bias") != 0);
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
        lowering::BlockShape shape;
        shape.tokens = mb * L;
        shape.sequence = L;
        shape.queries = L / c;
        shape.sequences = context.microbatch_size;
        shape.t = split_block ? t : 1;
        shape.sequence_parallel = split_block && context.sequence_parallel;
        shape.expert_parallel = std::max(1, context.expert_parallel);
        shape.attention_kernel = context.attention_kernel;
        lowering::transformer_block(k, transformer_dims(layer), shape);
        if (context.float8) {
            LayerKernels kernels = k.take();
            in_fp8(kernels, dtype_bytes(context.dtype), shape);
            return kernels;
        }
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

double optimizer_bytes_per_parameter(const OptimizerConfig& optimizer, DType dtype,
                                     DType gradients) {
    const double weight = dtype_bytes(dtype);
    const bool mixed = dtype != DType::float32;
    // Reads the gradient, the (master) weight and the state; writes the
    // (master) weight and the state, and the compute-dtype copy when mixed.
    const double master = mixed ? 4 : weight;
    const double state = optimizer.state_bytes_per_param();
    return dtype_bytes(gradients) + 2 * master + 2 * state + (mixed ? weight : 0);
}

Kernel gradient_accumulation_kernel(double parameters, DType dtype, DType gradients) {
    Kernel k;
    k.name = "gradient accumulation";
    k.kind = KernelKind::memory;
    // Reads the micro-batch's gradient and the sum, writes the sum.
    k.bytes = parameters * (dtype_bytes(dtype) + 2.0 * dtype_bytes(gradients));
    return k;
}

Kernel optimizer_step_kernel(double parameters, const OptimizerConfig& optimizer, DType dtype,
                             DType gradients) {
    Kernel k;
    k.name = "optimizer step";
    k.kind = KernelKind::memory;
    k.bytes = parameters * optimizer_bytes_per_parameter(optimizer, dtype, gradients);
    return k;
}

}  // namespace pipewright

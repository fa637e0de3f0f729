#pragma once

// How layer_kernels.cpp and transformer_kernels.cpp build a layer's kernel
// lists: the parts layers are made of (linear, convolution, norms,
// activations, dropout), each adding its forward, input-gradient and
// weight-gradient kernels. Conventions: layer_kernels.cpp.

#include <string_view>
#include <utility>
#include <vector>

#include "pipewright/core/transformer_dims.h"
#include "pipewright/sim/layer_kernels.h"

namespace pipewright::lowering {

inline constexpr double kMaskBytes = 1;   // a bool dropout mask element
inline constexpr double kIndexBytes = 8;  // an int64 index (max-pool argmax, token id)

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

// A transformer block on one member of its tensor-parallel group (t = 1
// without), of its expert-parallel group and of its context-parallel group
// (queries < sequence: this rank's share of every sequence).
struct BlockShape {
    double tokens = 0;     // this rank's: micro-batch × queries
    double sequence = 0;   // tokens of one sample: the keys attention reads
    double queries = 0;    // of one sample here: sequence / context-parallel size
    double sequences = 0;  // the micro-batch
    double t = 1;          // tensor-parallel size
    bool sequence_parallel = false;
    double expert_parallel = 1;  // ranks the routed experts are split over
    AttentionKernel attention_kernel = AttentionKernel::flash2;  // under flash_attention
};

// Megatron-LM's pre-norm block (transformer_kernels.cpp).
void transformer_block(Lowering& k, const TransformerDims& dims, const BlockShape& shape);

}  // namespace pipewright::lowering

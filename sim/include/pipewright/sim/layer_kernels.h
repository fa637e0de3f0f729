#pragma once

// What a framework launches on a device for one layer and one micro-batch:
// the GEMMs with their real shapes (tensor-parallel slices included), the
// attention core, and the memory-bound kernels (norms, activations, dropout,
// residual adds, bias gradients). The cost model prices each kernel on the
// device (kernel_cost.h) and a layer costs the sum of its kernels, so that
// `simulate --json` and the studio can show where the time goes.

#include <string_view>
#include <vector>

#include "pipewright/core/layer.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/model.h"
#include "pipewright/core/tensor.h"
#include "pipewright/core/tensor_parallel.h"
#include "pipewright/core/training.h"

namespace pipewright {

enum class KernelKind {
    gemm,       // batch × [m, k] · [k, n], on the matrix units
    attention,  // a fused (flash) attention: batch × heads of m queries, n keys, head dim k
    attention_backward,  // its backward
    memory,              // element-wise or reduction: its bytes over the memory bandwidth
};

[[nodiscard]] std::string_view to_string(KernelKind k);

struct Kernel {
    std::string_view name;  // "qkv", "layernorm backward" (static strings)
    KernelKind kind = KernelKind::memory;
    double batch = 1;
    double m = 0;
    double n = 0;
    double k = 0;
    // The FLOPs the layer's analysis counts for this kernel (they add up to
    // the layer's totals), and those it executes when it does more (a flash
    // backward recomputes the scores): 0 means the same.
    double flops = 0;
    double executed_flops = 0;
    double bytes = 0;   // read and written in device memory
    bool tf32 = false;  // a float32 convolution: TF32 tensor cores where there are
    // A GEMM of a block's linear layer under FP8 training: FP8 operands on
    // FP8 tensor cores, the product in the compute dtype. A memory kernel
    // marked so quantizes such an operand: nothing to do on a device whose
    // GEMMs run in the compute dtype instead, and `fp8_transpose_bytes`
    // more to write where FP8 GEMMs need a transposed copy.
    bool fp8 = false;
    double fp8_transpose_bytes = 0;
    // Part of the unfused attention core (scores, softmax, dropout,
    // context, and their gradients): selective recomputation runs the
    // forward ones again before the backward.
    bool attention_core = false;
    // A fused attention kernel (attention, attention_backward): which
    // implementation runs, whose measured rate prices it.
    AttentionKernel implementation = AttentionKernel::flash2;

    [[nodiscard]] double work_flops() const { return executed_flops > 0 ? executed_flops : flops; }
    // Attention between queries and keys, fused or not: what context
    // parallelism's exchange of keys and values overlaps.
    [[nodiscard]] bool attention() const {
        return attention_core || kind == KernelKind::attention ||
               kind == KernelKind::attention_backward;
    }
};

// A GEMM of batch × [m, k]·[k, n] that reads both operands and writes the
// product, in elements of `element_bytes`.
[[nodiscard]] Kernel gemm_kernel(std::string_view name, double batch, double m, double n, double k,
                                 double element_bytes);

struct LayerKernels {
    std::vector<Kernel> forward;
    std::vector<Kernel> backward_input;   // gradient w.r.t. the input (I)
    std::vector<Kernel> backward_weight;  // gradient w.r.t. the weights (W)
};

struct KernelContext {
    double microbatch_size = 1;  // samples
    DType dtype = DType::float32;
    int tensor_parallel = 1;  // the group's size; `share` says how the layer splits
    bool sequence_parallel = false;
    int expert_parallel = 1;  // ranks a mixture of experts' routed experts are split over
    // Ranks each sequence is split over: every layer runs on 1/context of
    // the tokens, and attention's queries on 1/context against every key.
    int context_parallel = 1;
    // FP8 training (Training::float8): the blocks' linear GEMMs in FP8.
    bool float8 = false;
    // The fused kernel of blocks with flash_attention.
    AttentionKernel attention_kernel = AttentionKernel::flash2;
};

// The kernels of `layer` (analysed as `analysis`, fed `input_shape` per
// sample) for one micro-batch on one device of its tensor-parallel group
// (`share` null without tensor parallelism).
[[nodiscard]] LayerKernels layer_kernels(const LayerSpec& layer, const LayerAnalysis& analysis,
                                         const Shape& input_shape, const TensorShare* share,
                                         const KernelContext& context);

// The loss after the last layer, over its `elements` outputs on one device
// for one micro-batch: its forward, and the gradient it hands the last layer
// (in `backward_input`). Cross-entropy as Megatron-LM computes it: the
// logits cast to float32, the softmax in five passes (max, subtract, exp,
// sum, normalise) kept for the backward, which subtracts the one-hot target
// and scales in place, then casts the gradient back. MSE: one pass each way.
[[nodiscard]] LayerKernels loss_kernels(LossKind loss, double elements, DType dtype);
// Bytes the loss keeps from its forward to its backward for those
// `elements`: the float32 softmax of cross-entropy, the output for MSE.
[[nodiscard]] double loss_stash_bytes(LossKind loss, double elements, DType dtype);

// The optimizer's step over `parameters` of one device, in one fused
// (multi-tensor) kernel: what it reads and writes per parameter for the
// optimizer and precision (fp32 master weights under mixed precision),
// the gradients read in `gradients` (Training::gradients()).
[[nodiscard]] Kernel optimizer_step_kernel(double parameters, const OptimizerConfig& optimizer,
                                           DType dtype, DType gradients);
[[nodiscard]] double optimizer_bytes_per_parameter(const OptimizerConfig& optimizer, DType dtype,
                                                   DType gradients);

// training.gradient_accumulation "add": after a micro-batch's weight
// gradients, a kernel of its own reads them (in the training dtype) and the
// iteration's sum (in `gradients`) and writes the sum, over `parameters` of
// one device.
[[nodiscard]] Kernel gradient_accumulation_kernel(double parameters, DType dtype, DType gradients);

}  // namespace pipewright

#pragma once
// A Linear layer whose backward adds its weight gradient straight into
// `.grad` (one GEMM with beta = 1), as Megatron-LM's gradient-accumulation
// fusion does, instead of computing a fresh gradient and adding it.
//
// Why: under micro-batching every backward of a Linear(2048, 2048) otherwise
// writes a new 16 MiB gradient and then reads it and `.grad` again to add
// them; the fused GEMM reads and writes `.grad` once. On CPUs that traffic is
// a large part of a small micro-batch's weight gradient.
#include <torch/torch.h>

namespace pipewright::backend {

// Same parameters, names and initialisation as torch::nn::Linear. Gradients
// reach the parameters as with torch::nn::Linear under backward(); under
// torch::autograd::grad() asked for the parameters, the weight and bias
// gradients are added into their `.grad` and come back undefined (the
// executor's zero-bubble W accumulates them there anyway).
class FusedLinearImpl : public torch::nn::LinearImpl {
  public:
    using torch::nn::LinearImpl::LinearImpl;
    torch::Tensor forward(const torch::Tensor& input);
};
TORCH_MODULE(FusedLinear);

// y = x·Wᵀ + b with the accumulating backward above, for any module that
// holds its own weight (and optional bias).
[[nodiscard]] torch::Tensor fused_linear(const torch::Tensor& input, const torch::Tensor& weight,
                                         const torch::Tensor& bias);

}  // namespace pipewright::backend

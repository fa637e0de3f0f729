#pragma once
// Parts of a decoder block that the whole block (modules.cpp) and its
// tensor-parallel slice (tensor_parallel_layers.cpp) share, so that the two
// compute the same arithmetic.
#include <torch/torch.h>

#include "pipewright/core/transformer_dims.h"

namespace pipewright::backend {

// x · rsqrt(mean(x²) + ε) · g over the last dimension (ε = 10⁻⁶, as Llama).
// LibTorch 1.13 has no RMSNorm module.
struct RmsNormImpl : torch::nn::Module {
    explicit RmsNormImpl(std::int64_t features);
    torch::Tensor forward(const torch::Tensor& x);
    torch::Tensor weight;
};
TORCH_MODULE(RmsNorm);

// A pre-norm: LayerNorm or RMSNorm, under the parameter names of either.
[[nodiscard]] torch::nn::AnyModule make_norm(bool rms, std::int64_t features);

// The MLP's activation of its first projection's output: for the gated
// kinds that output is the gate and the up projection side by side, and
// the result act(gate) · up.
[[nodiscard]] torch::Tensor mlp_activation(const torch::Tensor& fc1_out, MlpActivation kind);

}  // namespace pipewright::backend

#pragma once
// The attention of a GPT block (modules.cpp) and of its tensor-parallel
// slice (tensor_parallel_layers.cpp): one function, so that the two compute
// the same arithmetic.
#include <torch/torch.h>

namespace pipewright::backend {

// Causal multi-head self-attention from the QKV projection's output
// [batch, len, 3 · heads · head_dim] (laid out as [3, heads, head_dim]):
// the attended values as [batch, len, heads · head_dim].
[[nodiscard]] torch::Tensor causal_attention(const torch::Tensor& qkv, std::int64_t heads,
                                             std::int64_t head_dim);

}  // namespace pipewright::backend

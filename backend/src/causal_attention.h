#pragma once
// The attention of a decoder block (modules.cpp) and of its tensor-parallel
// slice (tensor_parallel_layers.cpp): one function, so that the two compute
// the same arithmetic.
#include <torch/torch.h>

namespace pipewright::backend {

// Causal self-attention from the QKV projection's output [batch, len,
// (heads + 2 · kv_heads) · head_dim], laid out as the query heads, then the
// key heads, then the value heads. With fewer key/value heads than query
// heads, each key/value head serves heads / kv_heads query heads in turn
// (grouped-query attention). `rotary` turns queries and keys by their
// position first (RoPE, base 10000, halves rotated as in Llama). Returns the
// attended values as [batch, len, heads · head_dim].
[[nodiscard]] torch::Tensor causal_attention(const torch::Tensor& qkv, std::int64_t heads,
                                             std::int64_t kv_heads, std::int64_t head_dim,
                                             bool rotary);

}  // namespace pipewright::backend

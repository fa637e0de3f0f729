#pragma once
// The attention of a decoder block (modules.cpp), of its tensor-parallel
// slice (tensor_parallel_layers.cpp) and of its context-parallel member
// (context_exchange.h): one function, so that all compute the same
// arithmetic.
#include <torch/torch.h>

#include "pipewright/backend/context_group.h"

namespace pipewright::backend {

// Causal self-attention from the QKV projection's output [batch, len,
// (heads + 2 · kv_heads) · head_dim], laid out as the query heads, then the
// key heads, then the value heads. With fewer key/value heads than query
// heads, each key/value head serves heads / kv_heads query heads in turn
// (grouped-query attention). `rotary` turns queries and keys by their
// position first (RoPE, base 10000, halves rotated as in Llama). Returns the
// attended values as [batch, len, heads · head_dim].
// With `context` (size > 1) the len tokens are the member's two chunks of
// the sequence: rotary and the causal mask use their true positions, and
// the keys and values of the whole group's tokens are exchanged
// (context_exchange.h), so that each member gets its rows of the whole
// sequence's attention. `context` must outlive the graph.
// `dropout` above 0 zeroes that share of the attention's probabilities (and
// scales the rest), drawing from the device's default generator: pass 0
// outside training.
[[nodiscard]] torch::Tensor causal_attention(const torch::Tensor& qkv, std::int64_t heads,
                                             std::int64_t kv_heads, std::int64_t head_dim,
                                             bool rotary, const ContextGroup& context = {},
                                             double dropout = 0);

// The same attention, keeping for the backward only `qkv` and computing the
// core again from it when the gradient is asked for (selective
// recomputation, training.activation_checkpointing "selective"): the scores
// and softmax, which grow with the square of the sequence, are never kept.
// The arithmetic is causal_attention's, so the gradients are the same; with
// dropout, the recomputation replays the random state of the first forward,
// so it draws the same mask.
[[nodiscard]] torch::Tensor recomputed_causal_attention(const torch::Tensor& qkv,
                                                        std::int64_t heads, std::int64_t kv_heads,
                                                        std::int64_t head_dim, bool rotary,
                                                        const ContextGroup& context = {},
                                                        double dropout = 0);

}  // namespace pipewright::backend

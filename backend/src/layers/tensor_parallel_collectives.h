#pragma once
// The collectives of Megatron-LM's tensor parallelism, as autograd-aware
// functions over a stage's group (tensor_parallel_layers.h uses them): what
// each does in the forward, and what its backward does with the gradient.
// Every member calls them in the same order, so that they always meet.

#include <chrono>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "pipewright/backend/transport.h"

namespace pipewright::backend {

// The tensor-parallel group of the stages run by world rank `leader` of the
// run (a group's first member) as member `slice` of `size` joins it: Gloo,
// or NCCL between GPUs where the build has it; keys under
// "tensor-<leader>/" of `store`.
[[nodiscard]] TensorGroup make_tensor_group(c10::intrusive_ptr<c10d::Store> store,
                                            const std::string& master_host, int leader, int slice,
                                            int size, const torch::Device& device,
                                            std::chrono::milliseconds timeout);

// `x` replaced by its reduction over the group (SUM, or MAX, …), outside
// autograd: what the functions below and the vocabulary-parallel loss
// build on.
void all_reduce_in_place(torch::Tensor& x, CollectiveGroup& group,
                         c10d::ReduceOp op = c10d::ReduceOp::SUM);

// Identity forward; the gradient all-reduced over the group in the backward
// (what enters a column-parallel layer).
[[nodiscard]] torch::Tensor copy_to_group(const torch::Tensor& x, const TensorGroup& group);
// The partial results summed over the group in the forward; the gradient
// passed through unchanged (what leaves a row-parallel layer).
[[nodiscard]] torch::Tensor reduce_from_group(const torch::Tensor& x, const TensorGroup& group);

// Along dimension `dim` (-1: the features, 1: the sequence of a
// [batch, sequence, features] activation):
// the members' slices concatenated in the forward; this member's slice of
// the gradient kept in the backward.
[[nodiscard]] torch::Tensor gather_from_group(const torch::Tensor& x, const TensorGroup& group,
                                              std::int64_t dim = -1);
// This member's slice in the forward; the gradient's slices gathered from
// the group in the backward (every member then holds the whole gradient).
[[nodiscard]] torch::Tensor split_to_group(const torch::Tensor& x, const TensorGroup& group,
                                           std::int64_t dim);

// Sums the gradients of `params` over the group (one all-reduce of them
// all): parameters every member holds whole but whose gradient each member
// computed from its slice of the sequence only (sequence parallelism).
void sum_gradients_over_group(const std::vector<torch::Tensor>& params, const TensorGroup& group);

}  // namespace pipewright::backend

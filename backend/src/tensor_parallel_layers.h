#pragma once
// Megatron-LM's tensor-parallel layers over a c10d group: each member holds a
// slice of a layer's matrices and the group exchanges partial results with
// all-reduces (docs/concepts.md#tensor-parallelism). The split of each
// layer is the analysis's (core/src/tensor_parallel.cpp, in
// AnalyzedProject::tensor_shares): a linear is column-parallel (its output
// features split, the input's gradient all-reduced), row-parallel (its
// input features split, its output all-reduced) or column-parallel with its
// output gathered; a transformer block splits its heads and its MLP; an
// embedding its vocabulary; other layers run whole on every member (or on
// the member's slice, between a column- and a row-parallel linear).
//
// Each layer is built whole from its seed, as a single process builds it,
// and then cut: a member's parameters are exactly the slices of the whole
// layer's, so that a tensor-parallel run trains the same model.

#include <cstdint>

#include <torch/torch.h>

#include "pipewright/backend/transport.h"
#include "pipewright/core/analysis.h"

namespace pipewright::backend {

// The tensor-parallel group of the stages run by world rank `leader` of the
// run (a group's first member) as member `slice` of `size` joins it: Gloo,
// or NCCL between GPUs where the build has it; keys under
// "tensor-<leader>/" of `store`.
[[nodiscard]] TensorGroup make_tensor_group(c10::intrusive_ptr<c10d::Store> store,
                                            const std::string& master_host, int leader, int slice,
                                            int size, const torch::Device& device,
                                            std::chrono::milliseconds timeout);

// Identity forward; the gradient all-reduced over the group in the backward
// (what enters a column-parallel layer).
[[nodiscard]] torch::Tensor copy_to_group(const torch::Tensor& x, const TensorGroup& group);
// The partial results summed over the group in the forward; the gradient
// passed through unchanged (what leaves a row-parallel layer).
[[nodiscard]] torch::Tensor reduce_from_group(const torch::Tensor& x, const TensorGroup& group);
// The members' slices concatenated along the last dimension; the backward
// keeps this member's slice of the gradient.
[[nodiscard]] torch::Tensor gather_from_group(const torch::Tensor& x, const TensorGroup& group);

// Layers [first, last] of `project` as member `group.rank` runs them, each
// built whole with layer_seed(seed, i) and cut to the member's slice, in
// `dtype`. Throws BackendError for a layer the analysis split in a way no
// module here implements.
[[nodiscard]] torch::nn::Sequential build_tensor_parallel_layers(const AnalyzedProject& project,
                                                                 int first, int last,
                                                                 std::uint64_t seed,
                                                                 torch::Dtype dtype,
                                                                 const TensorGroup& group);

// The slice of a whole layer's parameter `name` that member `rank` of
// `size` holds (the same tensor when the parameter is whole on every
// member). For tests: a member's parameters against the whole model's.
[[nodiscard]] torch::Tensor tensor_parallel_slice(const AnalyzedProject& project, int layer,
                                                  const std::string& name,
                                                  const torch::Tensor& whole, int rank, int size);

}  // namespace pipewright::backend

#pragma once
// Megatron-LM's tensor-parallel layers over a c10d group: each member holds a
// slice of a layer's matrices and the group exchanges partial results with
// all-reduces (docs/concepts.md#tensor-parallelism). The split of each
// layer is the analysis's (core/src/parallel/tensor_parallel.cpp, in
// AnalyzedProject::tensor_shares): a linear is column-parallel (its output
// features split, the input's gradient all-reduced), row-parallel (its
// input features split, its output all-reduced) or column-parallel with its
// output gathered, or, the head before a cross-entropy loss, left split
// over the vocabulary (vocabulary_split_output); a transformer block splits its heads and its MLP;
// an embedding its vocabulary; other layers run whole on every member (or on the member's slice,
// between a column- and a row-parallel linear).
//
// Each layer is built whole from its seed, as a single process builds it,
// and then cut: a member's parameters are exactly the slices of the whole
// layer's, so that a tensor-parallel run trains the same model.

#include <cstdint>

#include <torch/torch.h>

#include "layers/tensor_parallel_collectives.h"
#include "pipewright/backend/transport.h"
#include "pipewright/core/analysis.h"

namespace pipewright::backend {

// Layers [first, last] of `project` as member `group.rank` runs them, each
// built whole with layer_seed(seed, i) and cut to the member's slice, in
// `dtype`. Each member sends its counterpart of the next stage what
// core/stage_boundary.h says crosses a boundary: its slice of the sequence
// under sequence parallelism, else the whole output (a column-parallel
// linear whose row-parallel partner is in the next stage has its output
// gathered first, and the next stage takes its slice again). The model's
// output is whole, except the logits of a vocabulary-split head
// (vocabulary_split_output), which each member keeps for its slice of the
// vocabulary. With sequence
// parallelism (project.tensor_parallel.sequence_parallel) the layers
// between the split ones run on the member's slice of the sequence:
// column-parallel layers gather the sequence first, row-parallel ones and
// the embedding reduce-scatter their output. Throws BackendError for a layer
// the analysis split in a way no module here implements.
[[nodiscard]] torch::nn::Sequential build_tensor_parallel_layers(const AnalyzedProject& project,
                                                                 int first, int last,
                                                                 std::uint64_t seed,
                                                                 torch::Dtype dtype,
                                                                 const TensorGroup& group);

// Whether the model's last layer leaves its output split over the vocabulary
// (TensorSplit::vocabulary_output): the last stage's members then hold the
// logits of their slices of the vocabulary, and the loss is
// vocabulary_parallel_cross_entropy (vocabulary_parallel_loss.h).
[[nodiscard]] bool vocabulary_split_output(const AnalyzedProject& project);

// The parameters of `stage` (built by build_tensor_parallel_layers for
// layers [first, last]) whose gradients each member computes from its slice
// of the sequence only: under sequence parallelism, the layer norms' and the
// row-parallel layers' biases, which every member holds whole. Their
// gradients are summed over the group before the optimizer step
// (sum_gradients_over_group). Empty without sequence parallelism.
[[nodiscard]] std::vector<torch::Tensor> sequence_partial_parameters(
    const AnalyzedProject& project, int first, int last, const torch::nn::Sequential& stage);

// The slice of a whole layer's parameter `name` that member `rank` of
// `size` holds (the same tensor when the parameter is whole on every
// member). For tests: a member's parameters against the whole model's.
[[nodiscard]] torch::Tensor tensor_parallel_slice(const AnalyzedProject& project, int layer,
                                                  const std::string& name,
                                                  const torch::Tensor& whole, int rank, int size);

}  // namespace pipewright::backend

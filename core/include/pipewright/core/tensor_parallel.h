#pragma once

// Tensor parallelism inside a stage (Megatron-LM): each stage runs on a group
// of `size` devices, each holding a slice of the stage's matrices, with
// collectives among them in the forward and the backward. docs/concepts.md.

#include <vector>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/model.h"

namespace pipewright {

struct TensorParallel {
    int size = 1;
    // Megatron's sequence parallelism: the layer norms and dropouts, which
    // tensor parallelism leaves whole on every device, split along the
    // sequence too; each all-reduce becomes a reduce-scatter and an all-gather.
    bool sequence_parallel = false;

    bool operator==(const TensorParallel&) const = default;
};

inline constexpr int kMaxTensorParallel = 1024;

// How one layer splits over a tensor-parallel group.
enum class TensorSplit {
    replicated,  // whole on every device
    sequence,    // whole, but along 1/t of the sequence (sequence parallelism)
    features,    // an activation between a column- and a row-parallel linear
    column,      // a linear's output features split
    row,         // a linear's input features split
    vocabulary,  // an embedding's rows split
    block,       // a transformer block: heads and MLP split (Megatron-LM)
    // The model's last layer, a linear with no partner before a
    // cross-entropy loss (the LM head): column-parallel with its output left
    // split, each device holding the logits of 1/t of the vocabulary, and
    // the loss computed vocabulary-parallel (Megatron-LM's
    // parallel_output with its vocab-parallel cross-entropy).
    vocabulary_output,
};

// What each device of a group of t runs of one layer, relative to the whole
// layer, and what the group reduces for it per sample.
struct TensorShare {
    TensorSplit split = TensorSplit::replicated;
    double compute = 1;       // of the layer's FLOPs
    double parameters = 1;    // of its parameters
    double stash = 1;         // of its stashed activations
    double weight_stash = 1;  // of what it keeps from I until W
    // All-reduces (a reduce-scatter and an all-gather under sequence
    // parallelism: the same bytes on a ring) of `*_elements` elements each,
    // per sample.
    int forward_reductions = 0;
    double forward_elements = 0;
    int backward_reductions = 0;
    double backward_elements = 0;

    bool operator==(const TensorShare&) const = default;
};

// The split of every layer (Megatron-LM): a transformer_block splits its
// heads and MLP (two all-reduces in the forward, two in the backward, its
// activations as Korthikanti et al. 2022 count them); consecutive linears
// pair up, column- then row-parallel, with an all-reduce after the pair in
// the forward and before it in the backward (an unpaired linear is
// column-parallel with its output gathered, except the last layer before a
// cross-entropy loss, whose output stays split over the vocabulary: its
// forward reductions are the loss's three all-reduces of one element per
// token, TensorSplit::vocabulary_output); an embedding splits its
// vocabulary; layer norms and activations stay whole on every device (split
// along the sequence under sequence parallelism). Layers that cannot split
// (convolutions, batch norms, pooling, ResNet blocks), and dimensions `tp`
// does not divide, are reported to `d` at model.layers[i]. Empty when
// tp.size is 1.
[[nodiscard]] std::vector<TensorShare> tensor_shares(const Model& model,
                                                     const std::vector<LayerAnalysis>& layers,
                                                     const TensorParallel& tp, Diagnostics& d);

}  // namespace pipewright

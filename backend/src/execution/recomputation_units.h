#pragma once
// Full activation checkpointing, one unit at a time
// (core/recomputation_units.h): a stage's forward keeps each unit's input,
// and a whole backward rebuilds the units from the last, each just before
// its own backward, so that it holds one unit's activations at once. With
// training.recompute_blocks only the first blocks' units are rebuilt; the
// others run with their graph in the forward and keep it until their
// backward.
#include <torch/torch.h>

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "pipewright/core/analysis.h"

namespace pipewright::backend {

// What a checkpointed forward keeps of one micro-batch besides the stage's
// input: the input of each unit after the first, the output of each unit
// that is not rebuilt (with its graph, from an input that is a leaf of its
// own), and for a stage that draws random numbers the generator's state
// before each unit (the first's is also what a whole-stage recomputation
// replays).
struct KeptUnits {
    std::vector<torch::Tensor> inputs;   // of units 1, 2, ...
    std::vector<torch::Tensor> outputs;  // of units 0, 1, ...; undefined where rebuilt
    // A split backward's I under partial recomputation: each unit's root of
    // the backward (its output, or the loss made of the last's) and the
    // gradient flowing into it, kept with their graphs for W.
    std::vector<torch::Tensor> roots;
    std::vector<torch::Tensor> root_grads;
    std::vector<torch::Tensor> random_states;  // of units 0, 1, ...; none without dropout

    // What unit `u` drew its random numbers from; undefined: nothing to replay.
    [[nodiscard]] torch::Tensor random_state(std::size_t u) const {
        return u < random_states.size() ? random_states[u] : torch::Tensor();
    }
};

class StageUnits {
  public:
    StageUnits() = default;
    // The units of `stage`, the module of layers [first, last]. The modules
    // that hand a tensor-parallel slice from one layout to another
    // (redistribute_*) go with the layer after them, so that a unit keeps
    // its input as its first layer takes it.
    StageUnits(const AnalyzedProject& project, const torch::nn::Sequential& stage, int first,
               int last);

    [[nodiscard]] std::size_t size() const { return starts_.empty() ? 0 : starts_.size() - 1; }

    // The stage's forward from `input`, without a graph in the units the
    // backward rebuilds, keeping what it rebuilds them from and the other
    // units' outputs in `kept` (random states only when `random`); returns
    // the stage's output.
    [[nodiscard]] torch::Tensor forward_keeping(torch::Tensor input, KeptUnits& kept, bool random,
                                                const torch::Device& device);

    // The whole backward from the kept units: unit by unit from the last,
    // each rebuilt with its graph (or its kept graph used) and its backward
    // run from `output_grad`,
    // or, when `loss` is given, from the loss it makes of the last unit's
    // output. `input` is the stage's input, whose gradient accumulates as
    // a leaf's. Lets each kept input go once it is used.
    void backward(const torch::Tensor& input, KeptUnits& kept, torch::Tensor output_grad,
                  const std::function<torch::Tensor(const torch::Tensor&)>& loss,
                  const torch::Device& device);

    // A split backward's I (zero-bubble schedules) under partial
    // recomputation: from the last unit to the first, each rebuilt one
    // rebuilt with its graph, the gradient of its input computed and every
    // unit's graph kept for W. Returns the gradient of `input`, undefined
    // when it asks for none (the first stage's token ids).
    [[nodiscard]] torch::Tensor input_gradient(
        const torch::Tensor& input, KeptUnits& kept, torch::Tensor output_grad,
        const std::function<torch::Tensor(const torch::Tensor&)>& loss,
        const torch::Device& device);

    // Its W: every kept graph's weight gradients added to `params`' own;
    // lets the graphs go.
    static void weight_gradient(KeptUnits& kept, const std::vector<torch::Tensor>& params);

  private:
    // The unit's input and output for its backward: rebuilt with its graph
    // (replaying its random numbers), or kept from the forward.
    [[nodiscard]] std::pair<torch::Tensor, torch::Tensor> unit_for_backward(
        std::size_t u, const torch::Tensor& input, KeptUnits& kept, const torch::Device& device);

    // Runs unit `u` on `x`, with a graph or not as the caller's guard says.
    [[nodiscard]] torch::Tensor run(std::size_t u, torch::Tensor x);

    torch::nn::Sequential stage_{nullptr};
    std::vector<std::size_t> starts_;  // each unit's first module, then the module count
    std::vector<bool> rebuilt_;        // a unit's forward runs again in the backward
};

}  // namespace pipewright::backend

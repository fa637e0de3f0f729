#pragma once
// Full activation checkpointing, one unit at a time
// (core/recomputation_units.h): a stage's forward keeps each unit's input,
// and a whole backward rebuilds the units from the last, each just before
// its own backward, so that it holds one unit's activations at once.
#include <torch/torch.h>

#include <cstddef>
#include <vector>

#include "pipewright/core/analysis.h"

namespace pipewright::backend {

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
    // Runs unit `u` on `x`, with a graph or not as the caller's guard says.
    [[nodiscard]] torch::Tensor forward(std::size_t u, torch::Tensor x);

  private:
    torch::nn::Sequential stage_{nullptr};
    std::vector<std::size_t> starts_;  // each unit's first module, then the module count
};

}  // namespace pipewright::backend

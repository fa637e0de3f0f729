#pragma once

// What one imported layer costs, measured by running it once on an example
// batch: FLOPs from the matrix products and convolutions it dispatches (with
// a rough count for element-wise work, as the catalog keeps), and the bytes
// autograd keeps from forward to backward, from a counting CPU allocator.

#include <cstdint>
#include <functional>

#include <torch/torch.h>

namespace pipewright::backend {

// Per sample, in the catalog's conventions (layer_catalog.h).
struct MeasuredCosts {
    double forward_flops = 0;
    double backward_input_flops = 0;
    double backward_weight_flops = 0;
    double stashed_elements = 0;
    double weight_stashed_elements = 0;
};

// Runs `forward` on `input` (a batch of `samples`) with autograd recording,
// counting its operations and what it keeps for backward; returns the
// output (detached) through `output`.
[[nodiscard]] MeasuredCosts measure_costs(
    const std::function<torch::Tensor(torch::Tensor)>& forward, const torch::Tensor& input,
    std::int64_t samples, torch::Tensor& output);

}  // namespace pipewright::backend

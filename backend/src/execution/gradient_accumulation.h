#pragma once
// Parameter gradients added up as autograd's own accumulation does, for the
// passes that ask autograd for them explicitly: a split backward's W (the
// executor, a partially recomputed stage) and the profiler's timed passes.
#include <torch/torch.h>

#include <vector>

namespace pipewright::backend {

// Adds each defined `grads[i]` into `params[i]`'s .grad (a copy when it has
// none yet); undefined ones (parameters the pass does not reach) are left.
void add_gradients(const std::vector<torch::Tensor>& params,
                   const std::vector<torch::Tensor>& grads);

// The gradients of `params` from `root` (seeded with `grad` unless it is
// undefined: a loss), added to the parameters' own; the graph is let go.
void accumulate_weight_gradients(const torch::Tensor& root, const torch::Tensor& grad,
                                 const std::vector<torch::Tensor>& params);

}  // namespace pipewright::backend

#pragma once

// Fresh weights for an imported submodule, when a project asks for them
// ("weights": "seed") instead of the file's: PyTorch's own defaults for the
// module classes it knows, drawn from a seed, so that a layer's weights
// depend only on the project seed and its index, as catalog layers' do.

#include <cstdint>
#include <string>
#include <vector>

#include <torch/script.h>

namespace pipewright::backend {

// Re-initialises every parameter (and normalisation statistics) of `module`
// and its children whose class is one of PyTorch's layers:
//   - Linear, Conv1d/2d/3d, ConvTranspose1d/2d/3d, Bilinear: weight and
//     bias uniform in ±1/sqrt(fan_in), as their reset_parameters() draws;
//   - BatchNorm1d/2d/3d, LayerNorm, GroupNorm, InstanceNorm*: weight 1,
//     bias 0, running mean 0 and variance 1;
//   - Embedding: normal(0, 1).
// Returns the dotted names of the parameters it left as the file has them
// (those of other classes, whose initialisation it cannot know).
[[nodiscard]] std::vector<std::string> reinitialise(const torch::jit::Module& module,
                                                    std::uint64_t seed);

}  // namespace pipewright::backend

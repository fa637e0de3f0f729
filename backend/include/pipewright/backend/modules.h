#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <torch/torch.h>

#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/context_group.h"
#include "pipewright/backend/transport.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/layer.h"
#include "pipewright/core/tensor.h"

namespace pipewright::backend {

// The Torch element type for a project's compute precision; throws
// BackendError for precisions the CPU backend does not train in.
[[nodiscard]] torch::Dtype torch_dtype(DType dtype);

// The precision a run trains in: the project's, unless overridden with
// "float32" or "float64" (the equivalence tests use float64).
[[nodiscard]] torch::Dtype run_dtype(const AnalyzedProject& project,
                                     const std::string& override_dtype);

// Whether build_layer knows the layer type (checked before a run starts).
[[nodiscard]] bool can_build(std::string_view type);

// Whether the layer draws random numbers while training (a dropout layer, a
// block with dropout): a recomputed forward must replay its random state.
[[nodiscard]] bool draws_random(const LayerSpec& layer);

// A transformer block's dropout field that is above 0 ("attention_dropout",
// else "hidden_dropout"), for the runs that refuse dropout by field; empty
// for a block without dropout and for other layers.
[[nodiscard]] std::string_view block_dropout_field(const LayerSpec& layer);

// One catalog layer as a Torch module taking a [batch, ...input_shape] tensor.
// Shapes and parameter counts match core's analyze_layer. Weights come from
// Torch's default initialisation under `seed`, so a layer's weights depend
// only on the project seed and its index, never on how the model is split.
[[nodiscard]] torch::nn::AnyModule build_layer(const LayerSpec& layer, const Shape& input_shape,
                                               std::uint64_t seed);

// Where imported (torchscript) layers take their weights from: as the
// project says (the file's, or the seed's for "weights": "seed"), or from
// the seed whatever it says (the synthetic task's teacher).
enum class ImportedWeights : std::uint8_t { as_project, from_seed };

// The name of a layer's module in the Sequential of its stage: the layer's
// name, with its dots (which Torch module names may not contain) as
// underscores.
[[nodiscard]] std::string stage_module_name(const LayerSpec& layer);

// Layers first..last (inclusive) of an analysed project, in order, in `dtype`.
// With `experts` (size > 1) each mixture of experts keeps this member's
// share of its routed experts and dispatches tokens through the group. With
// `context` (size > 1) they run on the member's chunks of each sequence:
// the embedding adds its tokens' positions, the blocks exchange keys and
// values with the group (context_group.h).
[[nodiscard]] torch::nn::Sequential build_layers(
    const AnalyzedProject& project, int first, int last, std::uint64_t seed, torch::Dtype dtype,
    ImportedWeights imported = ImportedWeights::as_project, const ExpertGroup& experts = {},
    const ContextGroup& context = {});

// The module of one pipeline stage, initialised from the project's seed.
[[nodiscard]] torch::nn::Sequential build_stage(const AnalyzedProject& project, int stage,
                                                torch::Dtype dtype, const ExpertGroup& experts = {},
                                                const ContextGroup& context = {});

// The whole model in one module (single-process reference, data teacher).
[[nodiscard]] torch::nn::Sequential build_model(
    const AnalyzedProject& project, std::uint64_t seed, torch::Dtype dtype,
    ImportedWeights imported = ImportedWeights::as_project);

// The token ids a model's input takes: below this (its first layer's
// vocabulary; 2 when it does not say), or 0 for a floating-point input.
[[nodiscard]] std::int64_t input_vocabulary(const Model& model);

// Whether layers come from TorchScript files.
[[nodiscard]] bool has_imported_layers(const Model& model);

// Seed of layer `index` under the project seed (mixes both so that nearby
// seeds and indices give unrelated streams).
[[nodiscard]] std::uint64_t layer_seed(std::uint64_t seed, int index);

}  // namespace pipewright::backend

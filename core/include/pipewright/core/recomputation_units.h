#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "pipewright/core/layer.h"

namespace pipewright {

// Full activation checkpointing (training.activation_checkpointing true)
// saves the input of each unit of recomputation and rebuilds one unit at a
// time during the backward. A block (a transformer block, a ResNet
// bottleneck) is a unit of its own, as Megatron-LM, DeepSpeed and torchtitan
// checkpoint each transformer layer; the layers between two blocks form one
// unit, so a model without blocks (an MLP) recomputes each stage as one unit,
// as GPipe's re-materialisation does.
[[nodiscard]] bool checkpointed_alone(std::string_view type);

// Whether layer `l` of `layers` begins a unit when a stage holds it and the
// layer before it (the first layer of a stage always begins one).
[[nodiscard]] bool begins_recomputation_unit(std::span<const LayerSpec> layers, int l);

// The first layer of each unit of layers [first, last], in order.
[[nodiscard]] std::vector<int> recomputation_units(std::span<const LayerSpec> layers, int first,
                                                   int last);

// Whether full recomputation rebuilds each of layers [first, last] (one flag
// a layer, a unit's layers alike): every unit when `blocks` is unset;
// otherwise the units of the first `blocks` blocks, as Megatron-LM's block
// method recomputes the first N transformer layers of each stage and runs
// the rest (the embedding and the head among them) as usual.
[[nodiscard]] std::vector<bool> rebuilt_layers(std::span<const LayerSpec> layers, int first,
                                               int last, std::optional<int> blocks);

}  // namespace pipewright

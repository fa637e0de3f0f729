#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/layer.h"
#include "pipewright/core/tensor.h"

namespace pipewright {

enum class LossKind { mse, cross_entropy };

[[nodiscard]] std::string_view to_string(LossKind k);
[[nodiscard]] std::optional<LossKind> parse_loss(std::string_view s);

struct ModelInput {
    Shape shape;  // one sample, without the batch dimension
    DType dtype = DType::float32;

    bool operator==(const ModelInput&) const = default;
};

struct Model {
    std::string name;
    ModelInput input;
    LossKind loss = LossKind::mse;
    std::vector<LayerSpec> layers;
    // The output head multiplies by the token embedding's matrix
    // (core/tied_embeddings.h).
    bool tie_word_embeddings = false;

    // Index of the layer with this name, or -1.
    [[nodiscard]] int layer_index(std::string_view layer_name) const;

    bool operator==(const Model&) const = default;
};

}  // namespace pipewright

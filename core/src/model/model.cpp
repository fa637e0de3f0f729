#include "pipewright/core/model.h"

namespace pipewright {

std::string_view to_string(LossKind k) {
    return k == LossKind::cross_entropy ? "cross_entropy" : "mse";
}

std::optional<LossKind> parse_loss(std::string_view s) {
    if (s == "mse") {
        return LossKind::mse;
    }
    if (s == "cross_entropy") {
        return LossKind::cross_entropy;
    }
    return std::nullopt;
}

int Model::layer_index(std::string_view layer_name) const {
    for (std::size_t i = 0; i < layers.size(); ++i) {
        if (layers[i].name == layer_name) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

}  // namespace pipewright

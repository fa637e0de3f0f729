#include "pipewright/core/recomputation_units.h"

namespace pipewright {

bool checkpointed_alone(std::string_view type) {
    return type == "transformer_block" || type == "resnet_bottleneck";
}

bool begins_recomputation_unit(std::span<const LayerSpec> layers, int l) {
    if (l <= 0) {
        return true;
    }
    const auto i = static_cast<std::size_t>(l);
    return checkpointed_alone(layers[i].type) || checkpointed_alone(layers[i - 1].type);
}

std::vector<int> recomputation_units(std::span<const LayerSpec> layers, int first, int last) {
    std::vector<int> starts;
    for (int l = first; l <= last; ++l) {
        if (l == first || begins_recomputation_unit(layers, l)) {
            starts.push_back(l);
        }
    }
    return starts;
}

std::vector<bool> rebuilt_layers(std::span<const LayerSpec> layers, int first, int last,
                                 std::optional<int> blocks) {
    std::vector<bool> rebuilt;
    rebuilt.reserve(static_cast<std::size_t>(last - first + 1));
    int left = blocks.value_or(0);
    bool unit = !blocks;  // whether the unit in hand is rebuilt
    for (int l = first; l <= last; ++l) {
        if (blocks && (l == first || begins_recomputation_unit(layers, l))) {
            unit = left > 0 && checkpointed_alone(layers[static_cast<std::size_t>(l)].type);
            left -= unit ? 1 : 0;
        }
        rebuilt.push_back(unit);
    }
    return rebuilt;
}

}  // namespace pipewright

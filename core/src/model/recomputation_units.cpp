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

std::vector<bool> rebuilt_units(std::span<const LayerSpec> layers, int first, int last,
                                std::optional<int> blocks) {
    const std::vector<int> starts = recomputation_units(layers, first, last);
    std::vector<bool> rebuilt(starts.size(), !blocks);
    int left = blocks.value_or(0);
    for (std::size_t u = 0; u < starts.size() && left > 0; ++u) {
        if (checkpointed_alone(layers[static_cast<std::size_t>(starts[u])].type)) {
            rebuilt[u] = true;
            --left;
        }
    }
    return rebuilt;
}

}  // namespace pipewright

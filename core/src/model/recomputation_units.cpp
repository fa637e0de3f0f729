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

double held_output_share(const AnalyzedProject& project, int layer) {
    if (project.tensor_shares.empty()) {
        return 1;
    }
    const TensorParallel& tp = project.project.tensor_parallel;
    const double slice = 1.0 / tp.size;
    const double along_sequence = tp.sequence_parallel ? slice : 1.0;
    const TensorShare& share = project.tensor_shares.at(static_cast<std::size_t>(layer));
    switch (share.split) {
        case TensorSplit::features:
        case TensorSplit::sequence:
        case TensorSplit::vocabulary_output:
            return slice;
        case TensorSplit::column:
            // A column-parallel linear without a partner gathers its output.
            return share.forward_reductions == 0 ? slice : 1.0;
        case TensorSplit::row:
        case TensorSplit::block:
        case TensorSplit::vocabulary:
            return along_sequence;  // all-reduced, or reduce-scattered
        case TensorSplit::replicated:
            return 1;
    }
    return 1;
}

}  // namespace pipewright

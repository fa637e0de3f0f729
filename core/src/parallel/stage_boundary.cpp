#include "pipewright/core/stage_boundary.h"

namespace pipewright {

int boundary_slices(const AnalyzedProject& project, int layer) {
    const TensorParallel& tp = project.project.tensor_parallel;
    if (project.tensor_shares.empty() || !tp.sequence_parallel || tp.size <= 1) {
        return 1;
    }
    switch (project.tensor_shares.at(static_cast<std::size_t>(layer)).split) {
        case TensorSplit::sequence:    // runs on the member's slice of the sequence
        case TensorSplit::row:         // reduce-scattered over the sequence
        case TensorSplit::block:       // likewise, its second linear's output
        case TensorSplit::vocabulary:  // the embedding's, likewise
            return tp.size;
        case TensorSplit::replicated:
        case TensorSplit::features:           // gathered at a boundary
        case TensorSplit::column:             // gathered, or by the partner
        case TensorSplit::vocabulary_output:  // the logits: the model's end
            return 1;
    }
    return 1;
}

double boundary_share(const AnalyzedProject& project, int layer) {
    return 1.0 / boundary_slices(project, layer);
}

}  // namespace pipewright

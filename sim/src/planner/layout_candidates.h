#pragma once

// The candidate layouts of a 3D search (planner/layout_candidates.cpp): one
// generator per dimension of parallelism, applied in turn, each expanding
// every partial layout along its own dimension. Tensor-parallel sizes come
// first (a replica count depends on how many groups there are), then
// data-parallel replica counts; expert and context parallelism would each
// add a generator here, and a cost where the layout is simulated. Context-
// and expert-parallel sizes come after the tensor-parallel ones and before
// the replica counts, which they must divide.

#include <string>
#include <vector>

#include "pipewright/sim/planner.h"

namespace pipewright::planner {

// What the request asks of the layout once normalised: a fixed value, or 0
// to search, with where it was asked (for the problems it causes).
struct LayoutRequest {
    int data = 1;
    int tensor = 1;
    bool sequence = false;
    int experts = 1;
    int context = 1;
    std::string data_path;
    std::string tensor_path;
    std::string experts_path;
    std::string context_path;

    LayoutRequest(const Project& project, const PlanOptions& options);
};

// The tensor-parallel sizes a generator offers and those it leaves out.
struct LayoutCandidates {
    std::vector<DataParallelOption> layouts;  // a reason set: cannot be planned
    // Tensor-parallel sizes left out, and why ("2: model.layers[0] ...").
    std::vector<std::string> tensor_skipped;
    // Expert- and context-parallel sizes searched and left out, and why.
    std::vector<std::string> experts_skipped;
    std::vector<std::string> context_skipped;
};

// Every layout of the request, each dimension expanded in turn. Throws
// InputError when a value asked for cannot be honoured (a searched
// dimension leaves such values out, or gives them a reason).
[[nodiscard]] LayoutCandidates candidate_layouts(const Project& project, const PlanOptions& options,
                                                 const LayoutRequest& request);

}  // namespace pipewright::planner

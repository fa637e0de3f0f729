#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/project.h"
#include "pipewright/sim/planner.h"
#include "pipewright/sim/schedule_comparison.h"

namespace pipewright {

// The data × pipeline layouts of one cluster side by side: the project as
// set, then for every replica count that divides its devices and batch the
// data-parallel planner's best layout (pipeline, schedule, ZeRO stage, where
// the replicas sit), with its gain over the project as set (or over the
// one-replica layout when the project as set does not run).
struct LayoutComparison {
    // rows[0] is the project as set (the baseline); then one per count.
    std::vector<ComparisonRow> rows;
    // Per row, the project laid out so (empty for the baseline and for a
    // count where nothing fits): what applying a row makes of the project.
    std::vector<std::optional<Project>> layouts;
    std::string choice;  // why the fastest won, as `plan --data-parallel auto` says
    // What the gains are over: "the layout as set", or, when that does not
    // run, "one pipeline" (the one-replica row, then marked the baseline).
    std::string baseline;
};

// Throws InputError when the project cannot be planned at all, and
// PlanCancelled when options.stop is requested.
[[nodiscard]] LayoutComparison compare_replica_layouts(const Project& project,
                                                       const PlanOptions& options);

}  // namespace pipewright

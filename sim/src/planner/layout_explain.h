#pragma once

// Why a data-parallel plan's layout won (planner/layout_explain.cpp).

#include <string>

#include "pipewright/sim/planner.h"

namespace pipewright::planner {

// One paragraph: the chosen replicas, stages, group size, ZeRO stage and
// layout with their time; the best at every other group size (or every
// other count, with one size), one pipeline of single devices and data
// parallelism alone; checkpointing turned on or off; the chosen count at the
// other ZeRO stages; and tensor-parallel sizes the model cannot split.
[[nodiscard]] std::string explain_layout_choice(const PlanResult& result, const Project& project);

}  // namespace pipewright::planner

#pragma once

// The JSON of `pipewright plan --json`: the plan, the input and uniform
// placements it is compared with, the schedules and layouts tried, and the
// search's statistics. The command line and the Python module both write it.

#include <optional>

#include <nlohmann/json.hpp>

#include "pipewright/core/project.h"
#include "pipewright/sim/planner.h"

namespace pipewright::cli {

// Speed-up of the plan over another outcome, in percent; nullopt when either
// was not simulated.
[[nodiscard]] std::optional<double> gain_over(const PlanOutcome& plan, const PlanOutcome& other);

[[nodiscard]] nlohmann::json plan_result_json(const PlanResult& result, const Project& project);

}  // namespace pipewright::cli

#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/sim/planner.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

// "1-3, 5": replica numbers, runs joined.
[[nodiscard]] std::string number_ranges(const std::vector<int>& sorted);

// The replicas and their collectives of a data-parallel report (nothing for
// one replica): which replica stands for which, the straggler, and what each
// stage's reduction costs.
void print_data_parallel(std::ostream& out, const SimulationReport& report);
[[nodiscard]] nlohmann::json data_parallel_json(const SimulationReport& report);

// A data-parallel plan: why its replica count and ZeRO stage, and every
// replica count tried.
void print_plan_replicas(std::ostream& out, const PlanResult& result);
[[nodiscard]] nlohmann::json plan_replicas_json(const PlanResult& result);

}  // namespace pipewright::cli

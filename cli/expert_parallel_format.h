#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

// The "Experts" block of `simulate`: the experts each stage's device holds
// and what its all-to-alls take per micro-batch (expert parallelism).
void print_expert_parallel(std::ostream& out, const SimulationReport& report);
[[nodiscard]] nlohmann::json expert_parallel_json(const SimulationReport& report);

}  // namespace pipewright::cli

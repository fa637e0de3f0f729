#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

// The "Context" block of `simulate`: how each stage's ranks exchange the
// keys and values of attention, and what of that the attention does not
// hide, per micro-batch (context parallelism).
void print_context_parallel(std::ostream& out, const SimulationReport& report);
[[nodiscard]] nlohmann::json context_parallel_json(const SimulationReport& report);

}  // namespace pipewright::cli

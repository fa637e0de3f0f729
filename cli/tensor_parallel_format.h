#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

// The "Tensor" block of `simulate`: each stage's group of devices and what
// its all-reduces take per micro-batch.
void print_tensor_parallel(std::ostream& out, const SimulationReport& report);
[[nodiscard]] nlohmann::json tensor_parallel_json(const SimulationReport& report);

}  // namespace pipewright::cli

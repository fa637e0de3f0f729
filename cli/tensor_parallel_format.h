#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

// The "Tensor" block of `simulate`: each stage's group of devices and what
// its all-reduces take per micro-batch.
// "node0/c0/gpu0 … gpu3": a group's first device and its last one's name.
[[nodiscard]] std::string tensor_group_words(const std::vector<std::string>& group);

void print_tensor_parallel(std::ostream& out, const SimulationReport& report);
[[nodiscard]] nlohmann::json tensor_parallel_json(const SimulationReport& report);

}  // namespace pipewright::cli

#pragma once

#include <cstdint>
#include <vector>

#include "pipewright/core/timeline.h"
#include "pipewright/sim/cost_model.h"

namespace pipewright {

struct RankMemory {
    std::int64_t static_bytes = 0;  // weights, gradients, optimizer state
    std::int64_t peak_bytes = 0;
    double peak_time_s = 0;
    std::vector<MemorySample> curve;  // total bytes from each time on
};

// Memory over one iteration: static bytes, plus each micro-batch's stashed
// activations from the start of its forward until its backward ends (for a
// split backward: the weight-gradient part until W ends).
[[nodiscard]] std::vector<RankMemory> memory_over_time(
    const Timeline& timeline, const std::vector<StageCost>& stages,
    const std::vector<std::int64_t>& static_bytes);

}  // namespace pipewright

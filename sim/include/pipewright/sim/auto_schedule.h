#pragma once

// zb-auto builds its lists for the costs (pipewright/core/zero_bubble_auto.h):
// here the project's own F, I, W and transfer times and the memory its
// devices have left for activations.

#include "pipewright/core/analysis.h"
#include "pipewright/core/zero_bubble_auto.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/event_simulator.h"

namespace pipewright {

// Whether `project` runs zb-auto built by the generator (not read from a CSV).
[[nodiscard]] bool builds_for_costs(const AnalyzedProject& project);

// What zb-auto is built for: `input`'s stage costs and links, each
// device's memory limit being its capacity less what it holds throughout
// (`input.static_bytes`; at least one micro-batch's activations).
[[nodiscard]] AutoScheduleCosts auto_costs_for(const AnalyzedProject& project,
                                               const SimulationInput& input);
// The same from the cost model: what `run` hands its processes.
[[nodiscard]] AutoScheduleCosts auto_costs_for(const AnalyzedProject& project,
                                               const CostModelOptions& options);

// The schedule the simulator runs for `project`: zb-auto rebuilt for its
// costs, any other as analysed. What `simulate --export-csv` writes.
[[nodiscard]] Schedule schedule_for_costs(const AnalyzedProject& project,
                                          const CostModelOptions& options);

}  // namespace pipewright

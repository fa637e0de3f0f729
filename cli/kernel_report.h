#pragma once

// `simulate --kernels` and the `stages` of `simulate --json`: where each
// stage's time goes, kernel by kernel (sim/kernel_breakdown.h).

#include <ostream>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/host_pace.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

// Per stage: its device, layers, per-micro-batch F, I and W (collectives
// included) and their kernels (stage_kernels), slowest first.
[[nodiscard]] nlohmann::json stages_json(const AnalyzedProject& project,
                                         const SimulationReport& report,
                                         const std::vector<StageKernels>& kernels);

// `kernel_pace` of `simulate --json`: the GPU stage whose kernels are
// shortest on average, and whether a real run is likely paced by its
// framework's host rather than by them (sim/host_pace.h).
[[nodiscard]] nlohmann::json kernel_pace_json(const KernelPace& pace);

// The busiest stage's kernels, pass by pass: launches, time, share, rate and
// whether their bytes or their FLOPs bound them.
void print_kernels(std::ostream& out, const AnalyzedProject& project,
                   const SimulationReport& report, const CostModelOptions& costs);

}  // namespace pipewright::cli

#pragma once

#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/timeline_metrics.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/event_simulator.h"

namespace pipewright {

struct SimulationReport {
    std::string schedule;
    int batch_size = 0;
    int microbatches = 0;
    int microbatch_size = 0;
    double iteration_time_s = 0;
    double throughput_samples_per_s = 0;
    double bubble_fraction = 0;
    bool all_fit = true;
    std::vector<DeviceMetrics> devices;
    std::vector<LinkUsage> links;
    std::vector<StageCost> stages;
    // With the memory curve of every rank; only its lanes and no events
    // when simulated with Recording::summary.
    Timeline timeline;
};

// What a simulation keeps besides the summary (metrics, peaks, links).
enum class Recording {
    timeline,  // every action's times and the memory curves
    summary,   // neither: for callers that only read the figures
};

// The links between the ranks of a project that exchange data (neighbouring
// stages), as the simulator needs them; other pairs get none.
void describe_links(const AnalyzedProject& project, const CostModelOptions& options,
                    SimulationInput& input);

// Simulates one iteration of the analysed project. Throws SimulationError.
[[nodiscard]] SimulationReport simulate_project(const AnalyzedProject& project,
                                                const CostModelOptions& options = {},
                                                Recording recording = Recording::timeline);

}  // namespace pipewright

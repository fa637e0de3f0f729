#pragma once

// What the front end adds to `run` before the backend takes over. zb-auto
// builds its lists for the costs, and only the front end has a cost model:
// it sends the costs (`--schedule-costs`), so that the run and every worker
// build the lists `simulate` shows.

#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "run_command.h"

namespace pipewright::cli {

// The analysis a run's options ask for (schedule, CSV, micro-batches,
// batch, replicas, tensor groups), paths relative to the project's folder.
[[nodiscard]] AnalysisOptions run_analysis_options(const RunArgs& a);

// {"--schedule-costs", TEXT} when the run uses zb-auto, else nothing (also
// when the project does not load: the backend reports why).
[[nodiscard]] std::vector<std::string> schedule_cost_arguments(const RunArgs& a);

}  // namespace pipewright::cli

#pragma once

#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/run_records.h"
#include "pipewright/core/timeline.h"

namespace pipewright::backend {

// What a finished run leaves behind, merged from the ranks' records.
struct RunReport {
    RunSummary summary;  // what `run --json` prints
    RunMetrics metrics;  // metrics.json
    Timeline timeline;   // the representative measured iteration
};

// `ranks` are the records of the ranks reported on (every rank, or one
// node's). Steps before `warmup` are excluded from the medians (all steps are
// kept when none would remain). Throws BackendError when the records do not
// fit the project or each other (a rank outside the project, a different
// number of steps).
// `steps_before`: those a resumed checkpoint had trained, which the steps'
// numbers continue.
[[nodiscard]] RunReport build_run_report(const AnalyzedProject& project,
                                         const std::vector<RankRecord>& ranks, int warmup,
                                         int steps_before = 0);

}  // namespace pipewright::backend

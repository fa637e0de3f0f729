#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/timeline.h"

namespace pipewright::backend {

// What a finished run leaves behind, merged from the ranks' records.
struct RunReport {
    nlohmann::json summary;  // what `run --json` prints
    nlohmann::json metrics;  // metrics.json
    Timeline timeline;       // the representative measured iteration
};

// `ranks[r]` is rank r's record file (see worker.cpp). Steps before `warmup`
// are excluded from the medians (all steps are kept when none would remain).
[[nodiscard]] RunReport build_run_report(const AnalyzedProject& project,
                                         const std::vector<nlohmann::json>& ranks, int warmup);

}  // namespace pipewright::backend

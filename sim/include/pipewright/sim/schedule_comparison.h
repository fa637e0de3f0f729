#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {

// The reports come from Recording::summary: figures, no timeline.
struct ComparisonRow {
    std::string label;  // schedule name, or "single device"
    // The row the gains are over: the whole model on one device (the first
    // row), or, when that does not fit, the slowest schedule that does.
    bool baseline = false;
    std::optional<SimulationReport> report;  // empty when not applicable
    std::string reason;                      // why it is not applicable
    double gain_percent = 0;                 // speed-up over the baseline
    std::string detail;                      // more of what the row is, in words
};

// Whether a baseline row ran, so that the gains mean something: without
// one (nothing fits, and the whole model does not run on one device) every
// gain is 0 and should read as none.
[[nodiscard]] bool has_gains(const std::vector<ComparisonRow>& rows);

// Simulates every schedule of the catalog on the project's layout, plus the
// whole model on one device of the first stage's kind (the sequential
// baseline of the seed articles), always the first row.
[[nodiscard]] std::vector<ComparisonRow> compare_schedules(const Project& project,
                                                           const AnalysisOptions& analysis,
                                                           const CostModelOptions& costs);

// The same project with every layer on one device of the given spec.
[[nodiscard]] Project single_device_project(const Project& project, const std::string& spec);

}  // namespace pipewright

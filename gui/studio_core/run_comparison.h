#pragma once

#include <QString>
#include <optional>
#include <vector>

#include "pipewright/core/project.h"
#include "pipewright/core/timeline.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::gui {

// One line of the simulated-vs-measured table.
struct RunComparisonRow {
    QString what;    // "Iteration time" or "Busy localhost/proc/cpu0"
    QString device;  // the device path of a busy-time row, empty otherwise
    std::optional<double> simulated_s;
    std::optional<double> measured_s;

    // How far the simulator was off, relative to the measurement:
    // (simulated - measured) / measured; +0.25 means it predicted 25 % too
    // long. nullopt when either side is missing or nothing was measured.
    [[nodiscard]] std::optional<double> error() const;
};

// Iteration time, then the busy (compute) time of every device, simulated
// against measured. Devices are matched by path; a device only one side
// knows gets a row with the other side empty. `simulated` may be null (the
// layout on screen does not simulate); `measured_iteration_s` is the run's
// median iteration time (metrics.json), else the measured timeline's span.
[[nodiscard]] std::vector<RunComparisonRow> compare_run(const SimulationReport* simulated,
                                                        const Timeline& measured,
                                                        std::optional<double> measured_iteration_s);

// Whether `ran` is the layout `current` describes, as far as a run is
// concerned: the same model, cluster, placement and training (the schedule
// CSV's path may differ, since the run's copy names it absolutely).
[[nodiscard]] bool same_run_plan(const Project& ran, const Project& current);

}  // namespace pipewright::gui

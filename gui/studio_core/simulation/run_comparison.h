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
    enum class Kind { iteration, busy, action };
    Kind kind = Kind::iteration;
    // "Iteration time", "Busy localhost/proc/cpu0" or "Median forward (F)"
    QString what;
    QString device;                    // the device path of a busy-time row, empty otherwise
    std::optional<ActionType> action;  // the kind of a median row
    std::optional<double> simulated_s;
    std::optional<double> measured_s;

    // How far the simulator was off, relative to the measurement:
    // (simulated - measured) / measured; +0.25 means it predicted 25 % too
    // long. nullopt when either side is missing or nothing was measured.
    [[nodiscard]] std::optional<double> error() const;
};

// Iteration time, the busy (compute) time of every device, then the median
// duration of each kind of action, simulated against measured: as `pipewright
// compare` prints them. Devices are matched by path; a device or a kind only
// one side has gets a row with the other side empty. `simulated` may be null (the
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

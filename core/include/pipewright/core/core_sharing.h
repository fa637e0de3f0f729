#pragma once

// CPU ranks that need more threads than their machine has cores take turns
// on the cores: each computes as long as it would alone, times the turns.
// A profile and a CPU device calibration each record the machine they were
// measured on (its cores, the Torch threads a rank used, and how many ranks
// computed at once), and the simulation stretches their compute by how much
// more a run's ranks share than the measurement did.

#include <optional>
#include <string>
#include <string_view>

namespace pipewright {

struct AnalyzedProject;

// How many times as long each rank's compute takes when `ranks` ranks of
// `threads` threads share `cores` cores, as if every rank computed at every
// moment, over what the measurement's own `measured_ranks` already shared.
// 1 when they fit, or when `cores` is 0 (not recorded).
[[nodiscard]] double core_sharing(int cores, int threads, int ranks, int measured_ranks = 1);

// "the profile was measured on a machine of 2 cores, and this layout runs 4
// CPU ranks of 1 Torch thread each, which take turns ...": `measurement`
// names what measured ("the profile", "the calibration"); nullopt when the
// ranks fit the cores or `cores` is 0.
[[nodiscard]] std::optional<std::string> core_sharing_warning(std::string_view measurement,
                                                              int cores, int threads, int ranks,
                                                              int measured_ranks = 1);

// Sets DeviceSpec::core_sharing on each CPU device of `project` that a
// device calibration measured (DeviceSpec::calibrated_cores): the most ranks
// the run puts on one machine, against the calibration's cores and threads.
void share_calibrated_cores(AnalyzedProject& project);

// The warning for such a project's run, nullopt when nothing is shared.
[[nodiscard]] std::optional<std::string> calibrated_core_sharing_warning(
    const AnalyzedProject& project);

}  // namespace pipewright

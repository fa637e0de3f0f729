#pragma once

// How the module prices layers, as --profile, --efficiency and --strict say
// on the command line (cli/cost_options.h), with the profile owned here so
// that a result can simulate again later (its timeline) with the same costs.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/host_pace.h"

namespace pipewright::python {

struct Costs {
    std::shared_ptr<const Profile> profile;        // null: the analytic model
    std::shared_ptr<const DeviceCatalog> catalog;  // with the calibrated devices; null: builtin
    CostModelOptions options;                      // points into `profile`
    std::string sources;     // "Costs" line of the summary; empty without a profile or calibration
    std::string calibrated;  // what the calibrations measured, for `sources`
    std::int64_t memory_margin_bytes = 0;  // kept free on every GPU (memory_margin)
};

// Raises ProjectError naming the file for a profile or a device calibration
// (`--calibration`) that cannot be used, ValueError for an efficiency outside
// (0, 1]. Needs the GIL.
// Python warnings (UserWarning), as `simulate` prints them, when the
// project's CPU ranks outnumber the cores its profile or calibration was
// measured on. Needs the GIL.
void warn_core_sharing(const Costs& costs, const AnalyzedProject& project);
// The same for the layout a plan chose ("the planned layout: …").
void warn_planned_core_sharing(const Costs& costs, const Project& planned);
// A Python warning, as `simulate` prints it, when a GPU stage's kernels come
// faster than an eager framework's host issues them (sim/host_pace.h); and
// the same for a plan's layout. Need the GIL.
void warn_host_pace(const std::optional<KernelPace>& pace);
void warn_planned_host_pace(const Costs& costs, const Project& planned,
                            const std::filesystem::path& base_dir);

// `memory_margin`: GiB every GPU keeps free (--memory-margin), 0 to 1024
// (ValueError outside).
[[nodiscard]] Costs make_costs(const std::optional<std::string>& profile,
                               const std::vector<std::string>& calibrations,
                               std::optional<double> efficiency,
                               std::optional<double> memory_margin = std::nullopt);

// The command line's warnings about a profile that does not fit the model
// become Python warnings (UserWarning); with `strict` they are a ValueError.
// Needs the GIL.
void check_costs_fit(Costs& costs, const Project& project, bool strict,
                     std::optional<int> microbatch_size = std::nullopt);

}  // namespace pipewright::python

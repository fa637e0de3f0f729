#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/device_calibration_fit.h"

namespace pipewright::cli {

// --profile, --calibration and --efficiency: how every command that
// simulates prices layers.
struct CostArgs {
    std::optional<std::string> profile;
    std::vector<std::string> calibrations;  // device calibration files
    double efficiency = 0;                  // 0: the cost model's default
    bool strict = false;                    // refuse a profile that does not fit the model
    // --memory-margin: GiB every GPU keeps free, beside what the memory
    // model counts (NCCL's buffers, fragmentation).
    std::optional<double> memory_margin_GiB;
};

void add_cost_options(CLI::App& command, CostArgs& args);

// What the options load, which must outlive the cost model options made of
// them: the measured profile, and the catalog with the calibrated devices.
struct CostInputs {
    std::optional<Profile> profile;
    std::optional<DeviceCatalog> catalog;  // set with --calibration or --memory-margin
    std::vector<CalibrationFit> fits;      // one per --calibration, in order
    std::vector<std::string> calibration_files;
    // What --memory-margin took off every GPU's memory in `catalog` (0: none).
    std::int64_t memory_margin_bytes = 0;

    // The catalog to analyse with: the calibrated one, or null (builtin).
    [[nodiscard]] const DeviceCatalog* catalog_or_null() const {
        return catalog ? &*catalog : nullptr;
    }
};

// The cost model the options ask for, its inputs loaded into `inputs`.
// Returns nullopt after printing why a profile or calibration cannot be used.
std::optional<CostModelOptions> cost_model_options(const CostArgs& args, CostInputs& inputs,
                                                   std::ostream& err);

// "kernels calibrated on NVIDIA H100 80GB HBM3 (h100.json): …" for the
// summary's Costs line; empty without --calibration.
[[nodiscard]] std::string describe_calibrations(const CostInputs& inputs);
// Where CPU devices are priced from the catalog's generic "cpu" figures,
// with neither a profile nor a calibration of this machine: a sentence that
// says their times are a rough guess and how to measure them; else empty.
[[nodiscard]] std::string uncalibrated_cpu_note(const AnalyzedProject& project,
                                                const CostModelOptions& costs);

// Warns on `err` when the profile in `costs` does not fit the model (no layer
// or only some match, or layers measured at other sizes) and returns the
// summary's "where the costs come from" text; empty without a profile.
// With `strict` (--strict), a profile that does not fit is refused: nullopt
// after printing why. With `microbatch_size` (what is simulated), a size the
// profile did not measure near is warned about too (profile_size_warning).
[[nodiscard]] std::optional<std::string> check_profile_fit(
    const CostModelOptions& costs, const Project& project, bool strict, std::ostream& err,
    std::optional<int> microbatch_size = std::nullopt);

// What the run of an analysed project shares of its machines' cores beyond
// what its costs were measured with: CPU ranks that outnumber the cores of
// the profile's machine or of a CPU calibration (core/core_sharing.h), as
// `simulate` warns about it; empty when every thread has a core.
[[nodiscard]] std::vector<std::string> core_sharing_warnings(const AnalyzedProject& project,
                                                             const Profile* profile);

// The same for a plan's layout, which the planner priced with the same
// costs: analysed again (with `catalog`, null: builtin) only when a CPU
// profile or calibration could make its ranks take turns.
[[nodiscard]] std::vector<std::string> planned_core_sharing_warnings(const Project& planned,
                                                                     const Profile* profile,
                                                                     const DeviceCatalog* catalog);

}  // namespace pipewright::cli

#include "cost_options.h"

#include <algorithm>

#include "commands.h"
#include "option_checks.h"
#include "pipewright/core/core_sharing.h"
#include "pipewright/core/device_calibration.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/launch_layout.h"
#include "pipewright/core/memory_headroom.h"
#include "pipewright/sim/profile_coverage.h"
#include "report_format.h"

namespace pipewright::cli {

void add_cost_options(CLI::App& command, CostArgs& args) {
    command.add_option("--profile", args.profile,
                       "Measured costs from `pipewright profile` instead of the analytic model");
    command
        .add_option("--efficiency", args.efficiency,
                    "Price every layer as its FLOPs at this fraction of peak FLOP/s (the "
                    "flat model) instead of as the kernels it launches")
        ->check(finite_number(0.001, 1.0));
    command.add_option("--calibration", args.calibrations,
                       "Device calibration from `pipewright calibrate`: its device's kernels "
                       "cost what they measured (repeat for several device types)");
    command
        .add_option("--memory-margin", args.memory_margin_GiB,
                    "GiB every GPU keeps free beside what the memory model counts (NCCL's "
                    "buffers, fragmentation): a device fits only with that much to spare")
        ->check(finite_number(0, 1024));
    command.add_flag("--strict", args.strict,
                     "Refuse a --profile that does not fit the model (layers it lacks or "
                     "measured at other sizes) instead of warning");
}

std::optional<CostModelOptions> cost_model_options(const CostArgs& args, CostInputs& inputs,
                                                   std::ostream& err) {
    CostModelOptions costs;
    if (args.efficiency > 0) {
        costs.flat_efficiency = args.efficiency;
    }
    if (args.profile) {
        try {
            inputs.profile = load_profile_file(*args.profile);
        } catch (const InputError& e) {
            print_problems(err, *args.profile, e.diagnostics());
            return std::nullopt;
        }
        costs.profile = &*inputs.profile;
    }
    if (!args.calibrations.empty()) {
        try {
            inputs.catalog = catalog_with_calibration_files(DeviceCatalog::builtin(),
                                                            args.calibrations, &inputs.fits);
        } catch (const InputError& e) {
            print_problems(err, "--calibration", e.diagnostics());
            return std::nullopt;
        }
        inputs.calibration_files = args.calibrations;
    }
    if (args.memory_margin_GiB && *args.memory_margin_GiB > 0) {
        inputs.memory_margin_bytes =
            static_cast<std::int64_t>(*args.memory_margin_GiB * 1024.0 * 1024.0 * 1024.0);
        inputs.catalog =
            with_memory_margin(inputs.catalog ? *inputs.catalog : DeviceCatalog::builtin(),
                               inputs.memory_margin_bytes);
    }
    return costs;
}

std::string describe_calibrations(const CostInputs& inputs) {
    std::string text;
    for (std::size_t i = 0; i < inputs.fits.size(); ++i) {
        if (i > 0) {
            text += "; ";
        }
        text += describe_calibration(inputs.fits[i], inputs.calibration_files[i]);
    }
    return text;
}

std::string uncalibrated_cpu_note(const AnalyzedProject& project, const CostModelOptions& costs) {
    if (costs.profile != nullptr || costs.flat_efficiency) {
        return {};
    }
    const auto guessed =
        std::find_if(project.rank_specs.begin(), project.rank_specs.end(), [](const DeviceSpec& d) {
            return d.kind == "cpu" && d.calibrated_cores == 0 && !d.gemm_correction;
        });
    if (guessed == project.rank_specs.end()) {
        return {};
    }
    return "CPU devices priced from the catalog's generic \"" + guessed->name +
           "\" figures, a rough guess for this machine (times may be off several-fold): "
           "measure it with `pipewright calibrate --device cpu` (then --calibration) or "
           "`pipewright profile` (then --profile)";
}

std::optional<std::string> check_profile_fit(const CostModelOptions& costs, const Project& project,
                                             bool strict, std::ostream& err,
                                             std::optional<int> microbatch_size) {
    if (costs.profile == nullptr) {
        return std::string();
    }
    const ProfileCoverage coverage = profile_coverage(*costs.profile, project.model);
    auto warnings = profile_warnings(coverage);
    if (microbatch_size) {
        if (auto size = profile_size_warning(*costs.profile, *microbatch_size)) {
            warnings.push_back(std::move(*size));
        }
    }
    for (const auto& warning : warnings) {
        err << "pipewright: " << (strict ? "" : "warning: ") << warning << '\n';
    }
    if (strict && !warnings.empty()) {
        err << "pipewright: --strict: the profile does not fit the model; profile it again "
               "(`pipewright profile`), or leave out --strict to use what fits\n";
        return std::nullopt;
    }
    return describe_cost_sources(coverage);
}

std::vector<std::string> core_sharing_warnings(const AnalyzedProject& project,
                                               const Profile* profile) {
    std::vector<std::string> warnings;
    // The ranks of one machine, as the simulation stretches them (one pass
    // over the processes, only for a CPU profile).
    if (profile != nullptr && profile->device_kind == "cpu") {
        if (auto shared =
                profile_oversubscription_warning(*profile, launch_layout(project).ranks_per_node)) {
            warnings.push_back(std::move(*shared));
        }
    }
    if (auto shared = calibrated_core_sharing_warning(project)) {
        warnings.push_back(std::move(*shared));
    }
    return warnings;
}

std::vector<std::string> planned_core_sharing_warnings(const Project& planned,
                                                       const Profile* profile,
                                                       const DeviceCatalog* catalog) {
    const auto& specs = (catalog != nullptr ? *catalog : DeviceCatalog::builtin()).specs();
    const bool may_share = (profile != nullptr && profile->device_kind == "cpu") ||
                           std::any_of(specs.begin(), specs.end(), [](const DeviceSpec& s) {
                               return s.kind == "cpu" && s.calibrated_cores > 0;
                           });
    if (!may_share) {
        return {};
    }
    AnalysisOptions options;
    options.catalog = catalog;
    Diagnostics problems;
    const auto analyzed = analyze_project(planned, options, problems);
    return analyzed ? core_sharing_warnings(*analyzed, profile) : std::vector<std::string>{};
}

}  // namespace pipewright::cli

#include "cost_options.h"

#include "commands.h"
#include "option_checks.h"
#include "pipewright/sim/profile_coverage.h"

namespace pipewright::cli {

void add_cost_options(CLI::App& command, CostArgs& args) {
    command.add_option("--profile", args.profile,
                       "Measured costs from `pipewright profile` instead of the analytic model");
    command
        .add_option("--efficiency", args.efficiency,
                    "Price every layer as its FLOPs at this fraction of peak FLOP/s (the "
                    "flat model) instead of as the kernels it launches")
        ->check(finite_number(0.001, 1.0));
    command.add_flag("--strict", args.strict,
                     "Refuse a --profile that does not fit the model (layers it lacks or "
                     "measured at other sizes) instead of warning");
}

std::optional<CostModelOptions> cost_model_options(const CostArgs& args,
                                                   std::optional<Profile>& profile_storage,
                                                   std::ostream& err) {
    CostModelOptions costs;
    if (args.efficiency > 0) {
        costs.flat_efficiency = args.efficiency;
    }
    if (args.profile) {
        try {
            profile_storage = load_profile_file(*args.profile);
        } catch (const InputError& e) {
            print_problems(err, *args.profile, e.diagnostics());
            return std::nullopt;
        }
        costs.profile = &*profile_storage;
    }
    return costs;
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

}  // namespace pipewright::cli

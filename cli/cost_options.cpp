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
                    "Fraction of peak FLOP/s reached by the analytic model (default 0.5)")
        ->check(finite_number(0.001, 1.0));
}

std::optional<CostModelOptions> cost_model_options(const CostArgs& args,
                                                   std::optional<Profile>& profile_storage,
                                                   std::ostream& err) {
    CostModelOptions costs;
    if (args.efficiency > 0) {
        costs.efficiency = args.efficiency;
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

std::string check_profile_fit(const CostModelOptions& costs, const Project& project,
                              std::ostream& err) {
    if (costs.profile == nullptr) {
        return {};
    }
    const ProfileCoverage coverage = profile_coverage(*costs.profile, project.model);
    for (const auto& warning : profile_warnings(coverage)) {
        err << "pipewright: warning: " << warning << '\n';
    }
    return describe_cost_sources(coverage);
}

}  // namespace pipewright::cli

#include "cost_options.h"

#include "commands.h"

namespace pipewright::cli {

void add_cost_options(CLI::App& command, CostArgs& args) {
    command.add_option("--profile", args.profile,
                       "Measured costs from `pipewright profile` instead of the analytic model");
    command
        .add_option("--efficiency", args.efficiency,
                    "Fraction of peak FLOP/s reached by the analytic model (default 0.5)")
        ->check(CLI::Range(0.001, 1.0));
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

}  // namespace pipewright::cli

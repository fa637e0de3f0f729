#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/profile.h"

namespace pipewright::cli {

// --profile and --efficiency: how every command that simulates prices layers.
struct CostArgs {
    std::optional<std::string> profile;
    double efficiency = 0;  // 0: the cost model's default
};

void add_cost_options(CLI::App& command, CostArgs& args);

// The cost model the options ask for. A measured profile is loaded into
// `profile_storage`, which must outlive the returned options. Returns nullopt
// after printing why the profile cannot be used.
std::optional<CostModelOptions> cost_model_options(const CostArgs& args,
                                                   std::optional<Profile>& profile_storage,
                                                   std::ostream& err);

}  // namespace pipewright::cli

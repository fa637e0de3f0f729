#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "pipewright/core/profile.h"
#include "pipewright/core/project.h"
#include "pipewright/sim/cost_model.h"

namespace pipewright::cli {

// --profile and --efficiency: how every command that simulates prices layers.
struct CostArgs {
    std::optional<std::string> profile;
    double efficiency = 0;  // 0: the cost model's default
    bool strict = false;    // refuse a profile that does not fit the model
};

void add_cost_options(CLI::App& command, CostArgs& args);

// The cost model the options ask for. A measured profile is loaded into
// `profile_storage`, which must outlive the returned options. Returns nullopt
// after printing why the profile cannot be used.
std::optional<CostModelOptions> cost_model_options(const CostArgs& args,
                                                   std::optional<Profile>& profile_storage,
                                                   std::ostream& err);

// Warns on `err` when the profile in `costs` does not fit the model (no layer
// or only some match, or layers measured at other sizes) and returns the
// summary's "where the costs come from" text; empty without a profile.
// With `strict` (--strict), a profile that does not fit is refused: nullopt
// after printing why. With `microbatch_size` (what is simulated), a size the
// profile did not measure near is warned about too (profile_size_warning).
[[nodiscard]] std::optional<std::string> check_profile_fit(
    const CostModelOptions& costs, const Project& project, bool strict, std::ostream& err,
    std::optional<int> microbatch_size = std::nullopt);

}  // namespace pipewright::cli

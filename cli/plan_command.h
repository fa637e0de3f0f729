#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "cost_options.h"

namespace pipewright::cli {

struct PlanArgs {
    std::string project;
    std::optional<std::string> schedule;
    std::optional<int> microbatches;
    std::optional<std::string> data_parallel;     // a count or "auto"
    std::optional<std::string> tensor_parallel;   // a size or "auto"
    std::optional<std::string> expert_parallel;   // a size or "auto"
    std::optional<std::string> context_parallel;  // a size or "auto"
    bool sequence_parallel = false;
    bool recompute_every_block = false;
    CostArgs costs;  // --profile, --efficiency
    bool json = false;
    std::optional<std::string> apply;
};

void add_plan_command(CLI::App& app, PlanArgs& args);
int run_plan(const PlanArgs& args, std::ostream& out, std::ostream& err);

}  // namespace pipewright::cli

#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

struct PlanArgs {
    std::string project;
    std::optional<std::string> schedule;
    std::optional<int> microbatches;
    std::optional<std::string> profile;
    double efficiency = 0;  // 0: the cost model's default
    bool json = false;
    std::optional<std::string> apply;
};

void add_plan_command(CLI::App& app, PlanArgs& args);
int run_plan(const PlanArgs& args, std::ostream& out, std::ostream& err);

}  // namespace pipewright::cli

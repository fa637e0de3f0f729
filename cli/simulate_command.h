#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "cost_options.h"

namespace pipewright::cli {

struct SimulateArgs {
    std::string project;
    std::optional<std::string> schedule;
    std::optional<std::string> schedule_csv;
    std::optional<int> microbatches;
    std::optional<int> batch_size;
    CostArgs costs;  // --profile, --efficiency
    bool json = false;
    bool compare_schedules = false;
    std::optional<std::string> trace;
    std::optional<std::string> timeline;
    std::optional<std::string> export_csv;
};

void add_simulate_command(CLI::App& app, SimulateArgs& args);
int run_simulate(const SimulateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace pipewright::cli

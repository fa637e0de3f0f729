#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "cost_options.h"
#include "simulate_outputs.h"

namespace pipewright::cli {

struct SimulateArgs {
    std::string project;
    std::optional<std::string> schedule;
    std::optional<std::string> schedule_csv;
    std::optional<int> microbatches;
    std::optional<int> batch_size;
    std::optional<int> data_parallel;
    std::optional<int> tensor_parallel;
    std::optional<int> expert_parallel;
    std::optional<int> context_parallel;
    std::optional<std::string> context_exchange;
    bool sequence_parallel = false;
    CostArgs costs;  // --profile, --efficiency
    bool json = false;
    bool kernels = false;  // print where the busiest stage's time goes
    bool compare_schedules = false;
    bool compare_layouts = false;  // every data × pipeline layout, planned
    OutputArgs outputs;            // --trace, --timeline, --export-csv, --max-output-size
};

void add_simulate_command(CLI::App& app, SimulateArgs& args);
int run_simulate(const SimulateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace pipewright::cli

#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

// The options of `run` and of the per-rank `worker`. The front end parses
// them (for --help and usage errors) and hands the command over to the
// backend program, which parses them again and trains (run_execution.cpp).
struct RunArgs {
    std::string project;
    std::optional<std::string> schedule;
    std::optional<std::string> schedule_csv;
    std::optional<std::string> schedule_costs;  // set by the front end for zb-auto
    std::optional<int> microbatches;
    std::optional<int> batch_size;
    std::optional<int> data_parallel;
    std::optional<int> tensor_parallel;
    std::optional<int> expert_parallel;
    std::optional<int> steps;
    int checkpoint_every = 0;
    std::string checkpoint_dir;
    std::string resume;
    int warmup = 1;
    std::optional<std::string> out;
    bool overwrite = false;
    std::optional<int> port;
    std::optional<std::string> master;
    // torchrun's spelling of --master, with PET_MASTER_ADDR / PET_MASTER_PORT.
    std::optional<std::string> master_addr;
    std::optional<int> master_port;
    std::string launcher = "auto";  // auto, own, torchrun or slurm
    int nnodes = 1;
    int node_rank = 0;
    std::optional<int> nproc_per_node;
    int threads_per_rank = 0;
    std::string core_binding = "auto";
    std::string device = "auto";
    std::string progress = "text";
    std::string dtype;
    std::string data;  // a folder with inputs.pt and targets.pt
    double timeout_s = 60;
    bool save_params = false;
    bool stop_on_nan = false;
    bool force = false;  // start though the run looks too big for this machine
    bool json = false;
};

// Everything after `worker`, as the launcher wrote it: the backend reads it
// with parse_worker_arguments (backend/worker_command_line.h), the one place
// that also writes it.
struct WorkerArgs {
    std::vector<std::string> arguments;
};

void add_run_command(CLI::App& app, RunArgs& args);

// The hidden per-rank subcommand the launcher starts.
void add_worker_command(CLI::App& app, WorkerArgs& args);

}  // namespace pipewright::cli

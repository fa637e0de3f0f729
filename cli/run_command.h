#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

// Both commands keep their own copy of the options; without the backend the
// structs still exist so that commands.cpp needs no #ifdef.
struct RunArgs {
    std::string project;
    std::optional<std::string> schedule;
    std::optional<std::string> schedule_csv;
    std::optional<int> microbatches;
    std::optional<int> batch_size;
    std::optional<int> steps;
    int warmup = 1;
    std::optional<std::string> out;
    bool overwrite = false;
    std::optional<int> port;
    std::optional<std::string> master;
    int nnodes = 1;
    int node_rank = 0;
    std::optional<int> nproc_per_node;
    int threads_per_rank = 0;
    std::string device = "auto";
    std::string progress = "text";
    std::string dtype;
    double timeout_s = 60;
    bool save_params = false;
    bool json = false;
};

struct WorkerArgs {
    RunArgs run;
    int rank = 0;
    int world = 1;
    std::string master;
    std::string store_file;
    std::string out;
    int threads = 0;
    std::string device = "cpu";
    int local_rank = 0;
};

void add_run_command(CLI::App& app, RunArgs& args);
int run_run(const RunArgs& args, std::ostream& out, std::ostream& err);

// The hidden per-rank subcommand the launcher starts.
void add_worker_command(CLI::App& app, WorkerArgs& args);
int run_worker_command(const WorkerArgs& args, std::ostream& err);

}  // namespace pipewright::cli

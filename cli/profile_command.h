#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

// Parsed by the front end and again by the backend program, which measures
// (profile_execution.cpp).
struct ProfileArgs {
    std::string project;
    std::string out = "profile.json";
    std::string device = "auto";
    int threads = 0;  // 0: cores / ranks
    int repeats = 10;
    int warmup = 2;
    std::optional<int> microbatches;
    std::optional<int> batch_size;
    std::vector<int> sizes;    // micro-batch sizes besides the project's; empty: the default
    int concurrent_ranks = 0;  // ranks computing at once; 0: the run's here, up to the cores
    bool json = false;
    bool force = false;             // measure though it looks too big for this machine
    std::string progress = "text";  // on stderr: text, or json (JSON lines, for the studio)
};

// `pipewright profile PROJECT`: measured layer and transfer costs of this
// machine, written as a profile for `simulate --profile` and `plan --profile`.
void add_profile_command(CLI::App& app, ProfileArgs& args);

}  // namespace pipewright::cli

#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

struct CompareArgs {
    std::string simulated;
    std::string measured;
    bool json = false;
    bool force = false;  // compare lane by lane though devices or schedules differ
};

// `pipewright compare SIMULATED MEASURED`: two timelines side by side.
void add_compare_command(CLI::App& app, CompareArgs& args);
int run_compare(const CompareArgs& args, std::ostream& out, std::ostream& err);

}  // namespace pipewright::cli

#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

struct CompareArgs {
    std::string simulated;
    // One run, or several of the same project: then each figure's spread
    // over the runs, and whether the simulation falls inside it.
    std::vector<std::string> measured;
    bool json = false;
    bool force = false;  // compare lane by lane though devices or schedules differ
};

// `pipewright compare SIMULATED MEASURED...`: a simulated timeline beside
// one measured run, or beside several with each figure's spread.
void add_compare_command(CLI::App& app, CompareArgs& args);
int run_compare(const CompareArgs& args, std::ostream& out, std::ostream& err);

}  // namespace pipewright::cli

#pragma once

#include <ostream>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

// `schedules`, `devices` and `layers`: what Pipewright knows, for people and scripts.
struct CatalogArgs {
    bool json = false;
};

void add_catalog_commands(CLI::App& app, CatalogArgs& args);
// Runs whichever catalog command was parsed; kUsage if none.
int run_catalog_command(const CLI::App& app, const CatalogArgs& args, std::ostream& out,
                        std::ostream& err);

}  // namespace pipewright::cli

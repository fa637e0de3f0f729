#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

// Parsed by the front end and again by the backend program, which loads the
// TorchScript file (import_execution.cpp).
struct ImportArgs {
    std::string module;
    std::string input_shape;  // "3,224,224"
    std::string input_dtype = "float32";
    std::string loss = "cross_entropy";
    int depth = 0;
    int devices = 1;
    std::string device_spec = "cpu";
    int batch_size = 32;
    std::optional<int> microbatches;
    std::optional<long long> vocabulary;
    std::string out;  // default: the module's name with .json
    std::string init = "file";
    bool json = false;
    bool dry_run = false;    // print what would be written, write nothing
    double timeout_s = 600;  // per layer measured
};

// `pipewright import MODULE.pt --input-shape ...`: a project of the module's
// layers, ready for simulate, plan, profile and run.
void add_import_command(CLI::App& app, ImportArgs& args);

}  // namespace pipewright::cli

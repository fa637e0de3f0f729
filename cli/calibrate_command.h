#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

// Parsed by the front end and again by the backend program, which measures
// (calibrate_execution.cpp).
struct CalibrateArgs {
    std::string out = "calibration.json";
    std::string device = "auto";
    std::optional<std::string> spec;
    std::optional<std::string> dtype;
    int threads = 0;  // CPU: 0 = every core
    int repeats = 5;
    std::vector<std::int64_t> dims;  // the GEMM grid; empty: the device's default
    bool no_collectives = false;
    std::vector<std::int64_t> collective_bytes;  // empty: the device's default
    bool json = false;
};

// `pipewright calibrate`: this machine's device measured kernel by kernel,
// written as a calibration for `simulate --calibration` and `plan
// --calibration`.
void add_calibrate_command(CLI::App& app, CalibrateArgs& args);

}  // namespace pipewright::cli

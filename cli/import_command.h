#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

// Parsed by the front end and again by the backend program, which loads the
// TorchScript file (import_execution.cpp). A Hugging Face config.json is
// imported by the front end (config_import.cpp).
struct ImportArgs {
    std::string module;
    std::string input_shape;  // "3,224,224"; required for a TorchScript file
    std::string input_dtype = "float32";
    std::string loss = "cross_entropy";
    int depth = 0;
    int devices = 1;  // per node
    int nodes = 1;
    std::string device_spec;           // default: cpu for a module, H100-SXM for a config
    std::optional<long long> seq_len;  // a config's sequence
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
// layers, ready for simulate, plan, profile and run; `pipewright import
// config.json`: a project of the decoder a Hugging Face config describes.
void add_import_command(CLI::App& app, ImportArgs& args);

// A Hugging Face config rather than a TorchScript module: a .json file.
[[nodiscard]] bool is_hf_config(const ImportArgs& args);

}  // namespace pipewright::cli

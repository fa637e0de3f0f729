#pragma once

// `pipewright launch-files PROJECT`: the files a cluster user submits (a
// Slurm batch script, Kubeflow PyTorchJob and TrainJob manifests, a torchrun
// command line), made by core's launch_files.h and written into a folder.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pipewright/core/launch_files.h"

namespace pipewright::cli {

struct LaunchFilesArgs {
    std::string project;
    bool slurm = false;
    bool kubernetes = false;
    bool torchrun = false;
    std::optional<std::string> out;  // default: PROJECT-launch/ beside the project
    std::string image = LaunchFileOptions{}.image;
    // After `--`: options every `pipewright run` of the files gets.
    std::vector<std::string> run_arguments;
};

void add_launch_files_command(CLI::App& app, LaunchFilesArgs& args);
int run_launch_files(const LaunchFilesArgs& args, std::ostream& out, std::ostream& err);

// The folder the files go to without --out: "p-launch" beside "p.json".
[[nodiscard]] std::string default_launch_folder(const std::string& project);

}  // namespace pipewright::cli

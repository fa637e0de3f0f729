#pragma once

// What a cluster user submits to run a project: a Slurm batch script, a
// Kubeflow PyTorchJob and TrainJob, and a torchrun command line, each with
// the nodes, processes and GPUs of the project's placement. Text only: the
// command line (`pipewright launch-files`) and the studio write the files.
// Every file runs `pipewright run PROJECT` as the environment mode of
// launch_environment.h expects it (docs/launch-files.md).

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/launch_layout.h"

namespace pipewright {

// A project, path or option that no launch file can carry, named with why.
class LaunchFilesError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

enum class LaunchKind { slurm, kubernetes, torchrun };

struct LaunchFileOptions {
    // The project file as every node (or container) sees it: an absolute
    // path on a filesystem they share.
    std::string project_path;
    // Which files; empty: all of them.
    std::vector<LaunchKind> kinds;
    // Added to every `pipewright run` of the files (`--steps 50`).
    std::vector<std::string> run_arguments;
    // The container image of the Kubernetes manifests.
    std::string image = "registry.example.com/pipewright:latest";
    // Where the master hosts the rendezvous store.
    int master_port = 29500;
};

struct LaunchFile {
    std::string name;  // a file name: "slurm.sbatch", "pytorchjob.yaml", ...
    std::string text;
    bool executable = false;  // a script to run (0755 less the umask)
};

// The files for `project` (analysed with the run's options). Nodes with
// fewer ranks than others (98 ranks on 13 nodes of 8 GPUs) are laid out
// exactly by Slurm (a host file) and torchrun (ranks per node rank); the
// Kubeflow jobs, whose pods all run as many ranks, then run a pod per rank.
// Throws LaunchFilesError for a project path that is not absolute or that no
// script can carry (control characters), and for a project that `pipewright
// run` refuses before it starts (ZeRO stages 2 and 3).
[[nodiscard]] std::vector<LaunchFile> make_launch_files(const AnalyzedProject& project,
                                                        const LaunchFileOptions& options);

// Writes `files` into `folder` (made when missing), each through a temporary
// file renamed over it, the scripts executable where readable; returns their
// paths. Throws std::runtime_error (std::filesystem::filesystem_error) with
// the reason.
std::vector<std::filesystem::path> write_launch_files(const std::vector<LaunchFile>& files,
                                                      const std::filesystem::path& folder);

// "gpt3-175b-p4d": a job name Slurm and Kubernetes take (an RFC 1035 label:
// lower-case letters, digits and '-', a letter first, at most 40 characters
// so that the operator's "-worker-12" suffixes stay within 63).
[[nodiscard]] std::string launch_job_name(const std::string& project_path);

// `text` quoted for a POSIX shell where it needs it.
[[nodiscard]] std::string shell_quoted(const std::string& text);

}  // namespace pipewright

#pragma once

// The run folder when torchrun or Slurm started every rank as a process of
// its own: the ranks of one machine share --out (or each names its own
// default), so rank 0 makes the folder and the others each write in rank-R/
// inside it, once rank 0's is made, so that neither finds the other's files
// and refuses them.

#include <chrono>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace pipewright::backend {

// Prepares this rank's folder (prepare_run_folder, run_folder_preparation.h)
// and returns it: `wanted` on rank 0, which publishes it in the store; rank
// 0's folder + "/rank-R" elsewhere, after waiting for it. Throws BackendError when the
// folder cannot be used (rank 0 then tells the others through the store) or
// rank 0's does not come within `timeout`.
[[nodiscard]] std::string prepare_shared_run_folder(c10d::Store& store, const std::string& wanted,
                                                    int rank, const std::string& project_file,
                                                    bool overwrite,
                                                    std::chrono::milliseconds timeout,
                                                    const std::vector<std::string>& keep = {});

}  // namespace pipewright::backend

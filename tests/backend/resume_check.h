#pragma once

// Checkpoints and resume, as the tests of every parallel layout check them:
// 4 steps never stopped against 2 steps, a checkpoint and a resume to 4.

#include <filesystem>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace pipewright::test {

// Every parameter file `--save-params` wrote into `out`, in a fixed order
// (replica, tensor-parallel member, stage).
[[nodiscard]] std::vector<torch::Tensor> all_saved(const std::filesystem::path& out, int stages,
                                                   int replicas = 1, int members = 1);

// Equal bit for bit (NaN aside, which training here never makes); false
// for two empty lists.
[[nodiscard]] bool identical(const std::vector<torch::Tensor>& a,
                             const std::vector<torch::Tensor>& b);

struct TwoPlusTwo {
    std::vector<torch::Tensor> uninterrupted;
    std::vector<torch::Tensor> resumed;
    std::string resume_output;
};

// Runs `project` (in float64, a thread a rank, in folders of `dir`) 4 steps
// never stopped; 2 steps with a checkpoint; a resume to 4 steps. Returns
// both runs' parameters and the output of the resume.
[[nodiscard]] TwoPlusTwo two_plus_two(const std::filesystem::path& dir,
                                      const std::filesystem::path& project, int stages,
                                      int replicas = 1, int members = 1);

}  // namespace pipewright::test

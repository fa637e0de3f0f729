#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "pipewright/backend/data.h"

#include "pipewright/core/analysis.h"

namespace pipewright::test {

// An MLP project of `layers` linear+gelu pairs of width `width`, split into
// `stages` (contiguous, as even as possible), stage s on rank s % ranks.
struct MlpSpec {
    int layers = 4;
    int width = 16;
    int stages = 2;
    int ranks = 2;
    int microbatches = 4;
    int batch = 16;
    std::string schedule = "1f1b";
    std::string optimizer = "sgd";
    int seed = 7;
    bool checkpointing = false;  // training.activation_checkpointing
    // Data parallelism: replicas > 1 adds a device per rank of every replica
    // (cpu<ranks>, ... in the default layout) and the data_parallel section.
    int replicas = 1;
    int zero_stage = 0;
    bool overlap_gradient_sync = true;
    double bucket_MiB = 25;
    // How many of the model's entries (fc0, act0, fc1, ...) each stage
    // holds, in order; empty: as even as possible. {1, 1, 1} on two layers
    // puts the ReLU-like act0 alone on stage 1, a stage without parameters.
    std::vector<int> stage_entries;
};
[[nodiscard]] std::string mlp_project_json(const MlpSpec& spec);
[[nodiscard]] AnalyzedProject analyze_text(const std::string& json);
[[nodiscard]] AnalyzedProject analyze_file(const std::string& path);

// Plain single-process training of the whole model with gradient accumulation
// over the same micro-batches; returns its parameters in model order.
[[nodiscard]] std::vector<torch::Tensor> reference_parameters(const AnalyzedProject& p, int steps,
                                                              torch::Dtype dtype);
// The same on the batches `batch(step)` gives (a user's data).
[[nodiscard]] std::vector<torch::Tensor> reference_parameters(
    const AnalyzedProject& p, int steps, torch::Dtype dtype,
    const std::function<backend::Batch(int)>& batch);

// Largest max|a - b| / max|b| over the tensors, pairwise.
// What `run --save-params` wrote into `out` for a stage (of a replica, of a
// tensor-parallel member).
[[nodiscard]] std::vector<torch::Tensor> saved_stage_parameters(const std::filesystem::path& out,
                                                                int stage, int replica = 0,
                                                                int member = 0);

[[nodiscard]] double max_relative_difference(const std::vector<torch::Tensor>& a,
                                             const std::vector<torch::Tensor>& b);

}  // namespace pipewright::test

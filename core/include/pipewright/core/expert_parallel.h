#pragma once

// Expert parallelism (Megatron-LM, DeepSpeed-MoE): the routed experts of
// every mixture-of-experts block are split over `size` of the pipeline's
// data-parallel replicas, each holding experts / size of them; every such
// block dispatches its tokens to their experts' ranks, and combines the
// results, with an all-to-all forward and backward. The experts' gradients
// are averaged over the replicas that hold the same experts (data-parallel
// size / expert-parallel size of them). docs/concepts.md.

#include <string>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/model.h"

namespace pipewright {

struct ExpertParallel {
    int size = 1;

    bool operator==(const ExpertParallel&) const = default;
};

inline constexpr int kMaxExpertParallel = 4096;

// Whether `size` can split the model's experts over `data_parallel`
// replicas: it must divide the replicas and every mixture-of-experts
// block's routed experts, and the model must have such a block when it is
// over 1. Each problem goes to `d` at `size_path` ("expert_parallel.size"
// or "--expert-parallel") or at the block's field.
void check_expert_parallel(const Model& model, int size, int data_parallel,
                           const std::string& size_path, Diagnostics& d);

}  // namespace pipewright

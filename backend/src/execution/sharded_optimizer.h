#pragma once
// ZeRO stage 1: the optimizer state of a rank's stages sharded across the
// replicas. Each replica flattens every stage's parameters (padded to a
// multiple of the replicas), keeps optimizer state for its 1/D slice only,
// steps that slice with the averaged gradients, and all-gathers the updated
// slices so that every replica ends the step with the same whole weights.
// The optimizers Pipewright runs (SGD with momentum, Adam, AdamW) work
// element by element, so stepping slices equals stepping the whole.
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>
#include "pipewright/backend/transport.h"

#include "pipewright/core/training.h"

namespace pipewright::backend {

class ShardedOptimizer {
  public:
    // `stage_params`: each stage's parameters, the same shapes in every
    // replica. `group` holds this rank's copies in the other replicas; this
    // one is `replica` of `replicas`.
    ShardedOptimizer(const OptimizerConfig& config,
                     const std::vector<std::vector<torch::Tensor>>& stage_params,
                     c10::intrusive_ptr<CollectiveGroup> group, int replica, int replicas,
                     std::chrono::milliseconds timeout);

    // Zeroes the whole parameters' gradients (the backward accumulates into
    // them).
    void zero_grad();

    // Steps this replica's slice with the (already averaged) gradients, then
    // all-gathers every replica's updated slice into the whole parameters.
    void step();

    // Checkpoints: the optimizer's state of this replica's slice. load()
    // first takes the slice of the (already loaded) whole parameters again.
    void save(torch::serialize::OutputArchive& archive) const;
    void load(torch::serialize::InputArchive& archive);

    // Elements whose optimizer state this replica keeps (padding included).
    [[nodiscard]] std::int64_t shard_elements() const;

  private:
    struct Stage {
        std::vector<torch::Tensor> params;
        std::int64_t numel = 0;  // of the stage's parameters, unpadded
        std::int64_t shard = 0;  // elements per replica
        torch::Tensor mine;      // this replica's slice: what the optimizer steps
    };
    std::vector<Stage> stages_;
    c10::intrusive_ptr<CollectiveGroup> group_;
    int replica_;
    int replicas_;
    std::chrono::milliseconds timeout_;
    std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

}  // namespace pipewright::backend

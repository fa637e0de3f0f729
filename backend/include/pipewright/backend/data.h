#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "pipewright/core/analysis.h"

namespace pipewright::backend {

// One iteration's samples, already cut into the schedule's micro-batches.
struct Batch {
    std::vector<torch::Tensor> inputs;   // per micro-batch
    std::vector<torch::Tensor> targets;  // per micro-batch
};

// A learnable synthetic task drawn from the project seed: inputs are random
// (token ids for an embedding model), targets come from a fixed random
// "teacher", the same architecture with other weights. MSE targets are the
// teacher's outputs; cross-entropy classes are the argmax of its outputs over
// the last dimension. A student of the same architecture can fit it exactly,
// so the loss visibly falls whatever the model, imported ones included
// (their teacher's weights are drawn from the seed, not read from the file).
class SyntheticTask {
  public:
    // Without targets (ranks that hold no last stage) no teacher is built.
    SyntheticTask(const AnalyzedProject& project, torch::Dtype dtype, bool with_targets = true);

    // Replica `replica`'s share of step `step`'s global batch (the same on
    // every rank that asks). The global batch is the replicas' micro-batches
    // one after the other, so replica r trains on samples [r·B/D, (r+1)·B/D)
    // and D replicas together on exactly the batch one process would draw
    // as D·m micro-batches.
    [[nodiscard]] Batch batch(int step, int replica = 0) const;

  private:
    // Micro-batches [first, first + count) of step `step`'s global batch.
    [[nodiscard]] Batch draw(int step, int first, int count) const;

    const AnalyzedProject* project_;
    torch::Dtype dtype_;
    mutable torch::nn::Sequential teacher_;
    std::int64_t vocabulary_ = 0;  // > 0: inputs are token ids below it
    double target_scale_ = 1;      // makes MSE targets unit-variance
};

// The project's loss on one micro-batch (mean over its samples).
[[nodiscard]] torch::Tensor compute_loss(LossKind kind, const torch::Tensor& output,
                                         const torch::Tensor& target);

}  // namespace pipewright::backend

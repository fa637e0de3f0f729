#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <torch/torch.h>

#include "pipewright/backend/context_group.h"
#include "pipewright/backend/data.h"
#include "pipewright/backend/transport.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/run_records.h"
#include "pipewright/core/timeline.h"

namespace pipewright::backend {

// What one rank did in one iteration: the step of its record (rank-R.json),
// filled in directly. Times are steady-clock seconds, the same clock in every
// process of the machine, so ranks' records line up; memory samples are taken
// at the iteration's start, after every action and after the optimizer step
// (none without a memory probe).
using StepRecord = RecordedStep;

// The project's optimizer over `params` (SGD with momentum, Adam, AdamW).
[[nodiscard]] std::unique_ptr<torch::optim::Optimizer> make_optimizer(
    const OptimizerConfig& config, const std::vector<torch::Tensor>& params);

[[nodiscard]] double steady_seconds();

// Data parallelism: this rank's copies in the other replicas. `collectives`
// averages the gradients (REDUCE_GRAD) and gathers ZeRO-1's updated shards;
// `control` (Gloo) joins the barrier that opens each iteration, so that all
// replicas start it together. Null groups: one replica.
struct ReplicaGroup {
    c10::intrusive_ptr<CollectiveGroup> collectives;
    c10::intrusive_ptr<CollectiveGroup> control;
    int replica = 0;
    int replicas = 1;
    std::chrono::milliseconds timeout{60000};
};

// Expert parallelism: `dispatch`, the replicas this rank's stages' routed
// experts are split over (a block of E consecutive ones), and `holders`,
// the replicas that hold the same experts as this one (every E-th; null
// when no other does), over which the experts' gradients average. Size 1:
// every replica holds every expert.
struct ExpertReplicas {
    ExpertGroup dispatch;
    c10::intrusive_ptr<CollectiveGroup> holders;
    int holder = 0;
    int holders_count = 1;
};

// Executes one rank's action list of the schedule, iteration after iteration:
// forward and backward of its stages, transfers through `transport`,
// gradients accumulated over the micro-batches, one optimizer step.
class RankExecutor {
  public:
    // Runs on `device` (a CPU, or one CUDA device: the rank's own GPU).
    // `rank` is the rank in the pipeline (its action list); with `replicas`
    // this rank averages its gradients with its copies before each optimizer
    // step, and under ZeRO-1 keeps optimizer state for its shard only.
    // With `tensor` (size > 1) this rank is member tensor.rank of its
    // stages' tensor-parallel group: it holds its slices of their layers and
    // runs their collectives with the group (tensor_parallel_layers.h).
    // With `experts` (dispatch size > 1) it holds its share of every
    // mixture of experts' routed experts (mixture_of_experts.h). With
    // `context` (size > 1) this rank's batches hold its chunks of every
    // sequence, and its stages exchange attention's keys and values with
    // the group (context_group.h).
    RankExecutor(const AnalyzedProject& project, int rank, Transport& transport, torch::Dtype dtype,
                 torch::Device device = torch::kCPU, ReplicaGroup replicas = {},
                 TensorGroup tensor = {}, ExpertReplicas experts = {}, ContextGroup context = {});
    ~RankExecutor();
    RankExecutor(const RankExecutor&) = delete;
    RankExecutor& operator=(const RankExecutor&) = delete;

    // `batch` needs inputs when this rank holds stage 0, targets when it
    // holds the last stage.
    [[nodiscard]] StepRecord run_step(int step, const Batch& batch);

    // Sampled at every action boundary of run_step (a worker passes its
    // resident set size). Must be cheap: it runs between the actions.
    void set_memory_probe(std::function<std::int64_t()> probe);

    [[nodiscard]] bool has_first_stage() const;
    [[nodiscard]] bool has_last_stage() const;
    // Stage indices held by this rank, in model order, and their modules.
    [[nodiscard]] const std::vector<int>& stages() const;
    [[nodiscard]] torch::nn::Sequential module(int stage) const;

    // Checkpoints: the optimizer's state (under ZeRO-1 this replica's
    // shard). Load it after the parameters: a ZeRO-1 shard takes its slice
    // of them again.
    void save_optimizer(torch::serialize::OutputArchive& archive) const;
    void load_optimizer(torch::serialize::InputArchive& archive);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace pipewright::backend

#pragma once
// What happens to a rank's parameters around its micro-batches: their
// gradients averaged with their copies in the other replicas (REDUCE_GRAD),
// then one optimizer step, over the whole parameters or, under ZeRO-1, this
// replica's shard of their state.
//
// Under expert parallelism the routed experts are a set of their own: the
// replicas of an expert group hold different experts, so an expert's
// gradient averages over the replicas that hold the same one (every E-th),
// and ZeRO-1 shards its state over those. Both sets divide by all D
// replicas: every replica's tokens reached the experts.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "execution/gradient_sync.h"
#include "execution/sharded_optimizer.h"
#include "pipewright/backend/executor.h"

namespace pipewright::backend {

class ParameterUpdate {
  public:
    // `stages`: each local stage's module by stage index.
    ParameterUpdate(const AnalyzedProject& project,
                    const std::map<int, torch::nn::Sequential>& stages,
                    const ReplicaGroup& replicas, const ExpertReplicas& experts);
    ~ParameterUpdate();
    ParameterUpdate(const ParameterUpdate&) = delete;
    ParameterUpdate& operator=(const ParameterUpdate&) = delete;

    // Whether REDUCE_GRAD averages anything (more than one replica), and
    // whether the rank computes on while it travels (DDP's overlap).
    [[nodiscard]] bool reduces() const { return dense_.sync != nullptr; }
    [[nodiscard]] bool overlapped() const { return overlap_; }
    // REDUCE_GRAD of one stage: its reductions started, not awaited.
    [[nodiscard]] GradientSync::Started start_reduction(int stage);

    void zero_grad();
    // Waits for every reduction started and writes the averages back.
    void finish_reductions();
    // The optimizer step (ZeRO-1: this replica's shard, then the gather).
    void step();

    // Checkpoints: the optimizer state this rank keeps.
    void save(torch::serialize::OutputArchive& archive) const;
    void load(torch::serialize::InputArchive& archive);

  private:
    // One set of parameters, its reduction and its optimizer.
    struct Set {
        std::map<int, std::vector<torch::Tensor>> by_stage;
        std::unique_ptr<GradientSync> sync;
        std::unique_ptr<torch::optim::Optimizer> optimizer;  // one of the two
        std::unique_ptr<ShardedOptimizer> sharded;
        [[nodiscard]] bool empty() const { return by_stage.empty(); }
        void zero_grad();
        void step();
    };
    Set dense_;
    Set experts_;  // empty without expert parallelism
    bool overlap_ = true;
};

}  // namespace pipewright::backend

#pragma once
// A decoder block's mixture of experts (Mixtral, Qwen3-MoE, DeepSeek's
// shared experts), as the catalog's transformer_block with `experts`
// describes it, and its expert parallelism: the routed experts split over
// the ranks of an expert group, tokens dispatched to their experts' ranks
// and the results combined with an all-to-all each way.
//
// The router is dropless: every token reaches its top_k experts, so a
// token's output does not depend on which other tokens share its batch, and
// a run split over replicas and expert ranks computes exactly what one
// process computes on the whole batch (the equivalence tests check it).
#include <string>

#include <torch/torch.h>

#include "pipewright/backend/transport.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright::backend {

struct MixtureOfExpertsImpl : torch::nn::Module {
    // Every routed expert, initialised from Torch's generator (seeded by the
    // caller), so that the weights depend on the seed only.
    explicit MixtureOfExpertsImpl(const TransformerDims& d);

    // Keeps the routed experts of member `group.rank` of the group (a
    // contiguous 1/size of them) and routes through the group from now on.
    void keep_local_experts(const ExpertGroup& group);

    // [..., hidden] -> [..., hidden].
    torch::Tensor forward(const torch::Tensor& x);

    // Routed experts in the whole block, and the first one this member holds.
    [[nodiscard]] std::int64_t experts() const { return experts_; }
    [[nodiscard]] std::int64_t first_local_expert() const;

    torch::nn::Linear router{nullptr};
    // The experts' MLPs stacked along a first dimension of experts:
    // [experts, in, hidden], [experts, in], [experts, hidden, ffn], [experts,
    // hidden] (biases only with the block's `bias`); the same for the shared
    // experts, which every token passes through.
    torch::Tensor fc1_weight, fc1_bias, fc2_weight, fc2_bias;
    torch::Tensor shared_fc1_weight, shared_fc1_bias, shared_fc2_weight, shared_fc2_bias;

  private:
    // Rows grouped by local expert (`counts` rows each) through their MLPs.
    [[nodiscard]] torch::Tensor run_local_experts(const torch::Tensor& rows,
                                                  const std::vector<std::int64_t>& counts) const;
    // The rows this member's tokens send out (grouped by expert, every
    // expert's in order) through their experts, wherever those are held.
    [[nodiscard]] torch::Tensor through_experts(const torch::Tensor& rows,
                                                const torch::Tensor& per_expert) const;

    std::int64_t experts_ = 0;
    std::int64_t top_k_ = 0;
    std::int64_t shared_ = 0;
    MlpActivation activation_ = MlpActivation::gelu;
    ExpertGroup group_;
};
TORCH_MODULE(MixtureOfExperts);

// Whether a parameter (by its name in a stage's module) belongs to routed
// experts: its gradient averages over the replicas that hold the same
// experts, not over all of them.
[[nodiscard]] bool is_routed_expert_parameter(const std::string& name);

}  // namespace pipewright::backend

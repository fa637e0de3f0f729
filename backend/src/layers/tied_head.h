#pragma once
// The output head of a model with tied embeddings (core/tied_embeddings.h),
// and the sum of the two copies' gradients when the embedding and the head
// run in different stages.
#include <cstdint>
#include <memory>

#include <torch/torch.h>

#include "pipewright/backend/transport.h"
#include "pipewright/core/analysis.h"

namespace pipewright::backend {

// A tied embedding starts as GPT-2's does, at a standard deviation of 0.02
// (Torch's embedding draws from N(0, 1)): with one matrix at both ends, rows
// of unit scale make each token's own logit dwarf the others, and a model
// predicts its input with a loss of 0 from the first step.
void scale_tied_embedding(torch::nn::Module& embedding);

// A head that multiplies by the embedding module's own `weight`, which stays
// that module's parameter alone: the module's parameters list it once, and
// autograd adds both uses into its one gradient. Conversions of the
// embedding (to(dtype), to(device)) change the same tensor.
[[nodiscard]] torch::nn::AnyModule shared_weight_head(
    const std::shared_ptr<torch::nn::Module>& embedding);

// A head of its own (another stage's) whose weight starts as the embedding's
// does under `seed`: a linear layer without bias.
[[nodiscard]] torch::nn::AnyModule copied_weight_head(const AnalyzedProject& project,
                                                      std::uint64_t seed);

// Sums the gradients of the tied copies this rank holds with the other
// copy's, so that both copies take the same optimizer step: in place when
// one rank holds both stages, otherwise by swapping them with the peer rank
// through `transport`. `embedding` and `head` are the copies' weights here
// (undefined when this rank does not hold that stage). Each direction has
// its own tag (`to_head`, `to_embedding`), so that transports with a channel
// per tag (NCCL) never queue the two ranks' sends behind each other.
// a + b and b + a are the same floats: the ranks end with equal gradients.
void sum_tied_gradients(const torch::Tensor& embedding, const torch::Tensor& head, int peer,
                        int to_head, int to_embedding, Transport& transport);

}  // namespace pipewright::backend

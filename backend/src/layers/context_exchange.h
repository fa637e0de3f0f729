#pragma once
// How the members of a context group exchange attention's keys and values
// (docs/real-runs.md#context-parallel-runs): each member's queries must meet
// the keys of the whole sequence, which the group holds in pieces.
// - ring (context_parallel.exchange "ring"): C − 1 point-to-point steps,
//   each passing the block in hand to the next member and taking the
//   previous member's; the backward passes the blocks' gradients back the
//   other way, so that each member receives what the others' queries made
//   of its keys and values.
// - all_gather: every member's block gathered at once; the backward sums
//   the gradients of every block over the group and keeps its own.
// Every member of a group runs the same actions in the same order (they
// hold the same stages), so the exchanges always meet.

#include <chrono>
#include <string>

#include <torch/torch.h>

#include "pipewright/backend/context_group.h"

namespace pipewright::backend {

// The context group of replicas [group·size, (group + 1)·size) of pipeline
// rank `in_pipeline` (of one tensor-parallel slice, whose store `store` is),
// joined as member `member`: Gloo, or NCCL between GPUs where the build has
// it; keys under "context-<in_pipeline>-<group>/" of `store`.
[[nodiscard]] ContextGroup make_context_group(c10::intrusive_ptr<c10d::Store> store,
                                              const std::string& master_host, int in_pipeline,
                                              int group, int member, int size,
                                              ContextExchange exchange, const torch::Device& device,
                                              std::chrono::milliseconds timeout);

// A member's keys and values next to the rest of the group's, each key with
// its true position in the whole sequence (what the causal mask needs).
struct GroupKeys {
    torch::Tensor keys, values;  // [batch, kv_heads, size · len, head_dim]
    torch::Tensor positions;     // [size · len], int64, on the keys' device
};

// Exchanges this member's `keys` and `values` ([batch, kv_heads, len,
// head_dim], rotary already applied at their true positions) with the
// group, by the group's exchange. Differentiable: the gradients of the
// other members' blocks go back to them, and this member receives those of
// its own.
[[nodiscard]] GroupKeys exchange_keys_values(const torch::Tensor& keys, const torch::Tensor& values,
                                             const ContextGroup& group);

}  // namespace pipewright::backend

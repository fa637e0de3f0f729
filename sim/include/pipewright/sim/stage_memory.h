#pragma once

// What a stage holds in memory for a whole iteration, apart from its
// activations: weights, gradients, optimizer state and fp32 master weights,
// sharded across data-parallel replicas by ZeRO, and what a ZeRO-3 stage
// gathers for its compute. The cost model (cost_model.h) says what a stage
// costs in time.

#include <cstdint>

#include "pipewright/core/data_parallel.h"
#include "pipewright/core/training.h"
#include "pipewright/sim/cost_model.h"

namespace pipewright {

// What one parameter takes for a whole iteration, in the three parts ZeRO
// shards apart: its weight (the compute dtype), its gradient
// (Training::gradients()), and the optimizer's (its state, and the fp32
// master weight under mixed precision).
struct ParameterBytes {
    std::int64_t weight = 0;
    std::int64_t gradient = 0;
    std::int64_t optimizer = 0;

    [[nodiscard]] std::int64_t total() const { return weight + gradient + optimizer; }
};
[[nodiscard]] ParameterBytes parameter_bytes(const Training& training);

// Bytes that do not change during an iteration: weights, gradients, optimizer
// state and fp32 master weights under mixed precision.
[[nodiscard]] std::int64_t static_memory_bytes(std::int64_t parameters, const Training& training);
// The same with `dp.size` replicas at ZeRO stage `dp.zero_stage`: stage 1
// divides the optimizer state (and master weights) by the replicas, 2 the
// gradients as well, 3 the weights too (gathered_weight_bytes come and go).
[[nodiscard]] std::int64_t static_memory_bytes(std::int64_t parameters, const Training& training,
                                               const DataParallel& dp);
// The bytes a ZeRO-3 stage gathers from the other replicas for its compute:
// its weights less the shard it keeps (0 below stage 3 or with one replica).
[[nodiscard]] std::int64_t gathered_weight_bytes(std::int64_t parameters, const Training& training,
                                                 const DataParallel& dp);
// Bytes of the stage's gradients (REDUCE_GRAD) and of its weights (UNSHARD),
// in the compute dtype, as each replica holds them.
[[nodiscard]] double gradient_bytes(std::int64_t parameters, const Training& training);
// The replicas that hold the same routed experts under expert parallelism
// (data-parallel ÷ expert-parallel of them), at `dp`'s ZeRO stage: what the
// experts' state shards over and their weights are gathered from.
[[nodiscard]] DataParallel expert_holders(const DataParallel& dp, int expert_parallel);
// A stage's weights, gradients and optimizer state on one device: the
// routed experts' sharded (ZeRO) over their holders, the rest over all the
// replicas.
[[nodiscard]] std::int64_t stage_static_bytes(const StageCost& stage, const Training& training,
                                              const DataParallel& dp, int expert_parallel);
// What a ZeRO-3 stage gathers for its compute: the routed experts from
// their holders, the rest from all the replicas.
[[nodiscard]] std::int64_t stage_gathered_bytes(const StageCost& stage, const Training& training,
                                                const DataParallel& dp, int expert_parallel);
// Under ZeRO-2 and 3 a replica keeps only its shard of the gradients once
// they are reduced; the simulation reduces them once an iteration, so every
// micro-batch's add up whole until then. The bytes beyond the shard that the
// stage holds meanwhile (0 below stage 2 or with one replica).
[[nodiscard]] std::int64_t stage_unsharded_gradient_bytes(const StageCost& stage,
                                                          const Training& training,
                                                          const DataParallel& dp,
                                                          int expert_parallel);

}  // namespace pipewright

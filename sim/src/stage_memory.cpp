#include "pipewright/sim/stage_memory.h"

#include <algorithm>

#include "pipewright/core/diagnostics.h"

namespace pipewright {

namespace {

// One replica's shard of `bytes` sharded over `replicas`, and the rest.
std::int64_t shard_of(std::int64_t bytes, int replicas) {
    return (bytes + replicas - 1) / replicas;
}
std::int64_t other_shards(std::int64_t bytes, int replicas) {
    return bytes - shard_of(bytes, replicas);
}

// The gradients beyond a replica's shard, which ZeRO-2/3 hold until the
// reduction (0 below stage 2 or with one replica).
std::int64_t unsharded_gradient_bytes(std::int64_t parameters, const Training& training,
                                      const DataParallel& dp) {
    if (dp.size <= 1 || dp.zero_stage < 2) {
        return 0;
    }
    return other_shards(parameters * dtype_bytes(training.gradients()), dp.size);
}

// `bytes_of` (parameters, replicas) over a stage's parameters: the routed
// experts' over their holders, the rest over all the replicas.
template <typename BytesOf>
std::int64_t over_holders(const StageCost& stage, const DataParallel& dp, int expert_parallel,
                          BytesOf bytes_of) {
    return bytes_of(stage.parameters - stage.expert_parameters, dp) +
           bytes_of(stage.expert_parameters, expert_holders(dp, expert_parallel));
}

}  // namespace

ParameterBytes parameter_bytes(const Training& training) {
    // Mixed precision keeps an fp32 master copy of the weights for the optimizer.
    const std::int64_t master = training.dtype == DType::float32 ? 0 : 4;
    return {dtype_bytes(training.dtype), dtype_bytes(training.gradients()),
            master + training.optimizer.state_bytes_per_param()};
}

std::int64_t static_memory_bytes(std::int64_t parameters, const Training& training) {
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(parameters, parameter_bytes(training).total(), &bytes)) {
        throw InputError("model.layers", std::to_string(parameters) +
                                             " parameters need more bytes of weights and "
                                             "optimizer state than 64 bits can count");
    }
    return bytes;
}

std::int64_t static_memory_bytes(std::int64_t parameters, const Training& training,
                                 const DataParallel& dp) {
    const std::int64_t whole = static_memory_bytes(parameters, training);
    if (dp.size <= 1 || dp.zero_stage <= 0) {
        return whole;
    }
    const ParameterBytes each = parameter_bytes(training);
    const std::int64_t weights = parameters * each.weight;
    const std::int64_t gradients = parameters * each.gradient;
    const std::int64_t optimizer = whole - weights - gradients;
    const auto shard = [&dp](std::int64_t bytes) { return shard_of(bytes, dp.size); };
    return (dp.zero_stage >= 3 ? shard(weights) : weights) +
           (dp.zero_stage >= 2 ? shard(gradients) : gradients) + shard(optimizer);
}

std::int64_t gathered_weight_bytes(std::int64_t parameters, const Training& training,
                                   const DataParallel& dp) {
    if (dp.size <= 1 || dp.zero_stage < 3) {
        return 0;
    }
    return other_shards(parameters * dtype_bytes(training.dtype), dp.size);
}

double gradient_bytes(std::int64_t parameters, const Training& training) {
    return static_cast<double>(parameters) * static_cast<double>(dtype_bytes(training.gradients()));
}

DataParallel expert_holders(const DataParallel& dp, int expert_parallel) {
    DataParallel holders = dp;
    holders.size = std::max(1, dp.size / std::max(1, expert_parallel));
    return holders;
}

std::int64_t stage_static_bytes(const StageCost& stage, const Training& training,
                                const DataParallel& dp, int expert_parallel) {
    return over_holders(stage, dp, expert_parallel, [&](std::int64_t n, const DataParallel& d) {
        return static_memory_bytes(n, training, d);
    });
}

std::int64_t stage_unsharded_gradient_bytes(const StageCost& stage, const Training& training,
                                            const DataParallel& dp, int expert_parallel) {
    return over_holders(stage, dp, expert_parallel, [&](std::int64_t n, const DataParallel& d) {
        return unsharded_gradient_bytes(n, training, d);
    });
}

std::int64_t stage_gathered_bytes(const StageCost& stage, const Training& training,
                                  const DataParallel& dp, int expert_parallel) {
    return over_holders(stage, dp, expert_parallel, [&](std::int64_t n, const DataParallel& d) {
        return gathered_weight_bytes(n, training, d);
    });
}

}  // namespace pipewright

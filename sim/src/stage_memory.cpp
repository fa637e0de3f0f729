#include "pipewright/sim/stage_memory.h"

#include <algorithm>

#include "pipewright/core/diagnostics.h"

namespace pipewright {

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
    const auto shard = [&dp](std::int64_t bytes) { return (bytes + dp.size - 1) / dp.size; };
    return (dp.zero_stage >= 3 ? shard(weights) : weights) +
           (dp.zero_stage >= 2 ? shard(gradients) : gradients) + shard(optimizer);
}

std::int64_t gathered_weight_bytes(std::int64_t parameters, const Training& training,
                                   const DataParallel& dp) {
    if (dp.size <= 1 || dp.zero_stage < 3) {
        return 0;
    }
    const std::int64_t weights = parameters * dtype_bytes(training.dtype);
    return weights - (weights + dp.size - 1) / dp.size;
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
    return static_memory_bytes(stage.parameters - stage.expert_parameters, training, dp) +
           static_memory_bytes(stage.expert_parameters, training,
                               expert_holders(dp, expert_parallel));
}

std::int64_t stage_unsharded_gradient_bytes(const StageCost& stage, const Training& training,
                                            const DataParallel& dp, int expert_parallel) {
    const auto beyond_shard = [&](std::int64_t parameters, const DataParallel& holders) {
        if (holders.size <= 1 || holders.zero_stage < 2) {
            return std::int64_t{0};
        }
        const std::int64_t whole = parameters * dtype_bytes(training.gradients());
        return whole - (whole + holders.size - 1) / holders.size;
    };
    return beyond_shard(stage.parameters - stage.expert_parameters, dp) +
           beyond_shard(stage.expert_parameters, expert_holders(dp, expert_parallel));
}

std::int64_t stage_gathered_bytes(const StageCost& stage, const Training& training,
                                  const DataParallel& dp, int expert_parallel) {
    return gathered_weight_bytes(stage.parameters - stage.expert_parameters, training, dp) +
           gathered_weight_bytes(stage.expert_parameters, training,
                                 expert_holders(dp, expert_parallel));
}

}  // namespace pipewright

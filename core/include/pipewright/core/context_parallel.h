#pragma once

// Context parallelism (Megatron-LM's context_parallel_size; Llama 3's
// long-context phase): `size` of the pipeline's data-parallel replicas
// share each sample, every one of them holding 1/size of its sequence.
// The sequence is cut into 2 × size chunks and each rank takes a chunk from
// both ends (chunks i and 2·size − 1 − i), so that causal attention costs
// every rank the same. Every layer then runs on 1/size of the tokens; only
// attention needs the other ranks' keys and values, which they exchange:
// - by ring: size − 1 point-to-point steps, each overlapped with the
//   attention of the chunk in hand (Megatron-LM's and TransformerEngine's
//   "p2p"), and in the backward the keys' and values' gradients travel too;
// - by all-gather: the whole sequence's keys and values gathered before
//   attention, and their gradients reduce-scattered after it (Llama 3).
// The replicas of one context group are consecutive (Megatron-LM's order:
// tensor, context, data), and the batch splits over the groups: data-
// parallel size / size shares. docs/concepts.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/model.h"

namespace pipewright {

enum class ContextExchange { ring, all_gather };

[[nodiscard]] std::string_view to_string(ContextExchange e);
// "ring", "all_gather" (and "all-gather", as a command line spells it).
[[nodiscard]] std::optional<ContextExchange> parse_context_exchange(std::string_view s);

struct ContextParallel {
    int size = 1;
    ContextExchange exchange = ContextExchange::ring;

    bool operator==(const ContextParallel&) const = default;
};

inline constexpr int kMaxContextParallel = 1024;

// The groups the batch splits over: the data-parallel replicas, those of a
// context-parallel group counting once since they share their samples
// (all of them when `context_parallel` does not divide them, a layout the
// check refuses).
[[nodiscard]] constexpr int batch_shares(int data_parallel, int context_parallel) {
    const int replicas = data_parallel < 1 ? 1 : data_parallel;
    return context_parallel > 1 && replicas % context_parallel == 0 ? replicas / context_parallel
                                                                    : replicas;
}

// Whether `size` can split the model's sequences over `data_parallel`
// replicas: the model must have attention (a transformer_block, whose
// input's first dimension, `sequence`, is the sequence length), the
// sequence must cut into 2 × size equal chunks, and size must divide the
// replicas. Each problem goes to `d` at `size_path` ("context_parallel.size"
// or "--context-parallel").
void check_context_parallel(const Model& model, std::optional<std::int64_t> sequence, int size,
                            int data_parallel, const std::string& size_path, Diagnostics& d);

}  // namespace pipewright

#include "pipewright/core/context_parallel.h"

namespace pipewright {

std::string_view to_string(ContextExchange e) {
    return e == ContextExchange::all_gather ? "all_gather" : "ring";
}

std::optional<ContextExchange> parse_context_exchange(std::string_view s) {
    if (s == "ring") {
        return ContextExchange::ring;
    }
    if (s == "all_gather" || s == "all-gather") {
        return ContextExchange::all_gather;
    }
    return std::nullopt;
}

void check_context_parallel(const Model& model, std::optional<std::int64_t> sequence, int size,
                            int data_parallel, const std::string& size_path, Diagnostics& d) {
    if (size < 1 || size > kMaxContextParallel) {
        d.add(size_path, "must be from 1 to " + std::to_string(kMaxContextParallel));
        return;
    }
    if (size == 1) {
        return;
    }
    const std::string c = std::to_string(size);
    bool attention = false;
    for (const LayerSpec& layer : model.layers) {
        attention = attention || layer.type == "transformer_block";
    }
    if (!attention || !sequence) {
        d.add(size_path, c + " splits every sequence over that many ranks, and exchanges the "
                             "keys and values of attention between them, but the model has no "
                             "transformer_block; use 1");
        return;
    }
    // Two chunks a rank, one from each end, balance the causal mask's work.
    if (*sequence % (2 * static_cast<std::int64_t>(size)) != 0) {
        d.add(size_path, "the sequence of " + std::to_string(*sequence) +
                             " tokens does not cut into " + std::to_string(2 * size) +
                             " equal chunks (two for each of " + c +
                             " ranks, one from each end, so that causal attention costs them "
                             "alike); use a context-parallel size whose double divides the "
                             "sequence length");
        return;
    }
    if (data_parallel % size != 0) {
        d.add(size_path,
              c + " must divide the " + std::to_string(data_parallel) +
                  " data-parallel replicas: each sample's sequence is split over " + c +
                  " replicas of the pipeline, and the batch over the groups they form; use a "
                  "data-parallel size that is a multiple of " +
                  c + " (--data-parallel), or a smaller context-parallel size");
    }
}

}  // namespace pipewright

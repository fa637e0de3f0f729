#include "layers/context_chunks.h"

#include "pipewright/backend/backend_error.h"

namespace pipewright::backend {

torch::Tensor context_positions(std::int64_t local_length, int rank, int size) {
    // Two chunks of local_length / 2 tokens: the rank-th from the start and
    // the rank-th from the end.
    const std::int64_t chunk = local_length / 2;
    const auto options = torch::TensorOptions(torch::kInt64);
    const std::int64_t first = rank * chunk;
    const std::int64_t second = (2 * static_cast<std::int64_t>(size) - 1 - rank) * chunk;
    return torch::cat({torch::arange(first, first + chunk, options),
                       torch::arange(second, second + chunk, options)});
}

torch::Tensor context_chunks(const torch::Tensor& whole, std::int64_t dim, int rank, int size) {
    const std::int64_t length = whole.size(dim);
    if (length % (2 * static_cast<std::int64_t>(size)) != 0) {
        throw BackendError("a sequence of " + std::to_string(length) + " does not cut into " +
                           std::to_string(2 * size) + " chunks for context parallelism");
    }
    const std::int64_t chunk = length / (2 * static_cast<std::int64_t>(size));
    return torch::cat(
        {whole.narrow(dim, rank * chunk, chunk),
         whole.narrow(dim, (2 * static_cast<std::int64_t>(size) - 1 - rank) * chunk, chunk)},
        dim);
}

Batch context_share(const Batch& whole, int rank, int size) {
    // Dimension 1: the sequence, after the micro-batch's samples. Targets
    // are per token (class ids, or values of the output's shape): the
    // launcher refuses a model whose loss is not.
    Batch mine;
    for (const torch::Tensor& x : whole.inputs) {
        mine.inputs.push_back(x.defined() ? context_chunks(x, 1, rank, size) : x);
    }
    for (const torch::Tensor& y : whole.targets) {
        mine.targets.push_back(y.defined() ? context_chunks(y, 1, rank, size) : y);
    }
    return mine;
}

}  // namespace pipewright::backend

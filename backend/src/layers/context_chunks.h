#pragma once
// Which tokens of a sequence a member of a context group holds: of the
// sequence cut into 2·C equal chunks, chunk i and chunk 2·C − 1 − i for
// member i, in that order, so that under the causal mask every member's
// attention does the same work. The data it trains on, the positions its
// embedding adds and its rotary angles all follow from this one rule.

#include <cstdint>

#include <torch/torch.h>

#include "pipewright/backend/data.h"

namespace pipewright::backend {

// The true positions, in the whole sequence, of the `local_length` tokens
// member `rank` of `size` holds (int64, on the CPU): for a sequence of 8
// over 2 members, member 0 holds 0 1 6 7 and member 1 holds 2 3 4 5.
[[nodiscard]] torch::Tensor context_positions(std::int64_t local_length, int rank, int size);

// Member `rank`'s two chunks of `whole` along dimension `dim` (the
// sequence), one after the other.
[[nodiscard]] torch::Tensor context_chunks(const torch::Tensor& whole, std::int64_t dim, int rank,
                                           int size);

// A batch of whole sequences cut to member `rank`'s tokens: every
// micro-batch's inputs and per-token targets ([batch, sequence, ...]).
[[nodiscard]] Batch context_share(const Batch& whole, int rank, int size);

}  // namespace pipewright::backend

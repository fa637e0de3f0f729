#pragma once
// Tied embeddings (core/tied_embeddings.h) in an iteration: when the
// embedding and the head sit in different stages, each keeps a copy of the
// shared matrix, and after the backward the two gradients are summed (an
// all-reduce between the two ranks, per tensor-parallel member and per
// replica, as Megatron-LM's embedding group does), before either rank steps
// its optimizer.
#include <optional>

#include "pipewright/core/analysis.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/cost_model.h"

namespace pipewright {

struct TiedEmbeddingSync {
    int embedding_stage = 0;
    int head_stage = 0;
    int embedding_rank = 0;
    int head_rank = 0;
    double bytes = 0;  // one copy's gradient (a member's slice under tensor parallelism)
    double seconds = 0;
    // Between two ranks: the all-reduce's library and protocol. On one rank
    // (two stages of one device) the sum is a memory-bound add.
    bool same_rank = false;
    CollectiveLibrary library = CollectiveLibrary::gloo;
    CollectiveProtocol protocol = CollectiveProtocol::simple;
};

// The sum a project's iteration needs, priced on its devices and links; none
// when the model does not tie or one stage holds both layers.
[[nodiscard]] std::optional<TiedEmbeddingSync> tied_embedding_sync(const AnalyzedProject& project,
                                                                   const CostModelOptions& options);

}  // namespace pipewright

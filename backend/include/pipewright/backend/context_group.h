#pragma once

// Context parallelism as one member of a context group sees it: the C
// consecutive data-parallel replicas that share every sequence, each holding
// two of its 2·C chunks (core/include/pipewright/core/context_parallel.h).
// The modules that need it (the embedding's position table, a block's
// attention) are built with it; size 1 is no context parallelism.

#include <chrono>

#include "pipewright/backend/transport.h"
#include "pipewright/core/context_parallel.h"

namespace pipewright::backend {

struct ContextGroup {
    c10::intrusive_ptr<CollectiveGroup> group;
    int rank = 0;  // this member: it holds chunks rank and 2·size − 1 − rank
    int size = 1;
    ContextExchange exchange = ContextExchange::ring;
    // Gloo moves host memory: a GPU run without NCCL sends host copies.
    bool host_copies = false;
    std::chrono::milliseconds timeout{60000};
};

}  // namespace pipewright::backend

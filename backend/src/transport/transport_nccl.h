#pragma once
// c10d's NCCL process group between the ranks' GPUs. Compiled only against a
// LibTorch with CUDA and NCCL (PIPEWRIGHT_WITH_NCCL).
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "pipewright/backend/transport.h"
#include "transport/transfer_channels.h"

namespace pipewright::backend {

// NCCL matches point-to-point messages by order, not by tag, and a send
// occupies its communicator's stream until the peer receives it. So each
// channel (`channel_of(tag)`, see transfer_channels.h) gets a process group
// of its own, and the caller must have checked that every channel is
// received in the order it is sent (channel_order_problem). The channels of
// `ends` that touch this rank are set up before it returns (see connect in
// the source). The barrier between iterations goes through a Gloo group over
// the same store.
[[nodiscard]] std::unique_ptr<Transport> make_nccl_transport(
    c10::intrusive_ptr<c10d::Store> store, const std::string& master_host, int rank, int world_size,
    const torch::Device& device, std::chrono::milliseconds timeout,
    std::function<int(int tag)> channel_of, const std::vector<ChannelEnds>& ends);

// An NCCL process group of `size` members over `store`, keys under `prefix`:
// the data-parallel collectives between the GPUs of one pipeline rank's
// replicas (gradient_sync.h).
[[nodiscard]] c10::intrusive_ptr<CollectiveGroup> make_nccl_group(
    c10::intrusive_ptr<c10d::Store> store, const std::string& prefix, int rank, int size,
    std::chrono::milliseconds timeout);

}  // namespace pipewright::backend

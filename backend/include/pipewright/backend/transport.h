#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

namespace pipewright::backend {

// A group of ranks that runs collectives (all-reduce, all-gather, barrier).
// LibTorch 2 made Gloo's and NCCL's groups c10d::Backend implementations
// behind a dispatching ProcessGroup; in 1.13 they were ProcessGroups. Both
// bases offer the same collective calls, so the code holds whichever the
// concrete groups derive from.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveGroup = c10d::Backend;
#else
using CollectiveGroup = c10d::ProcessGroup;
#endif

// A stage's tensor-parallel group as one member sees it (size 1: none).
struct TensorGroup {
    c10::intrusive_ptr<CollectiveGroup> group;
    int rank = 0;  // this member's slice of each split layer
    int size = 1;
};

// The ranks a mixture of experts' routed experts are split over (expert
// parallelism), as one member sees it: it holds the member-th 1/size of
// every block's experts. Size 1: every expert on this rank.
struct ExpertGroup {
    c10::intrusive_ptr<CollectiveGroup> group;
    int rank = 0;
    int size = 1;
};

// A send in flight. The executor hands it to a watcher thread that waits on
// it, to stamp the moment the transfer completed, and keeps the tensor alive
// until then.
class PendingSend {
  public:
    virtual ~PendingSend() = default;
    // True only when the send is known complete without waiting (a Gloo send
    // learns that it completed only inside wait()).
    [[nodiscard]] virtual bool done() = 0;
    virtual void wait() = 0;  // throws when the transfer failed or timed out
    // Makes a wait() in another thread return early (shutting down).
    virtual void abort() {}
};

// A receive posted ahead of the action that needs the tensor, so that the
// data can move while the rank still computes.
class PendingRecv {
  public:
    virtual ~PendingRecv() = default;
    // Blocks until the tensor has arrived (throws when the transfer failed or
    // timed out) and returns it; call once.
    [[nodiscard]] virtual torch::Tensor wait() = 0;
};

// Point-to-point tensors between ranks, plus what an iteration needs around
// them. Messages between two ranks with the same tag arrive in send order.
class Transport {
  public:
    virtual ~Transport() = default;
    [[nodiscard]] virtual int rank() const = 0;
    [[nodiscard]] virtual int world_size() const = 0;
    // Never blocks on the receiver: pipeline schedules post sends before the
    // matching receives exist.
    [[nodiscard]] virtual std::unique_ptr<PendingSend> send(const torch::Tensor& tensor, int peer,
                                                            int tag) = 0;
    // Posts a receive without waiting; `like` gives the tensor's shape, type
    // and device.
    [[nodiscard]] virtual std::unique_ptr<PendingRecv> post_recv(const torch::Tensor& like,
                                                                 int peer, int tag) = 0;
    // Blocks until the tensor arrives.
    [[nodiscard]] torch::Tensor recv(const torch::Tensor& like, int peer, int tag) {
        return post_recv(like, peer, tag)->wait();
    }
    virtual void barrier() = 0;
};

// Ranks as threads of one process (unit tests): tensors are handed over
// through queues. A rank that fails calls abort() so that the others stop
// waiting instead of hanging until the timeout.
class InProcessGroup {
  public:
    InProcessGroup(int world_size, std::chrono::milliseconds timeout);
    ~InProcessGroup();
    InProcessGroup(const InProcessGroup&) = delete;
    InProcessGroup& operator=(const InProcessGroup&) = delete;

    [[nodiscard]] std::unique_ptr<Transport> transport(int rank);
    void abort();

    struct State;

  private:
    std::shared_ptr<State> state_;
};

// A client of the rendezvous TCPStore on host:port. Connecting retries until
// `timeout`, so a store that starts a little later is still found; after
// that it throws.
[[nodiscard]] c10::intrusive_ptr<c10d::Store> connect_rendezvous_store(
    const std::string& host, int port, std::chrono::milliseconds timeout);

// c10d: a TCPStore client for the rendezvous on master_host:master_port and a
// ProcessGroupGloo over it. Every wait is bounded by `timeout`.
[[nodiscard]] std::unique_ptr<Transport> make_gloo_transport(const std::string& master_host,
                                                             int master_port, int rank,
                                                             int world_size,
                                                             std::chrono::milliseconds timeout);

// The same over a store the caller already holds (a worker keeps one client
// for the rendezvous, progress and its records). `master_host` chooses the
// network interface: a loopback master keeps every rank on the loopback
// interface; otherwise GLOO_SOCKET_IFNAME names the interface, or Gloo uses
// the address this machine's hostname resolves to (as PyTorch does).
[[nodiscard]] std::unique_ptr<Transport> make_gloo_transport(c10::intrusive_ptr<c10d::Store> store,
                                                             const std::string& master_host,
                                                             int rank, int world_size,
                                                             std::chrono::milliseconds timeout);

// A Gloo process group of `size` members (this one is `rank`) whose keys
// live under `prefix` in `store`, on the interface `master_host` chooses (as
// make_gloo_transport). Data parallelism gives each rank of the pipeline one
// such group with its copies in the other replicas: collectives there never
// share a connection, a tag or an order with the pipeline's sends.
[[nodiscard]] c10::intrusive_ptr<CollectiveGroup> make_gloo_group(
    c10::intrusive_ptr<c10d::Store> store, const std::string& prefix,
    const std::string& master_host, int rank, int size, std::chrono::milliseconds timeout);

// The group whose collectives move the tensors of ranks on `device`: NCCL
// between GPUs where the build has it (keys under prefix + "nccl"), else
// Gloo (under prefix + "gloo"), which copies a GPU's tensors through host
// memory.
[[nodiscard]] c10::intrusive_ptr<CollectiveGroup> make_device_group(
    c10::intrusive_ptr<c10d::Store> store, const std::string& prefix,
    const std::string& master_host, int rank, int size, const torch::Device& device,
    std::chrono::milliseconds timeout);

}  // namespace pipewright::backend

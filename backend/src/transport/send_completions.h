#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "pipewright/backend/transport.h"

namespace pipewright::backend {

// Stamps the moment each send of a rank completes, without making the rank's
// compute thread wait for it. A Gloo send learns that it completed only
// inside a blocking wait(), so one watcher thread per peer waits on that
// peer's sends in the order they were posted and notes the steady-clock time
// each wait returned. The threads sleep inside the wait; they take no CPU
// from the compute thread. The stamp is exact when the peer takes the sends
// in the order they were posted (every schedule's sends to one peer are
// received in posting order); a send that completed while an earlier one was
// still pending is stamped when the earlier one completes.
class SendCompletions {
  public:
    SendCompletions() = default;
    ~SendCompletions();
    SendCompletions(const SendCompletions&) = delete;
    SendCompletions& operator=(const SendCompletions&) = delete;

    // `keep_alive` is the tensor being sent; it lives until the send is done.
    // `event` identifies the send to the caller in collect()'s result.
    void watch(std::unique_ptr<PendingSend> send, torch::Tensor keep_alive, int peer,
               std::size_t event, double posted_s);

    // Waits until every watched send has completed and returns (event,
    // completion time) of each since the last call. Rethrows the first
    // failure of a send.
    [[nodiscard]] std::vector<std::pair<std::size_t, double>> collect();

  private:
    struct Item {
        std::unique_ptr<PendingSend> send;
        torch::Tensor keep_alive;
        std::size_t event = 0;
    };
    struct Peer {
        std::deque<Item> queue;
        std::unique_ptr<PendingSend>* waiting = nullptr;  // the send inside wait(), for abort
        std::thread thread;
    };
    void watch_peer(int peer);

    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<int, Peer> peers_;
    std::vector<std::pair<std::size_t, double>> done_;
    std::size_t pending_ = 0;
    std::exception_ptr failure_;
    bool stopping_ = false;
};

}  // namespace pipewright::backend

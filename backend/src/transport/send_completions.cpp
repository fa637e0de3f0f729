#include "transport/send_completions.h"

#include "pipewright/backend/executor.h"

namespace pipewright::backend {

SendCompletions::~SendCompletions() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
        // A send still in flight (the run is failing) must not hold the
        // destructor for the whole c10d timeout.
        for (auto& [peer, p] : peers_) {
            if (p.waiting != nullptr) {
                (*p.waiting)->abort();
            }
        }
    }
    changed_.notify_all();
    for (auto& [peer, p] : peers_) {
        if (p.thread.joinable()) {
            p.thread.join();
        }
    }
}

void SendCompletions::watch(std::unique_ptr<PendingSend> send, torch::Tensor keep_alive, int peer,
                            std::size_t event, double posted_s) {
    const std::lock_guard lock(mutex_);
    if (send->done()) {
        // Transports that copy at once (in-process) are done when posted.
        done_.emplace_back(event, posted_s);
        return;
    }
    Peer& p = peers_[peer];
    p.queue.push_back({std::move(send), std::move(keep_alive), event});
    ++pending_;
    if (!p.thread.joinable()) {
        p.thread = std::thread([this, peer] { watch_peer(peer); });
    }
    changed_.notify_all();
}

void SendCompletions::watch_peer(int peer) {
    std::unique_lock lock(mutex_);
    Peer& p = peers_.at(peer);
    while (true) {
        changed_.wait(lock, [&] { return stopping_ || !p.queue.empty(); });
        if (stopping_) {
            return;
        }
        // The item stays in the queue (and its tensor alive) during the wait.
        Item& item = p.queue.front();
        p.waiting = &item.send;
        lock.unlock();
        std::exception_ptr error;
        try {
            item.send->wait();
        } catch (...) {
            error = std::current_exception();
        }
        const double end = steady_seconds();
        lock.lock();
        p.waiting = nullptr;
        if (stopping_) {
            return;
        }
        if (error && !failure_) {
            failure_ = error;
        }
        done_.emplace_back(item.event, end);
        p.queue.pop_front();
        --pending_;
        changed_.notify_all();
    }
}

std::vector<std::pair<std::size_t, double>> SendCompletions::collect() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return pending_ == 0; });
    if (failure_) {
        std::rethrow_exception(std::exchange(failure_, nullptr));
    }
    return std::exchange(done_, {});
}

}  // namespace pipewright::backend

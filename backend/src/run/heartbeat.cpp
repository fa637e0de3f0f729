#include "run/heartbeat.h"

#include "run/rendezvous.h"

namespace pipewright::backend {

Heartbeat::Heartbeat(c10::intrusive_ptr<c10d::Store> store, int rank)
    : store_(std::move(store)), rank_(rank) {
    thread_ = std::thread([this] {
        std::unique_lock lock(mutex_);
        while (!stopping_) {
            try {
                (void)store_->add(keys::alive(rank_), 1);
            } catch (const std::exception&) {
                // The store is gone: the run is ending; the worker learns it
                // from its own next store or transport operation.
                return;
            }
            stop_.wait_for(lock, kHeartbeatPeriod, [this] { return stopping_; });
        }
    });
}

Heartbeat::~Heartbeat() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    stop_.notify_all();
    thread_.join();
}

HeartbeatWatch::HeartbeatWatch(int world, std::chrono::steady_clock::time_point start)
    : seen_(static_cast<std::size_t>(world), Seen{"", start}) {}

void HeartbeatWatch::poll(c10d::Store& store, std::chrono::steady_clock::time_point now) {
    if (now - last_poll_ < kHeartbeatPeriod) {
        return;
    }
    last_poll_ = now;
    for (std::size_t r = 0; r < seen_.size(); ++r) {
        const auto value = try_get_text(store, keys::alive(static_cast<int>(r)));
        if (value && *value != seen_[r].value) {
            seen_[r] = {*value, now};
        }
    }
}

std::vector<int> HeartbeatWatch::silent_ranks(c10d::Store& store, int except,
                                              std::chrono::steady_clock::time_point now,
                                              std::chrono::milliseconds quiet) const {
    std::vector<int> silent;
    for (std::size_t r = 0; r < seen_.size(); ++r) {
        const int rank = static_cast<int>(r);
        if (rank != except && now - seen_[r].changed > quiet &&
            !store.check({keys::record(rank)})) {
            silent.push_back(rank);
        }
    }
    return silent;
}

std::chrono::milliseconds HeartbeatWatch::silent_for(
    int rank, std::chrono::steady_clock::time_point now) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        now - seen_[static_cast<std::size_t>(rank)].changed);
}

}  // namespace pipewright::backend

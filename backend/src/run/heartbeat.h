#pragma once

// Signs of life between the workers and the launchers of a run.
//
// When a rank stops answering (stopped with SIGSTOP, hung, or its node cut
// off), its peers fail first, with a timeout or a closed connection: the
// error is theirs but the cause is not. Each worker raises a counter in the
// store every second from a thread of its own (so long computations keep it
// going); the launcher watches the counters and, when a rank fails, names
// the ranks whose counters stood still.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace pipewright::backend {

inline constexpr std::chrono::milliseconds kHeartbeatPeriod{1000};
// How long a rank's heartbeat must stand still before it counts as silent.
inline constexpr std::chrono::milliseconds kSilence = 3 * kHeartbeatPeriod;

// A worker's heartbeat: runs from construction to destruction.
class Heartbeat {
  public:
    Heartbeat(c10::intrusive_ptr<c10d::Store> store, int rank);
    ~Heartbeat();
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

  private:
    c10::intrusive_ptr<c10d::Store> store_;
    int rank_;
    std::mutex mutex_;
    std::condition_variable stop_;
    bool stopping_ = false;
    std::thread thread_;
};

// The launcher's view of the ranks' heartbeats.
class HeartbeatWatch {
  public:
    HeartbeatWatch(int world, std::chrono::steady_clock::time_point start);

    // Reads the counters of every rank (at most once per heartbeat period).
    void poll(c10d::Store& store, std::chrono::steady_clock::time_point now);

    // Ranks other than `except` whose counters have not moved for longer
    // than `quiet` and that have not finished (no record in the store).
    [[nodiscard]] std::vector<int> silent_ranks(c10d::Store& store, int except,
                                                std::chrono::steady_clock::time_point now,
                                                std::chrono::milliseconds quiet) const;

    // How long the rank's counter has stood still.
    [[nodiscard]] std::chrono::milliseconds silent_for(
        int rank, std::chrono::steady_clock::time_point now) const;

  private:
    struct Seen {
        std::string value;
        std::chrono::steady_clock::time_point changed;
    };
    std::vector<Seen> seen_;
    std::chrono::steady_clock::time_point last_poll_{};
};

}  // namespace pipewright::backend

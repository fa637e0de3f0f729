#pragma once
// The profiler's second rank, a process of its own: `pipewright-backend
// transfer-peer ...`, started by the profiler (never by users), which meets
// it in a private c10d FileStore and a Gloo group of two on the loopback
// interface, as a run's two ranks on one machine meet.
#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pipewright/backend/profiler.h"
#include "profile/transfer_programme.h"

namespace pipewright::backend::profiling {

struct TransferPeerOptions {
    std::string store_file;
    std::string host = "127.0.0.1";
    std::vector<std::int64_t> sizes;
    int repeats = 1;
    std::chrono::milliseconds timeout{60'000};
    bool bind = false;  // on a core of its own, as rank_thread_conditions.h
    bool operator==(const TransferPeerOptions&) const = default;
};

// The arguments after the command word, and back; nullopt with `error`
// set for arguments the profiler never writes.
[[nodiscard]] std::vector<std::string> transfer_peer_arguments(const TransferPeerOptions& o);
[[nodiscard]] std::optional<TransferPeerOptions> parse_transfer_peer_arguments(
    const std::vector<std::string>& args, std::string& error);

// The peer (run_transfer_peer) is rank 1 of run_transfer_programme; its
// stamps come back through the store.

// The profiler's side: starts the peer (`program`, or this process's own
// program when empty), runs rank 0 and returns both ranks' stamps. Throws
// BackendError naming what failed when the peer cannot start, dies, or a
// wait outlasts the options' timeout.
[[nodiscard]] TransferStamps time_transfers_in_two_processes(const TransferOptions& o,
                                                             const std::vector<std::int64_t>& sizes,
                                                             int repeats);

}  // namespace pipewright::backend::profiling
